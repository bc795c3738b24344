"""What the measured account of the gap says about the listed causes (issue "Causes beyond the list", item 4).

L2's measured account (``optimizer.profile.ncu_account.MeasuredAccount``, GPU with ncu, ``settings.ncu_account``)
splits a case's gap to its roofline into measured parts; each part names the listed causes that can produce it
(``explained_by``: an idle-SM tail can come from a serial tail, launch overhead or tiny programs). Read here:

- ``account_view``: per listed cause, the share of the gap that the parts it can explain account for (the sum over
  those parts, capped at 1: an upper bound on what removing the cause can win, since a part listing three causes
  counts for each of them), and the parts of at least ``MIN_PART`` of the gap that no listed cause explains, as lines
  naming the part and its share. Those are reported, never forced onto the nearest cause.
- ``target_effect``: the parts a decided cause explains, on a round's base and on its candidate.

``optimizer.ladder.decide`` reads the view: among structural causes that could decide, the one with the largest
measured share leads when it is ahead by ``ACCOUNT_MARGIN`` (the account outweighs the dominance prior); a decided
structural cause whose parts take less than ``NEGLIGIBLE`` of a well-covered gap is noted in the decision.
"""

from __future__ import annotations

from typing import Any

from optimizer.profile.ncu_account import MeasuredAccount

__all__ = ["ACCOUNT_MARGIN", "MIN_COVERAGE", "MIN_PART", "NEGLIGIBLE", "REMOVED", "UNCHANGED", "AccountView",
           "account_view", "target_effect"]

#: the account must name at least this share of the gap before its shares rank causes
MIN_COVERAGE = 0.5
#: a cause whose measured share leads by this much takes the lead from a better-scored structural cause
ACCOUNT_MARGIN = 0.15
#: a decided structural cause whose parts account for less than this share of a covered gap is noted as such
NEGLIGIBLE = 0.05
#: an unexplained part this large is reported by the decision
MIN_PART = 0.1
#: the targeted parts' time after / before at or under which a rewrite removed its target ...
REMOVED = 0.5
#: ... and at or over which it left it unchanged (between the two: reduced; over 1/UNCHANGED: grew)
UNCHANGED = 0.9


class AccountView:
    """The decision's reading of one measured account (the JSON of a ``MeasuredAccount``)."""

    def __init__(self, shares: dict[str, float], unexplained: list[str], coverage: float | None, case: str,
                 gap_ms: float):
        self.shares, self.unexplained, self.coverage, self.case, self.gap_ms = (shares, unexplained, coverage, case,
                                                                                gap_ms)

    @property
    def usable(self) -> bool:
        """Whether the shares may rank causes: a gap to split and most of it named."""
        return self.gap_ms > 0 and self.coverage is not None and self.coverage >= MIN_COVERAGE

    def share(self, cause: str) -> float:
        return self.shares.get(cause, 0.0)

    def line(self) -> str:
        cov = "-" if self.coverage is None else f"{self.coverage:.0%}"
        top = ", ".join(f"{c} {s:.0%}" for c, s in sorted(self.shares.items(), key=lambda kv: -kv[1])[:4])
        return f"measured account [{self.case}] gap {self.gap_ms:.4g} ms, {cov} named; causes' shares: {top or 'none'}"


def account_view(acc: dict[str, Any] | None) -> AccountView | None:
    """The view of a ``MeasuredAccount.model_dump(mode="json")`` (None for no account, or one that failed)."""
    if not acc or "findings" not in acc:
        return None
    account = MeasuredAccount.model_validate(acc)
    shares: dict[str, float] = {}
    by_kind: dict[str, float] = {}
    for p in account.findings:
        if p.share is None:
            continue
        for cause in p.explained_by:
            shares[cause] = min(1.0, shares.get(cause, 0.0) + p.share)
        if not p.explained_by:
            by_kind[p.kind] = by_kind.get(p.kind, 0.0) + p.share
    unexplained = [f"{kind} {share:.0%} of the gap (no listed cause)"
                   for kind, share in sorted(by_kind.items(), key=lambda kv: -kv[1]) if share >= MIN_PART]
    return AccountView({c: round(s, 4) for c, s in shares.items()}, unexplained, account.coverage, account.case,
                       account.gap_ms)


def _cause_parts(acc: dict[str, Any], cause: str) -> dict[str, float]:
    """ms per account part kind that ``cause`` explains."""
    out: dict[str, float] = {}
    for p in acc.get("findings", []):
        if cause in (p.get("explained_by") or []):
            out[p["kind"]] = out.get(p["kind"], 0.0) + float(p.get("ms") or 0.0)
    return out


def target_effect(cause: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    """The fields of a ``kb.models.TargetEffect``: the parts of the base's account that ``cause`` explains, and the
    same part kinds on the candidate's account (both ``MeasuredAccount`` JSON, one case). ``not_measured`` when either
    account is missing or the base shows no part the cause explains."""
    out: dict[str, Any] = {"cause": cause, "case": str((before or {}).get("case", "")), "kinds": [],
                           "before_ms": 0.0, "after_ms": 0.0, "verdict": "not_measured"}
    if not before or not after or "findings" not in before or "findings" not in after:
        out["note"] = "no measured account of the " + ("base" if not before or "findings" not in before else
                                                       "candidate")
        return out
    parts = _cause_parts(before, cause)
    out["before_gap_ms"], out["after_gap_ms"] = before.get("gap_ms"), after.get("gap_ms")
    if not parts:
        out["note"] = f"the base's account shows no part that {cause} explains"
        return out
    after_parts = MeasuredAccount.model_validate(after).by_kind()
    b = sum(parts.values())
    a = sum(after_parts.get(k, 0.0) for k in parts)
    ratio = a / b if b > 0 else 1.0
    verdict = ("removed" if ratio <= REMOVED else "reduced" if ratio < UNCHANGED else
               "unchanged" if ratio <= 1.0 / UNCHANGED else "grew")
    out.update(kinds=sorted(parts), before_ms=round(b, 6), after_ms=round(a, 6), verdict=verdict,
               note=", ".join(f"{k} {parts[k]:.4g} -> {after_parts.get(k, 0.0):.4g} ms" for k in sorted(parts)))
    return out
