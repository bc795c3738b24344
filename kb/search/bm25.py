"""BM25 over card text with bm25s and our identifier-preserving tokenizer."""

from __future__ import annotations

import os
import threading

# bm25s.selection imports jax when it is installed and runs a top_k at import; on a GPU host that starts XLA on
# the GPU and pre-allocates most of its memory. BM25 here needs no accelerator: keep jax on the CPU unless the
# caller chose otherwise.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bm25s  # noqa: E402
import numpy as np

from kb.search.tokenize import tokenize

__all__ = ["BM25Index"]


class BM25Index:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: bm25s.BM25 | None = None
        self._n = 0

    def build(self, texts: list[str]) -> None:
        model = bm25s.BM25(k1=1.2, b=0.75)
        tokens = [tokenize(t) or ["__empty__"] for t in texts]
        if tokens:
            model.index(tokens, show_progress=False)
        with self._lock:
            self._model, self._n = (model if tokens else None), len(texts)

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
