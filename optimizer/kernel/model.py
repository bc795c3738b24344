"""The kernel facts: one record per kernel and per launch site, read off one libcst parse of the candidate.

Both readers of a kernel read these records: L1's cause findings (``optimizer.ladder.causes.code``, through
``optimizer.kernel.features``) and every structural transform's preconditions (``optimizer.rewrite``). Facts the
transforms need are computed when the record is built; facts only L1 reads (source lines, passes, loop
reductions ...) are derived on first use (``optimizer.kernel.derived``), from the same nodes and the same data flow
(``optimizer.kernel.flow``), so the two can never disagree on what a kernel does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from optimizer.kernel.flow import ATOMICS

if TYPE_CHECKING:
    from optimizer.rewrite.tree import CstKernel, Tree

__all__ = ["Access", "Dot", "KernelFacts", "LaunchFacts", "Loop", "ModuleFacts"]


@dataclass
class Access:
    op: str  # tl.load, tl.store, tl.atomic_add, ...
    pointer: str
    mask: str | None
    pid_dependent: bool  # the address depends on a program id (or on a value loaded from a per-program address)
    in_loop: bool
    node: cst.Call = field(repr=False)
    statement_value_used: bool = False  # an atomic whose returned old value is read


@dataclass
class Loop:
    header: str
    kind: str  # "for" | "while"
    advances: list[str]  # names rebound inside the loop with ``+=`` (pointers or offsets moved per iteration)
    loads: list[str]  # pointer expressions of the loads inside
    node: cst.BaseCompoundStatement = field(repr=False)
    #: a non-constexpr parameter bounding ``for _ in range([start,] bound[, step])`` (any of ``tree.LOOP_RANGES``)
    bound: str | None = None
    #: the loop's step as written: a parameter name or an int literal; 1 when the range has no step, "?" otherwise
    step: str | int | None = None


@dataclass
class Dot:
    precision: str | None  # the input_precision literal, "allow_tf32=False" -> "ieee", None = the default (tf32)
    tiles: list[str]  # constexprs sizing the operands' aranges (BLOCK_M, BLOCK_N, BLOCK_K when visible)
    in_loop: bool
    node: cst.Call = field(repr=False)
    operands: list[str] = field(default_factory=list)  # source text of a and b


@dataclass(eq=False)
class KernelFacts:
    name: str
    params: list[str]
    constexprs: list[str]
    autotuned: bool
    pid: dict[int, str]  # axis -> variable assigned tl.program_id(axis)
    pid_calls: int  # how many tl.program_id calls
    aranges: list[tuple[str, str, bool]]  # (start, end, end is a constexpr or literal)
    accesses: list[Access]
    loops: list[Loop]
    reductions: list[tuple[str, str | None]]  # (function, axis text)
    dots: list[Dot]
    div_mod: list[str]  # texts of ``a // b`` / ``a % b`` whose left side depends on a program id
    branches: int  # if statements
    early_returns: int
    pid_dependent: set[str]  # names whose value depends on a program id
    rebound_params: list[str]  # parameters reassigned in the body (``x_ptr += row * stride``)
    heuristics: bool = False
    program_axes: list[int] = field(default_factory=list)  # constant axes of every tl.program_id call
    tree: Tree | None = field(default=None, repr=False)
    kernel: CstKernel | None = field(default=None, repr=False)

    # ---------------------------------------------------------------- facts every reader shares
    @property
    def parsed(self) -> CstKernel:
        """The kernel's parse (``analyze`` always records it; ``kernel`` is optional for facts built by hand)."""
        assert self.kernel is not None, "kernel facts built without their kernel node"
        return self.kernel

    @property
    def pid_dims(self) -> int:
        return max(self.pid, default=-1) + 1

    @property
    def block_range(self) -> bool:
        """Some ``tl.arange`` in the kernel (False: one element per program)."""
        return bool(self.aranges)

    @property
    def atomics(self) -> list[Access]:
        return [a for a in self.accesses if a.op in ATOMICS]

    @property
    def same_address_atomics(self) -> list[Access]:
        """Atomics whose address is the same in every program: it depends on no program id (nor on a value loaded
        from a per-program address)."""
        return [a for a in self.atomics if not a.pid_dependent]

    @property
    def loop_bounds(self) -> list[str]:
        """Parameters bounding the kernel's range loops, first occurrence first."""
        return list(dict.fromkeys(lp.bound for lp in self.loops if lp.bound))

    @property
    def loop_steps(self) -> dict[str, str | int]:
        """bound -> the step of the first loop it bounds."""
        out: dict[str, str | int] = {}
        for lp in self.loops:
            if lp.bound and lp.bound not in out:
                out[lp.bound] = lp.step if lp.step is not None else 1
        return out

    # ---------------------------------------------------------------- derived on first use (source lines, L1)
    def line(self, node: cst.CSTNode) -> int:
        """The first source line of ``node`` (0 without a tree)."""
        return self.tree.lines(node)[0] if self.tree is not None else 0

    def lines(self, nodes: Sequence[cst.CSTNode]) -> list[int]:
        return sorted({self.line(n) for n in nodes})

    @cached_property
    def load_lines(self) -> list[int]:
        return self.lines([a.node for a in self.accesses if a.op == "tl.load"])

    @cached_property
    def store_lines(self) -> list[int]:
        return self.lines([a.node for a in self.accesses if a.op == "tl.store"])

    @cached_property
    def atomic_lines(self) -> list[int]:
        return self.lines([a.node for a in self.atomics])

    @cached_property
    def same_address_lines(self) -> list[int]:
        return self.lines([a.node for a in self.same_address_atomics])

    @cached_property
    def repeated_index_loads(self) -> list[int]:
        """Lines of tile loads at a lane index ``idx // R``: each element read R times (``kernel.repeated_index``)."""
        from optimizer.kernel.repeated_index import repeated_index_loads

        if self.kernel is None or self.tree is None:
            return []
        return self.lines([r.load for r in repeated_index_loads(self.kernel, self.tree)])

    @cached_property
    def dot_lines(self) -> list[int]:
        return self.lines([d.node for d in self.dots])

    @cached_property
    def div_mod_lines(self) -> list[int]:
        from optimizer.kernel.derived import div_mod_lines

        return div_mod_lines(self)

    @cached_property
    def scatter_atomics(self) -> list[tuple[int, str]]:
        from optimizer.kernel.derived import scatter_atomics

        return scatter_atomics(self)

    @cached_property
    def passes(self) -> dict[str, list[int]]:
        from optimizer.kernel.derived import passes

        return passes(self)

    @property
    def multi_pass(self) -> dict[str, list[int]]:
        return {p: ls for p, ls in self.passes.items() if len(ls) >= 2}

    @cached_property
    def pointer_advances(self) -> list[int]:
        from optimizer.kernel.derived import pointer_advances

        return pointer_advances(self)

    @cached_property
    def loop_reductions(self) -> list[int]:
        from optimizer.kernel.derived import loop_reductions

        return loop_reductions(self)

    @cached_property
    def grouped_order(self) -> bool:
        from optimizer.kernel.derived import grouped_order

        return grouped_order(self)

    def summary(self) -> list[str]:
        """One line per fact, for the LLM prompt and for humans."""
        pid = ", ".join(f"axis {a} -> {v}" for a, v in sorted(self.pid.items())) or "none"
        out = [f"kernel {self.name}({', '.join(self.params)}): program ids {pid}"
               + (" [autotuned]" if self.autotuned else "")]
        out.append("block ranges: " + (", ".join(f"tl.arange({s}, {e})" + ("" if c else " (size not constexpr)")
                                                 for s, e, c in self.aranges) or "none (one element per program)"))
        for a in self.accesses:
            where = "in a loop, " if a.in_loop else ""
            out.append(f"{a.op}({a.pointer}{', mask=' + a.mask if a.mask else ''}): {where}"
                       + ("per-program address" if a.pid_dependent else "same address in every program"))
        for lp in self.loops:
            out.append(f"{lp.kind} {lp.header}: advances {lp.advances or 'nothing'}; {len(lp.loads)} load(s)")
        if self.reductions:
            out.append("reductions: " + ", ".join(f"{f}(axis={ax})" for f, ax in self.reductions))
        for d in self.dots:
            out.append(f"tl.dot precision={d.precision or 'default (tf32)'} tiles={d.tiles or '?'}"
                       + (" in a K loop" if d.in_loop else ""))
        if self.div_mod:
            out.append("div/mod on program-id values: " + ", ".join(self.div_mod))
        if self.rebound_params:
            out.append("parameters rebound in the body: " + ", ".join(self.rebound_params))
        return out


@dataclass
class LaunchFacts:
    kernel: str
    grid: str
    grid_elements: list[str] | None  # None: not a tuple/list expression (a lambda over META, a helper call)
    grid_is_lambda: bool
    meta: dict[str, str]  # keyword arguments (constexprs and launch options) as text
    function: str | None
    buffers: dict[str, str]  # host variable -> allocation call text in the launching function

    def summary(self) -> str:
        return (f"launch {self.kernel}[{self.grid}] in {self.function or 'module'}: meta {self.meta or '{}'}; "
                f"buffers {list(self.buffers) or 'none'}")


@dataclass
class ModuleFacts:
    kernels: dict[str, KernelFacts]
    launches: list[LaunchFacts]

    def summary(self) -> list[str]:
        out = []
        for k in self.kernels.values():
            out += k.summary()
        out += [lf.summary() for lf in self.launches]
        return out
