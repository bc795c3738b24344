"""One instance of every session event (``optimizer.events``), for the tests of its consumers."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from kb.models import (
    ProblemRef,
    Round,
    Timing,
    TimingProtocol,
    Trajectory,
    UnseenReport,
    Validation,
)
from optimizer.events import (
    BaselineStarted,
    Event,
    LadderDone,
    PointsScreened,
    ProposalMade,
    RoundEnded,
    RoundStarted,
    SessionDone,
    Stopped,
    SubmitFailed,
    Submitted,
    UnseenFlagged,
)

ROUND = Round(index=2, outcome="failed", timing=Timing(protocol=TimingProtocol(method="interleaved-blocks"),
                                                        geomean_speedup=1.25),
              validation=Validation(passed=False, failure_reason="max_abs_err 3.0 on case n=4096"))
TRAJECTORY = Trajectory(id="t-events", problem=ProblemRef(name="softmax"), backend="interpreter")


def samples() -> list[Event]:
    """One event of each type ``Event`` names (the test of this helper checks that none is missing)."""
    out: list[Event] = [
        BaselineStarted(candidate=Path("/p/initial.py"), backend="interpreter"),
        RoundStarted(round=2, base="round_01.py"),
        LadderDone(round=2, summary="L3 cross_warp_reduction [sync_bound]", levels=("L1", "L2", "L3")),
        PointsScreened(round=2, summary="3 points of num-warps screened on n=4096: v0 1.2 ms, v1 valid, v2 failed"),
        ProposalMade(round=2, family="num-warps", description="num_warps 4 -> 2", diff="--- a\n+++ b\n"),
        RoundEnded(ROUND),
        Stopped("2 inconclusive rounds in a row"),
        UnseenFlagged(flags=("fails_unseen",), report=UnseenReport(flags=["fails_unseen"])),
        Submitted(stored=True, id="t-events"),
        SubmitFailed(error="Unavailable: the KB server did not answer"),
        SessionDone(trajectory=TRAJECTORY, path=Path("/out/trajectory.json")),
    ]
    assert {type(e) for e in out} == set(get_args(Event)), "a new event type needs a sample here"
    return out
