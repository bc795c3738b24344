from __future__ import annotations

import pytest

from kb.errors import InvalidArgument
from kb.models import PatternCard
from kb.models.cards import Symptoms
from kb.models.search import CardFilter, InvariantQuery, QuickMatchQuery, SearchQuery
from kb.search.tokenize import tokenize


def test_tokenizer_keeps_identifiers_whole_and_adds_parts():
    toks = tokenize("tl.argmax num_warps ttg.convert_layout aiv_scalar_ratio")
    for whole in ("tl.argmax", "num_warps", "ttg.convert_layout", "aiv_scalar_ratio"):
        assert whole in toks
    assert {"argmax", "warps", "layout", "scalar"} <= set(toks)


def test_argmax_question_ranks_the_argmax_invariant_first(kb):
    hits = kb.search(SearchQuery(text="why does argmax scalarize on Ascend", top_k=3))
    assert hits[0].card.id == "ascend-argmax-max-with-index"
    b = hits[0].breakdown
    assert b.dense > 0 and b.bm25 > 0 and b.dense_rank and b.bm25_rank


def test_filters_are_applied(kb):
    hits = kb.search(SearchQuery(text="argmax", top_k=10, filter=CardFilter(kinds=["pattern"])))
    assert hits and all(h.card.kind == "pattern" for h in hits)
    hits = kb.search(SearchQuery(text="argmax", top_k=10, filter=CardFilter(backends=["amd"])))
    assert all("amd" in h.card.backends or "any" in h.card.backends for h in hits)


def test_single_method_modes(kb):
    dense = kb.search(SearchQuery(text="argmax scalar pipeline", mode="dense"))
    bm25 = kb.search(SearchQuery(text="argmax scalar pipeline", mode="bm25"))
    assert all(h.breakdown.bm25_rank is None for h in dense)
    assert all(h.breakdown.dense_rank is None for h in bm25)


def test_quick_match_ranks_by_symptoms(kb):
    q = QuickMatchQuery(symptoms=Symptoms(code_features=["tl.argmax", "top-2"], ir_signatures=["ascend_max_with_index"]),
                        backend="ascend", top_k=3)
    hits = kb.quick_match(q)
    assert hits[0].card.id == "top2-pairwise-max"
    assert "code:tl.argmax" in hits[0].breakdown.matched_symptoms
    assert all(h.card.kind == "pattern" for h in hits)
    assert "top2-pairwise-max" not in [h.card.id for h in kb.quick_match(q.model_copy(update={"exclude": ["top2-pairwise-max"]}))]


def test_invariants_by_pass_name(kb):
    hits = kb.get_invariants(InvariantQuery(pass_names=["triton-to-linalg"],
                                            ir_signatures=["ascend_max_with_index"], backend="ascend"))
    assert hits[0].card.id == "ascend-argmax-max-with-index"
    by_pass = kb.get_invariants(InvariantQuery(pass_names=["TritonGPURemoveLayoutConversions"], top_k=10))
    assert by_pass and all(h.card.kind == "invariant" for h in by_pass)
    assert any("tritongpuremovelayoutconversions" in p.lower().replace("-", "")
               for p in by_pass[0].card.passes)
    assert any(s.startswith("pass:") for s in hits[0].breakdown.matched_symptoms)
    with pytest.raises(InvalidArgument) as e:
        kb.get_invariants(InvariantQuery())
    assert e.value.field == "pass_names"


def test_repeated_queries_come_from_the_cache(kb):
    q = SearchQuery(text="persistent kernel for small grids")
    kb.search(q)
    before = kb.cache_hits
    kb.search(q)
    assert kb.cache_hits == before + 1


def test_writes_refresh_the_index_without_restart(kb):
    card = PatternCard(id="zz-new-idea", title="Frobnicate the warp scheduler", summary="Zyzzyva frobnication of warps.",
                       body="zyzzyva", backends=["cuda"], levels=["L1"], sources=["https://example.org"])
    assert kb.upsert_card(card).status == "proposed"  # a write proposes; activating is the review step
    kb.set_card_status(card.id, "active", version=1)
    hits = kb.search(SearchQuery(text="zyzzyva frobnication", filter=CardFilter(statuses=["active"])))
    assert hits[0].card.id == "zz-new-idea"


def test_paging_walks_every_card_once(kb):
    seen, cursor = [], ""
    while True:
        page = kb.list_cards(CardFilter(statuses=[]), page_size=7, cursor=cursor)
        seen += [c.id for c in page.cards]
        cursor = page.next_cursor
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == page.total == kb.stats()["cards"]


def test_snapshot_serves_the_same_results(kb, tmp_path, embedder):
    from kb.errors import Unavailable
    from kb.snapshot import SnapshotKB, write_snapshot

    write_snapshot(kb, tmp_path / "snap")
    snap = SnapshotKB(tmp_path / "snap", embedder=embedder)
    q = SearchQuery(text="why does argmax scalarize on Ascend", top_k=5)
    assert [h.card.id for h in snap.search(q)] == [h.card.id for h in kb.search(q)]
    qm = QuickMatchQuery(symptoms=Symptoms(code_features=["tl.argmax"]), top_k=3)
    assert [h.card.id for h in snap.quick_match(qm)] == [h.card.id for h in kb.quick_match(qm)]
    import pytest as _pytest

    with _pytest.raises(Unavailable):
        snap.upsert_card(kb.get_card("top2-pairwise-max"))


def _probe(i: int, **kw) -> PatternCard:
    return PatternCard(id=f"probe-{i}", title=f"Probe {i}: warp-specialized epilogue variant {i}",
                       summary=f"Probe card {i} for the write path; overlaps the epilogue with the main loop.",
                       backends=["cuda"], levels=["L1"], **kw)


def test_writes_leave_the_engine_to_the_next_read(kb, monkeypatch):
    from kb.search import bm25

    builds, tokenized = [], []
    build, tokenize_ = bm25.BM25Index.build, bm25.tokenize
    monkeypatch.setattr(bm25.BM25Index, "build", lambda self, texts: (builds.append(len(texts)), build(self, texts))[1])
    monkeypatch.setattr(bm25, "tokenize", lambda text: (tokenized.append(text), tokenize_(text))[1])
    for i in range(5):
        kb.upsert_card(_probe(i))
    assert builds == []  # no rebuild per write
    q = SearchQuery(text="warp-specialized epilogue probe 3", filter=CardFilter(statuses=["proposed"]))
    assert kb.search(q)[0].card.id == "probe-3"  # the next read sees every write
    assert len(builds) == 1  # one rebuild for the five writes
    assert len([t for t in tokenized if t != q.text]) == 5  # and it tokenized only the new cards


def test_an_engine_rebuilt_after_writes_answers_like_a_fresh_one(kb):
    from kb.search.engine import Engine

    queries = [SearchQuery(text="warp-specialized epilogue overlap", mode=m, top_k=10) for m in ("hybrid", "bm25", "dense")]
    queries += [SearchQuery(text="why does argmax scalarize on Ascend", top_k=10),
                SearchQuery(text="persistent kernel for small grids", filter=CardFilter(statuses=["active"]))]
    edited = kb.get_card("top2-pairwise-max")
    writes = [lambda: kb.upsert_card(_probe(1)), lambda: kb.upsert_card(_probe(2, status="proposed")),
              lambda: kb.upsert_card(edited.model_copy(update={"summary": "Pairwise max of two values, rewritten for "
                                                                          "the probe: warp-specialized epilogue."})),
              lambda: kb.set_card_status("probe-2", "active", version=1),
              lambda: kb.upsert_card(_probe(1, body="Now with a body about epilogue overlap and TMA stores."))]
    for write in writes:  # a read between writes, so each rebuild starts from the previous one's tokens
        write()
        kb.search(queries[0])
    engine = kb.engine
    fresh = Engine(kb.store.served_cards(), kb.index, kb.embedder, rrf_k=kb.settings.rrf_k, fusion=kb.settings.fusion)
    assert [(c.id, c.version) for c in engine.cards] == [(c.id, c.version) for c in fresh.cards]
    for q in queries:
        assert engine.bm25.scores(q.text).tolist() == fresh.bm25.scores(q.text).tolist()
        assert engine.search(q) == fresh.search(q)
    qm = QuickMatchQuery(text="epilogue overlap", symptoms=Symptoms(code_features=["tl.argmax"]), top_k=5)
    assert engine.quick_match(qm) == fresh.quick_match(qm)
    iq = InvariantQuery(text="argmax reduce", pass_names=["ConvertLayout"], top_k=5)
    assert engine.invariants(iq) == fresh.invariants(iq)


def test_bm25_top_n_is_the_head_of_the_full_stable_sort(kb):
    """The top-n selection (partition, then sort) keeps ties at the cut in card order, as a full sort does."""
    import numpy as np

    engine = kb.engine
    scores = np.random.default_rng(0).choice([0.0, 1.0, 2.0, 2.5, 3.0], size=len(engine.cards))
    allowed = np.ones(len(engine.cards), dtype=bool)
    cand = np.flatnonzero(scores > 0)
    full = [(int(i), float(scores[i])) for i in cand[np.argsort(-scores[cand], kind="stable")]]
    for n in (1, 5, 17, 50, len(full), len(full) + 3):
        assert engine.bm25_ranking("unused", n, allowed, scores=scores) == full[:n]
