"""Structural signatures: detection on the final stages, attribution to the pass that introduced them.

Each detector reads the stage where the signature is visible (TTIR/TTGIR for ops and layouts, PTX for
instructions, the ptxas log for spills, ttadapter for Ascend), maps the hits to kernel source lines through
``loc`` / ``.loc``, and asks :meth:`optimizer.ir._ctx.Ctx.attribute` which pass introduced the construct.
Names are the ``kb.vocab.IRSignature`` words that cards cite. Detectors: ``detect_cuda`` and ``detect_ascend``;
the regular expressions they use are in ``patterns``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from optimizer.ir._ctx import Ctx, closing_line, region_follows
from optimizer.ir.constructs import ir_constructs
from optimizer.ir.detect_ascend import detect_ascend
from optimizer.ir.detect_cuda import detect_converts, detect_dots, detect_pipelining, detect_ptx, detect_reductions
from optimizer.ir.passes import SnapStats
from optimizer.ir.patterns import MLIR_OP, REDUCE_OP, TOP_LEVEL_COMMA
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
    index = {stage: _op_index(ctx, stage) for stage in ("ttir", "ttgir", "ttadapter") if ctx.final(stage)}
    return [s.model_copy(update={"facts": _facts(index, s) | s.facts,
                                 "constructs": _constructs(index, s, capture.options)}) for s in out]


class _Op(NamedTuple):
    op: str
    operands: int
    line: int | None  # kernel source line
    text: str  # the op's line, or the closing line of a region op (which carries its loc and result types)


def _op_index(ctx: Ctx, stage: str) -> list[_Op]:
    """The ops of a final MLIR stage with their source lines."""
    lines = ctx.final(stage).split("\n")
    res = ctx.resolver(stage)
    out = []
    for i, line in enumerate(lines):
        if line.startswith("#") or not (m := MLIR_OP.match(line)):
            continue
        loc_line = closing_line(lines, i) if line.rstrip().endswith(("({", "{")) or region_follows(lines, i) else line
        r = REDUCE_OP.search(line) if m.group(1) == "tt.reduce" else None
        operands = len(TOP_LEVEL_COMMA.split(r["operands"])) if r else 1
        typed = loc_line if "tensor<" in loc_line or "memref<" in loc_line else line
        out.append(_Op(m.group(1), operands, res.line_of(loc_line), typed))
    return out


def _constructs(index: dict[str, list[_Op]], sig: Signature, options: dict) -> list[str]:
    """Constructs at the signature's source lines (TTIR and TTGIR ops there), or of the whole kernel without lines."""
    wanted = set(sig.source_lines)
    ops = [(o.op, o.operands) for stage in ("ttir", "ttgir", "ttadapter") for o in index.get(stage, [])
           if not wanted or o.line in wanted]
    return ir_constructs(ops, options)


#: Ops whose tensor describes a signature that is not about one op of its own (a barrier, a shared round trip).
_FALLBACK_OPS = ("tt.reduce", "tt.dot", "ttng.warp_group_dot", "tt.atomic_rmw", "ttg.convert_layout", "tt.load",
                 "tt.store")


def _facts(index: dict[str, list[_Op]], sig: Signature) -> dict[str, str]:
    """op / dtype / block_shape (and a reduce's operand count) of the op the signature is about, read at its
    source lines; for signatures without an op of their own, the first tensor op there."""
    stage = "ttadapter" if sig.stage == "ttadapter" else "ttgir" if "ttgir" in index else "ttir"
    if not sig.source_lines or stage not in index:
        return {}
    wanted = set(sig.source_lines)
    at_lines = [o for o in index[stage] if o.line in wanted]
    op = SIGNATURE_OPS.get(sig.name)
    candidates = [op] if op else [o for o in _FALLBACK_OPS if any(x.op == o for x in at_lines)][:1]
    for name in candidates:
        for o in at_lines:
            if o.op != name:
                continue
            facts = {"op": name} | ({"operands": str(o.operands)} if name == "tt.reduce" else {})
            if m := _TENSOR_TYPE.search(o.text.rsplit("->", 1)[-1]) or _TENSOR_TYPE.search(o.text):
                facts |= {"dtype": m.group(2), "block_shape": m.group(1).rstrip("x") or "scalar"}
            return facts
    return {}
