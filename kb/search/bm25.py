"""BM25 over card text with bm25s and our identifier-preserving tokenizer."""

from __future__ import annotations

import os
import threading

# bm25s.selection imports jax when it is installed and runs a top_k at import; on a GPU host that starts XLA on
# the GPU and pre-allocates most of its memory. BM25 here needs no accelerator: keep jax on the CPU unless the
# caller chose otherwise.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bm25s
import numpy as np

from kb.search.tokenize import tokenize

__all__ = ["BM25Index"]


class BM25Index:
    """BM25 scores over a fixed list of texts. Tokenizing is most of the build time, so an index made with
    ``successor()`` reuses the tokens of texts its predecessor already saw (a KB rebuild after one card write
    tokenizes that card only). The scores are those of a fresh build: the cache maps a text to its tokens."""

    def __init__(self, tokens: dict[str, list[str]] | None = None) -> None:
        self._lock = threading.Lock()
        self._model: bm25s.BM25 | None = None
        self._n = 0
        self._tokens = tokens or {}

    def successor(self) -> BM25Index:
        """An empty index whose ``build`` reuses this one's tokenized texts."""
        return BM25Index(self._tokens)

    def build(self, texts: list[str]) -> None:
        model = bm25s.BM25(k1=1.2, b=0.75)
        seen: dict[str, list[str]] = {}
        for t in texts:
            seen[t] = self._tokens.get(t) or tokenize(t) or ["__empty__"]
        tokens = [seen[t] for t in texts]
        if tokens:
            model.index(tokens, show_progress=False)
        with self._lock:
            self._model, self._n = (model if tokens else None), len(texts)
            self._tokens = seen  # only the texts indexed now: the cache never outgrows the KB

    def __len__(self) -> int:
        return self._n

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when nothing matches)."""
        with self._lock:
            model, n = self._model, self._n
        if model is None:
            return np.zeros(n, dtype=np.float32)
        toks = [t for t in tokenize(query) if t in model.vocab_dict]
        if not toks:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(model.get_scores(toks), dtype=np.float32)
