"""The backend a session or a diagnosis runs on: one type, ``Backend``, with its accepted spellings normalised at
the boundary (``parse_backend``: CLI options, campaign arguments) and checked against this machine
(``check_backend``). Everything past the boundary takes a ``Backend``.

Other vocabularies stay where they belong: the KB's cards name the hardware they apply to (``kb.vocab.Backend``:
cuda, ascend, amd, any), and Triton's compile targets call Ascend ``npu`` (``optimizer.ir``).
"""

from __future__ import annotations

import importlib.util
from typing import Literal, get_args

from kb.errors import InvalidArgument

__all__ = ["ALIASES", "BACKENDS", "Backend", "check_backend", "detect_backend", "parse_backend"]

Backend = Literal["cuda", "interpreter", "ascend"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
#: other spellings of a backend that the boundary accepts (case-insensitive)
ALIASES: dict[str, Backend] = {"cpu": "interpreter", "triton_interpret": "interpreter", "interpret": "interpreter",
                               "gpu": "cuda", "npu": "ascend"}


def detect_backend() -> Backend:
    try:
        import torch

        if torch.cuda.is_available():
            return "cuda"
        if importlib.util.find_spec("torch_npu") is not None:
            return "ascend"
    except (ImportError, OSError):  # no torch, or a broken CUDA library under it: the interpreter backend
        pass
    return "interpreter"


def parse_backend(name: str) -> Backend:
    """``name`` as a ``Backend`` (``CUDA``, ``cpu``, ``npu`` ... accepted); an unknown name lists the valid ones.
    Nothing is checked against this machine: a campaign's driver names the backend of its workers."""
    key = name.strip().lower()
    for b in BACKENDS:
        if key == b:
            return b
    if key in ALIASES:
        return ALIASES[key]
    hint = " (AMD GPUs are not supported yet)" if key in ("amd", "rocm", "hip") else ""
    raise InvalidArgument(f"unknown backend {name!r}{hint}: use one of {', '.join(BACKENDS)}", field="backend")


def check_backend(name: str | None) -> Backend:
    """The backend to run on, validated up front: an unknown name lists the valid ones; ``cuda`` without a CUDA
    device and ``ascend`` without torch-npu say so, and how to run instead."""
    if name is None:
        return detect_backend()
    backend = parse_backend(name)
    if backend == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidArgument(
                "--backend cuda: no CUDA device on this machine (torch.cuda.is_available() is False); "
                "use --backend interpreter for correctness and static (code + IR) diagnosis"
            )
    if backend == "ascend" and importlib.util.find_spec("torch_npu") is None:
        raise InvalidArgument("--backend ascend: torch_npu is not installed, so no Ascend NPU can be used; "
                              "install the ascend extra on an NPU machine, or use --backend interpreter")
    return backend
