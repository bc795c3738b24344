"""Lane-index readers shared by the kernel facts and the transforms: which expressions are ``tl.arange``-built
block indices (``ArangeIndex``) and which subscripts broadcast one (``broadcast_index``). The alignment hints and the
repeated-index fact read indices the same way through these.
"""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.tree import call_name, walk

__all__ = ["ArangeIndex", "broadcast_index", "is_all", "is_int", "is_none", "positional"]


def is_none(e: cst.BaseSlice) -> bool:
    return isinstance(e, cst.Index) and isinstance(e.value, cst.Name) and e.value.value == "None"


def is_all(e: cst.BaseSlice) -> bool:
    return isinstance(e, cst.Slice) and e.lower is None and e.upper is None and e.step is None


def broadcast_index(node: cst.CSTNode) -> tuple[str, int] | None:
    """``name[:, None]`` -> (name, 0); ``name[None, :]`` -> (name, 1)."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 2):
        return None
    a, b = node.slice[0].slice, node.slice[1].slice
    if is_all(a) and is_none(b):
        return node.value.value, 0
    if is_none(a) and is_all(b):
        return node.value.value, 1
    return None


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def is_int(e: cst.CSTNode, value: str) -> bool:
    return isinstance(e, cst.Integer) and e.value == value


class _Index:
    """Whether an index is built from ``tl.arange(0, B)`` plus multiples of constexpr blocks (collected in ``blocks``).

    Accepted shapes: ``tl.arange(0, B)``, ``pid * B + tl.arange(0, B)``, ``k0 + offs`` with ``k0`` a
    ``range(0, n, B)`` loop variable; every B must be a constexpr parameter (its value is checked at launch)."""

    def __init__(self, k: cst.FunctionDef, constexprs: list[str], ints: set[str] | None = None) -> None:
        self.constexprs = set(constexprs)
        self.ints = set(ints or ())
        # ``(index) % n`` wrap-arounds met while reading indices (the tutorial matmul's ``% M``), with their ``n``
        self.wraps: list[tuple[cst.BinaryOperation, str]] = []
        self.defs: dict[str, list[cst.BaseExpression]] = {}
        for n in walk(k):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                self.defs.setdefault(n.targets[0].target.value, []).append(n.value)
            elif isinstance(n, cst.For) and isinstance(n.target, cst.Name):
                self.defs.setdefault(n.target.value, []).append(n.iter)

    def name(self, name: str, blocks: set[str], depth: int = 0) -> bool:
        vals = self.defs.get(name, [])
        # every definition must be an index (``cols = off + tl.arange(0, B)`` repeated in each of several loops)
        return depth <= 4 and bool(vals) and all(self.expr(v, blocks, depth) for v in vals)

    def expr(self, e: cst.BaseExpression, blocks: set[str], depth: int) -> bool:
        if isinstance(e, cst.Call) and call_name(e) == "tl.arange" and len(e.args) == 2 and len(positional(e)) == 2:
            start, end = positional(e)
            if is_int(start, "0") and isinstance(end, cst.Name) and end.value in self.constexprs:
                blocks.add(end.value)
                return True
            return False
        if isinstance(e, cst.Call) and call_name(e) == "range" and len(e.args) == 3 and len(positional(e)) == 3:
            start, _stop, step = positional(e)
            if is_int(start, "0") and isinstance(step, cst.Name) and step.value in self.constexprs:
                blocks.add(step.value)
                return True
            return False
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
            return all(self.expr(s, blocks, depth) for s in (e.left, e.right))
        if (isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Modulo) and isinstance(e.right, cst.Name)
                and e.right.value in self.ints and self.expr(e.left, blocks, depth)):
            # (pid * B + tl.arange(0, B)) % n: runs of ALIGN lanes stay contiguous and ALIGN-aligned when ALIGN
            # divides B and n (the wrap falls on a run boundary); the run structure is hinted on this node
            if not any(e is w for w, _ in self.wraps):
                self.wraps.append((e, e.right.value))
            return True
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):  # pid * BLOCK
            for s in (e.left, e.right):
                if isinstance(s, cst.Name) and s.value in self.constexprs:
                    blocks.add(s.value)
                    return True
            return False
        if isinstance(e, cst.Name):
            return self.name(e.value, blocks, depth + 1)
        return False


#: public names of the index readers, for the transforms that reason about lane indices the same way
ArangeIndex = _Index
