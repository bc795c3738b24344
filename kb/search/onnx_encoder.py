"""ONNX Runtime inference for the sentence-transformers model: the same vectors, several times faster on a CPU.

The model is exported once per machine from the installed weights (``torch.onnx.export``, needs the ``onnx``
package) into a cache directory (``$XDG_CACHE_HOME/kernel-ladder`` or ``~/.cache/kernel-ladder``), keyed by the
weights file's path, size and mtime, and written atomically so concurrent processes never read half a file.
Inference runs the BERT encoder in onnxruntime, then applies the model's own mean pooling and L2 normalisation in
NumPy. ``build`` refuses (returns None with the reason) unless the pipeline is exactly Transformer -> mean
Pooling -> Normalize, so a different model silently keeps the sentence-transformers path instead of producing
different vectors. Outputs match sentence-transformers to ~1e-7 (``tests/kb/test_onnx_encoder.py``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from kb.errors import log_error

__all__ = ["OnnxEncoder", "build", "cache_dir"]

log = logging.getLogger(__name__)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "kernel-ladder"


class OnnxEncoder:
    """Tokenize with the model's tokenizer, run the encoder in onnxruntime, mean-pool and normalise."""

    def __init__(self, session: Any, tokenizer: Any, max_length: int) -> None:
        self.session, self.tokenizer, self.max_length = session, tokenizer, max_length
        self.inputs = [i.name for i in session.get_inputs()]

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        out = []
        for i in range(0, len(texts), batch_size):
            b = self.tokenizer(texts[i:i + batch_size], return_tensors="np", padding=True, truncation=True,
                               max_length=self.max_length)
            feed = {k: np.asarray(b[k], dtype=np.int64) for k in self.inputs}
            hidden = self.session.run(None, feed)[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            v = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            out.append(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out).astype(np.float32)


def _weights(model_path: Path) -> Path | None:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_path / name).exists():
            return model_path / name
    return None


def _supported(st_model: Any) -> str | None:
    """Why this pipeline cannot run here (None if it can): only Transformer -> mean Pooling -> Normalize."""
    mods = list(st_model)
    kinds = [type(m).__name__ for m in mods]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        return f"pipeline {kinds} is not Transformer -> Pooling -> Normalize"
    mode, mean_tokens = getattr(mods[1], "pooling_mode", None), getattr(mods[1], "pooling_mode_mean_tokens", False)
    if mode not in (None, "mean") and not mean_tokens:
        return f"pooling mode {mode or '?'} is not mean"
    return None


def _export(st_model: Any, dest: Path) -> None:
    import torch

    encoder = st_model[0].auto_model.float().eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state

    b = st_model.tokenizer(["export probe"], return_tensors="pt")
    axes = {n: {0: "batch", 1: "seq"} for n in (*_INPUTS, "last_hidden_state")}
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        with torch.inference_mode():
            torch.onnx.export(_Hidden(), tuple(b[n] for n in _INPUTS), tmp, input_names=list(_INPUTS),
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
        os.replace(tmp, dest)
    finally:
        Path(tmp).unlink(missing_ok=True)


def build(st_model: Any, model_path: Path) -> tuple[OnnxEncoder | None, str]:
    """An encoder for ``st_model`` (exporting it on first use), or (None, why not)."""
    why = _supported(st_model)
    if why:
        return None, why
    try:
        import onnxruntime as ort
    except ImportError:
        return None, "onnxruntime is not installed"
    weights = _weights(model_path)
    if weights is None:
        return None, f"no weights file in {model_path}"
    st = weights.stat()
    key = hashlib.sha256(f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    dest = cache_dir() / f"{model_path.name}-{key}.onnx"
    try:
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            log.info("exporting the embedding model to ONNX (once per machine): %s", dest)
            _export(st_model, dest)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        # Idle intra-op threads would otherwise spin for a while after each query and take the cores that the
        # index lookup and gRPC need next (on 2 cores this doubled the service latency); the output is unchanged.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(dest), opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - optional-accelerator boundary: torch.onnx and onnxruntime raise
        # undeclared types (export unsupported, a runtime Fail, an unwritable cache); any of them keeps torch
        error_id = log_error(log, exc, "the ONNX export of the embedding model", level=logging.INFO)
        return None, f"{type(exc).__name__}: {exc}"[:300] + f" (error {error_id})"
    return OnnxEncoder(session, st_model.tokenizer, int(st_model.max_seq_length or 256)), str(dest)
