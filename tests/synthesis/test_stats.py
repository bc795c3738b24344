"""Card statistics, lift intervals and the deprecation rule."""

from __future__ import annotations

import math

import pytest
from synth_builders import NOW, rnd, traj

from synthesis import card_stats, collect_rounds, deprecation_proposals, lift_interval


def test_t_interval_on_log_lift():
    mean, lo, hi = lift_interval([1.2, 1.5, 1.1, 1.3])
    x = [math.log(v) for v in (1.2, 1.5, 1.1, 1.3)]
    m = sum(x) / 4
    sd = math.sqrt(sum((v - m) ** 2 for v in x) / 3)
    assert mean == pytest.approx(math.exp(m))
    t3 = 3.1824463  # t_{0.975, 3}
    assert lo == pytest.approx(math.exp(m - t3 * sd / 2)) and hi == pytest.approx(math.exp(m + t3 * sd / 2))
    assert lift_interval([1.3]) == (pytest.approx(1.3), None, None)
    assert lift_interval([]) == (None, None, None)


def test_bootstrap_interval_is_seeded():
    a = lift_interval([0.9, 1.2, 1.1, 1.4, 1.0], method="bootstrap", seed=7)
    assert a == lift_interval([0.9, 1.2, 1.1, 1.4, 1.0], method="bootstrap", seed=7)
    assert a[1] < a[0] < a[2]


def _recs(lifts, cid="rows-per-program", cite=True, problems=("softmax",)):
    """One trajectory per problem; round i goes to problem i mod len(problems)."""
    out = []
    for k, prob in enumerate(problems):
        rounds = [rnd(i, "h", "r", family=cid, speedup=s, cited=[cid] if cite else [])
                  for i, s in enumerate(lifts) if i % len(problems) == k]
        out += collect_rounds([traj(f"t-s{k}" if k else "t-s", rounds, problem=prob)])
    return out


def test_counts_cited_applied_verified(families):
    recs = _recs([1.5, 0.9])
    recs += collect_rounds([traj("t-x", [rnd(0, "h", "r", family="rows-per-program", passed=False),
                                         rnd(1, "h", "r", family="rows-per-program", hack=["timing_tamper"]),
                                         rnd(2, "h", "r", cited=["autotune-num-warps"])])])
    s = card_stats(recs, families)
    r = s["rows-per-program"]
    assert (r.cited, r.applied, r.verified, r.lift_n) == (2, 4, 2, 2)
    assert r.lift_mean == pytest.approx(math.sqrt(1.5 * 0.9), abs=1e-4)
    assert s["autotune-num-warps"].cited == 1 and s["autotune-num-warps"].applied == 0


def test_consistently_negative_lift_is_proposed_for_deprecation(families):
    recs = _recs([0.80, 0.85, 0.82, 0.78], problems=("softmax", "layernorm"))
    stats = card_stats(recs, families)
    assert stats["rows-per-program"].lift_ci_high < 1.0
    (p,) = deprecation_proposals(stats, families, recs, now=NOW)
    assert p.kind == "deprecation" and p.card.status == "deprecated" and p.target_family == "rows-per-program"
    assert sorted(e.round_ref for e in p.evidence) == ["t-s#0", "t-s#2", "t-s1#1", "t-s1#3"]


def test_deprecation_needs_distinct_problems(families):
    """Issue 32, item 4: slow rounds on one problem (copies, or re-runs) are not independent evidence."""
    recs = _recs([0.80, 0.85, 0.82, 0.78])
    stats = card_stats(recs, families)
    assert stats["rows-per-program"].lift_ci_high < 1.0 and stats["rows-per-program"].lift_n == 4
    assert deprecation_proposals(stats, families, recs, now=NOW) == []


@pytest.mark.parametrize("lifts", [[0.8, 0.85], [0.7, 1.3, 0.9, 1.1], [1.2, 1.3, 1.25]])
def test_no_deprecation_without_consistent_negative_evidence(families, lifts):
    recs = _recs(lifts)
    assert deprecation_proposals(card_stats(recs, families), families, recs, now=NOW) == []
