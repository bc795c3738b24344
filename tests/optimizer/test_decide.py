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


def _roof(frac_ok: bool) -> Finding:
    ref = EvidenceRef(level="L1", kind="roofline", reference="roofline_fraction", detail="c 40%")
    if frac_ok:
        return Finding(cause="at_roofline", level="L1", confidence=0.85, supporting=[ref])
    return Finding(cause="at_roofline", level="L1", confidence=0.0, refuting=[ref], refute_strength=0.9)


def test_early_stop_needs_a_clear_structural_cause_and_timed_headroom() -> None:
    from optimizer.ladder.decide import EARLY_STOP, early_stop

    d = decide([_f("per_element_grid", "L1", 0.85), _roof(False)], measured_any=True)
    ok, why = early_stop(d, headroom_measured=True)
    assert ok and "headroom" in why
    assert not early_stop(d, headroom_measured=False)[0]  # no timing roofline (interpreter): never before profiling
    weak = decide([_f("tiny_programs", "L1", EARLY_STOP - 0.15), _roof(False)], measured_any=True)
    assert weak.decided and not early_stop(weak, headroom_measured=True)[0]
    measured_only = decide([_f("launch_overhead", "L1", 0.8, structural=False), _roof(False)], measured_any=True)
    assert measured_only.decided and "not tied to source lines" in early_stop(measured_only, headroom_measured=True)[1]
    # a structural rival calling for another rewrite, close behind: the counters have to settle it
    close = decide([_f("same_address_atomics", "L1", 0.8), _f("redundant_passes", "L1", 0.62), _roof(False)], measured_any=True)
    ok, why = early_stop(close, headroom_measured=True)
    assert close.decided and not ok and "redundant_passes" in why


def test_early_stop_at_the_roofline_from_the_timing_alone() -> None:
    from optimizer.ladder.decide import early_stop

    d = decide([_f("unvectorized_access", "L1", 0.35), _roof(True)], measured_any=True)
    assert d.decided and d.cause == "at_roofline"
    assert early_stop(d, headroom_measured=True) == (True, "the round's timing puts every case at its roofline")


def test_fall_back_to_the_next_structural_cause_when_the_first_cannot_be_removed() -> None:
    from optimizer.ladder.decide import fall_back

    found = [_f("redundant_passes", "L1", 0.7, lines=[10, 14]), _f("loop_reductions", "L1", 0.45, lines=[12]),
             _f("l2_unfriendly_order", "L1", 0.3), _f("unvectorized_access", "L2", 0.6, structural=False)]
    d = decide(found, measured="sync_bound", measured_any=True)
    assert d.decided and d.cause == "redundant_passes"
    alts = fall_back(d, found, "single-pass-fusion: no loop ending in `acc += x`")
    # structural and above FALLBACK only: the weak order finding and the measured-only one do not take over
    assert [a.cause for a in alts] == ["loop_reductions"]
    a = alts[0]
    assert a.decided and a.fallback_from == "redundant_passes" and a.decided_by[0].source_lines == [12]
    assert "single-pass-fusion" in a.overruled[-1] and "after redundant_passes" in a.summary()


def test_a_tie_left_at_the_last_level_lists_the_tied_causes_in_ranking_order() -> None:
    from optimizer.ladder.decide import break_tie

    found = [_f("redundant_passes", "L1", 0.6, lines=[20, 21]), _f("tiny_programs", "L1", 0.6, lines=[9]),
             _f("l2_unfriendly_order", "L1", 0.3)]
    d = decide(found)
    assert not d.decided and d.contradiction
    alts = break_tie(d, found)
    # dominance orders the tie (a buffer round trip before a small loop step); the weak third cause is not tied
    assert [a.cause for a in alts] == ["redundant_passes", "tiny_programs"] and all(a.decided for a in alts)
    assert alts[1].decided_by[0].source_lines == [9] and "contradiction at the last level" in alts[1].overruled[-1]
    assert break_tie(decide([_f("fma_dot", "L3", 0.9)]), found) == []  # a decided cause has no tie to break
