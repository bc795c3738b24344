"""The cause decision: structural findings outrank the class, contradictions escalate, the roofline stops."""

from __future__ import annotations

from optimizer.ladder.decide import decide
from optimizer.ladder.findings import EvidenceRef, Finding


def _f(cause: str, level: str, conf: float, *, structural: bool = True, lines: list[int] | None = None,
       refute: float = 0.0) -> Finding:
    ref = EvidenceRef(level=level, kind="code_feature" if level == "L1" else "ir_signature" if level == "L3" else "roofline",
                      reference=cause, source_lines=lines or [])
    return Finding(cause=cause, level=level, confidence=conf, structural=structural, supporting=[ref] if conf else [],
                   refuting=[ref] if refute else [], refute_strength=refute)


def test_structural_finding_outranks_and_overrules_the_l2_class() -> None:
    d = decide([_f("fma_dot", "L3", 0.9, lines=[23])], measured="sync_bound", measured_any=True)
    assert d.decided and d.cause == "fma_dot" and d.structural and not d.static_only
    assert d.decided_by[0].source_lines == [23]
    assert any("sync_bound" in o and "overruled" in o for o in d.overruled)


def test_two_equal_structural_causes_with_different_rewrites_escalate() -> None:
    d = decide([_f("same_address_atomics", "L1", 0.8), _f("redundant_passes", "L1", 0.8)])
    assert not d.decided and "equally supported" in d.contradiction
    # a clearly stronger one decides
    d = decide([_f("same_address_atomics", "L1", 0.9), _f("redundant_passes", "L1", 0.5)])
    assert d.decided and d.cause == "same_address_atomics"


def test_weak_evidence_alone_does_not_decide() -> None:
    d = decide([_f("l2_unfriendly_order", "L1", 0.35)])
    assert not d.decided and "0.35" in d.reason


def test_confirmation_across_levels_adds_up() -> None:
    d = decide([_f("unvectorized_access", "L1", 0.35), _f("unvectorized_access", "L3", 0.6)])
    assert d.decided and d.cause == "unvectorized_access" and d.confidence > 0.7 and d.static_only


def test_at_roofline_stops_and_refutes_structural_causes_except_fma_dot() -> None:
    roof = _f("at_roofline", "L2", 0.85, structural=False)
    d = decide([roof, _f("unvectorized_access", "L1", 0.6)], measured="memory_bound", measured_any=True)
    assert d.decided and d.cause == "at_roofline"
    d = decide([roof, _f("fma_dot", "L3", 0.9)], measured="compute_bound", measured_any=True)
    assert d.decided and d.cause == "fma_dot"  # the FMA roofline is the floor of the FMA path itself


def test_refuting_evidence_lowers_a_cause() -> None:
    d = decide([_f("register_spills", "L1", 0.6), _f("register_spills", "L3", 0.0, refute=0.9)])
    assert not d.decided


def test_a_confirmed_cause_explains_its_symptoms() -> None:
    d = decide([_f("per_element_grid", "L1", 0.85), _f("unvectorized_access", "L3", 0.8)])
    assert d.decided and d.cause == "per_element_grid"
    assert any("unvectorized_access" in o for o in d.overruled)


def test_an_fma_dot_explains_its_spills() -> None:
    # FMA dots hold both operand tiles in registers: the spills go once the dot runs on tensor cores
    d = decide([_f("fma_dot", "L3", 0.9), _f("register_spills", "L3", 0.9), _f("register_spills", "L2", 0.5, structural=False)])
    assert d.decided and d.cause == "fma_dot"
    # without an FMA dot the spills decide on their own
    assert decide([_f("register_spills", "L3", 0.9)]).cause == "register_spills"
