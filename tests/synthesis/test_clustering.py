"""New families: a coherent unmatched cluster becomes one drafted card; stray rounds wait."""

from __future__ import annotations

from synth_builders import NOW, fake_embed, rnd, traj

from synthesis import FamilyIndex, cluster_rounds, collect_rounds, new_family_proposals

SPLIT_K = [
    ("Skinny GEMM with K=8192 leaves most SMs idle; split the K loop across programs",
     "Split-K: each program reduces a K slice, partial sums combined with tl.atomic_add"),
    ("Only 8 output tiles for a 64x64x16384 matmul: split K across programs to fill the SMs",
     "Split K into SPLIT_K slices per output tile, accumulate partial sums with tl.atomic_add"),
    ("Output tiles too few for K=32768; split-K reduction across programs",
     "Split the K loop into slices per program; partial sums via tl.atomic_add into fp32 output"),
]


def _records():
    rounds = [rnd(i, h, r, family="split-k", bottleneck="latency_bound",
                  evidence=[("L2", "ncu", "sm occupancy 12 percent, latency bound")],
                  diff="-    for k in range(0, K, BLOCK_K):\n-        acc += tl.dot(a, b)\n+    acc += tl.dot(a, b)\n")
              for i, (h, r) in enumerate(SPLIT_K)]
    rounds.append(rnd(3, "Exponent overflow in fp16 accumulation", "Upcast accumulator to fp32 before exp"))
    return collect_rounds([traj("t-mm", rounds, problem="skinny_matmul")])


def test_clusters_coherent_rounds_together():
    recs = _records()
    vecs = fake_embed([r.round.hypothesis + " " + r.round.rewrite.description for r in recs])
    assert cluster_rounds(recs, vecs, threshold=0.3) == [[0, 1, 2], [3]]
    assert cluster_rounds(recs, vecs, threshold=1.01) == [[0], [1], [2], [3]]


def test_drafts_a_family_card_for_the_cluster(families):
    recs = _records()
    index = FamilyIndex.build(families, fake_embed)
    vecs = index.embed_rounds(recs, fake_embed)
    maps = index.map_embedded(recs, vecs)
    assert all(m.family_id is None for m in maps)
    props, pending = new_family_proposals(recs, maps, vecs, matcher=index.matcher, taken_ids={"split-k"},
                                          now=NOW, threshold=0.3)
    assert pending == ["t-mm#3"]
    (p,) = props
    c = p.card
    assert p.kind == "new_family" and c.status == "proposed" and c.id == "split-k-2"  # "split-k" is taken
    assert c.provenance.origin == "synthesized" and c.provenance.rounds == ["t-mm#0", "t-mm#1", "t-mm#2"]
    assert c.symptoms.bottleneck_classes == ["latency_bound"]
    assert "tl.dot" in c.symptoms.code_features
    assert "atomic_add" in c.rewrite.description and "split" in c.title.lower()
    assert [e.source for e in c.evidence] == c.provenance.rounds
    assert p.target_family in {f.id for f in families} and 0 < p.confidence <= 1
    assert "```diff" in c.body
