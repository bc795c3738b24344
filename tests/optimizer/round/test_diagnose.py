"""The diagnose stage: on the interpreter the ladder reads a base's full-size launches, recorded once per base."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.models import Validation
from optimizer.harness.outcome import Evaluation
from optimizer.ladder import keys
from optimizer.ladder.cases import representative_case
from optimizer.phases import PhaseClock
from optimizer.round.context import RoundSetup
from optimizer.round.diagnose import full_size_launches
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data"


def test_on_the_interpreter_the_ladder_reads_the_full_size_launches_once_per_base(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Smoke-case launches (tiny grids) made an interpreter session pick other families than `ladder diagnose`;
    the ladder now reads the first full-size case's launches, recorded without running a kernel."""
    calls: list[str] = []
    full = [{"kernel": "softmax_kernel", "grid": [65536], "ir_args": {"n_cols": 1000}}]

    cases_asked: list = []

    def fake_record(problem, candidate, settings, case=None):
        calls.append(Path(candidate).read_text())
        cases_asked.append(case)
        return full, "", {"M": 65536, "N": 1000}

    monkeypatch.setattr("optimizer.round.context.record_launches", fake_record)
    s = RoundSetup.open(DATA / "softmax", None, backend="interpreter", settings=LadderSettings(), kb=object(),
                        workdir=tmp_path)
    base = tmp_path / "base.py"
    base.write_text("v0")
    smoke = Evaluation(candidate=base, backend="interpreter", status="ok", reason="",
                       validation=Validation(passed=True), launches=[{"kernel": "softmax_kernel", "grid": [4]}])
    got = full_size_launches(s, base, smoke, PhaseClock())
    assert got.launches == full
    assert smoke.launches == [{"kernel": "softmax_kernel", "grid": [4]}]  # the record is untouched
    assert s.cache[keys.LAUNCH_CASE] == {"M": 65536, "N": 1000}
    full_size_launches(s, base, smoke, PhaseClock())
    base.write_text("v1")  # a new base is recorded again
    full_size_launches(s, base, smoke, PhaseClock())
    assert calls == ["v0", "v1"]
    assert cases_asked == [representative_case(s.problem)] * 2  # the case `ladder diagnose` reads, not CASES[0]
