"""Anti-signals from correct-but-slower and failed rounds."""

from __future__ import annotations

from synth_builders import NOW, fake_embed, rnd, traj

from kb.models import AntiSignalCard
from synthesis import SynthesisConfig, anti_signal_proposals, collect_rounds, synthesize
from synthesis.features import TokenMatcher

ROWS_H = "Small rows leave the grid launch bound; process several rows per program"
ROWS_R = "Loop over ROWS rows inside one program so the grid shrinks"


def _trajs():
    return [
        traj("t-big", [rnd(0, ROWS_H, ROWS_R, speedup=0.7, bottleneck="memory_bound",
                           evidence=[("L2", "roofline", "92% of DRAM roofline, memory bound")])],
             problem="softmax_wide"),
        traj("t-big2", [rnd(0, ROWS_H, ROWS_R, speedup=0.8, bottleneck="memory_bound",
                            evidence=[("L2", "roofline", "memory bound at 88% of peak bandwidth")])],
             problem="layernorm_wide"),
        traj("t-bad", [rnd(0, "fuse bias into the epilogue", "add bias after tl.dot inside the kernel",
                           family="bias-epilogue", passed=False)]),
    ]


def test_slower_and_incorrect_rounds_become_anti_signal_drafts(families):
    res = synthesize(_trajs(), families, fake_embed, now=NOW)
    anti = {p.card.id: p for p in res.proposals if p.kind == "anti_signal"}
    assert set(anti) == {"avoid-rows-per-program-slower", "avoid-bias-epilogue-incorrect"}
    slow = anti["avoid-rows-per-program-slower"]
    assert slow.card.contraindicated == ["rows-per-program"] and slow.target_family == "rows-per-program"
    assert slow.card.symptoms.bottleneck_classes == ["memory_bound"]
    assert "0.70x" in slow.card.counterexample and "t-big#0" in slow.card.counterexample
    assert [e.round_ref for e in slow.evidence] == ["t-big#0", "t-big2#0"]
    assert slow.card.status == "proposed" and slow.card.provenance.origin == "synthesized"
    assert anti["avoid-bias-epilogue-incorrect"].confidence > 0
    assert not [p for p in res.proposals if p.kind in ("example", "new_family")]


def test_rounds_matching_an_existing_anti_signal_become_its_examples(families):
    existing = AntiSignalCard(
        id="rows-per-program-on-wide-rows", title="Rows per program on wide memory-bound rows",
        summary="Process several rows per program made wide memory bound rows slower; launch bound grid is not the issue.",
        backends=["cuda"], levels=["L2"], contraindicated=["rows-per-program"],
        rewrite={"description": "Loop over ROWS rows inside one program so the grid shrinks"},
    )
    recs = collect_rounds(_trajs()[:2])
    from synthesis import map_rounds
    maps = map_rounds(recs, families, fake_embed)
    props = anti_signal_proposals(recs, maps, [existing], fake_embed, matcher=TokenMatcher(), taken_ids=set(),
                                  now=NOW, family_titles={f.id: f.title for f in families}, merge_threshold=0.3)
    (p,) = props
    assert p.kind == "example" and p.target_family == existing.id and p.card.version == 2
    assert p.card.provenance.rounds == ["t-big#0", "t-big2#0"]


def test_neutral_rounds_are_not_anti_signals(families):
    t = traj("t-n", [rnd(0, ROWS_H, ROWS_R, speedup=0.99)])
    res = synthesize([t], families, fake_embed, now=NOW, config=SynthesisConfig())
    assert res.proposals == [] and res.report.categories == {"neutral": 1}
