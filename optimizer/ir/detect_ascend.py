"""Ascend signature detectors on triton-ascend's ttadapter IR (Linalg + HIVM/HFusion annotations)."""

from __future__ import annotations

import re

from optimizer.ir import patterns as P
from optimizer.ir._ctx import Ctx
from optimizer.ir._ctx import make_signature as _sig
from optimizer.ir.types import Signature

__all__ = ["detect_ascend"]


def _count(rx: re.Pattern[str]):
    return lambda text: len(rx.findall(text))


# ---- Ascend ----------------------------------------------------------------------------------------------------
def detect_ascend(ctx: Ctx) -> list[Signature]:
    text = ctx.final("ttadapter")
    if not text:
        return []
    out = []
    for mode in ("max_with_index", "min_with_index"):
        rx = re.compile(rf'reduce_mode = "{mode}"')
        if n := len(rx.findall(text)):
            src, ev = ctx.op_lines("ttadapter", rx)
            out.append(_sig(ctx, f"ascend_{mode}", n, "ttadapter", src, ev,
                            f"{n} linalg.reduce with reduce_mode={mode} (argmax/argmin recognised by its predicates)",
                            ctx.attribute(_count(rx))))
    if n := len(P.DISCRETE.findall(text)):
        src, ev = ctx.op_lines("ttadapter", P.DISCRETE)
        loops = len(P.EXTRACTED_LOOP.findall(text))
        out.append(
            _sig(
                ctx,
                "ascend_discrete_mem_access",
                n,
                "ttadapter",
                src,
                ev,
                f"{n} element-wise accesses tagged DiscreteMemAccess in {loops} scalar loop(s) "
                "(ExtractedLoadOrStore): the gather runs on the scalar pipeline",
                ctx.attribute(_count(P.DISCRETE)),
            )
        )
    if n := len(P.PADDING_FILL.findall(text)):
        src, ev = ctx.op_lines("ttadapter", P.PADDING_FILL)
        out.append(_sig(ctx, "ascend_padding_fill", n, "ttadapter", src, ev,
                        f"{n} linalg.fill of a load buffer under scf.if (masked-load padding with `other`); "
                        "the fill orders a vector op before the MTE2 copy", ctx.attribute(_count(P.PADDING_FILL))))
    if m := P.MIX_MODE.search(text):
        out.append(_sig(ctx, "ascend_mix_mode", 1, "ttadapter", [], [m.group(0)],
                        f"mix_mode = {m['mode']} (aiv: vector cores only; aic: cube; mix: both)",
                        ctx.attribute(_count(P.MIX_MODE))))
    return out
