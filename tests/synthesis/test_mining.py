"""Family mapping: right family, no family for unrelated rounds, determinism, example proposals."""

from __future__ import annotations

from synth_builders import NOW, fake_embed, rnd, traj

from synthesis import (
    CachedEmbed,
    FamilyIndex,
    MiningConfig,
    collect_rounds,
    example_proposals,
    map_rounds,
)


def _records():
    t = traj("t-soft", [
        rnd(0, "Small rows leave the grid launch bound; process several rows per program",
            "Loop over ROWS rows inside one program so the grid shrinks", bottleneck="launch_bound"),
        rnd(1, "argmax then masked max shuffles two operands; use value-only max reductions",
            "Compute m1 with tl.max, count maxima, second max by masking, no tl.argmax",
            diff="-    i = tl.argmax(x, axis=1)\n+    m1 = tl.max(x, axis=1)\n"),
        rnd(2, "Exponent overflow in fp16 accumulation", "Upcast accumulator to fp32 before the exp"),
    ])
    return collect_rounds([t])


def test_maps_rounds_to_their_family_and_leaves_unrelated_unmatched(families):
    maps = map_rounds(_records(), families, fake_embed)
    assert [m.family_id for m in maps] == ["rows-per-program", "top2-pairwise-max", None]
    assert maps[1].components.symptoms and maps[1].components.symptoms > 0  # code:tl.argmax from the diff
    assert maps[0].confidence > 0.5 and maps[2].confidence > 0.5
    assert maps[0].candidates[0].family_id == "rows-per-program"
    assert len(maps[0].candidates) == 3


def test_cited_card_is_a_component_but_not_a_trump(families):
    recs = collect_rounds([traj("t-c", [
        rnd(0, "Upcast accumulator to fp32 before exp", "fp32 accumulation", cited=["autotune-num-warps"]),
        rnd(1, "several rows per program to shrink the launch bound grid", "loop ROWS rows per program",
            family="rows-per-program"),
    ])])
    maps = map_rounds(recs, families, fake_embed)
    assert maps[0].family_id is None  # citing a card does not make an unrelated rewrite belong to it
    assert maps[1].components.cited == 1.0 and maps[1].family_id == "rows-per-program"


def test_mapping_is_deterministic_and_independent_of_family_order(families):
    recs = _records()
    a = [m.model_dump() for m in map_rounds(recs, families, fake_embed)]
    b = [m.model_dump() for m in map_rounds(recs, list(reversed(families)), fake_embed)]
    c = [m.model_dump() for m in FamilyIndex.build(families, fake_embed, MiningConfig(batch_size=1)).map(recs, fake_embed)]
    assert a == b == c


def test_example_proposals_append_evidence_and_skip_rounds_already_recorded(families):
    recs = _records()
    maps = map_rounds(recs, families, fake_embed)
    props = example_proposals(recs, maps, families, now=NOW)
    assert [p.target_family for p in props] == ["rows-per-program", "top2-pairwise-max"]
    p = props[0]
    assert p.kind == "example" and p.card.version == 2 and p.base_version == 1
    assert p.card.evidence[-1].source == "t-soft#0" and p.card.provenance.rounds == ["t-soft#0"]
    assert "launch" in p.card.evidence[-1].text.lower() or "rows" in p.card.evidence[-1].text.lower()
    updated = [p.card if f.id == p.target_family else f for f in families]
    again = example_proposals(recs, maps, updated, now=NOW)
    assert [q.target_family for q in again] == ["top2-pairwise-max"]


def test_cached_embed_embeds_each_text_once_and_returns_the_same_vectors():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return fake_embed(texts)

    cached = CachedEmbed(embed, max_items=3)
    a = cached(["x y", "z", "x y"])
    b = cached(["z", "w"])
    assert calls == [["x y", "z"], ["w"]]
    assert (a[1] == b[0]).all() and (a[0] == a[2]).all()
    cached(["v"])  # evicts the oldest ("x y")
    cached(["x y"])
    assert calls[-1] == ["x y"] and cached.hits == 2 and cached.misses == 5
