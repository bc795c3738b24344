"""Literal block sizes -> constexprs, the preparation ``block_scale`` runs when it refuses a kernel.

First versions often hard-code their block: ``offs = pid * 128 + tl.arange(0, 128)`` with a grid of
``triton.cdiv(n, 128)``, or a loop tile ``rows = tl.arange(0, 4)`` stepped by ``range(0, D1, 4)`` into a
``tl.zeros((4, BLOCK))`` accumulator. ``block_scale`` scales constexpr blocks only (it must change every use
together), so such a kernel was refused and the ladder turned a launch knob instead. This preparation names the
literal: every use of the value ``V`` in the kernel becomes a new constexpr passed as ``NAME=V`` at the launch,
which leaves the program unchanged, and ``block_scale`` then scales it like any other block.

Domain (refused with the reason otherwise): a launched kernel with one launch site, not autotuned, whose literal
``V`` (a power of two >= 2) sizes a ``tl.arange(0, V)`` and also a program's block (``pid * V``) or a loop step
(``range(.., .., V)``), and appears in the kernel nowhere else than in those places and in ``tl.zeros`` /
``tl.full`` shapes. A literal that also means something else (``x * 4`` in the math) stays a literal.
"""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.block_scale import int_literal
from optimizer.rewrite.common import defaulted_positional_reasons, fresh
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target, parse_tree, targets
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import LOOP_RANGES, call_name, range_args, walk

__all__ = ["promote_literal_blocks"]


def _uses(t: Target, value: int) -> tuple[list[cst.Integer], list[cst.Integer], bool]:
    """(every Integer node equal to ``value`` in the kernel body, those in block positions, whether one of them
    sizes a program's block or a loop step)."""
    pids = set(t.facts.pid.values())
    every = [n for n in walk(t.kernel.node.body) if isinstance(n, cst.Integer) and int_literal(n) == value]
    placed: list[cst.Integer] = []
    blockish = False
    for n in walk(t.kernel.node.body):
        if (
            isinstance(n, cst.Call)
            and call_name(n) == "tl.arange"
            and len(n.args) == 2
            and isinstance(end := n.args[1].value, cst.Integer)
            and int_literal(end) == value
        ):
            placed.append(end)
        elif isinstance(n, cst.Call) and call_name(n) in ("tl.zeros", "tl.full") and n.args \
                and isinstance(shape := n.args[0].value, (cst.Tuple, cst.List)):
            placed += [v for e in shape.elements if isinstance(v := e.value, cst.Integer) and int_literal(v) == value]
        elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
            for lit, other in ((n.left, n.right), (n.right, n.left)):
                if isinstance(lit, cst.Integer) and int_literal(lit) == value and (
                        (isinstance(other, cst.Name) and other.value in pids) or call_name(other) == "tl.program_id"):
                    placed.append(lit)
                    blockish = True
        elif isinstance(n, cst.For) and call_name(n.iter) in LOOP_RANGES:
            args = range_args(n.iter)
            if len(args) >= 3 and isinstance(step := args[2].value, cst.Integer) and int_literal(step) == value:
                placed.append(step)
                blockish = True
    return every, placed, blockish


def promote_literal_blocks(source: str) -> tuple[str, str]:
    """``(new source, description)`` with the first literal block of a launched kernel named as a constexpr;
    raises ``NotApplicable`` when no kernel has one (with each kernel's reason)."""
    ctx = RecipeContext(source=source)
    tree = parse_tree(ctx)
    reasons = []
    for t in targets(tree, ctx):
        if len(t.sites) != 1 or t.kernel.autotuned or t.kernel.heuristics:
            reasons.append(f"{t.kernel.name}: launched from {len(t.sites)} places or autotuned")
            continue
        if why := defaulted_positional_reasons(t.kernel.node, [t.sites[0].call]):
            reasons.append(f"{t.kernel.name}: {why[0]}")
            continue
        values = sorted(
            {
                v
                for n in walk(t.kernel.node.body)
                if isinstance(n, cst.Call)
                and call_name(n) == "tl.arange"
                and len(n.args) == 2
                and (v := int_literal(n.args[1].value)) is not None
                and v >= 2
                and v & (v - 1) == 0
            }
        )
        for v in values:
            every, placed, blockish = _uses(t, v)
            if not blockish or {id(n) for n in every} != {id(n) for n in placed}:
                reasons.append(f"{t.kernel.name}: the literal {v} is not only a block size (it is used "
                               + ("elsewhere in the kernel too)" if blockish else "for no program block or loop step)"))
                continue
            name = fresh(t, "TILE" if any(isinstance(n, cst.For) for n in walk(t.kernel.node.body)) else "BLOCK")
            for n in placed:
                tree.replace(n, name)
            tree.add_params(t.kernel.node, [f"{name}: tl.constexpr"])
            tree.add_keyword(t.sites[0].call, name, str(v))
            return tree.render(), f"{t.kernel.name}: the literal block size {v} named as a constexpr {name}={v}"
        if not values:
            reasons.append(f"{t.kernel.name}: no tl.arange(0, <literal>)")
    raise NotApplicable("no literal block size to name: " + "; ".join(reasons))
