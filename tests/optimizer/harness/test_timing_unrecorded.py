"""Timing after validation runs without the launch recorder (its per-launch bookkeeping is host time that flushed
do_bench would partly measure, and the selection re-time, which has no recorder, would not)."""

from __future__ import annotations

from typing import Any

import pytest

from optimizer.harness import worker
from optimizer.harness.probes import LaunchRecorder


def test_the_launch_recorder_is_removed_before_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.runtime.jit import JITFunction

    original = JITFunction.run
    rec = LaunchRecorder().install()
    assert JITFunction.run is not original
    seen: dict[str, Any] = {}

    def fake_time_cases(cases, timing, problem, cls, device, backend):  # noqa: ANN001
        seen["run_is_original"] = JITFunction.run is original
        return "timed"

    monkeypatch.setattr(worker, "time_cases", fake_time_cases)
    try:
        assert worker._time_unrecorded(rec, type("Req", (), {"cases": [], "timing": None})(), None, object, "cuda", "cuda") == "timed"
    finally:
        rec.uninstall()
    assert seen == {"run_is_original": True}
