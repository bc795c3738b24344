"""Issue 32, item 4: evidence cannot be padded. Copies that change only prose (``next_recommendation``, a
hypothesis) are one piece of evidence in the store and in synthesis; implausible speedups are refused at
submission (and never mined from an older store); a deprecation needs distinct problems (test_stats)."""

from __future__ import annotations

import pytest
from synth_builders import NOW, fake_embed, make_families, rnd, traj

from kb.errors import InvalidArgument
from kb.evidence import check_plausible, evidence_key
from synthesis import SynthesisConfig, collect_rounds, synthesize
from synthesis.rounds import unique_rounds


def _slow(tid: str, note: str, problem: str = "softmax"):
    r = rnd(1, "rows per program", "loop over rows", family="rows-per-program", speedup=0.5,
            cited=["rows-per-program"], diff="--- a\n+++ b\n-x\n+y\n")
    r = r.model_copy(update={"next_recommendation": note})
    return traj(tid, [rnd(0, "baseline", "none", speedup=None, passed=True, outcome="baseline"), r], problem=problem)


def test_prose_only_copies_share_an_evidence_key():
    a, b = _slow("t-a", "try something else"), _slow("t-b", "a different recommendation")
    assert a.content_hash() != b.content_hash()  # the whole-document hash told them apart
    assert evidence_key(a) == evidence_key(b)
    c = b.model_copy(update={"rounds": [b.rounds[0], b.rounds[1].model_copy(update={"hypothesis": "other words"})]})
    assert evidence_key(c) == evidence_key(a)
    d = traj("t-d", [b.rounds[0], b.rounds[1].model_copy(update={"timing": b.rounds[1].timing.model_copy(
        update={"geomean_speedup": 0.6})})])
    assert evidence_key(d) != evidence_key(a)  # another measurement is other evidence


def test_store_counts_prose_copies_once(kb):
    assert kb.submit_trajectory(_slow("t-a", "one")) is True
    for i in range(5):
        assert kb.submit_trajectory(_slow(f"t-copy{i}", f"recommendation {i}")) is False
    assert kb.store.count_trajectories(unique=True) == 1 and kb.store.count_trajectories() == 6


def test_prose_copies_do_not_inflate_lift_n_or_deprecate():
    families = make_families()
    trajs = [_slow(f"t-{i}", f"note {i}") for i in range(5)]
    result = synthesize(trajs, families, fake_embed, now=NOW, config=SynthesisConfig())
    assert result.stats["rows-per-program"].lift_n == 1
    assert not [p for p in result.proposals if p.kind == "deprecation"]
    recs = unique_rounds(collect_rounds(trajs))
    assert len([r for r in recs if r.round.rewrite and r.round.rewrite.family == "rows-per-program"]) == 1


@pytest.mark.parametrize("speedup", [1e300, 1e-300, 5000.0])
def test_implausible_speedups_are_refused_naming_the_field(kb, speedup):
    t = traj("t-wild", [rnd(0, "h", "r", family="rows-per-program", speedup=speedup)])
    with pytest.raises(InvalidArgument) as e:
        kb.submit_trajectory(t)
    assert e.value.field == "trajectory.rounds.0.timing.geomean_speedup" and "plausible" in e.value.message
    check_plausible(traj("t-ok", [rnd(0, "h", "r", speedup=40.0)]))


def test_an_implausible_stored_round_is_never_mined():
    families = make_families()
    wild = traj("t-wild", [rnd(0, "h", "loop over rows", family="rows-per-program", speedup=1e300,
                               cited=["rows-per-program"])])
    ok = traj("t-ok", [rnd(0, "h", "loop over rows", family="rows-per-program", speedup=1.4,
                           cited=["rows-per-program"])], problem="layernorm")
    result = synthesize([wild, ok], families, fake_embed, now=NOW)
    s = result.stats["rows-per-program"]
    assert s.lift_n == 1 and s.lift_mean == pytest.approx(1.4)
    assert "t-wild#0" in result.report.excluded and "plausible" in result.report.excluded["t-wild#0"]
