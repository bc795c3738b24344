"""Selection: the best improved rounds are re-timed against the initial candidate and only a confirmed gain wins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/optimizer: timing_fakes

from timing_fakes import blocks, timed_eval  # noqa: E402

from kb.models import Round, Timing, TimingProtocol, Trajectory, Validation  # noqa: E402
from optimizer.round.context import RoundSetup  # noqa: E402
from optimizer.round.select import select  # noqa: E402
from optimizer.settings import LadderSettings  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"


def _timed_round(i: int, g: float, path: Path) -> Round:
    t = Timing(protocol=TimingProtocol(method="interleaved-blocks"), geomean_speedup=g)
    return Round(index=i, outcome="improved", validation=Validation(passed=True), timing=t, candidate_path=str(path))


def test_winner_is_retimed_and_selection_uses_the_retime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    confirmed = {"round_01.py": 1.0, "round_02.py": 1.1, "round_03.py": 1.5}
    calls: list[str] = []

    def fake_retime(problem, candidate, against, **kw):
        calls.append(candidate.name)
        assert set(against) == {"initial"} and kw["blocks"] == 16 and kw["methods"] == {"c": "do_bench"}
        r = {"case": "c", "stats": {"median_ms": 1 / confirmed[candidate.name]},
             "blocks": {"initial": blocks(1.0, 0.002, seed=1),
                        "candidate": blocks(1 / confirmed[candidate.name], 0.002, seed=2)}}
        return timed_eval([r])

    monkeypatch.setattr("optimizer.round.context.retime", fake_retime)
    setup = RoundSetup.open(DATA / "softmax", None, backend="cuda", settings=LadderSettings(), kb=object(),
                            workdir=tmp_path)
    setup.floor, setup.initial, setup.methods = 0.01, tmp_path / "round_00.py", {"c": "do_bench"}
    traj = Trajectory(id="t-1", problem={"name": "softmax"}, backend="cuda",
                      rounds=[Round(index=0, outcome="baseline"), _timed_round(1, 1.3, tmp_path / "round_01.py"),
                              _timed_round(2, 1.1, tmp_path / "round_02.py")])
    sel = select(setup, traj)
    assert calls == ["round_01.py", "round_02.py"]  # the best two by in-round speedup
    assert sel.round == 2 and sel.confirmed[1].point == pytest.approx(1.0, abs=0.01)  # 1.3x did not hold
    traj.rounds = traj.rounds[:2]
    sel = select(setup, traj)
    assert sel.round == 0 and "initial candidate stays best" in sel.note


def test_an_untimed_session_keeps_the_earliest_validated_round(tmp_path: Path) -> None:
    setup = RoundSetup.open(DATA / "softmax", None, backend="interpreter", settings=LadderSettings(), kb=object(),
                            workdir=tmp_path)
    ok = Validation(passed=True)
    traj = Trajectory(id="t-1", problem={"name": "softmax"}, backend="interpreter",
                      rounds=[Round(index=0, outcome="baseline", validation=ok),
                              Round(index=1, outcome="neutral", validation=ok)])
    sel = select(setup, traj)
    assert sel.round == 0 and sel.note.startswith("untimed") and sel.confirmed == {}
