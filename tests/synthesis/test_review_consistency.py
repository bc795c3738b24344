"""Issue 32, item 5: synthesis and review stay consistent under concurrency.

- a trajectory submitted while a synthesis run mines is left for the next run (it was marked synthesized unmined);
- new-card ids are unique across runs, and approving a second proposal whose id was taken meanwhile stores the
  card under a suffixed id (it used to silently replace the live card approved minutes earlier);
- activating a card names the version reviewed (without it, a version slipped in after the review was activated);
- approving a new version (an example, a merge) retires the old one: one active version per card.
"""

from __future__ import annotations

import pytest
from synth_builders import fake_embed, rnd, traj

from kb.errors import InvalidArgument
from kb.models import Evidence, PatternCard
from synthesis.curation import Curator
from synthesis.models import EvidenceRef, Proposal


@pytest.fixture
def curator(kb):
    c = Curator(kb, embed=fake_embed)
    yield c
    c.close()


def _traj(tid: str, problem: str = "softmax"):
    return traj(tid, [rnd(0, "rows per program loop", "loop over rows", family="rows-per-program", speedup=1.6,
                          diff=f"-a\n+{tid}\n")], problem=problem)


def test_a_trajectory_arriving_during_a_run_is_mined_by_the_next(kb, curator, monkeypatch):
    import synthesis.curation as curation

    kb.submit_trajectory(_traj("t-first"))
    real = curation.synthesize

    def slow_synthesize(*a, **kw):  # a contributor submits while the run mines
        kb.submit_trajectory(_traj("t-late", problem="layernorm"))
        return real(*a, **kw)

    monkeypatch.setattr(curation, "synthesize", slow_synthesize)
    curator.run()
    monkeypatch.setattr(curation, "synthesize", real)
    new = {t.id for t in kb.store.trajectories(only_new=True)}
    assert new == {"t-late"}, "the late trajectory must stay unsynthesized"
    result = curator.run()
    assert result.report.trajectories >= 1
    assert kb.store.trajectories(only_new=True) == []


def _new_family(kb, pid: str, cid: str, title: str) -> Proposal:
    card = PatternCard(id=cid, title=title, status="proposed", backends=["cuda"], levels=["L1"],
                       summary="Loop over a chunk of rows inside one program so tiny rows stop being launch bound.")
    p = Proposal(id=pid, kind="new_family", card=card, confidence=0.7, evidence=[EvidenceRef(round_ref=f"{pid}#1")])
    kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    return p


def test_a_taken_new_card_id_gets_a_suffix_never_a_replace(kb, curator):
    first = _new_family(kb, "new-family.same-id.0001", "same-id", "First family")
    second = _new_family(kb, "new-family.same-id.0002", "same-id", "Second family")
    curator.review(first.id, "approve", reviewer="ana")
    done = curator.review(second.id, "approve", reviewer="ana")
    live = kb.get_card("same-id")
    assert live.title == "First family" and live.version == 1 and live.status == "active"
    assert done.card.id == "same-id-2" and "same-id was already taken" in done.reviewer_notes
    assert kb.get_card("same-id-2").title == "Second family"
    assert curator.proposal(second.id).card.id == "same-id-2"


def test_reserved_ids_keep_new_card_ids_unique_across_runs(families):
    from synth_builders import NOW

    from synthesis import synthesize

    rounds = [rnd(i, "stage the mask in shared memory", "stage mask via smem", family="smem-mask-staging",
                  speedup=1.5 + i / 10, diff=f"-m{i}\n+s{i}\n") for i in range(3)]
    trajs = [traj(f"t-{i}", [r], problem=f"p{i}") for i, r in enumerate(rounds)]
    a = synthesize(trajs, families, fake_embed, now=NOW)
    (new_a,) = [p for p in a.proposals if p.kind == "new_family"]
    b = synthesize(trajs, families, fake_embed, now=NOW, reserved_ids={new_a.card.id})
    (new_b,) = [p for p in b.proposals if p.kind == "new_family"]
    assert new_b.card.id == f"{new_a.card.id}-2"


def test_activation_needs_the_version_reviewed(kb):
    card = PatternCard(id="slip-card", title="Reviewed card", summary="The version the reviewer actually read.",
                       backends=["cuda"], levels=["L1"])
    v1 = kb.upsert_card(card)
    kb.upsert_card(card.model_copy(update={"title": "Slipped in later", "summary": "A version stored after the "
                                                                                 "review, never reviewed."}))
    with pytest.raises(InvalidArgument) as e:
        kb.set_card_status("slip-card", "active")
    assert e.value.field == "version" and "v2" in e.value.message
    activated = kb.set_card_status("slip-card", "active", version=v1.version)
    assert activated.version == 1 and kb.get_card("slip-card").title == "Reviewed card"
    assert kb.store.events(1)[0]["detail"]["version"] == 1


def test_approving_an_example_retires_the_previous_version(kb, curator):
    target = next(c for c in kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
    draft = target.model_copy(update={"evidence": [Evidence(kind="measurement", text="round x", source="x#1")]})
    p = Proposal(id=f"example.{target.id}.retire", kind="example", card=draft, target_family=target.id,
                 base_version=target.version, confidence=0.8, evidence=[EvidenceRef(round_ref="x#1")])
    kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    curator.review(p.id, "approve", reviewer="ana")
    versions = kb.store.versions(target.id)
    assert [v.status for v in versions].count("active") == 1
    assert versions[-1].status == "active" and kb.get_card(target.id).version == versions[-1].version
    assert kb.store.get_card(target.id, target.version).status == "deprecated"


def test_a_deprecation_acts_on_the_version_it_was_proposed_on(kb, curator):
    from kb.errors import Conflict

    target = next(c for c in kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
    p = Proposal(id=f"deprecation.{target.id}.v", kind="deprecation",
                 card=target.model_copy(update={"status": "deprecated"}), target_family=target.id,
                 base_version=target.version, confidence=0.9, evidence=[EvidenceRef(round_ref="d#1")])
    kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    newer = kb.upsert_card(target.model_copy(update={"summary": "A newer reviewed version of this family card."}))
    kb.set_card_status(target.id, "active", version=newer.version)
    with pytest.raises(Conflict) as e:
        curator.review(p.id, "approve", reviewer="ana")
    assert e.value.field == "base_version"
    assert kb.get_card(target.id).status == "active"


def test_a_one_letter_family_name_does_not_break_a_run(families):
    """Found by the red-team script: a round whose family is "x" made the draft id "x" (invalid: ids have 2+
    characters) and the whole synthesis run failed."""
    from synth_builders import NOW

    from synthesis import synthesize
    from synthesis.features import slugify

    assert slugify("x") == "family-x" and slugify("") == "family"
    rounds = [rnd(0, "q", "r", family="x", speedup=1.6, diff="-a\n+b\n"),
              rnd(1, "q", "r", family="x", speedup=0.5, diff="-c\n+d\n")]
    result = synthesize([traj("t-x", rounds), traj("t-y", [rnd(0, "q", "r", family="x", speedup=1.7,
                                                                 diff="-e\n+f\n")], problem="p2")],
                        families, fake_embed, now=NOW)
    assert all(len(p.card.id) >= 2 for p in result.proposals)
