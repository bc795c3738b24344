"""Constructs: what the code behind a signature does (reduce, atomic, dot ...), in words shared by IR and cards.

A signature such as ``barrier`` has several causes (a cross-warp ``tl.max``, an acq_rel ``tl.atomic_add``, a
surviving layout conversion). L3 reads the constructs at the signature's source lines from the IR ops there
(:func:`ir_constructs`); an invariant card names its constructs as the Triton calls in its ``code_features``
(:func:`card_constructs`). L4 cites a card for a signature only when the two share a construct.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CALL_CONSTRUCTS", "IR_CONSTRUCTS", "OPTION_CONSTRUCTS", "card_constructs", "ir_constructs"]

#: IR op -> construct. A tt.reduce with several operands (value + index) is also an ``index_reduce``.
IR_CONSTRUCTS: dict[str, str] = {
    "tt.reduce": "reduce", "linalg.reduce": "reduce",
    "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic",
    "tt.dot": "dot", "ttng.warp_group_dot": "dot", "ttng.tc_gen5_mma": "dot",
    "tt.load": "load", "tt.store": "store",
    "tt.trans": "transpose", "tt.reshape": "reshape", "ttg.convert_layout": "layout_convert",
    "tt.make_tensor_descriptor": "tensor_descriptor", "tt.descriptor_load": "tensor_descriptor",
    "tt.descriptor_store": "tensor_descriptor",
    "tt.make_tensor_ptr": "block_ptr", "tt.advance": "block_ptr",
    "scf.for": "loop", "tt.scan": "scan", "tt.make_range": "arange", "arith.select": "select",
    "math.exp": "exp", "math.exp2": "exp", "arith.divf": "division",
}

#: Triton call (as cards write it in ``code_features``) -> construct.
CALL_CONSTRUCTS: dict[str, str] = {
    "tl.sum": "reduce", "tl.max": "reduce", "tl.min": "reduce", "tl.reduce": "reduce", "tl.xor_sum": "reduce",
    "tl.argmax": "index_reduce", "tl.argmin": "index_reduce",
    "tl.dot": "dot", "tl.load": "load", "tl.store": "store",
    "tl.trans": "transpose", "tl.reshape": "reshape", "ttg.convert_layout": "layout_convert",
    "tl.make_tensor_descriptor": "tensor_descriptor", "tl.make_block_ptr": "block_ptr", "tl.advance": "block_ptr",
    "tl.range": "loop", "tl.cumsum": "scan", "tl.associative_scan": "scan", "tl.arange": "arange",
    "tl.where": "select", "tl.exp": "exp", "tl.div_rn": "division",
}

#: Compile options that are constructs when set (num_warps and num_stages always are, so they tell nothing).
OPTION_CONSTRUCTS = ("maxnreg",)


def card_constructs(code_features: Iterable[str]) -> set[str]:
    """Constructs an invariant card is about: its Triton calls (any ``tl.atomic_*`` is ``atomic``) and options."""
    out = set()
    for f in code_features:
        if f in CALL_CONSTRUCTS:
            out.add(CALL_CONSTRUCTS[f])
        elif f.startswith("tl.atomic_"):
            out.add("atomic")
        elif f in OPTION_CONSTRUCTS:
            out.add(f)
    return out


def ir_constructs(ops: Iterable[tuple[str, int]], options: dict) -> list[str]:
    """Constructs of IR ops given as (op name, operand count), plus the options set among ``OPTION_CONSTRUCTS``."""
    out = set()
    for op, operands in ops:
        if op in IR_CONSTRUCTS:
            out.add(IR_CONSTRUCTS[op])
            if op == "tt.reduce" and operands > 1:
                out.add("index_reduce")
    out |= {k for k in OPTION_CONSTRUCTS if options.get(k)}
    return sorted(out)
