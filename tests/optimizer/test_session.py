"""End-to-end sessions on the CPU interpreter: the ladder from L1 to L4, faulty candidates survived."""

from __future__ import annotations

from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from kb.models import AppliedRecipe, Trajectory
from optimizer.ladder.engine import LadderOutcome
from optimizer.ladder.types import LadderContext
from optimizer.proposers.base import Proposal
from optimizer.proposers.offline import OfflineProposer
from optimizer.round.select import select_best
from optimizer.session import Session
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"
SETTINGS = LadderSettings(validation_seeds=[0, 1], sandbox_timeout_s=60, max_inconclusive_streak=2)


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trajectory, FakeKB, Path, list[str]]:
    kb = FakeKB(LADDER_CARDS)
    out = tmp_path_factory.mktemp("session")
    events: list[str] = []
    # a cold IR cache of its own: another test that captured the same kernel would turn round 1's capture into a hit
    settings = SETTINGS.model_copy(update={"cache_dir": str(tmp_path_factory.mktemp("ladder-cache"))})
    session = Session(DATA / "softmax", None, kb=kb, settings=settings, backend="interpreter", proposer=OfflineProposer(),
                      out_dir=out, progress=lambda e: events.append(e.name))
    return session.run(2, submit=True), kb, out, events


def test_session_climbs_the_ladder(offline_run) -> None:
    traj, kb, out, events = offline_run
    assert [r.outcome for r in traj.rounds] == ["baseline", "neutral", "neutral"]
    r1, r2 = traj.rounds[1], traj.rounds[2]
    assert r1.levels_reached == ["L1", "L2", "L3", "L4"] and r1.stop.level == "L4" and r1.rewrite.family == "num-warps-test"
    assert r1.rewrite.recipe["applied"] == {"num_warps": 2}  # sync_bound: fewer warps first
    # round 2: sync_bound is known from round 1, but num-warps-test did not improve (untimed = neutral), so L1 ranks
    # the untried rows-per-program-test first; it does not name sync_bound, so L1 escalates and L4's invariant
    # picks num-warps-test again at its next untried point (a third non-improving pick is never allowed)
    l1 = next(e for e in r2.evidence if e.level == "L1" and e.kind == "escalation_tests")
    assert "round 1" in l1.summary and "rows-per-program-test is untried" in l1.summary
    assert r2.levels_reached == ["L1", "L2", "L3", "L4"] and r2.stop.level == "L4" and r2.rewrite.family == "num-warps-test"
    assert r2.rewrite.recipe["applied"] == {"num_warps": 8}
    for r in (r1, r2):
        assert r.rewrite.diff.startswith("--- a/round_00.py") and r.validation.passed and r.hypothesis
        assert r.rewrite.recipe["applied"] and r.rewrite.recipe["base"] and r.cards_cited
        assert r.timing.protocol.method == "unavailable-interpreter" and r.timing.geomean_speedup is None
        assert Path(r.candidate_path).exists()
    kinds = {(e.level, e.kind) for e in r1.evidence}
    assert {("L2", "timing"), ("L3", "ir_signature"), ("L4", "invariant"), ("L4", "validation")} <= kinds
    assert sum(e.kind == "escalation_tests" for e in r1.evidence) == 4  # every test at every level is recorded
    assert any(e.kind == "ir_signature" and e.reference == "cross_warp_reduction" for e in r1.evidence)
    assert traj.best_round == 0  # nothing is timed on the interpreter: the earliest validated round wins
    assert Trajectory.model_validate_json((out / "trajectory.json").read_text()).id == traj.id
    assert (out / "best.py").read_text() == (DATA / "softmax" / "initial.py").read_text()
    assert kb.trajectories and kb.trajectories[0].id == traj.id and traj.finished
    assert events[0] == "baseline" and "done" in events and "submitted" in events


def test_rounds_record_where_the_time_goes(offline_run) -> None:
    traj, _, _, _ = offline_run
    r0, r1, r2 = traj.rounds
    assert {"validation", "process_start", "other"} <= set(r0.phase_s)
    assert {"validation", "process_start", "ir_capture", "kb", "proposer", "other"} <= set(r1.phase_s)
    assert "ir_capture" not in r2.phase_s  # same base kernel: its IR comes from the cache
    for r in (r0, r1, r2):
        assert all(v >= 0 for v in r.phase_s.values())
        assert sum(r.phase_s.values()) == pytest.approx(r.duration_s, abs=0.01)  # the phases account for the round
    # untimed backend: no noise floor, every round neutral with the reason written down, earliest validated wins
    assert traj.noise_floor is None and traj.selection.round == 0 and "untimed" in traj.selection.note
    assert r1.timing.verdict.startswith("neutral: no interval") and traj.timing_env == {}
    # no UNSEEN_CASES: one case is derived from the largest, too large for the interpreter, so it is only noted
    u = traj.unseen
    assert u is not None and u.source == "derived" and u.passed is None and "too large" in u.note and not u.flags


def test_rounds_attribute_every_second_to_a_stage(offline_run) -> None:
    """``Round.stages``: the top-level stages and ``other`` sum to the round's wall time; nested ones break down
    their parent (the judge inside the candidate's run inside the evaluation)."""
    traj, _, out, _ = offline_run
    r0, r1, r2 = traj.rounds
    for r in (r0, r1, r2):
        top = {k: v for k, v in r.stages.items() if "/" not in k}
        assert "other" in top and all(v >= 0 for v in r.stages.values())
        assert sum(top.values()) == pytest.approx(r.duration_s, abs=0.01)
    assert {"evaluate", "evaluate/reference", "evaluate/candidate", "evaluate/candidate/judge"} <= set(r0.stages)
    assert {"launches", "ladder", "proposer", "evaluate", "persist", "progress"} <= set(r1.stages)
    # the ladder per level and the proposer per step (kernel facts, the transform, the no-op compile check)
    assert {"ladder/L1", "proposer/context", "proposer/transform", "proposer/effect"} <= set(r1.stages)
    assert any(k.startswith("ladder/") and k.endswith("/kb") for k in r1.stages)  # KB calls inside a level
    assert r1.stages["ladder/L1"] <= r1.stages["ladder"]
    assert r1.stages["proposer/transform"] + r1.stages["proposer/effect"] <= r1.stages["proposer"] + 0.01
    for r in (r1, r2):
        assert r.stages["evaluate/candidate/judge"] <= r.stages["evaluate/candidate"] <= r.stages["evaluate"]
    stored = Trajectory.model_validate_json((out / "trajectory.json").read_text())
    assert stored.rounds[2].stages == r2.stages  # written with the trajectory


class ScriptedProposer:
    """Proposes planted faulty candidates, then the honest one (the session must survive each)."""

    name, requires_recipe = "scripted", False

    def __init__(self, files: list[Path]) -> None:
        self.files = list(files)

    def propose(self, ctx: LadderContext, outcome: LadderOutcome, *, new_filename: str) -> Proposal:
        src = self.files.pop(0)
        # one family per planted file: a family that failed twice on a base is set aside by the ladder
        return Proposal(source=src.read_text(), diff=f"(replaced by {src.name})", family=f"{outcome.chosen.id}:{src.stem}",
                        recipe=AppliedRecipe(kind="scripted", applied={"file": src.name}, base=ctx.source_sha),
                        description=src.name, hypothesis="planted")


def test_faulty_candidates_become_failed_rounds(tmp_path: Path) -> None:
    files = [DATA / "faulty" / "crash_abort.py", DATA / "faulty" / "nan.py", DATA / "faulty" / "reference_op.py",
             DATA / "softmax" / "initial.py"]
    session = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=SETTINGS, backend="interpreter",
                      proposer=ScriptedProposer(files), out_dir=tmp_path)
    traj = session.run(4)
    outcomes = [r.outcome for r in traj.rounds]
    assert outcomes == ["baseline", "failed", "failed", "failed", "neutral"]
    reasons = [r.validation.failure_reason for r in traj.rounds[1:4]]
    assert "SIGABRT" in reasons[0] and "nan" in reasons[1] and "reference_op_call" in reasons[2]
    assert "reference_op_call" in traj.rounds[3].validation.hack_flags
    assert all(r.next_recommendation for r in traj.rounds[1:4])
    assert select_best(traj.rounds) == 0


def test_failing_baseline_stops_cleanly(tmp_path: Path) -> None:
    session = Session(DATA / "softmax", DATA / "faulty" / "wrong_shape.py", kb=FakeKB(LADDER_CARDS), settings=SETTINGS,
                      backend="interpreter", proposer=OfflineProposer(), out_dir=tmp_path)
    traj = session.run(3)
    assert len(traj.rounds) == 1 and traj.rounds[0].outcome == "failed" and traj.best_round is None and traj.finished
    assert "wrong_shape" in traj.rounds[0].validation.failure_reason


def test_session_warms_the_kb_encoder_while_the_baseline_runs(tmp_path: Path) -> None:
    import threading

    warmed = threading.Event()

    class WarmKB(FakeKB):
        def warm(self) -> None:
            warmed.set()

    session = Session(DATA / "softmax", DATA / "faulty" / "wrong_shape.py", kb=WarmKB(LADDER_CARDS), settings=SETTINGS,
                      backend="interpreter", proposer=OfflineProposer(), out_dir=tmp_path)
    session.run(1)
    assert warmed.wait(5.0), "Session.run did not start the KB's warm-up"


def test_snapshot_kb_warm_loads_the_encoder(tmp_path: Path) -> None:
    from kb.snapshot import SnapshotKB

    calls: list[str] = []

    class Enc:
        def warm(self) -> None:
            calls.append("warm")

    kb = SnapshotKB.__new__(SnapshotKB)
    kb.engine = type("E", (), {"embedder": Enc()})()
    kb.warm()
    assert calls == ["warm"]
