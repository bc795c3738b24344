"""Code features of a candidate: the L1 quick-match vocabulary (``Symptoms.code_features`` of the cards).

Features come from the source (AST of the Triton kernels and of their launch sites), from the launches the
validation worker recorded (dtypes, grids, scalar values) and from the problem's cases. The tokens follow
the words the curated cards use (``tl.argmax``, ``masked_load``, ``row_per_program``, ``tl.dot``,
``hard_coded_block_size``, ``multiple_shapes`` ...); ``FEATURE_DOC`` documents each one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from optimizer.source import Kernel, assignments_in, find_kernels, find_launches
from optimizer.structure import KernelStructure, analyze_kernel

__all__ = ["FEATURE_DOC", "CodeFeatures", "extract_features"]

FEATURE_DOC: dict[str, str] = {
    "tl.dot": "a kernel calls tl.dot", "matmul": "a tl.dot inside a K loop or tile program",
    "fp32_dot": "tl.dot on fp32 operands", "input_precision_ieee": "tl.dot with input_precision='ieee'",
    "input_precision_tf32x3": "tl.dot with input_precision='tf32x3' (fp32 accuracy on tensor cores)",
    "k_loop": "a loop around tl.dot", "tl.argmax": "tl.argmax used", "tl.argmin": "tl.argmin used",
    "tl.max": "tl.max reduction", "tl.min": "tl.min reduction", "tl.sum": "tl.sum reduction", "tl.cumsum": "scan",
    "tl.reduce": "custom tl.reduce", "tl.where": "tl.where select", "tl.atomic_add": "atomic adds",
    "masked_load": "tl.load with mask=", "masked_store": "tl.store with mask=", "tl.load": "any tl.load",
    "2d_tile": "tiles built with [:, None] / [None, :] broadcasting", "2d_mask": "a 2-D mask",
    "row_per_program": "each program handles one row (program_id used directly as the row index, no row loop)",
    "group_per_program": "row_per_program where the rows are groups (kernel or args mention group)",
    "single_pass_kernel": "no loop in the kernel: load, compute, store once",
    "tl.range": "tl.range / static_range loop", "inner_loop": "a for loop in a kernel", "nested_loop": "nested loops",
    "persistent": "a grid-stride loop over tiles using tl.num_programs", "tl.num_programs": "tl.num_programs used",
    "tl.program_id": "tl.program_id used", "cdiv_grid": "grid computed with triton.cdiv",
    "grid_over_blocks": "1-D grid over element blocks", "grid_over_tiles": "grid over 2-D output tiles",
    "large_grid": "a recorded grid above 65535 programs", "few_programs": "a recorded grid below 132 programs (H200 SMs)",
    "autotune": "@triton.autotune present", "num_warps": "num_warps given at the launch", "num_stages": "num_stages given",
    "hard_coded_block_size": "a constexpr block size passed as a literal, without autotune",
    "BLOCK_SIZE": "a BLOCK_SIZE constexpr", "compiler_hints": "tl.multiple_of / max_contiguous / assume present",
    "strides": "stride arguments", "int64": "int64 index math (.to(tl.int64))", ".to(tl.int64)": "int64 casts",
    "div_mod_index": "offsets use // and %", "modulo_offsets": "offsets use %", "elementwise": "no reduction and no dot",
    "multiple_kernels": "more than one kernel launched per forward", "torch_ops_in_forward": "PyTorch compute ops in forward",
    "multiple_shapes": "several benchmark cases", "bf16": "bf16 inputs", "fp16": "fp16 inputs",
    "short_rows": "row length below 256 elements in some case", "tl.arange": "tl.arange used",
    "indirect_load": "a load whose offsets come from another load",
    "two_pass_row_reduction": "two consecutive loops load the same chunks (e.g. a max pass, then a sum-of-exp pass)",
    "no_block_range": "a kernel that loads without any tl.arange: one element per program",
    "same_address_atomic": "a tl.atomic_* whose address depends on no program id or loaded value (every program hits it)",
    "scatter_atomic": "a tl.atomic_* whose address is indexed by a loaded value (a histogram / scatter-add)",
    "multi_pass": "several loops (or repeated straight-line loads) read the same pointer argument",
    "reduction_in_loop": "a tl.sum / tl.max / tl.min to a scalar accumulated inside a loop (one block reduction per iteration)",
    "small_dot_tile": "a tl.dot launched with BLOCK_M or BLOCK_N below 64, or BLOCK_K below 32",
    "pid_1d_matmul": "a tl.dot kernel indexed by one program id with no grouped (L2-friendly) order",
    "pid_2d_matmul": "a tl.dot kernel indexed by two program ids with no grouped order",
    "pointer_advance_in_loop": "a pointer argument advanced with += inside a loop",
    "multi_kernel_same_input": "the launcher passes the same tensor to two kernels (each reads it)",
    "intermediate_roundtrip": "one kernel writes a buffer the launcher allocated and a later kernel reads it back",
    "upcast_before_dot": "a tl.dot operand is converted to fp32 in the kernel (x.to(tl.float32)) before the dot",
    "launch_in_loop": "a kernel launched inside a Python loop of the launcher (one launch per iteration)",
    "per_call_host_setup": "the launcher compiles or queries on every call (kernel.warmup, _init_handles, get_device_properties, triton.compile)",
    "unaligned_launch_arg": "a recorded launch passes an integer (size/stride) or pointer not divisible by 16",
}

_REDUCTIONS = ("max", "min", "sum", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum", "sort")


@dataclass
class CodeFeatures:
    tokens: list[str]
    kernels: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    structures: dict[str, KernelStructure] = field(default_factory=dict)

    def text(self) -> str:
        return " ".join(self.tokens)


def _calls(node: ast.AST) -> list[tuple[str, ast.Call]]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f"{f.value.id}.{f.attr}" if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
            out.append((name, n))
    return out


def _repeated_pass(body: list[ast.stmt]) -> bool:
    """Two top-level loops with the same header whose loads are the same: the data is read twice."""
    loops = [s for s in body if isinstance(s, ast.For)]
    for a, b in zip(loops, loops[1:]):
        loads_a = [ast.unparse(c) for n, c in _calls(a) if n == "tl.load"]
        loads_b = [ast.unparse(c) for n, c in _calls(b) if n == "tl.load"]
        if ast.unparse(a.iter) == ast.unparse(b.iter) and loads_a and loads_a == loads_b:
            return True
    return False


def _kernel_features(k: Kernel) -> set[str]:
    toks: set[str] = set()
    calls = _calls(k.node)
    names = {n for n, _ in calls}
    for r in _REDUCTIONS:
        if f"tl.{r}" in names:
            toks.add(f"tl.{r}" if r in ("max", "min", "sum", "argmax", "argmin", "cumsum", "reduce") else "reduction")
    for n, c in calls:
        kws = {kw.arg for kw in c.keywords}
        if n == "tl.load":
            toks.add("tl.load")
            if "mask" in kws or len(c.args) >= 2:
                toks.add("masked_load")
            if any(isinstance(x, ast.Call) and "load" in ast.unparse(x.func) for x in ast.walk(c.args[0]) if c.args):
                toks.add("indirect_load")
        elif n == "tl.store" and ("mask" in kws or len(c.args) >= 3):
            toks.add("masked_store")
        elif n == "tl.dot":
            toks.add("tl.dot")
            for kw in c.keywords:
                if kw.arg == "input_precision" and isinstance(kw.value, ast.Constant) and kw.value.value in ("ieee", "tf32x3"):
                    toks.add(f"input_precision_{kw.value.value}")
                if kw.arg == "allow_tf32" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    toks.add("input_precision_ieee")
            if any(_upcast(k, a) for a in c.args[:2]):
                toks.add("upcast_before_dot")
        elif n.startswith("tl.atomic_"):
            toks.add(n)
        elif n in ("tl.multiple_of", "tl.max_contiguous", "tl.assume", "tl.max_constancy"):
            toks.add("compiler_hints")
    for n in ("tl.where", "tl.arange", "tl.program_id", "tl.num_programs", "tl.cumsum"):
        if n in names:
            toks.add(n)
    loops = [n for n in ast.walk(k.node) if isinstance(n, (ast.For, ast.While))]
    if loops:
        toks.add("inner_loop")
        if any(isinstance(x, (ast.For, ast.While)) for lp in loops for x in ast.walk(lp) if x is not lp):
            toks.add("nested_loop")
        if any(isinstance(lp, ast.For) and "range" in ast.unparse(lp.iter) and "tl." in ast.unparse(lp.iter) for lp in loops):
            toks.add("tl.range")
        if "tl.dot" in toks and any("tl.dot" in ast.unparse(lp) for lp in loops):
            toks |= {"k_loop", "matmul"}
        if "tl.num_programs" in toks:
            toks.add("persistent")
        if _repeated_pass(k.node.body):
            toks.add("two_pass_row_reduction")
    else:
        toks.add("single_pass_kernel")
    src = ast.unparse(k.node)
    if "[:, None]" in src or "[None, :]" in src:
        toks.add("2d_tile")
        if "mask" in src:
            toks.add("2d_mask")
    if "tl.int64" in src:
        toks |= {"int64", ".to(tl.int64)"}
    if "//" in src and "%" in src:
        toks.add("div_mod_index")
    elif "%" in src:
        toks.add("modulo_offsets")
    if any(p.startswith("stride") for p in k.params):
        toks.add("strides")
    if any(c.startswith("BLOCK_SIZE") for c in k.constexprs):
        toks.add("BLOCK_SIZE")
    if "tl.dot" not in toks and not any(t.startswith("tl.") and t[3:] in _REDUCTIONS for t in toks) and "reduction" not in toks:
        toks.add("elementwise")
    if _one_row_per_program(k, loops):
        toks.add("row_per_program")
        if "group" in src.lower():
            toks.add("group_per_program")
    if "tl.dot" in toks and ("pid_m" in src or "pid_n" in src):
        toks.add("grid_over_tiles")
        toks.add("matmul")
    return toks


def _upcast(k: Kernel, e: ast.expr) -> bool:
    """A dot operand that is ``X.to(tl.float32)``, or a name some assignment of which is one."""
    def up(x: ast.AST) -> bool:
        return (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "to" and bool(x.args)
                and ast.unparse(x.args[0]) == "tl.float32")
    if up(e):
        return True
    return isinstance(e, ast.Name) and any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == e.id for t in n.targets)
                                           and up(n.value) for n in ast.walk(k.node))


def _one_row_per_program(k: Kernel, loops: list[ast.AST]) -> bool:
    """program_id(0) assigned at top level and used as a row index (times a stride / row length), no row loop.

    A row index is a program id multiplied by a runtime value (a stride, a row length, another grid extent); a
    program id times a constexpr alone is a block start (``pid * BLOCK``), a row only in a kernel that reduces."""
    for stmt in k.node.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and "program_id" in ast.unparse(stmt.value.func):
            var = stmt.targets[0].id if isinstance(stmt.targets[0], ast.Name) else None
            if var is None:
                continue
            has_reduction = any(f"tl.{r}(" in ast.unparse(k.node) for r in ("max", "sum", "min", "argmax", "argmin", "reduce"))
            mults = [n for n in ast.walk(k.node) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
            used_as_row = any(var in {x.id for x in ast.walk(n) if isinstance(x, ast.Name)} for n in mults)
            # ``row * stride``: the program id itself times an operand naming a runtime value
            runtime_row = any(
                isinstance(side, ast.Name) and side.id == var
                and {x.id for x in ast.walk(other) if isinstance(x, ast.Name)} - {"tl", "triton"} - set(k.constexprs)
                for n in mults for side, other in ((n.left, n.right), (n.right, n.left)))
            dots = any(isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.dot" for n in ast.walk(k.node))
            in_loop = any(var in ast.unparse(lp) for lp in loops)
            return (has_reduction and used_as_row or runtime_row) and not dots and not in_loop  # a dot kernel tiles
    return False


def extract_features(
    source: str,
    *,
    launches: list[dict[str, Any]] | None = None,
    cases: list[dict[str, Any]] | None = None,
    input_dtypes: list[str] | None = None,
    torch_ops: list[str] | None = None,
) -> CodeFeatures:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return CodeFeatures(tokens=["syntax_error"], details={"error": str(exc)})
    kernels = find_kernels(tree)
    toks: set[str] = set()
    per_kernel: dict[str, list[str]] = {}
    structures: dict[str, KernelStructure] = {}
    for k in kernels.values():
        kt = _kernel_features(k)
        st = structures[k.name] = analyze_kernel(k)
        kt |= _structure_tokens(st)
        per_kernel[k.name] = sorted(kt)
        toks |= kt
        if k.autotuned:
            toks.add("autotune")
    sites = find_launches(tree, kernels)
    details_extra: dict[str, Any] = {"launch_lines": [s.call.lineno for s in sites]}
    if loop_lines := _launch_in_loop(sites):
        toks.add("launch_in_loop")
        details_extra["launch_in_loop"] = loop_lines
    if setup := host_setup_lines(tree, sites):
        toks.add("per_call_host_setup")
        details_extra["host_setup"] = setup
    for site in sites:
        k = kernels[site.kernel]
        if site.keyword("num_warps"):
            toks.add("num_warps")
        if site.keyword("num_stages"):
            toks.add("num_stages")
        grid = site.grid
        if isinstance(grid, ast.Name) and (defs := assignments_in(site.function, grid.id)):
            grid = defs[-1].value
        if "cdiv" in ast.unparse(grid):
            toks |= {"cdiv_grid", "grid_over_blocks"}
        if not k.autotuned:
            for c in k.constexprs:
                v = site.arg_for(k, c)
                if isinstance(v, ast.Name) and len(defs := assignments_in(site.function, v.id)) == 1:
                    v = defs[0].value
                if c.upper().startswith("BLOCK") and isinstance(v, ast.Constant):
                    toks.add("hard_coded_block_size")
    if trips := intermediate_roundtrips(sites, kernels):
        toks.add("intermediate_roundtrip")
        details_extra["roundtrips"] = trips
    if len({s.kernel for s in sites}) > 1 or len(sites) > 1:
        toks.add("multiple_kernels")
        if (shared := _shared_tensor_args(sites)) >= 2:
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
        if _unaligned(rec):
            toks.add("unaligned_launch_arg")
        st = structures.get(str(rec.get("kernel")))
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
        n = case.get("N") or case.get("n_cols") or case.get("dim")
        if isinstance(n, int) and n < 256:
            toks.add("short_rows")
    toks.discard("")
    return CodeFeatures(tokens=sorted(toks), kernels=list(kernels),
                        details={"per_kernel": per_kernel, "launch_sites": len(sites)} | details_extra,
                        structures=structures)


def _structure_tokens(st: KernelStructure) -> set[str]:
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
    if st.loop_reductions:
        toks.add("reduction_in_loop")
    if st.dots and not st.grouped_order:
        toks.add("pid_2d_matmul" if len(st.program_axes) >= 2 else "pid_1d_matmul")
    if st.pointer_advances:
        toks.add("pointer_advance_in_loop")
    return toks


#: Dot tiles below these sizes starve Hopper tensor cores (wgmma wants M >= 64 per warp group).
SMALL_TILE_MN, SMALL_TILE_K = 64, 32


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


def _unaligned(rec: dict[str, Any]) -> bool:
    return bool(unaligned_args(rec))


def _shared_tensor_args(sites: list[Any]) -> int:
    """The most distinct kernels that one forward input (a plain name) is passed to (each reads it)."""
    seen: dict[str, set[str]] = {}
    for site in sites:
        inputs = {a.arg for a in site.function.args.args} if site.function is not None else set()
        for a in site.call.args:
            if isinstance(a, ast.Name) and a.id in inputs:
                seen.setdefault(a.id, set()).add(site.kernel)
    return max((len(v) for v in seen.values()), default=0)


_ALLOCATORS = frozenset({"empty", "empty_like", "zeros", "zeros_like", "full", "full_like", "empty_strided", "new_empty",
                         "new_zeros"})


def _pointer_params(k: Kernel, op: str) -> set[str]:
    """Kernel parameters that reach the pointer argument of ``tl.<op>`` (through assignments, loop-carried too)."""
    derived = {p: {p} for p in k.params}
    assigns = [(n.targets, n.value) for n in ast.walk(k.node) if isinstance(n, ast.Assign)]
    assigns += [([n.target], n.value) for n in ast.walk(k.node) if isinstance(n, ast.AugAssign)]
    for _ in range(4):  # a short fixpoint: pointer chains in kernels are a few assignments deep
        for targets, value in assigns:
            used = {x.id for x in ast.walk(value) if isinstance(x, ast.Name)}
            for p, names in derived.items():
                if used & names:
                    names |= {t.id for tgt in targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
    out = set()
    for c in ast.walk(k.node):
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == op and c.args:
            used = {x.id for x in ast.walk(c.args[0]) if isinstance(x, ast.Name)}
            out |= {p for p, names in derived.items() if used & names}
    return out


def intermediate_roundtrips(sites: list[Any], kernels: dict[str, Kernel]) -> list[dict[str, Any]]:
    """Buffers the launcher allocates, one kernel stores into and a later kernel loads from, that the launcher does
    not return: the data makes a round trip through DRAM between two launches (a fusion would keep it in registers)."""
    out: list[dict[str, Any]] = []
    by_fn: dict[int, list[Any]] = {}
    for site in sites:
        if site.function is not None:
            by_fn.setdefault(id(site.function), []).append(site)
    for fsites in by_fn.values():
        fn = fsites[0].function
        fresh = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                 and isinstance(n.value.func, ast.Attribute) and n.value.func.attr in _ALLOCATORS
                 for tgt in n.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
        returned = {x.id for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None
                    for x in ast.walk(n.value) if isinstance(x, ast.Name)}
        ordered = sorted(fsites, key=lambda s: (s.call.lineno, s.call.col_offset))
        for buf in sorted(fresh - returned):
            writer = reader = None
            params: dict[str, str] = {}
            for site in ordered:
                k = kernels[site.kernel]
                passed = {p for p in k.params if isinstance(a := site.arg_for(k, p), ast.Name) and a.id == buf}
                if writer is None and (w := passed & _pointer_params(k, "store")):
                    writer, params["writer"] = site, sorted(w)[0]
                elif writer is not None and (r := passed & _pointer_params(k, "load")):
                    reader, params["reader"] = site, sorted(r)[0]
                    break
            if writer is not None and reader is not None:
                out.append({"buffer": buf, "written_by": writer.kernel, "read_by": reader.kernel,
                            "lines": [writer.call.lineno, reader.call.lineno], "params": params})
    return out


#: per-call host setup: compiling a kernel, reading its handles, querying the device (``optimizer.rewrite.host_setup``)
HOST_SETUP_CALLS = ("warmup", "_init_handles", "get_device_properties", "triton.compile")


def _setup_call(n: ast.AST) -> str | None:
    if not isinstance(n, ast.Call):
        return None
    if isinstance(n.func, ast.Attribute):
        if n.func.attr in HOST_SETUP_CALLS:
            return n.func.attr
        if n.func.attr == "compile" and ast.unparse(n.func.value) == "triton":
            return "triton.compile"
    return None


def host_setup_lines(tree: ast.Module, sites: list[Any]) -> list[int]:
    """Lines of launcher functions (those that launch a kernel) that run host setup on every call: a setup call
    (``HOST_SETUP_CALLS``) directly, or a call to a module-level function that makes one."""
    helpers = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and not s.decorator_list}
    setup_helpers = {name for name, f in helpers.items() if any(_setup_call(n) for n in ast.walk(f))}
    lines: set[int] = set()
    for func in {id(s.function): s.function for s in sites if s.function is not None}.values():
        for n in ast.walk(func):
            if _setup_call(n) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in setup_helpers):
                lines.add(n.lineno)
    return sorted(lines)


def _launch_in_loop(sites: list[Any]) -> list[int]:
    """Lines of launch sites inside a Python loop of the launcher (one launch per iteration)."""
    out = []
    for site in sites:
        fn = site.function
        if fn is None:
            continue
        for n in ast.walk(fn):
            if isinstance(n, (ast.For, ast.While)) and any(c is site.call for c in ast.walk(n)):
                out.append(site.call.lineno)
                break
    return out
