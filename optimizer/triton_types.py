"""Triton's element type names: from torch dtypes (launch records, compile-only signatures) and their sizes in bytes.

One table for every place that reads a launch signature (``*bf16``, ``i32`` ...): the probes that record launches,
the compile-only checker that builds signatures, L1's row-size estimates and the descriptor recipe's alignment check.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ELEM_BYTES", "TORCH_TO_TRITON", "elem_bytes", "pointer_type"]

#: torch dtype name (without ``torch.``) -> Triton's type name
TORCH_TO_TRITON = {
    "float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5", "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "i1",
}

#: Triton type name -> bytes per element
ELEM_BYTES = {"fp64": 8, "i64": 8, "u64": 8, "fp32": 4, "i32": 4, "u32": 4, "fp16": 2, "bf16": 2, "i16": 2, "u16": 2,
              "fp8e4nv": 1, "fp8e5": 1, "i8": 1, "u8": 1}


def pointer_type(tensor: Any) -> str:
    """A tensor argument's signature entry: ``*`` + Triton's name for its dtype (the torch name when Triton has
    none)."""
    name = str(tensor.dtype).removeprefix("torch.")
    return "*" + TORCH_TO_TRITON.get(name, name)


def elem_bytes(sig_type: Any) -> int | None:
    """Bytes per element of a signature entry (``*bf16`` or ``bf16``); None when it is not a sized element type."""
    return ELEM_BYTES.get(str(sig_type or "").lstrip("*"))
