"""Review decisions are atomic and never applied twice: the card version, the proposal's state and the event
are one transaction; a decided proposal cannot be decided again; edited cards must be storable."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kb.errors import Conflict, InvalidArgument, NotFound, StorageError
from kb.models import Evidence, PatternCard
from synthesis.curation import Curator
from synthesis.models import EvidenceRef, Proposal


@contextmanager
def crash_on_write(store, table: str) -> Iterator[None]:
    """Make every write to ``table`` fail, as a process killed at that statement would: whatever the same
    transaction wrote is rolled back, and what earlier transactions committed stays."""

    def deny(action: int, arg1: str | None, *_: object) -> int:
        writes = (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE)
        return sqlite3.SQLITE_DENY if action in writes and arg1 == table else sqlite3.SQLITE_OK

    store._db.set_authorizer(deny)
    try:
        yield
    finally:
        store._db.set_authorizer(None)


def _example(kb, tag: str) -> Proposal:
    """A pending 'example' proposal on an active family (approving it adds a version to that family)."""
    target = next(c for c in kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
    draft = target.model_copy(update={"evidence": [Evidence(kind="measurement", text=f"round {tag}",
                                                                source=f"{tag}#1")]})
    p = Proposal(id=f"example.{target.id}.{tag}", kind="example", card=draft, target_family=target.id,
                 base_version=target.version, confidence=0.8, evidence=[EvidenceRef(round_ref=f"{tag}#1")])
    kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    return p


def _new_family(kb, tag: str) -> Proposal:
    card = PatternCard(id=f"cur-{tag}", title=f"Chunked row loop {tag}", status="proposed",
                       summary="Loop over a chunk of rows inside one program so tiny rows stop being launch bound.",
                       backends=["cuda"], levels=["L1"])
    p = Proposal(id=f"new-family.cur-{tag}.0001", kind="new_family", card=card, confidence=0.7)
    kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    return p


@pytest.fixture
def curator(kb):
    c = Curator(kb)
    yield c
    c.close()


def test_approval_cut_short_writes_nothing_and_a_retry_adds_one_version(kb, curator):
    p = _example(kb, "crash")
    before = kb.store.latest_version(p.target_family)
    with crash_on_write(kb.store, "proposals"), pytest.raises(StorageError):
        curator.review(p.id, "approve", reviewer="ana")
    assert kb.store.latest_version(p.target_family) == before  # the card write was rolled back with it
    assert curator.proposal(p.id).status == "pending"

    done = curator.review(p.id, "approve", reviewer="ana")
    assert done.status == "approved" and curator.proposal(p.id).status == "approved"
    assert kb.store.latest_version(p.target_family) == before + 1
    event = kb.store.events(1)[0]
    assert event["action"] == "review" and event["detail"]["proposal_id"] == p.id


def test_a_new_family_cut_short_is_not_served(kb, curator):
    p = _new_family(kb, "crash")
    with crash_on_write(kb.store, "proposals"), pytest.raises(StorageError):
        curator.review(p.id, "approve", reviewer="ana")
    with pytest.raises(NotFound):
        kb.get_card(p.card.id)
    curator.review(p.id, "approve", reviewer="ana")
    assert [c.version for c in kb.store.versions(p.card.id)] == [1]


@pytest.mark.parametrize("action", ["approve", "merge", "reject", "edit"])
def test_a_decided_proposal_is_not_decided_again(kb, curator, action):
    p = _example(kb, f"twice-{action}")
    curator.review(p.id, "approve", reviewer="ana")
    latest = kb.store.latest_version(p.target_family)
    with pytest.raises(Conflict) as e:
        curator.review(p.id, action, reviewer="bo", reason="again", card=p.card, merge_into=p.target_family)
    assert "already approved" in e.value.message and e.value.field == "status"
    assert kb.store.latest_version(p.target_family) == latest  # no second version
    again = curator.proposal(p.id)
    assert again.status == "approved" and again.reviewer == "ana"


def test_a_decision_without_a_reviewer_writes_nothing(kb, curator):
    p = _new_family(kb, "anon")
    with pytest.raises(InvalidArgument):
        curator.review(p.id, "approve", reviewer="")
    with pytest.raises(NotFound):
        kb.get_card(p.card.id)


def test_the_losing_side_of_a_race_writes_nothing(kb, curator):
    p = _example(kb, "race")
    stale = Curator(kb)
    stale.proposal = lambda _pid: p  # this reviewer read the proposal while it was still pending
    curator.review(p.id, "approve", reviewer="ana")
    latest = kb.store.latest_version(p.target_family)
    with pytest.raises(Conflict):
        stale.review(p.id, "approve", reviewer="bo")
    assert kb.store.latest_version(p.target_family) == latest
    assert curator.proposal(p.id).reviewer == "ana"


@pytest.mark.parametrize(("path", "value", "field"), [
    (("evidence", 0, "metric", "speedup"), math.nan, "card.evidence.0.metric.speedup"),
    (("evidence", 0, "metric", "speedup"), math.inf, "card.evidence.0.metric.speedup"),
    (("stats", "cited"), 2**63, "card.stats.cited"),
    (("stats", "lift_mean"), -math.inf, "card.stats.lift_mean"),
])
def test_edits_with_unstorable_numbers_are_refused(kb, curator, path, value, field):
    p = _new_family(kb, "nan")
    doc = p.card.model_dump(mode="json")
    doc["evidence"] = [{"kind": "measurement", "text": "t", "metric": {}}]
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(InvalidArgument) as e:
        curator.review(p.id, "edit", reviewer="ana", card=doc)
    assert e.value.field == field
    assert curator.proposal(p.id).card == p.card

    served = next(c for c in kb.store.served_cards() if c.kind == "pattern")
    edit = served.model_dump(mode="json") | {"summary": "An edited summary of this family, long enough."}
    edit["evidence"], node = [{"kind": "measurement", "text": "t", "metric": {}}], edit
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(InvalidArgument) as e:
        curator.propose_edit(edit, author="bo")
    assert e.value.field == field


def test_the_queue_is_read_in_pages_that_do_not_shift(kb, curator):
    made = [_new_family(kb, f"page{i}").id for i in range(5)]
    first = curator.proposal_page("pending", page_size=2)
    assert [p.id for p in first.proposals] == made[:2] and first.next_cursor == first.cursors[-1]
    curator.review(made[0], "reject", reviewer="ana", reason="duplicate")  # leaves the pending view
    rest, cursor = [], first.next_cursor
    while cursor:
        page = curator.proposal_page("pending", page_size=2, cursor=cursor)
        rest += [p.id for p in page.proposals]
        cursor = page.next_cursor
    assert rest == made[2:]  # nothing skipped although the view shrank
    assert [p.id for p in curator.proposal_page(None, 1, first.cursors[0]).proposals] == [made[1]]


@pytest.mark.parametrize(("args", "field"), [({"page_size": 0}, "page_size"), ({"page_size": 501}, "page_size"),
                                             ({"cursor": "not-a-cursor"}, "cursor")])
def test_bad_page_requests_name_the_field(curator, args, field):
    with pytest.raises(InvalidArgument) as e:
        curator.proposal_page("pending", **args)
    assert e.value.field == field
