"""The whole run: hack-tripped and failed rounds never become patterns; output is deterministic."""

from __future__ import annotations

from synth_builders import NOW, fake_embed, rnd, traj

from synthesis import SynthesisConfig, synthesize

ROWS_H = "Small rows leave the grid launch bound; process several rows per program"
ROWS_R = "Loop over ROWS rows inside one program so the grid shrinks"


def _trajectories():
    return [
        traj("t-a", [
            rnd(0, ROWS_H, ROWS_R, hack=["output_caching"], speedup=9.0),
            rnd(1, ROWS_H, ROWS_R, passed=False, speedup=None),
            rnd(2, ROWS_H, ROWS_R, speedup=1.4),
        ]),
        traj("t-b", [
            rnd(0, "Cache the reduction result across calls", "memoize output tensor between forward calls",
                hack=["output_caching"], speedup=50.0),
            rnd(1, "Cache the reduction result across calls", "memoize output tensor between forward calls",
                hack=["output_caching"], speedup=40.0),
        ], problem="layernorm"),
    ]


def _pattern_refs(result):
    return {e.round_ref for p in result.proposals if p.kind in ("example", "new_family") for e in p.evidence}


def test_hack_tripped_and_failed_rounds_never_back_a_pattern(families):
    res = synthesize(_trajectories(), families, fake_embed, now=NOW, config=SynthesisConfig(min_cluster_size=1))
    assert _pattern_refs(res) == {"t-a#2"}
    all_refs = {e.round_ref for p in res.proposals for e in p.evidence}
    assert not all_refs & {"t-a#0", "t-b#0", "t-b#1"}  # hack rounds: not even anti-signals
    assert res.report.excluded["t-a#0"].startswith("a hack check fired")
    assert "output_caching" in res.report.excluded["t-b#1"]
    assert {m.round_ref for m in res.mappings}.isdisjoint({"t-a#0", "t-b#0", "t-b#1"})
    anti = [p for p in res.proposals if p.kind == "anti_signal"]
    assert [e.round_ref for p in anti for e in p.evidence] == ["t-a#1"]


def test_synthesize_is_deterministic(families):
    a = synthesize(_trajectories(), families, fake_embed, now=NOW)
    b = synthesize(_trajectories(), families, fake_embed, now=NOW)
    dump = lambda r: r.model_dump(exclude={"report": {"duration_s", "rounds_per_min"}})
    assert dump(a) == dump(b)
    assert a.report.rounds == 5 and a.report.categories["hack"] == 3
    assert a.stats["rows-per-program"].applied >= 1


def test_progress_reports_each_stage(families):
    seen = []
    synthesize(_trajectories(), families, fake_embed, now=NOW, progress=lambda s, d, t: seen.append(s))
    assert seen == ["rounds", "mapping", "causes", "clustering", "anti_signals", "stats"]


def test_review_only_flags_keep_a_round_minable_and_tell_the_curator(families):
    """A >10x speedup that stayed inside the roofline (excessive_speedup, severity warn) backs its family; the
    example says the flag fired. Mixed with a blocking flag, the round is still excluded."""
    trajs = [traj("t-x", [
        rnd(0, ROWS_H, ROWS_R, hack=["excessive_speedup"], speedup=13.3),
        rnd(1, ROWS_H, ROWS_R, hack=["excessive_speedup", "output_caching"], speedup=40.0),
    ], problem="moe_group_top2")]
    res = synthesize(trajs, families, fake_embed, now=NOW, config=SynthesisConfig(min_cluster_size=1))
    assert _pattern_refs(res) == {"t-x#0"}
    assert "t-x#0" not in res.report.excluded and "output_caching" in res.report.excluded["t-x#1"]
    examples = [e for p in res.proposals if p.kind == "example" for e in (p.card.evidence if p.card else [])
                if e.source == "t-x#0"]
    assert examples and examples[0].text.startswith("[review: excessive_speedup flagged")
