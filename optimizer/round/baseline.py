"""Round 0, the baseline: the initial candidate copied to ``round_00.py``, validated and timed against itself (A/A) to
measure the session's noise floor. In: the new :class:`~kb.models.Trajectory` (its noise floor and timing methods are
filled); out: :class:`Baseline`. It fixes ``setup.initial``, ``setup.floor`` and ``setup.methods``.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from kb.models import Round, Trajectory
from optimizer.events import BaselineStarted
from optimizer.harness import stages, verdict
from optimizer.harness.evaluation import Evaluation
from optimizer.phases import PhaseClock
from optimizer.round.context import RoundSetup
from optimizer.round.judge import validation_evidence

__all__ = ["Baseline", "baseline", "versions"]


@dataclass(frozen=True)
class Baseline:
    """Round 0, its candidate (the initial one's copy), the baseline's evaluation and per-case times, and its
    wall-clock stages."""

    round: Round
    path: Path
    evaluation: Evaluation
    baseline_ms: dict[str, float]
    stages: stages.StageClock


def baseline(setup: RoundSetup, traj: Trajectory) -> Baseline:
    base_path = setup.workdir / "round_00.py"
    shutil.copyfile(setup.candidate, base_path)
    setup.initial = base_path
    setup.progress(BaselineStarted(candidate=setup.candidate, backend=setup.backend))
    t0 = time.monotonic()
    sc = stages.StageClock()
    with stages.recording(sc), stages.span("evaluate"):
        ev = setup.evaluate(base_path, aa=True)
    baseline_ms = ev.case_ms()
    setup.fix_methods(traj, ev, unseen=False)
    timing = setup.timing(ev, baseline_ms)
    aa = ev.pairs("aa")
    if aa and len(aa) == len(baseline_ms):
        traj.noise_floor = verdict.noise_floor(aa, method=ev.protocol.method if ev.protocol else "")
        setup.floor = traj.noise_floor.floor
        timing.verdict = (
            f"A/A noise floor {setup.floor:.2%} (baseline vs itself {traj.noise_floor.aa.point:.3f}x, "
            f"95% [{traj.noise_floor.aa.lo:.3f}, {traj.noise_floor.aa.hi:.3f}]); "
            + verdict.rule_text(setup.floor, setup.settings.improvement_threshold)
        )
    clock = PhaseClock()
    clock.merge(ev.phase_s)
    r0 = Round(
        index=0,
        hypothesis="baseline: the initial candidate",
        comparison_target="initial",
        evidence=[validation_evidence(ev, "L1")],
        validation=ev.validation,
        timing=timing,
        outcome="baseline" if ev.passed else "failed",
        candidate_path=str(base_path),
        duration_s=time.monotonic() - t0,
        phase_s=clock.finish(time.monotonic() - t0),
        next_recommendation="" if ev.passed else f"fix the initial candidate first: {ev.reason}",
    )
    return Baseline(round=r0, path=base_path, evaluation=ev, baseline_ms=baseline_ms, stages=sc)


def versions(ev: Evaluation | None) -> dict[str, str]:
    """The evaluation's package versions plus this package's (``dev`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out = dict(ev.versions) if ev else {}
    try:
        out["kernel-ladder"] = version("kernel-ladder")
    except PackageNotFoundError:
        out["kernel-ladder"] = "dev"
    return out
