"""Structural signatures: detection on the final stages, attribution to the pass that introduced them.

Each detector reads the stage where the signature is visible (TTIR/TTGIR for ops and layouts, PTX for
instructions, the ptxas log for spills, ttadapter for Ascend), maps the hits to kernel source lines through
``loc`` / ``.loc``, and asks :meth:`optimizer.ir._ctx.Ctx.attribute` which pass introduced the construct.
Names are the ``kb.vocab.IRSignature`` words that cards cite. Detectors: ``detect_cuda`` and ``detect_ascend``;
the regular expressions they use are in ``patterns``.
"""

from __future__ import annotations

import re

from optimizer.ir._ctx import Ctx, closing_line, region_follows
from optimizer.ir.detect_ascend import detect_ascend
from optimizer.ir.detect_cuda import detect_converts, detect_dots, detect_pipelining, detect_ptx, detect_reductions
from optimizer.ir.passes import SnapStats
from optimizer.ir.types import Capture, Signature

__all__ = ["DETECTORS", "Ctx", "detect_all"]

DETECTORS = (detect_reductions, detect_converts, detect_ptx, detect_dots, detect_pipelining, detect_ascend)

#: The TTGIR/TTIR op a signature is about, to read its dtype and block shape at the signature's source lines.
SIGNATURE_OPS: dict[str, str] = {
    "scalar_global_load": "tt.load", "vector_global_load": "tt.load", "masked_load_not_vectorized": "tt.load",
    "multi_operand_reduction": "tt.reduce", "cross_warp_reduction": "tt.reduce", "warp_shuffle": "tt.reduce",
    "fma_dot": "tt.dot", "mma_dot": "tt.dot", "wgmma_dot": "ttng.warp_group_dot", "no_software_pipelining": "tt.load",
    "ascend_max_with_index": "linalg.reduce", "ascend_min_with_index": "linalg.reduce",
    "ascend_discrete_mem_access": "tensor.extract", "ascend_padding_fill": "linalg.fill",
    "surviving_convert_layout": "ttg.convert_layout",
}
# tensor<1024x!tt.ptr<f32>, #blocked>  /  tensor<64x32xf32, #mma>  /  memref<256xf32>
_TENSOR_TYPE = re.compile(r"(?:tensor|memref)<((?:\d+x)*)(?:!tt\.ptr<)?(\w+?)[,>]")


def detect_all(capture: Capture, stats: dict[int, SnapStats] | None = None) -> list[Signature]:
    """Every signature found in ``capture``, in a stable order (``stats``: shared per-snapshot cache)."""
    ctx = Ctx(capture, {} if stats is None else stats)
    out: list[Signature] = []
    for detector in DETECTORS:
        out += detector(ctx)
    return [s.model_copy(update={"facts": _facts(ctx, s) | s.facts}) for s in out]


def _facts(ctx: Ctx, sig: Signature) -> dict[str, str]:
    """op / dtype / block_shape of the op the signature is about, read at its source lines."""
    op = SIGNATURE_OPS.get(sig.name)
    stage = "ttadapter" if sig.stage == "ttadapter" else "ttgir" if ctx.final("ttgir") else "ttir"
    if not op or not sig.source_lines or not ctx.final(stage):
        return {}
    wanted = set(sig.source_lines)
    lines = ctx.final(stage).split("\n")
    res = ctx.resolver(stage)
    for i, line in enumerate(lines):
        if op not in line or line.startswith("#"):
            continue
        loc_line = closing_line(lines, i) if line.rstrip().endswith(("({", "{")) or region_follows(lines, i) else line
        if res.line_of(loc_line) not in wanted:
            continue
        typed = loc_line if "tensor<" in loc_line or "memref<" in loc_line else line
        if m := _TENSOR_TYPE.search(typed.rsplit("->", 1)[-1]) or _TENSOR_TYPE.search(typed):
            return {"op": op, "dtype": m.group(2), "block_shape": m.group(1).rstrip("x") or "scalar"}
        return {"op": op}
    return {}
