"""The static account of the gap (issue 30, item 2): what the compiled kernel says about where time is lost.

For one recorded launch (grid, argument values, constexprs, options) and its compile for ``cuda:90`` (the
capture L3 already made: TTGIR, PTX and ptxas figures), the account reads

- global load/store vector widths from PTX (``ld.global.v4.b32`` = 128 bits per thread vs ``ld.global.b32``) and
  the element stride of every ``tl.load``/``tl.store`` address from the kernel's source (the factor on its
  ``tl.arange`` terms, with the recorded argument values): a stride-``s`` access of ``e``-byte elements fetches
  ``min(s, 32/e)`` bytes per useful byte (32-byte sectors);
- registers per thread and shared memory per program (ptxas, the compile metadata) and the programs per SM they
  allow on an H200 (65536 registers, 228 KB shared memory, 2048 threads, 32 programs per SM): occupancy and its
  limiter;
- programs launched vs SMs: waves and the fill of the last one;
- predicated-off lanes: the fraction of a block's lanes its mask leaves on at the recorded sizes (a 4096-lane
  block over rows of 1100), and masks that are all-true at the recorded sizes while ``other=`` still fills lanes;
- tensor-core (``wgmma``/``mma``) vs FMA instructions of dot kernels;
- 64-bit integer index arithmetic on tensors where every recorded size fits 32 bits;
- work a loop repeats although its inputs do not change between iterations (a load of a loop-invariant address
  inside a loop that also stores, so the compiler cannot hoist it, and the math that follows it);
- layout conversions (``ttg.convert_layout``) inside a loop;
- static PTX instructions per element.

Every finding is a :class:`GapFinding`: its measured value, whether it is an inefficiency (``significant``), an
estimated share of the kernel's time where a static model gives one (``share`` with ``share_basis``: which
model), the source lines it ties to, and ``proof``: ``static`` when the compile proves the value and its effect
(e.g. bytes fetched per useful byte), ``needs_gpu`` when the value is proven but its cost is not (occupancy,
issue slots). ``explained_by`` names the listed causes (``kb.vocab.Cause``) that account for it; a significant
finding none of the decided or supported causes explains is *unexplained* (``unexplained_findings``).

What needs a GPU: executed (not static) instruction counts, stall reasons, achieved occupancy, L1/L2 hit rates,
sectors per request as measured, and each share as a fraction of a *measured* time (the shares here are of the
kernel's time under the stated model, not of a measured gap).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard, cast

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["H200", "ISSUE_RATIO", "AccountKind", "DeviceLimits", "GapAccount", "GapFinding", "account_launch",
           "issue_floor", "kernel_facts", "occupancy", "ptx_facts", "ttgir_facts", "unexplained_findings", "wave_fill"]

AccountKind = Literal["vector_width", "access_stride", "occupancy", "wave_quantization", "predicated_lanes",
                      "needless_mask", "dot_units", "index_width", "loop_invariant_work", "layout_conversion_in_loop",
                      "register_spills", "instructions_per_element", "issue_bound"]

#: Listed causes (``kb.vocab.Cause``) that account for each kind of inefficiency; empty: no listed cause does.
EXPLAINED_BY: dict[str, tuple[str, ...]] = {
    "vector_width": ("unvectorized_access", "per_element_grid"),
    "access_stride": (),
    "occupancy": ("register_spills",),
    "wave_quantization": ("serial_tail", "launch_overhead"),
    "predicated_lanes": (),
    "needless_mask": (),
    "dot_units": ("fma_dot", "small_dot_tiles"),
    "index_width": (),
    "loop_invariant_work": (),
    "layout_conversion_in_loop": ("loop_reductions",),
    "register_spills": ("register_spills", "fma_dot"),
    "instructions_per_element": (),
    "issue_bound": (),
}


@dataclass(frozen=True)
class DeviceLimits:
    """Per-SM limits of the analysis target (CUDA occupancy calculator figures)."""

    name: str = "H200 (sm_90)"
    sms: int = 132
    regs_per_sm: int = 65536
    reg_alloc_unit: int = 256  # registers are allocated per warp in units of 256
    smem_per_sm: int = 228 * 1024
    smem_reserved_per_block: int = 1024  # the runtime keeps 1 KB per resident block on sm_8x/9x
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    warp_size: int = 32
    schedulers: int = 4  # warp schedulers per SM, each issuing one warp instruction per clock
    clock_ghz: float = 1.98  # boost clock
    hbm_gbps: float = 4800.0  # the memory peak optimizer.profile.roofline uses for this device


H200 = DeviceLimits()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GapFinding(_Model):
    """One measured property of the compiled kernel and, when it costs time, its estimated share."""

    kind: AccountKind
    kernel: str
    value: float = Field(description="the measured value, in ``unit``")
    unit: str
    summary: str
    significant: bool = Field(description="an inefficiency (not only a figure)")
    share: float | None = Field(default=None, ge=0.0, le=1.0,
                                description="estimated fraction of the kernel's time it costs, under share_basis")
    share_basis: str = ""
    source_lines: list[int] = Field(default_factory=list)
    proof: Literal["static", "needs_gpu"] = "static"
    explained_by: list[str] = Field(default_factory=list, description="listed causes that account for it")
    data: dict[str, Any] = Field(default_factory=dict)

    def line(self) -> str:
        share = f", share ~{self.share:.0%} ({self.share_basis})" if self.share is not None else ""
        lines = f" lines {self.source_lines[:6]}" if self.source_lines else ""
        proof = "proven statically" if self.proof == "static" else "value static, cost needs a GPU"
        return f"{self.kind}: {self.summary}{share};{lines} [{proof}]"


class GapAccount(_Model):
    """The static account of one recorded launch configuration of one kernel."""

    kernel: str
    config: str = ""
    device: str = H200.name
    grid: list[int] = Field(default_factory=list)
    findings: list[GapFinding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def significant(self) -> list[GapFinding]:
        return [f for f in self.findings if f.significant]


# ---- PTX --------------------------------------------------------------------------------------------------------
# 	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];      st.global.b16 [ %rd5 + 0 ], { %rs1 };
_GLOBAL = re.compile(r"^\s*(?:@!?%p\d+\s+)?(ld|st)\.global((?:\.[a-z0-9_]+)*)", re.M)
# 	cp.async.cg.shared.global [ %r105 + 0 ], [ %rd68 + 0 ], 0x10, %r106;   (a pipelined operand load: 16 bytes)
_CP_ASYNC = re.compile(
    r"^\s*(?:@!?%p\d+\s+)?cp\.async\.(?:ca|cg)\.shared\.global[^,]*,[^,]*,\s*(0x[0-9a-fA-F]+|\d+)", re.M
)
# 	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [...]   (TMA: a whole tile)
_TMA = re.compile(r"^\s*(?:@!?%p\d+\s+)?cp\.async\.bulk\.tensor\b", re.M)
# 	wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 ...     mma.sync.aligned.m16n8k16 ...
_WGMMA = re.compile(r"^\s*wgmma\.mma_async", re.M)
_MMA = re.compile(r"^\s*mma\.sync", re.M)
_FMA = re.compile(r"^\s*(?:@!?%p\d+\s+)?fma\.rn\.f32", re.M)
# 	@%p1 ld.global ...  /  add.s32 %r1, ...   (an instruction line: optional predicate, then an opcode)
_INSTR = re.compile(r"^\s+(?:@!?%p\d+\s+)?[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*[\s;]", re.M)


def _width(suffix: str) -> tuple[int, int]:
    """(vector lanes, bits per lane) of ``.global`` suffixes like ``.nc.v4.b32`` or ``.b16``."""
    vec, bits = 1, 32
    for part in suffix.split(".")[1:]:
        if m := re.fullmatch(r"v(\d+)", part):
            vec = int(m[1])
        elif m := re.fullmatch(r"[bfus](\d+)", part):
            bits = int(m[1])
    return vec, bits


def ptx_facts(ptx: str) -> dict[str, Any]:
    """Global access widths (bits per thread per instruction -> count), dot instruction counts, instruction count."""
    widths: dict[str, dict[int, int]] = {"ld": {}, "st": {}}
    for m in _GLOBAL.finditer(ptx):
        vec, bits = _width(m[2])
        widths[m[1]][vec * bits] = widths[m[1]].get(vec * bits, 0) + 1
    # a software-pipelined dot loop reads its operand tiles with cp.async (or TMA), not ld.global: those copies are
    # the kernel's main loads, and their width is the copy size (TMA moves a tile: counted as 128-bit)
    for m in _CP_ASYNC.finditer(ptx):
        bits = int(m[1], 0) * 8
        widths["ld"][bits] = widths["ld"].get(bits, 0) + 1
    if n_tma := len(_TMA.findall(ptx)):
        widths["ld"][128] = widths["ld"].get(128, 0) + n_tma
    body = ptx.split(".entry", 1)[-1]
    return {"load_bits": widths["ld"], "store_bits": widths["st"], "wgmma": len(_WGMMA.findall(ptx)),
            "mma": len(_MMA.findall(ptx)), "fma_f32": len(_FMA.findall(ptx)),
            "instructions": len([x for x in _INSTR.findall(body) if not x.strip().startswith(".")])}


# ---- TTGIR ------------------------------------------------------------------------------------------------------
_SSA = re.compile(r"%[\w.#]+")
_DEF = re.compile(r"^\s*(%[\w.#]+)(?::\d+)?\s*=")
_I64_ARITH = re.compile(r"\barith\.(?:addi|subi|muli|divsi|remsi|extsi|extui)\b.*tensor<[^>]*xi64")
_TENSOR = re.compile(r"tensor<((?:\d+x)+)")
_MATH = re.compile(r"\b(?:math\.(?:exp|exp2|log|log2|sqrt|rsqrt|sin|cos|tanh|erf|powf)|arith\.divf)\b")


def _loops(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line index of every ``scf.for`` region (regions open on a line ending in ``{`` and close on a
    line starting with ``}``)."""
    out: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("}"):
            if stack:
                start, is_for = stack.pop()
                if is_for:
                    out.append((start, i))
        if s.endswith("{") and not s.startswith("}"):
            stack.append((i, "scf.for" in s))
        elif s.startswith("}") and s.endswith("{"):  # `} else {`
            stack.append((i, False))
    return out


def ttgir_facts(ttgir: str, source_file: str) -> dict[str, Any]:
    """Loop-invariant loads and math inside loops, layout conversions inside loops, i64 tensor arithmetic, the
    largest tensor (elements per program), each with source lines."""
    from optimizer.ir.locs import LocResolver

    res = LocResolver(ttgir, source_file)
    lines = ttgir.splitlines()

    def src(idx: list[int]) -> list[int]:
        return sorted({n for i in idx if (n := res.line_of(lines[i])) is not None})

    i64 = [i for i, ln in enumerate(lines) if _I64_ARITH.search(ln)]
    converts, inv_loads, inv_math = [], [], []
    for first, last in _loops(lines):
        inside = set(_SSA.findall(lines[first].split("=", 1)[0])) | set(
            re.findall(r"(%[\w.#]+)\s*=", lines[first].split("iter_args", 1)[-1] if "iter_args" in lines[first] else "")
        )
        if m := re.search(r"scf\.for\s+(%[\w.#]+)", lines[first]):
            inside.add(m[1])
        body = range(first + 1, last)
        defs = {}
        for i in body:
            if m := _DEF.match(lines[i]):
                defs[m[1]] = i
        inside |= set(defs)
        stores = any(("tt.store" in lines[i] or "tt.atomic" in lines[i]) for i in body)
        tainted: set[str] = set()
        for i in body:
            ln = lines[i]
            if "ttg.convert_layout" in ln and "dot_op" not in ln:  # into a dot operand: what the MMA needs
                converts.append(i)
            m = _DEF.match(ln)
            if not m:
                continue
            operands = [o for o in _SSA.findall(ln.split("=", 1)[1].split(" loc(")[0]) if not o.startswith("%cst")]
            if " tt.load " in ln and stores and operands and all(o not in inside for o in operands):
                tainted.add(m[1])
                inv_loads.append(i)
            elif (
                operands
                and any(o in tainted for o in operands)
                and all(o in tainted or o not in inside for o in operands)
            ):
                tainted.add(m[1])
                if _MATH.search(ln):
                    inv_math.append(i)
    sizes = [math.prod(int(d) for d in m[1].rstrip("x").split("x")) for m in _TENSOR.finditer(ttgir)]
    return {
        "i64_ops": len(i64),
        "i64_lines": src(i64),
        "convert_in_loop": len(converts),
        "convert_lines": src(converts),
        "invariant_loads": len(inv_loads),
        "invariant_math": len(inv_math),
        "invariant_lines": src(inv_loads + inv_math),
        "loops": len(_loops(lines)),
        "max_tensor": max(sizes, default=1),
        "has_dot": "tt.dot" in ttgir or "warp_group_dot" in ttgir,
    }


# ---- source (addresses and masks at the recorded sizes) ----------------------------------------------------------
def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_tl_call(node: ast.AST, attr: str) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attr


def _eval(node: ast.AST, values: dict[str, Any]) -> float | None:
    """An integer expression of literals and recorded argument values (``N``, ``BLOCK * 2``), else None."""
    try:
        expr = ast.Expression(body=cast(ast.expr, node))
        out = eval(compile(expr, "<expr>", "eval"), {"__builtins__": {}}, dict(values))  # noqa: S307 -- names only
    except (NameError, TypeError, ArithmeticError, ValueError, AttributeError, LookupError, SyntaxError,
            RecursionError, MemoryError):  # anything not a plain arithmetic of known values (an unknown name,
        # a call, a division by zero, an AST compile() refuses)
        return None
    return float(out) if isinstance(out, (int, float)) and not isinstance(out, bool) else None


def kernel_facts(source: str, kernel: str, values: dict[str, Any], grid: list[int]) -> dict[str, Any]:
    """Access strides and mask coverage of ``kernel``'s ``tl.load``/``tl.store`` calls at the recorded values."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    if fn is None:
        return {}
    # names holding an affine function of tl.arange (not of loaded values), with the arange sizes they carry
    lanes: dict[str, set[int]] = {}
    pid_axis: dict[str, int] = {}
    loop_vars: dict[str, float | None] = {}  # for-loop variable -> its step
    gathered: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call):
            a = node.iter.args
            loop_vars[node.target.id] = _eval(a[2], values) if len(a) == 3 else 1.0
    for node in [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign))]:
        targets = [
            t for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)
        ]
        rhs = node.value
        if any(_is_tl_call(c, "load") for c in ast.walk(rhs)):
            gathered.update(t.id for t in targets)
            continue
        sizes: set[int] = set()
        for c in ast.walk(rhs):
            if _is_tl_call(c, "arange") and len(c.args) == 2 and (end := _eval(c.args[1], values)) is not None:
                sizes.add(int(end - (_eval(c.args[0], values) or 0)))
        for nm in _names(rhs) & set(lanes):
            sizes |= lanes[nm]
        axes = [int(cast(int, c.args[0].value)) for c in ast.walk(rhs) if _is_tl_call(c, "program_id") and c.args
                and isinstance(c.args[0], ast.Constant)] + [pid_axis[n] for n in _names(rhs) if n in pid_axis]
        if any(_is_tl_call(c, "program_id") for c in ast.walk(rhs)) and not axes:
            axes = [0]
        if any(isinstance(b, ast.BinOp) and isinstance(b.op, (ast.FloorDiv, ast.Mod)) for b in ast.walk(rhs)):
            axes = []  # a program id folded by // or % (grouped tile order): the axis no longer counts blocks
        for t in targets:
            if sizes:
                lanes[t.id] = lanes.get(t.id, set()) | sizes
            if axes:
                pid_axis[t.id] = axes[0]
    elt_bytes = {k: v for k, v in values.items() if k.startswith("__bytes__:")}
    accesses, masks = [], []
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and (_is_tl_call(n, "load") or _is_tl_call(n, "store"))]
    for call in calls:
        if not call.args:
            continue
        addr = call.args[0]
        terms = [u for t in _terms(addr) for u in _terms(_address_def(fn, t))]
        strides = []
        base_ptr = next((t.id for t in terms if isinstance(t, ast.Name) and t.id in values
                         and f"__bytes__:{t.id}" in elt_bytes), None)
        for term in terms:
            factors = _factors(term)
            idx = [f for f in factors if _names(f) & set(lanes) and not (_names(f) & gathered)]
            if not idx or any(_names(f) & gathered for f in factors):
                continue
            rest = [f for f in factors if f not in idx]
            vals = [_eval(f, values) for f in rest]
            known_vals = [v for v in vals if v is not None]
            strides.append(None if len(known_vals) < len(vals) else math.prod(known_vals) if vals else 1.0)
        known = [s for s in strides if s is not None]
        stride = None if not strides or None in strides and not known else (min(known) if known else None)
        accesses.append({"op": cast(ast.Attribute, call.func).attr, "line": call.lineno, "stride": stride,
                         "elt_bytes": elt_bytes.get(f"__bytes__:{base_ptr}") if base_ptr else None,
                         "masked": any(k.arg == "mask" for k in call.keywords) or len(call.args) > 1,
                         "other": any(k.arg == "other" for k in call.keywords) or len(call.args) > 2})
    for cmp in [n for n in ast.walk(fn) if isinstance(n, ast.Compare) and len(n.ops) == 1
                and isinstance(n.ops[0], (ast.Lt, ast.LtE))]:
        left = _names(cmp.left)
        sizes = set().union(*(lanes[n] for n in left if n in lanes)) if left & set(lanes) else set()
        limit = _eval(cmp.comparators[0], values)
        if not sizes or limit is None or left & gathered:
            continue
        block = max(sizes)
        looped = [loop_vars[n] for n in left if n in loop_vars] + [
            loop_vars[v] for n in left if n in lanes for v in loop_vars if _derives(fn, n, v)]
        axes = [pid_axis[n] for n in left if n in pid_axis]
        if looped:
            steps = max(1, math.ceil(limit / block))
            active = limit / (steps * block)
            how = f"{limit:.0f} of {steps} x {block} lanes over a loop"
        elif axes and axes[0] < len(grid):
            progs = grid[axes[0]]
            active = min(1.0, limit / max(1, progs * block))
            how = f"{limit:.0f} of {progs} programs x {block} lanes"
        else:
            active = min(limit, block) / block
            how = f"{min(limit, block):.0f} of {block} lanes"
        masks.append({"line": cmp.lineno, "active": round(active, 4), "block": block, "limit": limit, "how": how})
    return {"accesses": accesses, "masks": masks}


def _derives(fn: ast.FunctionDef, name: str, var: str) -> bool:
    """Whether ``name`` is assigned from an expression naming loop variable ``var`` (directly)."""
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
               and var in _names(n.value) for n in ast.walk(fn))


def _address_def(fn: ast.FunctionDef, node: ast.expr, depth: int = 0) -> ast.expr:
    """An address term that is a pointer variable (``p = base + row * H + offs * H``, assigned once, built from no
    ``tl.arange`` or load of its own) replaced by its definition, so the strides inside it are seen at the load."""
    if not isinstance(node, ast.Name) or depth > 3:
        return node
    defs = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            and any(isinstance(t, ast.Name) and t.id == node.id
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    if len(defs) != 1 or not isinstance(defs[0], ast.Assign) or len(defs[0].targets) != 1:
        return node
    rhs = defs[0].value
    if any(_is_tl_call(c, "arange") or _is_tl_call(c, "load") for c in ast.walk(rhs)):
        return node
    if not (isinstance(rhs, ast.BinOp) and isinstance(rhs.op, (ast.Add, ast.Sub))):
        return node
    return ast.BinOp(
        left=_address_def(fn, rhs.left, depth + 1), op=rhs.op, right=_address_def(fn, rhs.right, depth + 1)
    )


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    if isinstance(node, ast.Subscript):  # offs[:, None]
        return [node.value]
    return [node]


# ---- occupancy and waves ----------------------------------------------------------------------------------------
def occupancy(num_warps: int, registers: int | None, shared: int | None, dev: DeviceLimits = H200) -> dict[str, Any]:
    """Programs per SM each resource allows, the smallest (resident programs) and the resource that sets it."""
    threads = num_warps * dev.warp_size
    limits: dict[str, int] = {"blocks": dev.blocks_per_sm, "threads": dev.threads_per_sm // max(1, threads)}
    if registers:
        per_warp = math.ceil(registers * dev.warp_size / dev.reg_alloc_unit) * dev.reg_alloc_unit
        limits["registers"] = (dev.regs_per_sm // per_warp) // max(1, num_warps)
    if shared:
        limits["shared_memory"] = dev.smem_per_sm // (shared + dev.smem_reserved_per_block)
    limiter = min(limits, key=lambda k: (limits[k], k != "blocks"))
    per_sm = limits[limiter]
    return {"programs_per_sm": per_sm, "limiter": limiter, "limits": limits,
            "warps_per_sm": per_sm * num_warps, "occupancy": per_sm * num_warps * dev.warp_size / dev.threads_per_sm}


def wave_fill(programs: int, per_sm: int, dev: DeviceLimits = H200) -> dict[str, Any]:
    """Waves of ``programs`` over ``sms x per_sm`` slots and the busy fraction of the SMs' time.

    Model: an SM's time is proportional to the programs it runs (exact when one program is resident per SM). Fewer
    programs than SMs: the fraction of SMs with work; up to one wave: programs per SM averaged vs the busiest SM
    (``ceil(P / SMs)``); several waves: waves over their ceiling."""
    slots = dev.sms * max(1, per_sm)
    if programs <= dev.sms:
        eff = programs / dev.sms
    elif programs <= slots:
        eff = (programs / dev.sms) / math.ceil(programs / dev.sms)
    else:
        waves = programs / slots
        eff = waves / math.ceil(waves)
    return {"programs": programs, "slots": slots, "waves": round(programs / slots, 3), "busy": round(eff, 4)}


# ---- the account ---------------------------------------------------------------------------------------------------
_ELT_BYTES = {"fp32": 4, "f32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "i32": 4, "i64": 8, "i8": 1, "u8": 1, "i16": 2,
              "fp8e4nv": 1, "fp8e5": 1, "i1": 1, "u32": 4, "u64": 8}


def _grid(rec: dict[str, Any]) -> list[int]:
    g = rec.get("grid")
    if isinstance(g, (list, tuple)):
        return [int(x) for x in g if isinstance(x, (int, float))] or [1]
    return [1]


def account_launch(rec: dict[str, Any], *, ptx: str, ttgir: str, registers: int | None, shared: int | None,
                   spill_bytes: int | None = None, dev: DeviceLimits = H200, config: str = "") -> GapAccount:
    """The account of one recorded launch ``rec`` (``evaluation.launches`` shape: kernel, file, grid, ir_args,
    constexprs, signature, numel, options) from its compiled PTX/TTGIR and ptxas figures."""
    kernel = str(rec.get("kernel"))
    file = str(rec.get("file") or "")
    grid = _grid(rec)
    num_warps = int((rec.get("options") or {}).get("num_warps") or 4)
    values = {k: v for k, v in {**(rec.get("ir_args") or {}), **(rec.get("constexprs") or {})}.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)}
    for name, sig in (rec.get("signature") or {}).items():
        if str(sig).startswith("*"):
            values[f"__bytes__:{name}"] = _ELT_BYTES.get(str(sig)[1:], 4)
            values[name] = 0  # a pointer is an address term with stride 1
    out: list[GapFinding] = []

    def add(kind: AccountKind, value: float, unit: str, summary: str, significant: bool, **kw: Any) -> None:
        out.append(GapFinding(kind=kind, kernel=kernel, value=round(float(value), 4), unit=unit, summary=summary,
                              significant=significant, explained_by=list(EXPLAINED_BY[kind]), **kw))

    px = ptx_facts(ptx)
    tg = ttgir_facts(ttgir, file) if ttgir else {}
    try:
        src = Path(file).read_text()
    except OSError:
        src = ""
    kf = kernel_facts(src, kernel, values, grid) if src else {}

    # vector widths
    ld = px["load_bits"]
    n_ld = sum(ld.values())
    if n_ld:
        wide = sum(c for b, c in ld.items() if b >= 64)
        widest = max(ld)
        add(
            "vector_width",
            widest,
            "bits per thread (widest global load)",
            f"{n_ld} global loads: "
            + ", ".join(f"{c} x {b}-bit" for b, c in sorted(ld.items(), reverse=True))
            + "; stores: "
            + (", ".join(f"{c} x {b}-bit" for b, c in sorted(px["store_bits"].items(), reverse=True)) or "none"),
            significant=wide == 0 and tg.get("max_tensor", 1) >= 4 * num_warps * dev.warp_size,
            proof="needs_gpu",
            data={"loads": ld, "stores": px["store_bits"]},
        )
    # address strides
    strided = [a for a in kf.get("accesses", []) if a["stride"] and a["stride"] > 1]
    if strided:
        worst = max(strided, key=lambda a: a["stride"])
        e = worst["elt_bytes"] or 4
        ratio = min(worst["stride"], 32 / e)
        add("access_stride", worst["stride"], "elements between neighbouring lanes",
            f"{len(strided)} access(es) with no unit-stride axis: {worst['op']} at line {worst['line']} steps "
            f"{worst['stride']:.0f} elements ({worst['stride'] * e:.0f} B) between lanes, so each {e}-byte element "
            f"costs a 32-byte sector: {ratio:.1f} B fetched per useful byte",
            significant=ratio >= 2, share=round(1 - 1 / ratio, 3) if ratio >= 1 else None,
            share_basis="memory-roofline model: time scales with bytes fetched; sectors per request need ncu",
            source_lines=sorted({a["line"] for a in strided}), data={"accesses": strided})
    # occupancy
    occ = occupancy(num_warps, registers, shared, dev)
    out.append(GapFinding(
        kind="occupancy", kernel=kernel, value=round(occ["occupancy"], 4), unit="fraction of 64 warps per SM",
        summary=f"{occ['programs_per_sm']} program(s) of {num_warps} warps per SM ({occ['warps_per_sm']} warps), "
                f"limited by {occ['limiter']} (registers {registers}/thread, shared {shared or 0} B/program)",
        significant=occ["warps_per_sm"] < 8 and occ["limiter"] in ("shared_memory", "registers"),
        proof="needs_gpu", data=occ,
        explained_by=list(EXPLAINED_BY["occupancy"]) if occ["limiter"] == "registers" else []))
    if spill_bytes:
        add("register_spills", spill_bytes, "bytes spilled per thread (ptxas)", f"ptxas spills {spill_bytes} B",
            significant=True, proof="needs_gpu")
    # waves
    programs = math.prod(grid)
    wf = wave_fill(programs, occ["programs_per_sm"], dev)
    add("wave_quantization", wf["busy"], "fraction of SM time busy",
        f"{programs} programs on {dev.sms} SMs x {occ['programs_per_sm']} resident = {wf['waves']} waves; SMs busy "
        f"{wf['busy']:.0%} of the time",
        significant=wf["busy"] < 0.75 and programs > 1, share=round(1 - wf["busy"], 3),
        share_basis="SM balance model: an SM's time proportional to the programs it runs", data=wf)
    # predicated-off lanes
    masks = kf.get("masks", [])
    if masks:
        worst = min(masks, key=lambda m: m["active"])
        add("predicated_lanes", worst["active"], "fraction of lanes on",
            f"mask at line {worst['line']}: {worst['how']} on ({worst['active']:.0%})",
            significant=worst["active"] < 0.6, share=round(1 - worst["active"], 3),
            share_basis="issue-slot model: masked-off lanes cost the issue slots of active ones (no bytes)",
            source_lines=sorted({m["line"] for m in masks if m["active"] < 0.6}) or [worst["line"]], proof="needs_gpu",
            data={"masks": masks})
        full = [m for m in masks if m["active"] >= 0.9999]
        filled = [a for a in kf.get("accesses", []) if a["other"]]
        if full and len(full) == len(masks) and filled:
            add("needless_mask", len(filled), "masked accesses with other= whose mask is all-true",
                f"{len(filled)} masked access(es) fill lanes with other= although every mask is all-true at the "
                f"recorded sizes ({', '.join(m['how'] for m in full[:2])}): a compare and select per element",
                significant=True, proof="needs_gpu", source_lines=sorted({a["line"] for a in filled}),
                data={"masks": full})
    # dot units
    if tg.get("has_dot"):
        tensor = px["wgmma"] + px["mma"]
        add("dot_units", tensor, "tensor-core instructions",
            f"wgmma {px['wgmma']}, mma.sync {px['mma']}, fma.rn.f32 {px['fma_f32']}",
            significant=tensor == 0 or (px["wgmma"] == 0 and px["mma"] > 0), proof="static",
            data={k: px[k] for k in ("wgmma", "mma", "fma_f32")})
    # 64-bit index arithmetic
    if tg.get("i64_ops"):
        fits = all(abs(v) < 2**31 for k, v in values.items() if not k.startswith("__"))
        numel_ok = all(n < 2**31 for n in (rec.get("numel") or {}).values())
        add("index_width", 64, "bits of index arithmetic",
            f"{tg['i64_ops']} tensor ops on i64 indices although every recorded size and offset fits 32 bits"
            if fits and numel_ok else f"{tg['i64_ops']} tensor ops on i64 indices (a size needs 64 bits)",
            significant=fits and numel_ok, proof="needs_gpu", source_lines=tg["i64_lines"][:8],
            data={"ops": tg["i64_ops"]})
    # loop-invariant work
    if tg.get("invariant_loads") or tg.get("invariant_math"):
        add("loop_invariant_work", tg["invariant_loads"] + tg["invariant_math"], "ops repeated per iteration",
            f"{tg['invariant_loads']} load(s) of loop-invariant addresses and {tg['invariant_math']} math op(s) on "
            f"them run every iteration (the loop stores, so the compiler cannot hoist the loads)",
            significant=True, proof="needs_gpu", source_lines=tg["invariant_lines"][:8],
            data={"loads": tg["invariant_loads"], "math": tg["invariant_math"]})
    if tg.get("convert_in_loop"):
        add(
            "layout_conversion_in_loop",
            tg["convert_in_loop"],
            "ttg.convert_layout per iteration",
            f"{tg['convert_in_loop']} layout conversion(s) inside a loop (registers -> shared memory -> registers "
            f"with barriers, every iteration)",
            significant=True,
            proof="needs_gpu",
            source_lines=tg["convert_lines"][:8],
        )
    # instructions per element (static)
    per_thread = max(1.0, tg.get("max_tensor", 1) / (num_warps * dev.warp_size))
    add("instructions_per_element", px["instructions"] / per_thread, "static PTX instructions per element",
        f"{px['instructions']} static PTX instructions for {per_thread:.0f} element(s) per thread (loops counted "
        f"once; executed counts need ncu)", significant=False, proof="needs_gpu")
    if (issue := issue_floor(rec, px["instructions"], num_warps, tg, dev)) is not None:
        ratio = issue["ratio"]
        add("issue_bound", ratio, "issue floor / memory floor",
            f"{px['instructions']} static PTX instructions per thread x {num_warps} warps x {issue['programs']} "
            f"programs need {issue['issue_us']:.0f} us of instruction issue on {dev.sms} SMs x {dev.schedulers} "
            f"schedulers at {dev.clock_ghz} GHz against a memory floor of {issue['memory_us']:.0f} us "
            f"({issue['bytes'] / 1e6:.0f} MB): "
            + ("the kernel is instruction-bound, fewer instructions per element is the lever" if ratio >= 1 else
               "issue and memory floors this close do not overlap fully, so the memory roofline is out of reach "
               "until instructions per element drop"),
            significant=ratio >= ISSUE_RATIO, share=round(1 - 1 / ratio, 3) if ratio > 1 else None,
            share_basis="issue model: time at least the larger floor; PTX counts, SASS may differ", proof="needs_gpu",
            data=issue)
    return GapAccount(kernel=kernel, config=config, grid=grid, findings=out)


#: issue floor / memory floor at which a loop-free kernel counts as issue-limited: two floors within this factor of
#: each other overlap imperfectly (Liger's tanh GEGLU: 0.82 on a bf16 14k-wide row, measured at 53% of its memory
#: roofline on the H200; its fp32 case, 0.37, measured at 85%)
ISSUE_RATIO = 0.6


def issue_floor(rec: dict[str, Any], instructions: int, num_warps: int, tg: dict[str, Any],
                dev: DeviceLimits = H200) -> dict[str, Any] | None:
    """The time instruction issue alone needs (static PTX count per thread x warps x programs over the SMs' issue
    rate) against the memory floor (the launch's tensor bytes at ``dev.hbm_gbps``). Only for kernels without loops:
    a loop's static count says nothing of its trip count. None when either floor is unknown."""
    if tg.get("loops") or tg.get("has_dot") or not instructions:
        return None
    sig = rec.get("signature") or {}
    moved = sum(int(n) * _ELT_BYTES.get(str(sig.get(k, "*fp32"))[1:], 4) for k, n in (rec.get("numel") or {}).items()
                if str(sig.get(k, "*")).startswith("*"))
    if moved <= 0:
        return None
    g = rec.get("grid")
    if not (isinstance(g, (list, tuple)) and g and all(isinstance(x, (int, float)) and x >= 1 for x in g)):
        return None  # a grid the record could not evaluate (a lambda, a host variable): the program count is unknown
    programs = math.prod(int(x) for x in g)
    issue_s = instructions * num_warps * programs / (dev.sms * dev.schedulers * dev.clock_ghz * 1e9)
    memory_s = moved / (dev.hbm_gbps * 1e9)
    return {"issue_us": round(issue_s * 1e6, 2), "memory_us": round(memory_s * 1e6, 2), "bytes": moved,
            "programs": programs, "ratio": round(issue_s / memory_s, 3)}


def unexplained_findings(accounts: list[GapAccount], causes: set[str]) -> list[GapFinding]:
    """Significant findings that none of ``causes`` (the decided cause and the causes with support) explains."""
    return [f for a in accounts for f in a.significant if not set(f.explained_by) & causes]
