"""ncu runs inside the worker's jail, whose /tmp is private: the folder of ncu's --log-file must be bound writable,
else ncu exits 1 at once and writes nothing the parent can read (every lent-GPU ncu run before this was fixed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from optimizer.harness import measure
from optimizer.harness.problem import load_problem
from optimizer.harness.sandbox import SandboxResult
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data"
RAW = '"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n"0","softmax_kernel","2000"\n'
SUMMARY = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'


def _jail_like(text: str) -> Any:
    """A stand-in for run_worker that writes ncu's log only where the jail would let it: a writable folder."""
    seen: dict[str, Any] = {}

    def fake(request: dict[str, Any], *, prefix_cmd: list[str] | None = None, writable: list[str] | None = None,
             **_: Any) -> SandboxResult:
        assert prefix_cmd is not None and "--log-file" in prefix_cmd
        log = Path(prefix_cmd[prefix_cmd.index("--log-file") + 1])
        seen["writable"] = list(writable or [])
        if str(log.parent) not in (writable or []):
            return SandboxResult(status="crash", reason="ncu exited with code 1")
        log.write_text(text)
        return SandboxResult(status="ok")

    fake.seen = seen  # type: ignore[attr-defined]
    return fake


def test_account_log_folder_is_writable_in_the_jail(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _jail_like(RAW)
    monkeypatch.setattr(measure, "run_worker", fake)
    problem = load_problem(DATA / "softmax")
    got = measure.ncu_launches(problem, DATA / "softmax" / "initial.py", problem.cases_for("cuda")[0],
                               settings=LadderSettings())
    assert not got.error, got.error
    assert got.rows and got.rows[0]["kernel"] == "softmax_kernel"


def test_classifier_log_folder_is_writable_in_the_jail(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _jail_like(SUMMARY)
    monkeypatch.setattr(measure, "run_worker", fake)
    problem = load_problem(DATA / "softmax")
    got = measure.ncu(problem, DATA / "softmax" / "initial.py", settings=LadderSettings(), kernels=None)
    assert got.error == ""  # the worker ran: the log folder was among the writable binds
    assert fake.seen["writable"] and fake.seen["writable"][0].startswith("/")
