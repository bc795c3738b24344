"""Causes as KB data (issue 30, "Causes that grow"): the seed, migration 5 on a store holding cards and trajectories,
seeding that never overwrites a curated cause, and the KB checking the causes a trajectory or a card cites."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from kb.causes import SEED_CAUSES
from kb.errors import Conflict, InvalidArgument
from kb.models import (
    CauseRecord,
    EscalationTests,
    PatternCard,
    ProblemRef,
    Round,
    StopDecision,
    Trajectory,
)
from kb.store.structured import SCHEMA_VERSION, StructuredStore
from kb.vocab import CAUSE_CLASS, CAUSE_FAMILIES, CAUSES


def _card(cid: str, **kw) -> PatternCard:
    return PatternCard.model_validate({"id": cid, "title": f"Card {cid}", "summary": "A card kept across migration.",
                                       "backends": ["cuda"], "levels": ["L1"], "status": "proposed", **kw})


def _traj(tid: str, cause: str = "tiny_programs", problem: str = "softmax") -> Trajectory:
    stop = StopDecision(level="L1", rationale="r", cause=cause,
                        tests=EscalationTests(localized=True, single_family=True, justified=True))
    return Trajectory(id=tid, problem=ProblemRef(name=problem), backend="cuda",
                      rounds=[Round(index=0, outcome="baseline"), Round(index=1, outcome="neutral", stop=stop)])


def test_the_seed_is_the_code_side_default_set():
    assert {c.id for c in SEED_CAUSES} == CAUSES
    for c in SEED_CAUSES:
        assert c.families == list(CAUSE_FAMILIES[c.id]) and c.bottleneck_class == CAUSE_CLASS[c.id]
        assert c.status == "active" and c.description


def test_a_cause_id_is_checked_for_syntax_not_membership():
    CauseRecord(id="strided_access", title="Strided access", description="A stride-s access wastes sectors.")
    for bad in ("Strided", "x", "has-dash", "a" * 49, "9lives"):
        with pytest.raises(ValidationError, match="id"):
            CauseRecord(id=bad, title="Bad id", description="An id that is not snake_case.")
    with pytest.raises(ValidationError, match="families.0"):
        CauseRecord(id="ok_id", title="Bad family", description="A family that is not a slug.", families=["Not A Slug"])
    _traj("t-new-cause", cause="strided_access")  # any snake_case id is a valid model; the KB decides if it knows it
    with pytest.raises(ValidationError, match="cause"):
        _traj("t-bad-cause", cause="Not-A-Cause")


def _downgrade_to_v4(path: Path) -> None:
    """What a store written by schema 4 looks like: no causes table, schema_version 4."""
    db = sqlite3.connect(path)
    db.execute("DROP TABLE causes")
    db.execute("DELETE FROM events WHERE card_id LIKE 'cause:%'")
    db.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    db.commit()
    db.close()


def test_migration_5_seeds_causes_and_keeps_every_card_trajectory_and_proposal(tmp_path: Path):
    path = tmp_path / "kb.sqlite3"
    s = StructuredStore(path)
    s.put_card(_card("kept-a"))
    s.put_card(_card("kept-a", summary="A second version of the kept card."))
    s.set_status("kept-a", "active", version=2)
    s.put_card(_card("kept-b"))
    assert s.put_trajectory(_traj("traj-one")) and s.put_trajectory(_traj("traj-two", "fma_dot", "matmul"))
    s.put_proposal("p-1", "pending", {"id": "p-1", "note": "kept"})
    before = {"cards": [c.model_dump() for c in s.served_cards()], "versions": len(s.versions("kept-a")),
              "trajectories": [t.model_dump() for t in s.trajectories()], "proposals": s.list_proposals(),
              "events": [e for e in s.events(1000) if not e["card_id"].startswith("cause:")]}
    s.close()
    _downgrade_to_v4(path)
    copy = tmp_path / "copy" / "kb.sqlite3"  # migrate a copy, as an operator would test it first
    copy.parent.mkdir()
    shutil.copy(path, copy)

    s = StructuredStore(copy)
    try:
        assert s.schema_version() == SCHEMA_VERSION == 5
        assert [c.model_dump() for c in s.served_cards()] == before["cards"]
        assert len(s.versions("kept-a")) == before["versions"]
        assert [t.model_dump() for t in s.trajectories()] == before["trajectories"]
        assert s.list_proposals() == before["proposals"]
        assert {c.id for c in s.causes()} == CAUSES
        assert s.get_cause("fma_dot").description.startswith("tl.dot lowered to FMA")
        events = s.events(1000)
        assert [e for e in events if not e["card_id"].startswith("cause:")] == before["events"]
        assert sorted(e["card_id"] for e in events if e["card_id"].startswith("cause:")) == sorted(
            f"cause:{c}" for c in CAUSES)  # one seed event per cause, nothing else
    finally:
        s.close()
    s = StructuredStore(copy)  # a second open changes nothing
    try:
        assert [c.version for c in s.causes()] == [1] * len(CAUSES)
    finally:
        s.close()


def test_seeding_adds_and_refreshes_seed_causes_but_never_a_curated_one(tmp_path: Path):
    s = StructuredStore(tmp_path / "kb.sqlite3")
    try:
        assert s.seed_causes(SEED_CAUSES) == 0  # the migration seeded them already
        curated = s.get_cause("tiny_programs").model_copy(update={"description": "A curator's sharper description."})
        s.put_cause(curated, source="review")
        changed = [c.model_copy(update={"description": c.description + " (v2)"}) for c in SEED_CAUSES]
        extra = CauseRecord(id="strided_access", title="Strided access", description="A stride-s access wastes sectors.")
        assert s.seed_causes([*changed, extra]) == len(CAUSES) - 1 + 1
        assert s.get_cause("tiny_programs").description == "A curator's sharper description."
        assert s.get_cause("fma_dot").description.endswith("(v2)") and s.get_cause("fma_dot").version == 2
        assert [c.version for c in s.cause_versions("fma_dot")] == [1, 2]  # the old version is kept
        assert "strided_access" in s.citable_causes()
    finally:
        s.close()


def test_cause_review_follows_the_card_transitions(tmp_path: Path):
    s = StructuredStore(tmp_path / "kb.sqlite3")
    try:
        s.put_cause(CauseRecord(id="strided_access", title="Strided access", status="proposed",
                                description="A stride-s access wastes sectors."))
        assert "strided_access" in s.citable_causes()
        s.set_cause_status("strided_access", "rejected", reason="duplicate of unvectorized_access")
        assert "strided_access" not in s.citable_causes()
        assert s.causes(["rejected"])[0].id == "strided_access"
        with pytest.raises(Conflict) as e:
            s.set_cause_status("strided_access", "active")
        assert e.value.field == "status"
    finally:
        s.close()


def test_the_kb_refuses_a_trajectory_or_card_citing_an_unknown_cause(kb):
    with pytest.raises(InvalidArgument) as e:
        kb.submit_trajectory(_traj("traj-unknown-cause", cause="strided_access"))
    assert e.value.field == "trajectory.rounds.1.stop.cause"
    assert "ladder kb causes" in str(e.value)
    card = _card("needs-a-cause", rewrite={"description": "d", "recipe": {"kind": "launch_params",
                                                                       "requires": ["code:tl.dot|cause:strided_access"]}})
    with pytest.raises(InvalidArgument) as e:
        kb.upsert_card(card)
    assert e.value.field == "card.rewrite.recipe.requires.0"

    kb.store.put_cause(CauseRecord(id="strided_access", title="Strided access", status="proposed",
                                   description="A stride-s access wastes sectors."))
    assert kb.submit_trajectory(_traj("traj-unknown-cause", cause="strided_access"))  # no code change needed
    assert kb.upsert_card(card).id == "needs-a-cause"
    assert [c.id for c in kb.list_causes(["proposed"])] == ["strided_access"]
    with pytest.raises(InvalidArgument) as e:
        kb.list_causes(["shiny"])
    assert e.value.field == "statuses.0"
