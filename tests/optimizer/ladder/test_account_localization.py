"""An inefficiency the static account proves and no listed cause explains (issue-bound, masked-off lanes) localizes
L3 when the IR shows no problem signature: the cards are matched on ``account_<kind>`` and only a card citing it
is justified (``optimizer.ladder.gap_account.account_localization``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from optimizer.ir.gap_account import GapAccount, GapFinding
from optimizer.ladder.findings import Finding
from optimizer.ladder.gap_account import account_localization


def _acc(*findings: GapFinding) -> GapAccount:
    return GapAccount(kernel="gate", config="BLOCK_SIZE=16384, num_warps=16", grid=[16384], device="H200 (sm_90)",
                      findings=list(findings))


ISSUE = GapFinding(kind="issue_bound", kernel="gate", value=1.07, unit="issue floor / memory floor",
                   summary="967 static PTX instructions per thread", significant=True, proof="needs_gpu")
QUIET = ISSUE.model_copy(update={"value": 0.3, "significant": False})
SCALAR = GapFinding(kind="vector_width", kernel="gate", value=32, unit="bits", summary="48 x 32-bit", significant=True,
                    proof="needs_gpu", explained_by=["unvectorized_access", "per_element_grid"])


def _ctx() -> Any:
    return SimpleNamespace(results=[], cache={})


def _run(accounts: list[GapAccount], cites: list[str], findings: list[Finding] | None = None) -> Any:
    seen: dict[str, Any] = {}

    def match(ctx: Any, symptoms: Any, text: str, *, bottleneck: str) -> list[Any]:
        seen["symptoms"], seen["bottleneck"] = symptoms, bottleneck
        return [SimpleNamespace(id="split-wide-rows", matched_symptoms=cites)]

    def choose(ctx: Any, refs: list[Any], prefixes: tuple[str, ...], **kw: Any) -> tuple[Any, bool, str]:
        seen["prefixes"] = prefixes
        return refs[0], True, f"only {refs[0].id} is eligible"

    return account_localization(_ctx(), accounts, findings or [], match, choose), seen


def test_an_unexplained_issue_floor_localizes_and_the_card_citing_it_is_justified() -> None:
    loc, seen = _run([_acc(ISSUE)], ["profile:account_issue_bound", "code:elementwise"])
    assert loc is not None and loc.cls == "compute_bound" and loc.signals == ["account_issue_bound"]
    assert seen["symptoms"].profile_signals == ["account_issue_bound"] and seen["prefixes"] == ("profile:",)
    t = loc.tests()
    assert t.localized and t.single_family and t.justified and t.passed
    assert "split-wide-rows cites account_issue_bound" in t.notes


def test_a_card_that_does_not_cite_the_inefficiency_is_not_justified() -> None:
    loc, _ = _run([_acc(ISSUE)], ["code:elementwise"])
    assert loc is not None and not loc.tests().justified


def test_no_localization_without_a_significant_unexplained_kind_it_knows() -> None:
    assert _run([_acc(QUIET)], [])[0] is None  # below the issue ratio
    assert _run([_acc(SCALAR)], [])[0] is None  # vector width: a listed cause's, not localized here
