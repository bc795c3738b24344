"""The onnxruntime embedding path: same vectors as sentence-transformers, cached export, honest fallback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kb.errors import ToolchainError
from kb.search.embedding import Embedder

TEXTS = [
    "why does argmax scalarize on Ascend",
    "tiled tl.dot GEMM with 128x128x32 blocks and 4 warps reaches only half of the H200 tensor-core roofline",
    "",  # empty text: padding-only row
    "masked tail load " * 80,  # longer than the model's 256 tokens: truncation must match
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xdg")


def test_onnx_vectors_match_sentence_transformers(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    onnx, torch_ = Embedder(backend="onnx"), Embedder(backend="torch")
    a, b = onnx.encode(TEXTS), torch_.encode(TEXTS)
    assert onnx.runtime.startswith("onnxruntime") and torch_.runtime.startswith("sentence-transformers")
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert float(np.abs(a - b).max()) < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    exported = list((cache / "kernel-ladder").glob("*.onnx"))
    assert len(exported) == 1 and not list((cache / "kernel-ladder").glob("*.tmp"))
    mtime = exported[0].stat().st_mtime_ns
    again = Embedder(backend="auto")
    again.encode(TEXTS[:1])
    assert again.runtime.startswith("onnxruntime") and exported[0].stat().st_mtime_ns == mtime  # reused, not re-exported


def test_without_onnx_auto_falls_back_and_onnx_says_how_to_fix(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kb.search.onnx_encoder as oe

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache / "empty"))
    monkeypatch.setattr(oe, "_export", lambda *_a, **_k: (_ for _ in ()).throw(ModuleNotFoundError("No module named 'onnx'")))
    auto = Embedder(backend="auto")
    vec = auto.encode(TEXTS[:1])
    assert vec.shape == (1, 384) and "onnx unavailable" in auto.runtime and "onnx" in auto.runtime
    with pytest.raises(ToolchainError, match="LADDER_EMBED_BACKEND=torch"):
        Embedder(backend="onnx").encode(TEXTS[:1])
    with pytest.raises(ValueError, match="auto, onnx or torch"):
        Embedder(backend="tensorrt")
