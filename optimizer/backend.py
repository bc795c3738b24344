"""Backend selection: the backend a session or a diagnosis runs on, detected or named and validated up front."""

from __future__ import annotations

import importlib.util

from kb.errors import InvalidArgument

__all__ = ["BACKENDS", "check_backend", "detect_backend"]

BACKENDS = ("cuda", "interpreter", "ascend")


def detect_backend() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return "cuda"
        if importlib.util.find_spec("torch_npu") is not None:
            return "ascend"
    except (ImportError, OSError):  # no torch, or a broken CUDA library under it: the interpreter backend
        pass
    return "interpreter"


def check_backend(name: str | None) -> str:
    """The backend to run on, validated up front: an unknown name lists the valid ones; ``cuda`` without a CUDA
    device and ``ascend`` without torch-npu say so, and how to run instead."""
    if name is None:
        return detect_backend()
    if name not in BACKENDS:
        hint = " (the CPU backend is called 'interpreter')" if name.lower() in ("cpu", "triton_interpret") else ""
        raise InvalidArgument(f"unknown backend {name!r}{hint}: use one of {', '.join(BACKENDS)}")
    if name == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidArgument(
                "--backend cuda: no CUDA device on this machine (torch.cuda.is_available() is False); "
                "use --backend interpreter for correctness and static (code + IR) diagnosis"
            )
    if name == "ascend" and importlib.util.find_spec("torch_npu") is None:
        raise InvalidArgument("--backend ascend: torch_npu is not installed, so no Ascend NPU can be used; "
                              "install the ascend extra on an NPU machine, or use --backend interpreter")
    return name
