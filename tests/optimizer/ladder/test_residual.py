"""The unattributed remainder of a measured gap (``optimizer.ladder.residual``) and the lost case's roof
(``l1_triage.lost_roof``) it reads."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from optimizer.ir.gap_account import GapAccount, GapFinding
from optimizer.ladder import keys
from optimizer.ladder.l1_triage import lost_roof
from optimizer.ladder.residual import GPU_MEASURES, residual_evidence


def _ctx(fraction: float | None, bound: str = "memory") -> SimpleNamespace:
    roof = {"case": "N=4096", "fraction": fraction, "bound": bound} if fraction is not None else None
    return SimpleNamespace(cache={keys.LOST_ROOF: roof} if roof else {})


def _account(*findings: tuple[str, float | None]) -> GapAccount:
    return GapAccount(kernel="k", findings=[
        GapFinding.model_validate({"kind": kind, "kernel": "k", "value": 1.0, "unit": "u", "summary": kind,
                                   "significant": True, "share": share})
        for kind, share in findings])


def test_lost_roof_names_the_nearer_roof() -> None:
    rows = [{"case": "a", "signals": {"mem_fraction": 0.3, "compute_fraction": 0.6}},
            {"case": "b", "signals": {"mem_fraction": 0.8}}]
    roof = lost_roof(rows, "a")
    assert {k: roof[k] for k in ("case", "fraction", "bound", "best_case", "best_fraction")} == {
        "case": "a", "fraction": 0.6, "bound": "compute", "best_case": "b", "best_fraction": 0.8}
    assert roof["fractions"] == {"a": 0.6, "b": 0.8} and roof["bounds"] == {"a": "compute", "b": "memory"}
    assert lost_roof(rows, "b")["bound"] == "memory"


def test_remainder_is_the_gap_less_the_priced_shares() -> None:
    # gap 0.6 of the time; a priced 0.3 share leaves 0.3, half the gap; the unpriced kind is named, not priced
    (item,) = residual_evidence(_ctx(0.4), [_account(("access_stride", 0.3), ("needless_mask", None))], decided=False)
    assert item.kind == "unexplained" and item.data["kind"] == "unattributed_gap"
    assert item.data["share"] == pytest.approx(0.5) and item.data["gap"] == pytest.approx(0.6)
    assert item.data["unpriced"] == ["needless_mask"]
    assert "needless_mask" in item.summary and GPU_MEASURES["memory"] in item.summary


def test_a_failed_account_leaves_the_whole_gap_with_its_reason() -> None:
    (item,) = residual_evidence(_ctx(0.3, "compute"), [], decided=False, unavailable="IR capture failed: X")
    assert item.data["share"] == pytest.approx(1.0) and "IR capture failed" in item.summary
    assert GPU_MEASURES["compute"] in item.summary


@pytest.mark.parametrize(
    ("fraction", "decided", "account"),
    [(0.95, False, []),  # at the roofline: no gap to split
     (0.4, True, []),  # a decided cause explains the gap itself
     (None, False, []),  # no timing: no gap
     (0.4, False, [_account(("access_stride", 0.58))])],  # the account prices nearly all of it
)
def test_nothing_reported_outside_the_domain(fraction: float | None, decided: bool, account: list) -> None:
    assert residual_evidence(_ctx(fraction), account, decided=decided) == []


def test_a_multi_line_compile_error_is_kept_brief() -> None:
    reason = ("IR capture failed: spec: the kernel does not compile: at 19:18:\n    x = tl.f(\n      ^\n"
              "Blocks were removed")
    (item,) = residual_evidence(_ctx(0.3), [], decided=False, unavailable=reason)
    assert "does not compile" in item.summary and "Blocks were removed" in item.summary and "tl.f(" not in item.summary


def test_a_case_far_nearer_its_roofline_makes_the_loss_size_dependent() -> None:
    ctx = _ctx(0.25)
    ctx.cache[keys.LOST_ROOF] |= {"best_case": "N=1024", "best_fraction": 0.86}
    (item,) = residual_evidence(ctx, [], decided=False)
    assert item.data["size_dependent"] and "reaches 86% at case N=1024" in item.summary
    ctx.cache[keys.LOST_ROOF] |= {"best_fraction": 0.4}
    (item,) = residual_evidence(ctx, [], decided=False)
    assert not item.data["size_dependent"] and "reaches" not in item.summary


def test_the_gap_is_split_at_the_case_the_accounts_were_recorded_at() -> None:
    # a dry record of one case (the lowest fraction) while another case loses the most time: the account describes
    # the recorded case, so its gap is the one split
    ctx = _ctx(0.8)
    ctx.cache[keys.LOST_ROOF] |= {"fractions": {"N=4096": 0.8, "N=1024": 0.5}, "bounds": {"N=1024": "memory"}}
    ctx.cache[keys.LAUNCH_CASE] = {"N": 1024}
    (item,) = residual_evidence(ctx, [], decided=False)
    assert item.data["case"] == "N=1024" and item.data["gap"] == pytest.approx(0.5)
