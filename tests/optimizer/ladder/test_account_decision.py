"""Decide on the measured account (issue 30 item 4): the account ranks structural causes by their share of the gap,
settles ties its shares tell apart, and names parts no listed cause explains."""

from __future__ import annotations

from optimizer.ladder.causes.account import account_view
from optimizer.ladder.decide import decide
from optimizer.ladder.findings import EvidenceRef, Finding


def _f(cause: str, conf: float) -> Finding:
    ref = EvidenceRef(level="L1", kind="code_feature", reference=cause, source_lines=[12])
    return Finding(cause=cause, level="L1", confidence=conf, structural=True, supporting=[ref])


def _account(parts: list[tuple[str, float, list[str]]], gap_ms: float = 1.0) -> dict:
    """A MeasuredAccount as JSON: (kind, share of the gap, listed causes) per part."""
    return {"case": "N=4096", "measured_ms": gap_ms + 0.5, "roofline_ms": 0.5, "gap_ms": gap_ms,
            "findings": [{"kind": k, "value": 1.0, "unit": "%", "summary": k, "ms": share * gap_ms, "share": share,
                          "explained_by": causes} for k, share, causes in parts],
            "figures": [], "unattributed_ms": 0.0, "notes": []}


def test_account_view_sums_shares_per_cause_and_names_unexplained_parts() -> None:
    view = account_view(_account([("memory_latency", 0.5, ["register_spills", "tiny_programs"]),
                                  ("idle_sms", 0.2, ["tiny_programs"]), ("control_flow", 0.25, [])]))
    assert view is not None and view.usable
    assert view.share("register_spills") == 0.5 and view.share("tiny_programs") == 0.7
    assert view.share("fma_dot") == 0.0
    assert view.coverage == 0.95
    assert view.unexplained == ["control_flow 25% of the gap (no listed cause)"]
    assert account_view(None) is None and account_view({"error": "ncu saw no launch"}) is None


def test_the_cause_with_the_larger_measured_share_leads() -> None:
    findings = [_f("register_spills", 0.8), _f("loop_reductions", 0.72)]
    # without an account: two structural causes within the margin, different rewrites -> contradiction
    plain = decide(findings, measured_any=True)
    assert not plain.decided and plain.contradiction
    view = account_view(_account([("barrier_sync", 0.6, ["loop_reductions"]),
                                  ("memory_latency", 0.3, ["register_spills"])]))
    d = decide(findings, measured_any=True, account=view)
    assert d.decided and d.cause == "loop_reductions"
    assert any("the account decides" in o and "60%" in o for o in d.overruled)
    assert "measured account" in d.account and "by the measured account" in d.reason


def test_close_shares_leave_the_score_order_and_the_contradiction() -> None:
    findings = [_f("register_spills", 0.8), _f("loop_reductions", 0.72)]
    view = account_view(_account([("barrier_sync", 0.45, ["loop_reductions"]),
                                  ("memory_latency", 0.4, ["register_spills"])]))
    d = decide(findings, measured_any=True, account=view)
    assert not d.decided and d.contradiction  # 5 points apart: the account cannot tell them apart


def test_a_poorly_covered_account_ranks_nothing_but_still_names_what_it_saw() -> None:
    findings = [_f("register_spills", 0.9), _f("loop_reductions", 0.6)]
    view = account_view(_account([("barrier_sync", 0.3, ["loop_reductions"]), ("sleeping", 0.12, [])]))
    assert view is not None and not view.usable  # 42% of the gap named
    d = decide(findings, measured_any=True, account=view)
    assert d.decided and d.cause == "register_spills"
    assert d.unexplained == ["sleeping 12% of the gap (no listed cause)"]
    assert "beyond the listed causes: sleeping 12%" in d.summary()


def test_undecided_decision_reports_the_unexplained_measured_part() -> None:
    view = account_view(_account([("control_flow", 0.7, []), ("idle_sms", 0.2, ["serial_tail"])]))
    d = decide([], measured_any=True, account=view)
    assert not d.decided
    assert "measured beyond the listed causes: control_flow 70% of the gap" in d.summary()


def test_target_effect_compares_the_causes_parts_before_and_after() -> None:
    from kb.models import TargetEffect
    from optimizer.ladder.causes.account import target_effect

    before = _account([("barrier_sync", 0.6, ["loop_reductions"]), ("memory_latency", 0.3, ["register_spills"])])
    removed = _account([("memory_latency", 0.3, ["register_spills"])], gap_ms=0.4)
    t = TargetEffect.model_validate(target_effect("loop_reductions", before, removed))
    assert t.verdict == "removed" and t.kinds == ["barrier_sync"] and t.before_ms == 0.6 and t.after_ms == 0.0
    # the rewrite helped, but the parts its cause names did not move: visible as "unchanged"
    same = _account([("barrier_sync", 0.58, ["loop_reductions"])])
    assert target_effect("loop_reductions", before, same)["verdict"] == "unchanged"
    grew = _account([("barrier_sync", 0.75, ["loop_reductions"])])
    assert target_effect("loop_reductions", before, grew)["verdict"] == "grew"
    assert target_effect("loop_reductions", before, _account([("barrier_sync", 0.4, [])]))["verdict"] == "reduced"
    # nothing to compare: said so, never guessed
    assert target_effect("fma_dot", before, same)["verdict"] == "not_measured"
    assert "candidate" in target_effect("loop_reductions", before, None)["note"]
