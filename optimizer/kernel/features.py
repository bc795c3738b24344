"""Code features of a candidate: the L1 quick-match vocabulary (``Symptoms.code_features`` of the cards), read off
the one kernel model (``optimizer.kernel``) that the transforms' preconditions read too.

Features come from the source (the kernel facts and the launcher facts of one libcst parse), from the launches the
validation worker recorded (dtypes, grids, scalar values) and from the problem's cases. The tokens follow the
words the curated cards use (``tl.argmax``, ``masked_load``, ``row_per_program``, ``tl.dot``,
``hard_coded_block_size``, ``multiple_shapes`` ...); ``FEATURE_DOC`` documents each one. ``CodeFeatures.structures``
holds each kernel's ``KernelFacts``: what L1's cause findings read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import libcst as cst

from optimizer.kernel.analyze import kernel_facts
from optimizer.kernel.derived import words
from optimizer.kernel.launcher import (
    host_setup_lines,
    intermediate_roundtrips,
    launch_in_loop,
    resolved_grid,
    shared_tensor_args,
)
from optimizer.kernel.model import KernelFacts
from optimizer.kernel.vocab import FEATURE_DOC
from optimizer.profile.roofline import compute_kind
from optimizer.rewrite.tree import Tree, call_name, dotted, walk

__all__ = ["FEATURE_DOC", "SMALL_TILE_AREA", "CodeFeatures", "dot_tile", "extract_features", "kernel_compute_kind",
           "unaligned_args"]


_REDUCTIONS = ("max", "min", "sum", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum", "sort")
_HINTS = ("tl.multiple_of", "tl.max_contiguous", "tl.assume", "tl.max_constancy")


@dataclass
class CodeFeatures:
    tokens: list[str]
    kernels: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    structures: dict[str, KernelFacts] = field(default_factory=dict)  # kernel name -> its facts

    def text(self) -> str:
        return " ".join(self.tokens)


def _positional(c: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in c.args if a.keyword is None]


def _repeated_pass(t: Tree, fn: cst.FunctionDef) -> bool:
    """Two top-level loops with the same header whose loads are the same: the data is read twice."""
    loops = [s for s in fn.body.body if isinstance(s, cst.For)]

    def loads(lp: cst.For) -> list[str]:
        return [t.code(c) for c in walk(lp) if isinstance(c, cst.Call) and call_name(c) == "tl.load"]
    for a, b in zip(loops, loops[1:], strict=False):
        if t.code(a.iter) == t.code(b.iter) and loads(a) and loads(a) == loads(b):
            return True
    return False


def _two_d(n: cst.CSTNode) -> bool:
    """``x[:, None]`` / ``x[None, :]``: a 1-D block broadcast into a 2-D tile."""
    if not (isinstance(n, cst.Subscript) and len(n.slice) == 2):
        return False
    def kind(e: cst.SubscriptElement) -> str:
        sl = e.slice
        if isinstance(sl, cst.Slice) and sl.lower is None and sl.upper is None and sl.step is None:
            return "full"
        none = isinstance(sl, cst.Index) and isinstance(sl.value, cst.Name) and sl.value.value == "None"
        return "none" if none else ""
    kinds = [kind(e) for e in n.slice]
    return sorted(kinds) == ["full", "none"]


def _kernel_features(t: Tree, f: KernelFacts) -> set[str]:
    fn = f.parsed.node
    toks: set[str] = set()
    calls = [(call_name(n), n) for n in walk(fn) if isinstance(n, cst.Call)]
    names = {n for n, _ in calls}
    for r in _REDUCTIONS:
        if f"tl.{r}" in names:
            toks.add(f"tl.{r}" if r in ("max", "min", "sum", "argmax", "argmin", "cumsum", "reduce") else "reduction")
    for n, c in calls:
        kws = {a.keyword.value for a in c.args if a.keyword is not None}
        pos = _positional(c)
        if n == "tl.load":
            toks.add("tl.load")
            if "mask" in kws or len(pos) >= 2:
                toks.add("masked_load")
            if pos and any(isinstance(x, cst.Call) and "load" in t.code(x.func) for x in walk(pos[0])):
                toks.add("indirect_load")
        elif n == "tl.store" and ("mask" in kws or len(pos) >= 3):
            toks.add("masked_store")
        elif n == "tl.dot":
            toks.add("tl.dot")
            if any(_upcast(t, fn, a) for a in pos[:2]):
                toks.add("upcast_before_dot")
        elif n.startswith("tl.atomic_"):
            toks.add(n)
        elif n in _HINTS:
            toks.add("compiler_hints")
    for d in f.dots:  # the dot's input precision, as the transforms read it (``Dot.precision``)
        if d.precision in ("ieee", "tf32x3"):
            toks.add(f"input_precision_{d.precision}")
    for n in ("tl.where", "tl.arange", "tl.program_id", "tl.num_programs", "tl.cumsum"):
        if n in names:
            toks.add(n)
    loops = [lp.node for lp in f.loops]
    if loops:
        toks.add("inner_loop")
        if any(isinstance(x, (cst.For, cst.While)) for lp in loops for x in walk(lp.body)):
            toks.add("nested_loop")
        if any(isinstance(lp, cst.For) and "range" in t.code(lp.iter) and "tl." in t.code(lp.iter) for lp in loops):
            toks.add("tl.range")
        if "tl.dot" in toks and any(d.in_loop for d in f.dots):
            toks |= {"k_loop", "matmul"}
        if "tl.num_programs" in toks:
            toks.add("persistent")
        if _repeated_pass(t, fn):
            toks.add("two_pass_row_reduction")
    else:
        toks.add("single_pass_kernel")
    text = words(fn, lower=False)
    if any(_two_d(n) for n in walk(fn)):
        toks.add("2d_tile")
        if "mask" in text:
            toks.add("2d_mask")
    if any(isinstance(n, cst.Attribute) and dotted(n) == "tl.int64" for n in walk(fn)):
        toks |= {"int64", ".to(tl.int64)"}
    ops = {type(n.operator) for n in walk(fn) if isinstance(n, (cst.BinaryOperation, cst.AugAssign))}
    if ops & {cst.FloorDivide, cst.FloorDivideAssign} and ops & {cst.Modulo, cst.ModuloAssign}:
        toks.add("div_mod_index")
    elif ops & {cst.Modulo, cst.ModuloAssign}:
        toks.add("modulo_offsets")
    if any(p.startswith("stride") for p in f.params):
        toks.add("strides")
    if any(c.startswith("BLOCK_SIZE") for c in f.constexprs):
        toks.add("BLOCK_SIZE")
    reduces = any(x.startswith("tl.") and x[3:] in _REDUCTIONS for x in toks) or "reduction" in toks
    if "tl.dot" not in toks and not reduces:
        toks.add("elementwise")
    if _one_row_per_program(t, f, loops, names):
        toks.add("row_per_program")
        if "group" in text.lower():
            toks.add("group_per_program")
    if "tl.dot" in toks and ("pid_m" in text or "pid_n" in text):
        toks.add("grid_over_tiles")
        toks.add("matmul")
    return toks


def _upcast(t: Tree, fn: cst.FunctionDef, e: cst.BaseExpression) -> bool:
    """A dot operand that is ``X.to(tl.float32)``, or a name some assignment of which is one."""
    def up(x: cst.CSTNode) -> bool:
        return (isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute) and x.func.attr.value == "to"
                and bool(_positional(x)) and t.code(_positional(x)[0]) == "tl.float32")
    if up(e):
        return True
    return isinstance(e, cst.Name) and any(
        isinstance(n, cst.Assign) and up(n.value)
        and any(isinstance(tg.target, cst.Name) and tg.target.value == e.value for tg in n.targets) for n in walk(fn))


def _one_row_per_program(t: Tree, f: KernelFacts, loops: Sequence[cst.CSTNode], calls: set[str]) -> bool:
    """program_id(0) assigned at top level and used as a row index (times a stride / row length), no row loop.

    A row index is a program id multiplied by a runtime value (a stride, a row length, another grid extent); a
    program id times a constexpr alone is a block start (``pid * BLOCK``), a row only in a kernel that reduces."""
    from optimizer.kernel.flow import var_names

    fn = f.parsed.node
    for line in fn.body.body:
        for stmt in line.body if isinstance(line, cst.SimpleStatementLine) else []:
            if not (isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)
                    and "program_id" in t.code(stmt.value.func)):
                continue
            var = stmt.targets[0].target.value if isinstance(stmt.targets[0].target, cst.Name) else None
            if var is None:
                continue
            has_reduction = bool(calls & {f"tl.{r}" for r in ("max", "sum", "min", "argmax", "argmin", "reduce")})
            mults = [n for n in walk(fn) if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)]
            used_as_row = any(var in var_names(n) for n in mults)
            # ``row * stride``: the program id itself times an operand naming a runtime value
            runtime_row = any(
                isinstance(side, cst.Name) and side.value == var
                and var_names(other) - {"tl", "triton"} - set(f.constexprs)
                for n in mults for side, other in ((n.left, n.right), (n.right, n.left)))
            in_loop = any(var in t.code(lp) for lp in loops)
            # a dot kernel tiles
            return (has_reduction and used_as_row or runtime_row) and "tl.dot" not in calls and not in_loop
    return False


@lru_cache(maxsize=16)
def _model(source: str) -> tuple[Tree, dict[str, KernelFacts]]:
    """The candidate's one parse and its kernel facts (cached per source text: L1, the domains and the roofline read
    the same candidate several times a round; nothing here is edited)."""
    t = Tree(source)
    return t, {name: kernel_facts(t, k) for name, k in t.kernels.items()}


def _literal(v: cst.CSTNode | None) -> bool:
    return isinstance(v, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)) or (
        isinstance(v, cst.Name) and v.value in ("True", "False", "None"))


def extract_features(
    source: str,
    *,
    launches: list[dict[str, Any]] | None = None,
    cases: list[dict[str, Any]] | None = None,
    input_dtypes: list[str] | None = None,
    torch_ops: list[str] | None = None,
) -> CodeFeatures:
    try:
        tree, facts = _model(source)
    except (cst.ParserSyntaxError, SyntaxError, RecursionError) as exc:
        return CodeFeatures(tokens=["syntax_error"], details={"error": str(exc)})
    toks: set[str] = set()
    per_kernel: dict[str, list[str]] = {}
    for name, f in facts.items():
        kt = _kernel_features(tree, f) | _structure_tokens(f)
        per_kernel[name] = sorted(kt)
        toks |= kt
        if f.autotuned:
            toks.add("autotune")
    sites = tree.launches
    details_extra: dict[str, Any] = {"launch_lines": [tree.lines(s.call)[0] for s in sites]}
    if loop_lines := launch_in_loop(tree):
        toks.add("launch_in_loop")
        details_extra["launch_in_loop"] = loop_lines
    if setup := host_setup_lines(tree):
        toks.add("per_call_host_setup")
        details_extra["host_setup"] = setup
    for site in sites:
        k = tree.kernels[site.kernel]
        if site.keyword("num_warps"):
            toks.add("num_warps")
        if site.keyword("num_stages"):
            toks.add("num_stages")
        if "cdiv" in tree.code(resolved_grid(tree, site)):
            toks |= {"cdiv_grid", "grid_over_blocks"}
        if not k.autotuned:
            for c in k.constexprs:
                v = site.arg_for(k, c)
                if isinstance(v, cst.Name) and len(defs := tree.assignments(site.function, v.value)) == 1:
                    v = defs[0].value
                if c.upper().startswith("BLOCK") and _literal(v):
                    toks.add("hard_coded_block_size")
    # what a run launched (the recorded launches): a kernel of the file that no path of the run reaches (another
    # algorithm's pair of kernels, a backward kernel) makes no round trip and shares no input in this run
    ran = {str(r["kernel"]) for r in launches or [] if r.get("kernel") and "error" not in r}
    live = ran if ran & {s.kernel for s in sites} else None
    if trips := [t for t in intermediate_roundtrips(tree, facts)
                 if live is None or (t.get("written_by") in live and t.get("read_by") in live)]:
        toks.add("intermediate_roundtrip")
        details_extra["roundtrips"] = trips
    if len({s.kernel for s in sites}) > 1 or len(sites) > 1:
        toks.add("multiple_kernels")
        if (shared := shared_tensor_args(tree, live)) >= 2:
            toks.add("multi_kernel_same_input")
            details_extra["kernels_sharing_input"] = shared
    for rec in launches or []:
        grid = rec.get("grid")
        if isinstance(grid, (list, tuple)) and grid and all(isinstance(g, int) for g in grid):
            n = 1
            for g in grid:
                n *= g
            toks.add("large_grid" if n > 65535 else "few_programs" if n < 132 else "")
        sig = rec.get("signature", {})
        if "tl.dot" in toks and any(v == "*fp32" for v in sig.values()):
            toks.add("fp32_dot")
        if unaligned_args(rec):
            toks.add("unaligned_launch_arg")
        st = facts.get(str(rec.get("kernel")))
        if st is not None and st.dots and _small_tile(rec.get("constexprs") or {}):
            toks.add("small_dot_tile")
    if torch_ops:
        toks.add("torch_ops_in_forward")
    if cases and len(cases) > 1:
        toks.add("multiple_shapes")
    for d in input_dtypes or []:
        if d in ("bfloat16", "torch.bfloat16"):
            toks.add("bf16")
        elif d in ("float16", "torch.float16"):
            toks.add("fp16")
    for case in cases or []:
        extent = case.get("N") or case.get("n_cols") or case.get("dim")
        if isinstance(extent, int) and extent < 256:
            toks.add("short_rows")
    toks.discard("")
    return CodeFeatures(tokens=sorted(toks), kernels=list(facts),
                        details={"per_kernel": per_kernel, "launch_sites": len(sites)} | details_extra,
                        structures=dict(facts))


def _structure_tokens(st: KernelFacts) -> set[str]:
    toks: set[str] = set()
    if not st.block_range and st.load_lines:
        toks.add("no_block_range")
    if st.div_mod_lines:
        toks.add("div_mod_index")
    if st.same_address_atomics:
        toks.add("same_address_atomic")
    if st.scatter_atomics:
        toks.add("scatter_atomic")
    if st.multi_pass:
        toks.add("multi_pass")
    if st.repeated_index_loads:
        toks.add("repeated_index_load")
    if st.loop_reductions:
        toks.add("reduction_in_loop")
    if st.dots and not st.grouped_order:
        toks.add("pid_2d_matmul" if len(st.program_axes) >= 2 else "pid_1d_matmul")
    if st.pointer_advances:
        toks.add("pointer_advance_in_loop")
    return toks


#: Dot tiles below these sizes starve Hopper tensor cores (wgmma wants M >= 64 per warp group).
SMALL_TILE_MN, SMALL_TILE_K = 64, 32
#: An output tile of fewer elements than the smallest Hopper config's (128x64) reuses each operand element less.
SMALL_TILE_AREA = 128 * 64


def dot_tile(constexprs: dict[str, Any]) -> dict[str, int]:
    """BLOCK_M / BLOCK_N / BLOCK_K (or BLOCK_SIZE_M ...) values from a launch's constexprs of a dot kernel; one
    shared ``BLOCK`` / ``BLOCK_SIZE`` / ``TILE`` (a naive square tile: ``rewrite.dot_untie``) sizes all three."""
    out: dict[str, int] = {}
    ints = {k: v for k, v in constexprs.items() if isinstance(v, int) and not isinstance(v, bool)}
    for k, v in ints.items():
        u = k.upper().replace("BLOCK_SIZE_", "BLOCK_")
        for axis in ("M", "N", "K"):
            if u in (f"BLOCK_{axis}", f"BLOCK{axis}", f"TILE_{axis}", f"B{axis}"):
                out[axis] = v
    shared = [v for k, v in ints.items() if k.upper() in ("BLOCK", "BLOCK_SIZE", "TILE", "TILE_SIZE")]
    if not out and len(shared) == 1:
        out = {"M": shared[0], "N": shared[0], "K": shared[0]}
    return out


def _small_tile(constexprs: dict[str, Any]) -> bool:
    t = dot_tile(constexprs)
    return bool(t) and (min(t.get("M", 128), t.get("N", 128)) < SMALL_TILE_MN or t.get("K", 64) < SMALL_TILE_K)


def unaligned_args(rec: dict[str, Any]) -> list[str]:
    """Pointer and integer arguments of a recorded launch not divisible by 16. An integer passed as 1 is not one of
    them: the JIT specializes it to the constant 1 (a unit stride the compiler sees, so the accesses through it are
    contiguous), whatever its divisibility."""
    div = set(rec.get("divisible_by_16") or [])
    sig = rec.get("signature") or {}
    vals = rec.get("ir_args") or {}
    return [name for name, t in sig.items() if (t.startswith("*") or t in ("i32", "i64")) and name not in div
            and not (t in ("i32", "i64") and vals.get(name) == 1 and not isinstance(vals.get(name), bool))]


def kernel_compute_kind(candidate: str | Path, launches: list[dict[str, Any]] | None) -> str:
    """``optimizer.profile.roofline.compute_kind`` of a candidate file (its code features and recorded launches):
    the peak its roofline fraction is measured against; ``fp32`` if unreadable."""
    try:
        src = Path(candidate).read_text()
    except OSError:
        return "fp32"
    return compute_kind(extract_features(src, launches=launches).tokens, launches)
