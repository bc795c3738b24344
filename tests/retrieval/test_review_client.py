"""The review queue through both ReviewClient transports (embedded Curator and SynthesisService) on one KB:
list/show beside the nearest family, edit a draft, reject needs a reason, approve refreshes quick-match, edits
of an active card stay unserved until approved, stale edits are refused. (`ladder synthesize` is covered by
the CLI test.)"""

from __future__ import annotations

import pytest

from kb.errors import Conflict, InvalidArgument, PermissionDenied
from kb.models import PatternCard
from kb.models.search import QuickMatchQuery
from retrieval.client.review import LocalReview, RemoteReview, connect_review
from synthesis.models import EvidenceRef, Proposal


def _proposal(tag: str, target: str) -> Proposal:
    card = PatternCard(id=f"rc-{tag}-card", title=f"Chunked row loop {tag}", status="proposed",
                       summary="Loop over a chunk of rows inside one program so tiny rows stop being launch bound.",
                       backends=["cuda"], levels=["L1", "L2"], rewrite={"description": "ROWS-per-program loop."})
    return Proposal(id=f"new-family.rc-{tag}.0001", kind="new_family", card=card, confidence=0.7,
                    target_family=target, evidence=[EvidenceRef(round_ref=f"{tag}#1", speedup=1.8, lift=1.8)])


@pytest.fixture(params=["local", "remote"])
def queue(request, server):
    if request.param == "local":
        yield request.param, LocalReview(server.kb, curator=server.curator)
    else:
        with connect_review(f"127.0.0.1:{server.port}", token="review-token-0123456789") as r:
            assert isinstance(r, RemoteReview)
            yield request.param, r


def test_review_flow(queue, server):
    tag, q = queue
    target = next(c.id for c in server.kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
    p = _proposal(tag, target)
    server.kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))

    assert p.id in [x.id for x in q.proposals("pending")]
    assert p.id not in [x.id for x in q.proposals("approved")]
    item = q.get(p.id)
    assert item.nearest is not None and item.nearest.id == target and item.proposal.evidence[0].speedup == 1.8
    with pytest.raises(InvalidArgument) as e:
        q.review(p.id, "reject", reviewer="ana")
    assert e.value.field == "reason"
    with pytest.raises(InvalidArgument):
        q.proposals("bogus")

    draft = item.proposal.card.model_copy(update={"title": f"Rows per program loop {tag}"})
    edited = q.review(p.id, "edit", reviewer="ana", card=draft)
    assert edited.proposal.status == "pending" and edited.proposal.card.title == draft.title

    done = q.review(p.id, "approve", reviewer="ana", reason="clear win")
    assert done.proposal.status == "approved" and done.proposal.reviewer == "ana"
    card = server.kb.get_card(draft.id)
    assert card.status == "active" and card.title == draft.title
    hits = server.kb.quick_match(QuickMatchQuery(text=draft.title, backend="cuda", top_k=5))
    assert draft.id in [h.card.id for h in hits]  # no restart needed

    # an edit of an active card is a new version that is not served until approved
    v = card.version
    change = card.model_copy(update={"summary": "Process several rows per program; grid shrinks by ROWS."})
    e1 = q.propose_edit(change, author="bo")
    assert e1.proposal.kind == "edit" and e1.proposal.base_version == v and e1.nearest.version == v
    assert q.get_card(draft.id).summary == card.summary
    other = card.model_copy(update={"summary": "A competing edit made from the same base version."})
    e2 = q.propose_edit(other, author="cy")
    q.review(e1.proposal.id, "approve", reviewer="ana")
    served = q.get_card(draft.id)
    assert served.summary == change.summary and served.version == v + 1 and served.status == "active"
    with pytest.raises(Conflict):  # e2 was made against v, the card is now v+1
        q.review(e2.proposal.id, "approve", reviewer="ana")
    with pytest.raises(InvalidArgument):
        q.propose_edit(served, author="bo")  # changes nothing


def test_remote_writes_need_reviewer_token(server):
    with connect_review(f"127.0.0.1:{server.port}", token="contrib-token-0123456789") as q:
        with pytest.raises(PermissionDenied):
            q.review("new-family.none.0001", "approve", reviewer="x")
        assert isinstance(q.proposals("all"), list)  # reads are open

