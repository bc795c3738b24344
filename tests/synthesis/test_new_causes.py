"""New causes from trajectories (issue 30, "Causes that grow"): an inefficiency no known cause explains, removed by
a family's improving round, becomes a ``new_cause`` proposal; approving it makes the cause usable at once.

The fixture is a session as the optimizer records it: each round's L3 evidence holds a ``gap_account`` item (the
``GapAccount`` of the kernel the round started from) and an ``unexplained`` item per significant finding none of
the supported causes explains (``optimizer.ladder.gap_account.account_evidence``)."""

from __future__ import annotations

from synth_builders import NOW, card, fake_embed, rnd, traj

from kb.models import EscalationTests, EvidenceItem, Round, StopDecision, Trajectory
from optimizer.ir.gap_account import GapAccount, GapFinding
from synthesis.causes import find_removals, new_cause_proposals
from synthesis.curation import Curator
from synthesis.pipeline import synthesize
from synthesis.rounds import collect_rounds

STRIDE = dict(kind="access_stride", kernel="colsum_kernel", unit="bytes fetched per useful byte", proof="static",
              source_lines=[14], share_basis="DRAM bytes under a sector model")


def _account(stride: float, share: float | None, significant: bool) -> list[EvidenceItem]:
    """The L3 items of a round whose base reads columns with the given element stride."""
    f = GapFinding(value=stride, significant=significant, share=share,
                   summary=f"tl.load of x at stride {stride:g} elements: {stride:g}x the useful bytes", **STRIDE)
    width = GapFinding(kind="vector_width", kernel="colsum_kernel", value=128, unit="bits per thread",
                       summary="ld.global.v4.b32", significant=False)
    acc = GapAccount(kernel="colsum_kernel", config="BLOCK=128", grid=[1024], findings=[f, width])
    items = [EvidenceItem(level="L3", kind="gap_account", reference="colsum_kernel", summary="account",
                          data=acc.model_dump(mode="json"))]
    if significant:
        items.append(EvidenceItem(level="L3", kind="unexplained", reference="access_stride",
                                  summary=f"colsum_kernel: {f.line()}; no listed cause explains it",
                                  data=f.model_dump(mode="json")))
    return items


def _round(index: int, family: str, speedup: float, evidence: list[EvidenceItem], **kw) -> Round:
    r = rnd(index, "columns are read with a stride: transpose the tile so loads are contiguous",
            "Load a BLOCK_M x BLOCK_N tile and reduce along rows so each warp reads contiguous memory.",
            family=family, speedup=speedup, **kw)
    stop = StopDecision(level="L3", bottleneck="memory_bound", cause="unknown", rationale="the account localizes it",
                        tests=EscalationTests(localized=True, single_family=True, justified=True))
    return r.model_copy(update={"evidence": evidence, "levels_reached": ["L1", "L2", "L3"], "stop": stop})


def _session(tid: str = "colsum-1", *, after_share: float | None = None, family: str = "transpose-tile-loads",
             second: str = "improved-then-account", problem: str = "colsum") -> Trajectory:
    base = Round(index=0, outcome="baseline", hypothesis="baseline: the initial candidate")
    r1 = _round(1, family, 2.4, _account(16, 0.62, True))  # the round that removes the stride
    after = _account(1 if after_share is None else 16, after_share, after_share is not None)
    if second == "improved-then-account":
        rounds = [base, r1, _round(2, "autotune-num-warps", 2.45, after, outcome="neutral")]
    else:  # an improved round without an account comes first: the base moved on, nothing can be said
        rounds = [base, r1, _round(2, "autotune-num-warps", 3.0, []), _round(3, "x", 3.0, after, outcome="neutral")]
    return traj(tid, rounds, problem=problem)


def _mine(trajectories, explained=frozenset(), cards=()):
    records = {r.ref: r for r in collect_rounds(trajectories)}
    removals = find_removals(trajectories, records, set(explained))
    return removals, new_cause_proposals(removals, list(cards), taken_causes=set(), taken_cards=set(), now=NOW)


def test_an_unexplained_inefficiency_a_family_removed_becomes_a_new_cause_and_family():
    removals, (p,) = _mine([_session()])
    assert [(x.kind, x.family, x.rec.ref, x.after_ref) for x in removals] == [
        ("access_stride", "transpose-tile-loads", "colsum-1#1", "colsum-1#2")]
    assert p.kind == "new_cause" and p.status == "pending" and p.target_family is None
    assert p.cause.id == "access_stride" and p.cause.status == "proposed" and p.cause.explains == ["access_stride"]
    assert p.cause.families == ["transpose-tile-loads"] == [p.card.id] and p.card.status == "proposed"
    assert p.cause.bottleneck_class == "memory_bound"
    (ev,) = p.cause.evidence
    assert ev.source == "colsum-1#1" and ev.metric["before_value"] == 16 and ev.metric["after_value"] == 1
    assert ev.metric["before_cost"] == 0.62 and ev.metric["after_cost"] == 0.0 and "colsum-1#2" in ev.text
    assert p.evidence[0].round_ref == "colsum-1#1" and p.evidence[0].lift is not None


def test_no_proposal_when_a_known_cause_explains_it_or_it_did_not_fall_or_the_base_moved_on():
    assert _mine([_session()], explained={"access_stride"}) == ([], [])
    assert _mine([_session(after_share=0.45)]) == ([], [])  # 0.62 -> 0.45: less than half removed
    assert _mine([_session(second="base-moved")]) == ([], [])
    removals, _ = _mine([_session(after_share=0.2)])  # 0.62 -> 0.2 still counts
    assert removals[0].cost() == (0.62, 0.2)


def test_an_existing_family_gets_the_examples_and_is_named_by_the_cause(families):
    fam = card("transpose-tile-loads", "Transpose tiles for contiguous loads", "Read tiles so warps load contiguous "
               "rows instead of strided columns.", "Load a tile and reduce along rows.")
    _, (p,) = _mine([_session(), _session("colsum-2", problem="rowsum-t")], cards=[*families, fam])
    assert p.target_family == fam.id and p.base_version == 1 and p.card.version == 2
    assert {e.source for e in p.card.evidence} >= {"colsum-1#1", "colsum-2#1"}
    assert p.cause.families == [fam.id] and len(p.cause.evidence) == 2


def test_synthesize_proposes_it_beside_the_other_proposals(families):
    res = synthesize([_session()], families, fake_embed, now=NOW)
    assert [p.cause.id for p in res.proposals if p.kind == "new_cause"] == ["access_stride"]
    from kb.causes import SEED_CAUSES
    known = [*SEED_CAUSES, SEED_CAUSES[0].model_copy(update={"id": "strided", "explains": ["access_stride"]})]
    assert not [p for p in synthesize([_session()], families, fake_embed, now=NOW, causes=known).proposals
                if p.kind == "new_cause"]


def test_approving_a_new_cause_stores_cause_and_card_and_the_kb_accepts_the_cause(kb):
    curator = Curator(kb, embed=fake_embed)
    assert kb.submit_trajectory(_session())
    (p,) = [p for p in curator.run().proposals if p.kind == "new_cause"]
    assert "access_stride" not in {c.id for c in kb.list_causes()}  # pending: nothing stored yet
    curator.review(p.id, "approve", reviewer="ana")
    cause = kb.get_cause("access_stride")
    assert cause.status == "active" and cause.families == ["transpose-tile-loads"]
    assert kb.get_card("transpose-tile-loads").status == "active"
    # a later trajectory may cite the new cause with no code change, and synthesis does not propose it again
    cited = _session("colsum-3", problem="colsum-3")
    cited.rounds[1].stop.cause = "access_stride"
    assert kb.submit_trajectory(cited)
    assert not [p for p in curator.run().proposals if p.kind == "new_cause"]
