"""Anti-signals from correct-but-slower and failed rounds."""

from __future__ import annotations

from synth_builders import NOW, fake_embed, make_families, rnd, traj

from kb.models import AntiSignalCard
from synthesis import (
    SynthesisConfig,
    anti_signal_proposals,
    collect_rounds,
    map_rounds,
    synthesize,
)
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


def _existing(contraindicated: list[str]) -> AntiSignalCard:
    return AntiSignalCard(
        id="rows-per-program-on-wide-rows", title="Rows per program on wide memory-bound rows",
        summary="Several rows per program made wide memory-bound rows slower; the launch was not the bottleneck.",
        backends=["cuda"], levels=["L2"], contraindicated=contraindicated, related=["rows-per-program"],
    )


def _anti(existing, threshold):
    recs = collect_rounds(_trajs()[:2])
    maps = map_rounds(recs, make_families(), fake_embed)
    return anti_signal_proposals(recs, maps, [existing], fake_embed, matcher=TokenMatcher(), taken_ids=set(),
                                 now=NOW, family_titles={}, merge_threshold=threshold)


def test_rounds_matching_an_existing_anti_signal_become_its_examples():
    existing = _existing(["Process several rows per program: loop over ROWS rows inside one program on wide rows"])
    (p,) = _anti(existing, 0.5)
    assert p.kind == "example" and p.target_family == existing.id and p.card.version == 2
    assert p.card.provenance.rounds == ["t-big#0", "t-big2#0"] and p.card.kind == "anti_signal"


def test_an_anti_signal_about_another_transform_does_not_claim_the_rounds():
    (p,) = _anti(_existing(["Raising num_warps to 16 for fp16 attention epilogues"]), 0.5)
    assert p.kind == "anti_signal" and p.card.id == "avoid-rows-per-program-slower"


def test_neutral_rounds_are_not_anti_signals(families):
    t = traj("t-n", [rnd(0, ROWS_H, ROWS_R, speedup=0.99)])
    res = synthesize([t], families, fake_embed, now=NOW, config=SynthesisConfig())
    assert res.proposals == [] and res.report.categories == {"neutral": 1}
