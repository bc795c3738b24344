"""Evidence counts unique content (issue 17, items 1 and 11): copies of a trajectory under other ids add nothing
to card statistics or proposals, and a routine synthesis run never lowers the statistics already published."""

from __future__ import annotations

import pytest
from synth_builders import fake_embed, rnd, traj

from kb.models import Trajectory
from synthesis import synthesize
from synthesis.curation import Curator
from synthesis.rounds import collect_rounds, unique_rounds

FAMILY = "matmul-tile-config-search"


def _trajectory(tid: str, speedup: float = 1.4, problem: str = "matmul") -> Trajectory:
    return traj(tid, [rnd(0, "tile sizes too small for the K loop", "search BLOCK_M/N/K and num_warps",
                          family=FAMILY, speedup=speedup)], problem=problem)


def _copy(t: Trajectory, tid: str) -> Trajectory:
    """The attack: the same trajectory with only its id (and submission time) changed."""
    return t.model_copy(update={"id": tid, "created_at": t.created_at.replace(year=2026)})


@pytest.fixture
def curator(kb):
    c = Curator(kb, embed=fake_embed)  # the family names the card: mapping quality does not matter here
    yield c
    c.close()


def test_a_copy_hashes_the_same_and_a_changed_result_does_not():
    t = _trajectory("orig-001")
    assert _copy(t, "copy-001").content_hash() == t.content_hash()
    assert _trajectory("orig-001", speedup=1.41).content_hash() != t.content_hash()


def test_copies_under_other_ids_count_once_in_statistics_and_proposals(kb, curator):
    t = _trajectory("orig-001")
    assert kb.submit_trajectory(t) is True
    acked = [kb.submit_trajectory(_copy(t, f"copy-{i:03d}")) for i in range(40)]
    assert acked == [False] * 40  # acknowledged and stored, but not new evidence
    assert kb.store.count_trajectories() == 41 and kb.store.count_trajectories(unique=True) == 1
    assert kb.store.trajectory_copies() == {"orig-001": 41}

    curator.run()
    stats = kb.get_card(FAMILY).stats
    assert (stats.applied, stats.verified, stats.lift_n) == (1, 1, 1)
    for p in curator.proposals():
        assert all(not e.round_ref.startswith("copy-") for e in p.evidence)
        assert len(p.evidence) <= 1


def test_the_same_round_pasted_into_trajectories_folds_with_its_count():
    base = _trajectory("orig-001")
    other = base.model_copy(update={"id": "other-001", "device": base.device, "versions": {"x": "1"}})
    assert other.content_hash() != base.content_hash()  # different trajectories...
    recs = unique_rounds(collect_rounds([base, other]))
    assert len(recs) == 1 and recs[0].copies == 2  # ...carrying one round of evidence


def test_two_routine_runs_back_to_back_lose_nothing(kb, curator):
    kb.submit_trajectory(_trajectory("first-001", 1.4))
    curator.run()
    first = kb.get_card(FAMILY).stats
    assert first.applied == 1

    curator.run()  # nothing new: the statistics must stay as published
    assert kb.get_card(FAMILY).stats == first

    kb.submit_trajectory(_trajectory("second-001", 1.6, problem="bmm"))
    curator.run()
    second = kb.get_card(FAMILY).stats
    curator.run()
    curator.run(only_new=False)
    assert kb.get_card(FAMILY).stats == second
    assert (second.applied, second.lift_n) == (2, 2)
    assert second.lift_mean == pytest.approx((1.4 * 1.6) ** 0.5, rel=1e-3)


def test_synthesize_itself_ignores_copies(families):
    t = traj("orig-001", [rnd(0, "rows per program", "loop over rows", family="rows-per-program")])
    once = synthesize([t], families, fake_embed)
    many = synthesize([t] + [_copy(t, f"copy-{i:03d}") for i in range(20)], families, fake_embed)
    assert many.stats == once.stats
    assert [len(p.evidence) for p in many.proposals] == [len(p.evidence) for p in once.proposals]
