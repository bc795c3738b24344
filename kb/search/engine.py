"""Hybrid retrieval over the served cards: dense + BM25, fused by score standardisation (default) or reciprocal
rank fusion (RRF), structured filters applied in our code, and the L1 quick-match / L4 invariant lookups that
fuse symptom agreement with the text rankings by RRF.

An ``Engine`` is immutable once built; the KB swaps in a new one after writes, so readers never lock.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

import numpy as np

from kb.models import AnyCard
from kb.models.search import (
    CardFilter,
    InvariantQuery,
    QuickMatchQuery,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
)
from kb.search.bm25 import BM25Index
from kb.search.embedding import Embedder
from kb.store.vector import VectorIndex

__all__ = ["Engine"]

_STATS_SAMPLE = 4096  # cards sampled for the score statistics of z-score fusion on large KBs
_SAMPLE_CACHE = 8  # filters whose sample vectors are kept (4096 x 384 float32 = 6 MB each)
SYMPTOM_WEIGHT = 1.5  # quick-match: symptom agreement counts more than either text ranking


def _norm_pass(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass
class Engine:
    cards: list[AnyCard]
    index: VectorIndex
    embedder: Embedder
    rrf_k: int = 60
    fusion: str = "zscore"  # hybrid search fusion: "zscore" (default) or "rrf"
    bm25: BM25Index = field(default_factory=BM25Index)

    def __post_init__(self) -> None:
        self.pos = {c.id: i for i, c in enumerate(self.cards)}
        n = len(self.cards)
        self.bm25.build([c.search_text() for c in self.cards])
        # vector-index row -> engine position (cards absent from the index map to -1)
        vrow = np.full(len(self.index), -1, dtype=np.int64)
        for i, c in enumerate(self.cards):
            r = self.index.row_of(c.id)
            if r is not None:
                vrow[r] = i
        self._vrow_to_pos = vrow
        prow = np.full(n, -1, dtype=np.int64)
        ok = vrow >= 0
        prow[vrow[ok]] = np.flatnonzero(ok)
        self._pos_to_vrow = prow
        self._masks: dict[str, np.ndarray] = {}
        self._samples: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._sample_lock = threading.Lock()

        def mask(key: str) -> np.ndarray:
            if key not in self._masks:
                self._masks[key] = np.zeros(n, dtype=bool)
            return self._masks[key]

        df: Counter[str] = Counter()
        self._tokens: list[set[str]] = []
        for i, c in enumerate(self.cards):
            mask(f"kind:{c.kind}")[i] = True
            mask(f"status:{c.status}")[i] = True
            for b in c.backends:
                mask(f"backend:{b}")[i] = True
            for lv in c.levels:
                mask(f"level:{lv}")[i] = True
            toks = c.symptoms.tokens()
            self._tokens.append(toks)
            df.update(toks)
        self._idf = {t: math.log(1 + n / (1 + d)) for t, d in df.items()}
        self._passes = [
            {_norm_pass(p) for p in getattr(c, "passes", [])} for c in self.cards
        ]

    # ------------------------------------------------------------------ filters
    def filter_mask(self, f: CardFilter) -> np.ndarray:
        n = len(self.cards)
        out = np.ones(n, dtype=bool)
        empty = np.zeros(n, dtype=bool)

        def any_of(prefix: str, values: list[str]) -> np.ndarray:
            acc = np.zeros(n, dtype=bool)
            for v in values:
                acc |= self._masks.get(f"{prefix}:{v}", empty)
            return acc

        if f.kinds:
            out &= any_of("kind", list(f.kinds))
        if f.statuses:
            out &= any_of("status", list(f.statuses))
        if f.levels:
            out &= any_of("level", list(f.levels))
        if f.backends and "any" not in f.backends:  # "any" asks for no backend restriction
            out &= any_of("backend", [*f.backends, "any"])  # a backend-agnostic card serves every backend
        return out

    # ------------------------------------------------------------------ rankers
    def dense_ranking(self, text: str, n: int, allowed: np.ndarray) -> list[tuple[int, float]]:
        vec = self.embedder.encode_query(text)
        vallowed = np.zeros(len(self._vrow_to_pos), dtype=bool)
        ok = self._vrow_to_pos >= 0
        vallowed[ok] = allowed[self._vrow_to_pos[ok]]
        hits = self.index.query(vec, n, vallowed)
        return [(int(self._vrow_to_pos[r]), s) for r, s in hits]

    def bm25_ranking(self, text: str, n: int, allowed: np.ndarray,
                     scores: np.ndarray | None = None) -> list[tuple[int, float]]:
        if scores is None:
            scores = np.where(allowed, self.bm25.scores(text), 0.0)
        cand = np.flatnonzero(scores > 0)
        if cand.size == 0:
            return []
        if 0 < n < cand.size:  # keep only scores >= the n-th largest (ties included) before the stable sort
            kth = np.partition(scores[cand], cand.size - n)[cand.size - n]
            cand = cand[scores[cand] >= kth]
        top = cand[np.argsort(-scores[cand], kind="stable")][:n]
        return [(int(i), float(scores[i])) for i in top]

    def symptom_ranking(self, query_tokens: set[str], allowed: np.ndarray) -> list[tuple[int, float, list[str]]]:
        if not query_tokens:
            return []
        denom = sum(self._idf.get(t, 1.0) for t in query_tokens)
        out = []
        for i in np.flatnonzero(allowed):
            common = query_tokens & self._tokens[i]
            if common:
                out.append((int(i), sum(self._idf.get(t, 1.0) for t in common) / denom, sorted(common)))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    # ------------------------------------------------------------------ fusion
    def _fuse(self, rankings: dict[str, list], weights: dict[str, float], top_k: int) -> list[SearchHit]:
        fused: dict[int, float] = {}
        parts: dict[int, ScoreBreakdown] = {}
        for name, ranking in rankings.items():
            w = weights.get(name, 1.0)
            for rank, item in enumerate(ranking, start=1):
                pos, score = item[0], item[1]
                fused[pos] = fused.get(pos, 0.0) + w / (self.rrf_k + rank)
                b = parts.setdefault(pos, ScoreBreakdown())
                if name == "dense":
                    b.dense, b.dense_rank = score, rank
                elif name == "bm25":
                    b.bm25, b.bm25_rank = score, rank
                else:
                    b.symptom, b.matched_symptoms = score, item[2]
        # equal fused scores (e.g. ranks 1+2 vs 2+1) are broken by semantic similarity, then by position
        order = sorted(fused, key=lambda p: (-round(fused[p], 9), -parts[p].dense, p))[:top_k]
        return [SearchHit(card=self.cards[p], score=round(fused[p], 6), breakdown=parts[p]) for p in order]

    def search(self, q: SearchQuery) -> list[SearchHit]:
        allowed = self.filter_mask(q.filter)
        n = max(q.top_k * 4, 50)
        if q.mode == "hybrid" and self.fusion == "zscore":
            return self._zscore_hybrid(q.text, allowed, n, q.top_k)
        rankings: dict[str, list] = {}
        if q.mode in ("hybrid", "dense"):
            rankings["dense"] = self.dense_ranking(q.text, n, allowed)
        if q.mode in ("hybrid", "bm25"):
            rankings["bm25"] = self.bm25_ranking(q.text, n, allowed)
        return self._fuse(rankings, {}, q.top_k)

    def _stats_sample(self, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The positions whose scores give the z-score statistics (the allowed cards with a vector; a fixed sample
        of them on large KBs) and their vectors. Gathering 4096 vectors costs more than scoring them, and a filter
        recurs across queries, so both are kept per allowed-mask (the engine never changes once built)."""
        key = allowed.tobytes()
        with self._sample_lock:
            hit = self._samples.get(key)
            if hit is not None:
                self._samples.move_to_end(key)
                return hit
        pos_allowed = np.flatnonzero(allowed & (self._pos_to_vrow >= 0))
        sample = pos_allowed if pos_allowed.size <= _STATS_SAMPLE else pos_allowed[
            np.linspace(0, pos_allowed.size - 1, _STATS_SAMPLE).astype(np.int64)]
        entry = (sample, self.index.matrix[self._pos_to_vrow[sample]])
        with self._sample_lock:
            self._samples[key] = entry
            while len(self._samples) > _SAMPLE_CACHE:
                self._samples.popitem(last=False)
        return entry

    def _zscore_hybrid(self, text: str, allowed: np.ndarray, n: int, top_k: int) -> list[SearchHit]:
        """Distribution-based fusion: each method's scores are standardised over the allowed cards (mean/std; a
        fixed sample of them on very large KBs) and averaged. On the labelled queries this beats both single
        methods where rank fusion does not (see ``ladder bench retrieval-quality``)."""
        dense_hits = self.dense_ranking(text, n, allowed)
        bm25_all = np.where(allowed, self.bm25.scores(text), 0.0)
        bm25_hits = self.bm25_ranking(text, n, allowed, scores=bm25_all)
        cand = sorted({p for p, _ in dense_hits} | {p for p, _ in bm25_hits})
        if not cand:
            return []
        vec = self.embedder.encode_query(text)
        sample, sample_vecs = self._stats_sample(allowed)
        d_sample = sample_vecs @ vec if sample.size else np.zeros(1)
        b_sample = bm25_all[sample] if sample.size else np.zeros(1)
        d_mu, d_sd = float(d_sample.mean()), max(float(d_sample.std()), 1e-6)
        b_mu, b_sd = float(b_sample.mean()), max(float(b_sample.std()), 1e-6)
        cand_arr = np.asarray(cand)
        rows = self._pos_to_vrow[cand_arr]
        d_c = np.where(rows >= 0, self.index.matrix[np.maximum(rows, 0)] @ vec, d_mu)
        fused = 0.5 * (d_c - d_mu) / d_sd + 0.5 * (bm25_all[cand_arr] - b_mu) / b_sd
        d_rank = {p: r for r, (p, _) in enumerate(dense_hits, 1)}
        b_rank = {p: r for r, (p, _) in enumerate(bm25_hits, 1)}
        order = np.lexsort((cand_arr, -d_c, -fused))[:top_k]
        return [SearchHit(card=self.cards[int(cand_arr[i])], score=round(float(fused[i]), 6),
                          breakdown=ScoreBreakdown(dense=float(d_c[i]), bm25=float(bm25_all[cand_arr[i]]),
                                                   dense_rank=d_rank.get(int(cand_arr[i])),
                                                   bm25_rank=b_rank.get(int(cand_arr[i]))))
                for i in order]

    def quick_match(self, q: QuickMatchQuery) -> list[SearchHit]:
        allowed = self.filter_mask(CardFilter(kinds=["pattern"], backends=[q.backend], statuses=["active"]))
        for cid in q.exclude:
            if cid in self.pos:
                allowed[self.pos[cid]] = False
        s = q.symptoms
        text = " ".join([q.text, *s.bottleneck_classes, *s.profile_signals, *s.ir_signatures, *s.code_features])
        n = max(q.top_k * 4, 50)
        rankings: dict[str, list] = {"symptom": self.symptom_ranking(s.tokens(), allowed)}
        if text.strip():
            rankings["dense"] = self.dense_ranking(text, n, allowed)
            rankings["bm25"] = self.bm25_ranking(text, n, allowed)
        return self._fuse(rankings, {"symptom": SYMPTOM_WEIGHT}, q.top_k)

    def invariants(self, q: InvariantQuery) -> list[SearchHit]:
        allowed = self.filter_mask(CardFilter(kinds=["invariant"], backends=[q.backend], statuses=["active"]))
        wanted_passes = {_norm_pass(p) for p in q.pass_names}
        structural: list[tuple[int, float, list[str]]] = []
        sig_tokens = {f"ir:{s}" for s in q.ir_signatures}
        for i in np.flatnonzero(allowed):
            hit_p = sorted(self._passes[i] & wanted_passes)
            hit_s = sorted(sig_tokens & self._tokens[i])
            if hit_p or hit_s:
                structural.append((int(i), len(hit_p) * 2.0 + len(hit_s), [f"pass:{p}" for p in hit_p] + hit_s))
        structural.sort(key=lambda x: (-x[1], x[0]))
        text = " ".join([q.text, *q.pass_names, *q.ir_signatures]).strip()
        rankings: dict[str, list] = {"symptom": structural}
        if text:
            n = max(q.top_k * 4, 50)
            rankings["dense"] = self.dense_ranking(text, n, allowed)
            rankings["bm25"] = self.bm25_ranking(text, n, allowed)
        return self._fuse(rankings, {"symptom": SYMPTOM_WEIGHT}, q.top_k)
