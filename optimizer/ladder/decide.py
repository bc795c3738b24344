"""Combine the findings of every level into one cause decision (issue "Evidence decides").

Rules, in order:

1. Per cause, support = noisy-or of the supporting findings' confidences; refutation = the strongest refuting
   finding; score = support x (1 - refutation). ``at_roofline`` refutes every cause but ``fma_dot`` (the FMA
   roofline is the floor of the FMA path itself; tensor cores move it) with 0.8 x its own score.
2. A cause whose class (``kb.vocab.CAUSE_CLASS``) is the measured L2 class gets +0.1: the class breaks ties, it
   never outranks a structural finding on its own.
3. Ranking: structural causes (tied to code lines or IR signatures) before measured-only ones, then score x the
   dominance prior ``DOMINANCE`` (a per-element grid makes its unvectorized loads moot, an FMA dot makes its tile
   shape moot ...); a confirmed cause halves the score of the causes it explains (``EXPLAINS``).
4. Decided when the top cause scores >= ``DECIDE`` and no other structural cause with a different family is
   within ``MARGIN`` of it, unless one explains the other (that is a contradiction: escalate). At-the-roofline
   decides only from measurement.
5. The decision names the deciding evidence and what it overruled: an L2 class pointing elsewhere, weaker causes.
6. With a measured account of the gap (``account``, ``optimizer.ladder.causes.account``) that names most of it, the
   account ranks the structural causes that could decide and that a family acts on: one whose measured parts take at
   least ``ACCOUNT_MARGIN`` more of the gap than the leader's takes the lead, and two tied causes whose shares differ
   that much are no contradiction (the account settles them). Parts no listed cause explains are named in the
   decision (``unexplained``), never forced onto a cause.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kb.vocab import CAUSE_CLASS, CAUSE_FAMILIES, Cause
from optimizer.ladder.causes.account import ACCOUNT_MARGIN, NEGLIGIBLE, AccountView
from optimizer.ladder.findings import EvidenceRef, Finding

__all__ = ["DECIDE", "DOMINANCE", "EARLY_LEAD", "EARLY_STOP", "FALLBACK", "MARGIN", "CauseScore", "Decision", "decide",
           "early_stop", "fall_back", "break_tie"]

DECIDE = 0.5
#: A structural cause ranked below the decided one may take over when every family of the decided cause refuses the
#: kernel (``fall_back``), if it scores at least this much.
FALLBACK = 0.45
MARGIN = 0.1
CLASS_BONUS = 0.1
#: L1 may stop before any profiler runs (``early_stop``) on a structural cause at least this confident ...
EARLY_STOP = 0.7
#: ... that leads every other structural cause calling for another rewrite by at least this much.
EARLY_LEAD = 0.2
#: Prior weight of each cause when several are present (one usually makes the others moot).
DOMINANCE: dict[str, float] = {
    "at_roofline": 1.0, "per_element_grid": 1.0, "fma_dot": 0.98, "same_address_atomics": 0.97, "register_spills": 0.95,
    "redundant_passes": 0.93, "tiny_programs": 0.92, "small_dot_tiles": 0.9, "unvectorized_access": 0.88,
    "launch_overhead": 0.85, "loop_reductions": 0.84, "serial_tail": 0.9, "l2_unfriendly_order": 0.8, "unknown": 0.0,
}


#: Causes that produce the symptoms of others: one element per program makes loads scalar and programs tiny; a
#: short row per program makes its masked loads narrow; an FMA dot makes its tile shape moot, and it holds both operand
#: tiles in registers (a blocked layout per thread, where an MMA reads them from shared memory), so its spills go
#: with it (the labelled attention kernel spills 14 KB on FMA and 0 B once its dots run on tensor cores). A small
#: row-loop step multiplies the per-iteration reductions of a looped row reduction.
EXPLAINS: dict[str, set[str]] = {
    "per_element_grid": {"unvectorized_access", "tiny_programs", "launch_overhead"},
    "tiny_programs": {"unvectorized_access", "loop_reductions"},
    "fma_dot": {"small_dot_tiles", "register_spills"},
    "register_spills": {"unvectorized_access"},
}


class CauseScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cause: Cause
    score: float
    support: float
    refutation: float
    structural: bool
    levels: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    """The combined verdict over all findings so far."""

    model_config = ConfigDict(extra="forbid")

    cause: Cause = "unknown"
    confidence: float = 0.0
    decided: bool = False
    structural: bool = False
    static_only: bool = Field(default=False, description="no measured evidence took part (CPU: L1 + L3 only)")
    decided_by: list[EvidenceRef] = Field(default_factory=list)
    overruled: list[str] = Field(default_factory=list)
    contradiction: str = ""
    ranking: list[CauseScore] = Field(default_factory=list)
    reason: str = ""
    fallback_from: str = Field(
        default="", description="the cause decided first, whose every family refused this kernel"
    )
    account: str = Field(default="", description="the measured account the ranking read (rule 6), when one did")
    unexplained: list[str] = Field(
        default_factory=list, description="measured parts of the gap that no listed cause explains, with their shares"
    )

    @property
    def families(self) -> tuple[str, ...]:
        return CAUSE_FAMILIES.get(self.cause, ())

    def summary(self) -> str:
        if not self.decided:
            beyond = "; ".join(self.unexplained[:3])
            beyond = f"; measured beyond the listed causes: {beyond}" if beyond else ""
            return f"no cause decided: {self.reason}{beyond}"
        by = "; ".join(r.label() for r in self.decided_by[:4])
        over = f"; overruled: {'; '.join(self.overruled[:3])}" if self.overruled else ""
        fell = f" (after {self.fallback_from}: every family that removes it refused)" if self.fallback_from else ""
        static = ", static only" if self.static_only else ""
        beyond = f"; beyond the listed causes: {'; '.join(self.unexplained[:3])}" if self.unexplained else ""
        return f"cause {self.cause} ({self.confidence:.2f}{static}) from {by}{over}{fell}{beyond}"


def _noisy_or(values: list[float]) -> float:
    p = 1.0
    for v in values:
        p *= 1.0 - max(0.0, min(1.0, v))
    return 1.0 - p


def _scores(findings: list[Finding], measured: str) -> list[CauseScore]:
    causes = {f.cause for f in findings if f.cause != "unknown"}
    roof = _noisy_or([f.confidence for f in findings if f.cause == "at_roofline"])
    roof *= 1.0 - max([f.refute_strength for f in findings if f.cause == "at_roofline"] or [0.0])
    out = []
    for c in causes:
        fs = [f for f in findings if f.cause == c]
        support = _noisy_or([f.confidence for f in fs])
        refute = max([f.refute_strength for f in fs] or [0.0])
        if c not in ("at_roofline", "fma_dot"):
            refute = max(refute, 0.8 * roof)
        score = support * (1.0 - refute)
        if support > 0 and measured != "unknown" and CAUSE_CLASS.get(c) == measured:
            score = min(1.0, score + CLASS_BONUS)
        out.append(CauseScore(cause=c, score=round(score, 4), support=round(support, 4), refutation=round(refute, 4),
                              structural=any(f.structural and f.confidence > 0 for f in fs),
                              levels=sorted({f.level for f in fs if f.confidence > 0})))
    by = {s.cause: s for s in out}
    for a, explained in EXPLAINS.items():  # a confirmed cause explains the symptoms it produces
        if a in by and by[a].support >= DECIDE:
            for b in explained & set(by):
                by[b].score = round(by[b].score * 0.5, 4)
    out.sort(
        key=lambda s: (s.structural and s.cause != "at_roofline", s.score * DOMINANCE.get(s.cause, 0.5)), reverse=True
    )
    # at the roofline (measured, unrefuted) wins over structural causes that it refutes
    if roof >= DECIDE:
        out.sort(
            key=lambda s: (s.cause == "at_roofline" or (s.cause == "fma_dot" and s.score >= DECIDE), s.score),
            reverse=True,
        )
    return out


def _by_account(ranking: list[CauseScore], account: AccountView) -> tuple[list[CauseScore], str]:
    """Rule 6: the structural cause a family acts on with the largest measured share leads, when it is ahead of the
    leader's share by ``ACCOUNT_MARGIN``; returns the ranking and what the account overruled ("" when nothing)."""
    if not ranking or not ranking[0].structural or ranking[0].cause == "at_roofline":
        return ranking, ""
    top = ranking[0]
    able = [s for s in ranking if s.structural and s.score >= DECIDE and s.cause not in ("at_roofline", "unknown")
            and CAUSE_FAMILIES.get(s.cause)]
    if not able:
        return ranking, ""
    lead = max(able, key=lambda s: account.share(s.cause))
    if lead is top or account.share(lead.cause) < account.share(top.cause) + ACCOUNT_MARGIN:
        return ranking, ""
    note = (f"{top.cause} ({top.score:.2f}) explains {account.share(top.cause):.0%} of the measured gap, "
            f"{lead.cause} {account.share(lead.cause):.0%}: the account decides")
    return [lead, *(s for s in ranking if s is not lead)], note


def decide(findings: list[Finding], *, measured: str = "unknown", measured_any: bool = False,
           account: AccountView | None = None) -> Decision:
    """``measured``: the L2 class (``unknown`` when none); ``measured_any``: whether any measurement took part;
    ``account``: L2's measured account of the gap (rule 6), when one was measured."""
    ranking = [s for s in _scores(findings, measured) if s.support > 0]
    d = Decision(ranking=ranking, static_only=not measured_any)
    by_account = ""
    if account is not None:
        d.account, d.unexplained = account.line(), list(account.unexplained)
        if account.usable:
            ranking, by_account = _by_account(ranking, account)
            d.ranking = ranking
    if not ranking:
        d.reason = "no level produced a cause finding"
        return d
    top = ranking[0]
    d.cause, d.confidence, d.structural = top.cause, top.score, top.structural
    if top.score < DECIDE:
        d.reason = f"the best cause {top.cause} scores {top.score:.2f} < {DECIDE}"
        return d
    rivals = [s for s in ranking[1:] if s.structural and top.structural and s.score >= top.score - MARGIN
              and CAUSE_FAMILIES.get(s.cause, ())[:1] != CAUSE_FAMILIES.get(top.cause, ())[:1]
              and s.cause not in EXPLAINS.get(top.cause, set()) and top.cause not in EXPLAINS.get(s.cause, set())]
    if account is not None and account.usable:  # the account settles a tie its shares tell apart
        rivals = [s for s in rivals if abs(account.share(s.cause) - account.share(top.cause)) < ACCOUNT_MARGIN]
    if rivals:
        d.contradiction = (f"{top.cause} ({top.score:.2f}) and {rivals[0].cause} ({rivals[0].score:.2f}) are equally "
                           "supported and call for different rewrites")
        d.reason = d.contradiction
        return d
    d.decided = True
    fs = [f for f in findings if f.cause == top.cause and f.confidence > 0]
    d.decided_by = [r for f in sorted(fs, key=lambda f: -f.confidence) for r in f.supporting][:6]
    if measured != "unknown" and CAUSE_CLASS.get(top.cause) != measured and top.cause != "at_roofline":
        d.overruled.append(f"L2 class {measured} (generic) overruled by {top.cause}"
                           + (" tied to source lines" if top.structural else ""))
    if by_account:
        d.overruled.append(by_account)
    d.overruled += [
        f"{s.cause} ({s.score:.2f}, {'/'.join(s.levels)}) not dominant" for s in ranking[1:] if s.score >= 0.3
    ]
    d.reason = f"{top.cause} leads with {top.score:.2f}" + (" by the measured account" if by_account else "")
    if account is not None and account.usable and top.structural and account.share(top.cause) < NEGLIGIBLE:
        d.overruled.append(f"note: the measured account puts {account.share(top.cause):.0%} of the gap on "
                           f"{top.cause}'s symptoms ({account.line()})")
    return d


def fall_back(d: Decision, findings: list[Finding], refused: str) -> list[Decision]:
    """Decisions for the next structural causes, best first, when ``d``'s cause cannot be removed on this kernel.

    A decided cause whose every family refuses the kernel leaves it in place; the ladder used to fall back on the
    L2 class's generic family then (a launch knob for a three-pass layer norm). The next structural cause that
    scores at least ``FALLBACK`` and calls for another rewrite is the better evidence: each is returned as a decided
    ``Decision`` naming the cause it replaces (``fallback_from``) and why (``refused``)."""
    out = []
    first = CAUSE_FAMILIES.get(d.cause, ())
    for s in d.ranking:
        if (s.cause == d.cause or not s.structural or s.score < FALLBACK or s.cause in ("at_roofline", "unknown")
                or not CAUSE_FAMILIES.get(s.cause) or CAUSE_FAMILIES.get(s.cause, ())[:1] == first[:1]):
            continue
        fs = [f for f in findings if f.cause == s.cause and f.confidence > 0]
        out.append(d.model_copy(update={
            "cause": s.cause, "confidence": s.score, "structural": True, "fallback_from": d.cause,
            "decided_by": [r for f in sorted(fs, key=lambda f: -f.confidence) for r in f.supporting][:6],
            "overruled": [*(o for o in d.overruled if not o.startswith(f"{s.cause} (")),
                          f"{d.cause} ({d.confidence:.2f}) cannot be removed here: {refused[:200]}"],
            "reason": f"{s.cause} ({s.score:.2f}) takes over from {d.cause}, whose families refused this kernel"}))
    return out


def break_tie(d: Decision, findings: list[Finding]) -> list[Decision]:
    """Decisions for the causes of an unresolved contradiction, in ranking order (score x dominance prior).

    A contradiction escalates; when the last level still sees two equally supported structural causes calling for
    different rewrites, falling back on the L2 class's generic family tries a knob neither cause names (a naive
    kl_div: a buffer round trip and a 256-column loop step tie at 0.60 through L4; the class's family is a
    shared-memory knob).
    Both causes are real; the caller takes the first of these whose family applies to the kernel, and the record
    names the contradiction it broke."""
    if d.decided or not d.contradiction or not d.ranking:
        return []
    top = d.ranking[0]
    tied = [
        s
        for s in d.ranking
        if s.structural and s.score >= top.score - MARGIN and s.cause not in ("at_roofline", "unknown")
    ]
    out = []
    for s in tied:
        fs = [f for f in findings if f.cause == s.cause and f.confidence > 0]
        out.append(d.model_copy(update={
            "cause": s.cause, "confidence": s.score, "structural": True, "decided": True,
            "decided_by": [r for f in sorted(fs, key=lambda f: -f.confidence) for r in f.supporting][:6],
            "overruled": [*d.overruled, f"contradiction at the last level broken by applicability: {d.contradiction}"],
            "reason": f"{s.cause} ({s.score:.2f}) acted on: tied with another cause at the last level"}))
    return out


def early_stop(d: Decision, *, headroom_measured: bool) -> tuple[bool, str]:
    """Whether L1's decision may stop the ladder before L2 profiles (issue "Fast, honest rounds"), and why.

    The profiler and Nsight Compute cost 15-50 s a round on the H200 and, for a decided structural cause, cannot
    change the decision: their findings are not structural (``decide`` ranks structural causes first), and the one
    measured figure that refutes a structural cause, the roofline fraction, comes from the round's timing, which L1
    already has (``headroom_measured``: the timing roofline was read at L1). So L1 stops when:

    - the timing puts every case at the roofline (``at_roofline`` decided from that measurement), or
    - the cause is structural (tied to source lines), decided with >= ``EARLY_STOP``, the timing shows headroom, and no
      other structural cause that calls for a different rewrite scores within ``EARLY_LEAD`` (a close rival is what
      L2's counters and L3's IR would have to settle).
    Anything else escalates as before.
    """
    if not d.decided:
        return False, f"no cause decided at L1 ({d.reason})"
    if not headroom_measured:
        return False, "no timing roofline at L1 (interpreter, or a device without known peaks)"
    if d.cause == "at_roofline":
        return True, "the round's timing puts every case at its roofline"
    if not d.structural:
        return False, f"{d.cause} is not tied to source lines: profile it"
    if d.confidence < EARLY_STOP:
        return False, f"{d.cause} at {d.confidence:.2f} < {EARLY_STOP}: profile it"
    fam = CAUSE_FAMILIES.get(d.cause, ())[:1]
    close = [
        s
        for s in d.ranking[1:]
        if s.structural
        and s.score > d.confidence - EARLY_LEAD
        and s.cause != "at_roofline"
        and CAUSE_FAMILIES.get(s.cause, ())[:1] != fam
        and s.cause not in EXPLAINS.get(d.cause, set())
    ]
    if close:
        return (
            False,
            f"{close[0].cause} ({close[0].score:.2f}) is within {EARLY_LEAD} of {d.cause}: profile to settle it",
        )
    return (
        True,
        f"{d.cause} ({d.confidence:.2f}) is structural, leads by >= {EARLY_LEAD}, and the timing shows headroom",
    )
