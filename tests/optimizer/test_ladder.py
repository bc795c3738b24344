"""The escalation engine and family selection, with stub levels and a fake KB (no subprocesses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.models import EscalationTests
from optimizer.ladder.engine import run_ladder
from optimizer.ladder.select import choose_family
from optimizer.ladder.types import CardRef, LadderContext, LevelResult
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings

from ladder_fakes import LADDER_CARDS, FakeKB

DATA = Path(__file__).parent / "data"


class Stub:
    def __init__(self, level: str, passed: bool, boom: bool = False) -> None:
        self.level, self.passed, self.boom, self.calls = level, passed, boom, 0

    def run(self, ctx: LadderContext) -> LevelResult:
        self.calls += 1
        if self.boom:
            raise RuntimeError("level bug")
        chosen = CardRef(id=f"card-{self.level.lower()}", kind="pattern", title="t") if self.passed else None
        return LevelResult(level=self.level, tests=EscalationTests(localized=True, single_family=self.passed, justified=self.passed),
                           chosen=chosen, bottleneck="memory_bound", rationale=f"{self.level} says so")


@pytest.fixture
def ctx() -> LadderContext:
    problem = load_problem(DATA / "softmax")
    return LadderContext(problem=problem, candidate=DATA / "softmax" / "initial.py", backend="interpreter",
                         kb=FakeKB(LADDER_CARDS), settings=LadderSettings())


def test_stops_at_first_passing_level_and_records_tests(ctx: LadderContext) -> None:
    levels = {"L1": Stub("L1", False), "L2": Stub("L2", False, boom=True), "L3": Stub("L3", True), "L4": Stub("L4", True)}
    out = run_ladder(ctx, levels=levels)
    assert out.levels_reached == ["L1", "L2", "L3"] and levels["L4"].calls == 0
    assert out.stop is not None and out.stop.level == "L3" and out.chosen.id == "card-l3"
    assert out.stop.tests.passed and out.stop.bottleneck == "memory_bound"
    tests = [e for e in out.evidence if e.kind == "escalation_tests"]
    assert [e.level for e in tests] == ["L1", "L2", "L3"]
    # the notes are the summary; the data keeps the three tests only (one copy per round)
    assert tests[0].data == {"localized": True, "single_family": False, "justified": False}
    assert "level bug" in out.results[1].rationale and out.results[1].inconclusive


def test_diagnose_mode_runs_all_levels_and_inconclusive(ctx: LadderContext) -> None:
    levels = {n: Stub(n, n == "L2") for n in ("L1", "L2", "L3", "L4")}
    out = run_ladder(ctx, levels=levels, stop_early=False, max_level="L3")
    assert out.levels_reached == ["L1", "L2", "L3"] and out.stop.level == "L2"
    none = run_ladder(ctx, levels={n: Stub(n, False) for n in ("L1", "L2", "L3", "L4")})
    assert none.inconclusive and none.chosen is None and "inconclusive" in none.summary()


def _ref(cid: str, symptoms: list[str], score: float, applicable: bool = True) -> CardRef:
    return CardRef(id=cid, kind="pattern", title=cid, score=score, matched_symptoms=symptoms, applicable=applicable,
                   recipe={"kind": "launch_params", "params": {}})


def test_choose_family(ctx: LadderContext) -> None:
    a = _ref("a", ["ir:warp_shuffle", "ir:barrier"], 0.03)
    b = _ref("b", ["ir:warp_shuffle"], 0.05)
    assert choose_family(ctx, [b, a], ("ir:",))[:2] == (a, True)
    tie = _ref("c", ["ir:warp_shuffle", "ir:barrier"], 0.031)
    card, ok, note = choose_family(ctx, [a, tie], ("ir:",))
    assert not ok and card is tie and "equally supported" in note  # the best-ranked card still comes back
    assert choose_family(ctx, [_ref("d", ["ir:x"], 0.1, applicable=False)], ("ir:",))[1] is False
    assert choose_family(ctx, [_ref("e", ["code:tl.max"], 0.1)], ("ir:",))[1] is False  # no evidence of this level


def test_l1_triage_needs_earlier_evidence(ctx: LadderContext) -> None:
    from kb.models import EvidenceItem, Round

    from optimizer.ladder.l1_triage import TriageLevel

    res = TriageLevel().run(ctx)
    assert not res.passed and not res.tests.localized and res.bottleneck == "unknown"
    assert {e.kind for e in res.evidence} >= {"code_features", "quick_match", "bottleneck"}
    measured = EvidenceItem(level="L2", kind="bottleneck", reference="latency_bound", summary="measured",
                            data={"class": "latency_bound", "localized": True, "source": "measured"})
    ctx.history = [Round(index=1, outcome="neutral", evidence=[measured])]
    res2 = TriageLevel().run(ctx)
    assert res2.passed and res2.chosen.id == "rows-per-program-test" and res2.bottleneck == "latency_bound"
    assert "round 1" in res2.tests.notes
    ctx.exclude_cards.add("rows-per-program-test")
    assert not TriageLevel().run(ctx).passed
