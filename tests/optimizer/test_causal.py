"""merge_tests: what a level reports when the decided cause has no family that applies to this kernel."""

from __future__ import annotations

from kb.models import EscalationTests
from optimizer.ladder.causal import CausalStep, merge_tests
from optimizer.ladder.decide import Decision


def test_a_refused_cause_is_said_next_to_the_class_based_family() -> None:
    tests = EscalationTests(
        localized=True, single_family=True, justified=True, notes="(1) barrier in k -> sync_bound"
    )
    d = Decision(cause="same_address_atomics", confidence=0.8, decided=True, structural=True)
    step = CausalStep(
        d, None, ["two-stage-reduction: the added value is a block, not a scalar per program"], None, "L3"
    )
    out, chosen, _best = merge_tests(step, tests, None, None)
    assert out.passed and chosen is None
    assert "cause same_address_atomics decided but every family" in out.notes and "not a scalar" in out.notes
    assert "does not remove the cause" in out.notes
    # without refusals (no cause decided) the class tests stand unchanged
    plain, _, _ = merge_tests(CausalStep(Decision(), None, [], None, "L3"), tests, None, None)
    assert plain.notes == tests.notes
