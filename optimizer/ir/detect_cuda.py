"""NVIDIA signature detectors: reductions, layout conversions, PTX-level figures, dots and pipelining."""

from __future__ import annotations

import re
from collections.abc import Callable

from optimizer.ir import patterns as P
from optimizer.ir._ctx import DECIDED_BY, Ctx, closing_line
from optimizer.ir._ctx import make_signature as _sig
from optimizer.ir.locs import LocResolver, PtxLines, same_file
from optimizer.ir.types import FRONTEND, Signature

__all__ = ["INPUT_PRECISION", "detect_converts", "detect_dots", "detect_pipelining", "detect_ptx", "detect_reductions",
           "dot_precisions", "input_precision"]


# ---- reductions -------------------------------------------------------------------------------------------------
def _multi_operand_reduces(text: str) -> int:
    return sum(1 for m in P.REDUCE_OP.finditer(text) if "," in m["operands"])


_MULTI_REDUCE = re.compile(r'"tt\.reduce"\(%[^,)]+,')


def detect_reductions(ctx: Ctx) -> list[Signature]:
    out = []
    stage = "ttir" if ctx.final("ttir") else "source"
    n = _multi_operand_reduces(ctx.final(stage))
    if n:
        src, ev = ctx.op_lines(stage, _MULTI_REDUCE)
        out.append(_sig(ctx, "multi_operand_reduction", n, stage, src, ev,
                        f"{n} tt.reduce with several operands (value + index, as tl.argmax/argmin build): every "
                        "combine step carries all operands; on NVIDIA no redux.sync, one shuffle per operand per step",
                        ctx.attribute(_multi_operand_reduces)))
    ttgir = ctx.final("ttgir")
    cross = _cross_warp_reduces(ttgir)
    if cross:
        src, ev = ctx.op_lines("ttgir", re.compile(r'"tt\.reduce"'))
        ptx = ctx.ptx
        extra = ""
        if ptx is not None:
            c = {k: len(ptx.lines_matching(P.PTX_INSTR[k])[1]) for k in ("bar_sync", "st_shared", "ld_shared")}
            extra = f"; PTX has {c['bar_sync']} bar.sync, {c['st_shared']} st.shared, {c['ld_shared']} ld.shared"
        detail = (f"{len(cross)} reduction(s) whose axis spans several warps ({', '.join(cross)}): partial results "
                  f"go through shared memory between CTA barriers{extra}")
        out.append(_sig(ctx, "cross_warp_reduction", len(cross), "ttgir", src, ev, detail,
                        ctx.attribute(lambda t: len(_cross_warp_reduces(t)))))
    return out


def _cross_warp_reduces(text: str) -> list[str]:
    """Descriptions of the tt.reduce ops of a TTGIR text whose reduced axis is split across warps."""
    if '"tt.reduce"' not in text or "warpsPerCTA" not in text:
        return []
    layouts = P.layout_defs(text)
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = P.REDUCE_OP.search(line)
        if not m:
            continue
        close = P.REDUCE_CLOSE_TYPES.match(closing_line(lines, i))
        enc = P.TENSOR_ENCODING.search(close["types"]) if close else None
        warps = _warps_per_cta(enc.group(1), layouts) if enc else None
        axis = int(m["axis"])
        if warps and axis < len(warps) and warps[axis] > 1:
            out.append(f"axis {axis} over {warps[axis]} warps")
    return out


def _warps_per_cta(enc: str, layouts: dict[str, str]) -> list[int] | None:
    enc = layouts.get(enc, enc)
    if m := P.SLICE_LAYOUT.search(enc):
        parent = _warps_per_cta(m.group(2), layouts)
        if parent is None:
            return None
        dim = int(m.group(1))
        return parent[:dim] + parent[dim + 1 :]
    if m := P.WARPS_PER_CTA.search(enc):
        return [int(x) for x in m.group(1).split(",")]
    return None


# ---- layout conversions ------------------------------------------------------------------------------------------
_CONVERT = re.compile(r"\bttg\.convert_layout\b")
# %6 = ttg.convert_layout %x : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1> loc(#loc8)
_CONVERT_TYPES = re.compile(r"ttg\.convert_layout [^:]*: tensor<[^,]*, (#[\w.]+)[^>]*> -> tensor<[^,]*, (#[\w.]+)")


def _convert_keys(text: str, source_file: str) -> set[tuple[int | None, str, str]]:
    """(source line, source layout, target layout) of every convert_layout, layouts resolved from aliases."""
    if "ttg.convert_layout" not in text:
        return set()
    layouts = P.layout_defs(text)
    res = LocResolver(text, source_file)
    keys = set()
    for line in text.split("\n"):
        if "ttg.convert_layout" in line and (m := _CONVERT_TYPES.search(line)):
            keys.add((res.line_of(line), layouts.get(m[1], m[1]), layouts.get(m[2], m[2])))
    return keys


def detect_converts(ctx: Ctx) -> list[Signature]:
    """ttg.convert_layout ops that survive the last layout-removal pass (i.e. are in the final TTGIR)."""
    final = ctx.final("ttgir")
    n = len(_CONVERT.findall(final))
    if not n:
        return []
    src, ev = ctx.op_lines("ttgir", _CONVERT)
    survivors = _convert_keys(final, ctx.src)
    # The pass that introduced them: start of the last run of snapshots holding a convert at the same source
    # line into the same target layout (what the consumer asked for; the source side is often re-laid-out by
    # later passes). Aliases like #blocked1 are renumbered between passes, so layouts are compared resolved;
    # internal pass steps are skipped (printed without locations).
    wanted = {(line, dst) for line, _, dst in survivors}
    ttgir_chain = [s for s in ctx.chain if not s.step and ("ttg.convert_layout" in s.text or s.stage == "ttgir")]
    keys = [{(line, dst) for line, _, dst in _convert_keys(s.text, ctx.src)} & wanted for s in ttgir_chain]
    where: tuple[str | None, int | None, str] = (None, None, "")
    last = max((i for i, k in enumerate(keys) if k), default=None)
    if last is not None:
        start = last
        while start > 0 and keys[start - 1]:
            start -= 1
        prev = ttgir_chain[start - 1] if start > 0 else None
        where = (prev.pass_name, prev.index, prev.stage) if prev else (FRONTEND, None, ttgir_chain[0].stage)
    removal = [s.pass_name for s in ctx.chain if "RemoveLayoutConversions" in s.pass_name]
    kinds = sorted({f"{_enc_kind(a)} -> {_enc_kind(b)}" for _, a, b in survivors})
    detail = (
        f"{n} ttg.convert_layout in the final TTGIR"
        + (f", after {len(removal)} {removal[0]} run(s)" if removal else "")
        + (f" ({', '.join(kinds)})" if kinds else "")
        + "; each costs a shared-memory round trip with barriers unless the conversion stays within a warp"
    )
    return [_sig(ctx, "surviving_convert_layout", n, "ttgir", src, ev, detail, where)]


def _enc_kind(enc: str) -> str:
    m = re.match(r"#ttg\.(\w+)", enc)
    return m.group(1) if m else enc


# ---- PTX-level: shuffles, barriers, shared round trips, loads, spills ----------------------------------------
def detect_ptx(ctx: Ctx) -> list[Signature]:
    ptx = ctx.ptx
    if ptx is None:
        return []
    out = []
    res = ctx.capture.resources
    for name, key, feature, what in (
        ("warp_shuffle", "shfl", "shuffle", "shfl.sync"),
        ("barrier", "bar_sync", "barrier", "CTA barriers (bar.sync)"),
    ):
        src, ev = ptx.lines_matching(P.PTX_INSTR[key])
        if ev:
            detail = f"{len(ev)} {what} in PTX"
            if name == "barrier" and res is not None and res.barriers is not None:
                detail += f"; ptxas: used {res.barriers} barrier(s)"
            out.append(_sig(ctx, name, len(ev), "ptx", src, ev, detail, ctx.attribute(feature)))
    trips, trip_src, trip_ev = _shared_roundtrips(ptx)
    if trips:
        shared = ctx.capture.metadata.get("shared")
        detail = f"{trips} st.shared -> bar.sync -> ld.shared sequence(s) in PTX" + (
            f"; kernel uses {shared} B of shared memory" if shared else "")
        out.append(_sig(ctx, "shared_memory_roundtrip", trips, "ptx", trip_src, trip_ev, detail,
                        ctx.attribute("shared_store")))
    loads = _load_signatures(ctx, ptx)
    out += loads
    out += _spill_signature(ctx, ptx)
    return out


def _shared_roundtrips(ptx: PtxLines) -> tuple[int, list[int], list[str]]:
    trips, state = 0, 0
    src: list[int] = []
    ev: list[str] = []
    st, bar, ld = P.PTX_INSTR["st_shared"], P.PTX_INSTR["bar_sync"], P.PTX_INSTR["ld_shared"]
    for i, line in enumerate(ptx.lines):
        if st.search(line):
            state, first = 1, (i, line.strip())
        elif state == 1 and bar.search(line):
            state = 2
        elif state == 2 and ld.search(line):
            trips, state = trips + 1, 0
            ev.append(first[1])
            if (n := ptx.source_line[first[0]]) is not None:
                src.append(n)
    return trips, src, ev


def _load_signatures(ctx: Ctx, ptx: PtxLines) -> list[Signature]:
    out = []
    where = ctx.attribute(lambda t: t.count("ld.global"))
    s_src, s_ev = ptx.lines_matching(P.PTX_INSTR["ld_global_scalar"])
    widths = {w: len(ptx.lines_matching(P.PTX_INSTR[f"ld_global_v{w}"])[1]) for w in (2, 4, 8)}
    if s_ev:
        out.append(_sig(ctx, "scalar_global_load", len(s_ev), "ptx", s_src, s_ev,
                        f"{len(s_ev)} scalar ld.global per thread in PTX", where))
    # a pipelined dot loop reads its operand tiles with cp.async of 8 or 16 bytes, or with TMA: vectorized too
    a_src, a_ev = ptx.lines_matching(P.PTX_INSTR["cp_async_wide"])
    t_src, t_ev = ptx.lines_matching(P.PTX_INSTR["tma"])
    if any(widths.values()) or a_ev or t_ev:
        v_src, v_ev = a_src + t_src, a_ev + t_ev
        for w in (2, 4, 8):
            a, b = ptx.lines_matching(P.PTX_INSTR[f"ld_global_v{w}"])
            v_src, v_ev = v_src + a, v_ev + b
        desc = ", ".join([f"{n} x v{w}" for w, n in widths.items() if n]
                         + ([f"{len(a_ev)} x cp.async of 8-16 B"] if a_ev else [])
                         + ([f"{len(t_ev)} x TMA"] if t_ev else []))
        out.append(_sig(ctx, "vector_global_load", len(v_ev), "ptx", v_src, v_ev,
                        f"vectorized global loads in PTX: {desc}", where))
    vec = [
        r for r in ctx.capture.remarks if r.kind == "vectorization" and "numElems" in r.message and _narrowed(r.message)
    ]
    undivided = [a.name for a in ctx.capture.args if a.divisibility is None and a.type not in ("constexpr", "i1", "u1")
                 and (a.type.startswith("*") or a.type[:1] in ("i", "u"))]
    hint = f"; arguments without tt.divisibility=16: {', '.join(undivided)}" if undivided else ""
    if vec:
        m = P.VEC_REMARK.search(vec[0].message)
        got = f" (vec {m['vec']} instead of {m['origin']})" if m else ""
        src = [r.line for r in vec if same_file(r.file, ctx.src)]
        pass_name = next((r.pass_name for r in vec if r.pass_name), None)
        attribution = (pass_name, None, "") if pass_name else where
        out.append(_sig(ctx, "masked_load_not_vectorized", len(vec), "llir", src, [r.message for r in vec],
                        f"{len(vec)} masked load(s) fell back to narrower accesses{got}: the mask is not known "
                        f"to be constant over a vector{hint}", attribution))
    elif not ctx.capture.remarks and ptx.lines_matching(P.PTX_INSTR["ld_global_masked_scalar"])[1]:
        m_src, m_ev = ptx.lines_matching(P.PTX_INSTR["ld_global_masked_scalar"])
        out.append(
            _sig(
                ctx,
                "masked_load_not_vectorized",
                len(m_ev),
                "ptx",
                m_src,
                m_ev,
                f"{len(m_ev)} predicated scalar ld.global (inferred from PTX; no remarks captured){hint}",
                where,
            )
        )
    return out


def _narrowed(message: str) -> bool:
    """A vectorization remark where the achieved width is below what contiguity allowed (vec < origin vec)."""
    m = P.VEC_REMARK.search(message)
    return m is None or int(m["vec"]) < int(m["origin"])


def _spill_signature(ctx: Ctx, ptx: PtxLines) -> list[Signature]:
    res = ctx.capture.resources
    l_src, l_ev = ptx.lines_matching(re.compile(r"\b(?:st|ld)\.local\b"))
    spilled = res.spill_stores_bytes if res and res.spill_stores_bytes else 0
    if not spilled and not l_ev:
        return []
    maxnreg = ctx.capture.options.get("maxnreg")
    parts = [f"{spilled} B spill stores, {res.spill_loads_bytes or 0} B spill loads" if res else "",
             f"{res.registers} registers" if res and res.registers is not None else "",
             f"maxnreg={maxnreg}" if maxnreg else "", f"{len(l_ev)} local-memory ops in PTX" if l_ev else "",
             f"(from {res.source}; ptxas gives no source lines)" if res else ""]
    return [Signature(name="register_spill", count=spilled or len(l_ev), stage="cubin", pass_introduced="ptxas",
                      related_passes=[], source_lines=sorted(set(l_src)), detail=", ".join(p for p in parts if p),
                      evidence=l_ev[:3])]


# ---- dots and pipelining ---------------------------------------------------------------------------------------
def _dot_kind(name: str) -> Callable[[str], int]:
    """How many dots of kind ``name`` an IR text holds (a count for ``Ctx.attribute``)."""
    return lambda text: _dot_kinds(text)[name]


def _dot_kinds(text: str) -> dict[str, int]:
    kinds = {"wgmma_dot": 0, "mma_dot": 0, "fma_dot": 0}
    if "dot" not in text and "tc_gen5_mma" not in text:
        return kinds
    kinds["wgmma_dot"] = text.count("ttng.warp_group_dot ")
    kinds["mma_dot"] = text.count("ttng.tc_gen5_mma ")
    if "tt.dot" in text:
        layouts = P.layout_defs(text)
        for m in P.DOT_OP.finditer(text):
            enc = layouts.get(m.group(1), m.group(1))
            if "mma" in enc or "mfma" in enc or "wmma" in enc:
                kinds["mma_dot"] += 1
            elif "blocked" in enc or "linear" in enc:
                kinds["fma_dot"] += 1
    return kinds


#: Triton's ``InputPrecision`` enum, which ``ttng.warp_group_dot`` prints as a number (``inputPrecision = 0 : i32``).
INPUT_PRECISION = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
_PRECISION_ATTR = re.compile(r"inputPrecision = (\w+)")
_DOT_LINE = re.compile(r"\btt\.dot\b|\bttng\.warp_group_dot\b|\bttng\.tc_gen5_mma\b")
# : tensor<64x16xf32> * tensor<16x32xf32>   /   : !ttg.memdesc<64x16xf32, #shared, ...> * ...
_DOT_OPERAND = re.compile(r" : (?:tensor|!ttg\.memdesc)<(?:\d+x)+(\w+)[,>]")


def input_precision(line: str) -> str:
    """The input precision of one dot op: named (``inputPrecision = tf32``, tt.dot) or numbered
    (``inputPrecision = 0 : i32``, ttng.warp_group_dot); ``ieee`` when absent (the attribute's default)."""
    m = _PRECISION_ATTR.search(line)
    if m is None:
        return "ieee"
    value = m.group(1)
    if value.isdigit():
        return INPUT_PRECISION[int(value)] if int(value) < len(INPUT_PRECISION) else f"unknown({value})"
    return value.lower()


def dot_precisions(text: str) -> list[str]:
    """Input precisions of the dots of an MLIR stage whose operands are fp32 (the only ones it changes)."""
    out = set()
    for line in text.split("\n"):
        if _DOT_LINE.search(line) and (m := _DOT_OPERAND.search(line)) and m.group(1) == "f32":
            out.add(input_precision(line))
    return sorted(out)


def detect_dots(ctx: Ctx) -> list[Signature]:
    kinds = _dot_kinds(ctx.final("ttgir"))
    ptx_counts = {}
    if ctx.ptx is not None:
        ptx_counts = {
            k: len(ctx.ptx.lines_matching(P.PTX_INSTR[k])[1]) for k in ("fma_f32", "mma_sync", "wgmma", "tcgen05")
        }
    # what the source asked for (TTIR) and what the final TTGIR runs (tf32x3 is decomposed into tf32 dots)
    asked = dot_precisions(ctx.final("ttir")) or dot_precisions(ctx.final("ttgir"))
    lowered = dot_precisions(ctx.final("ttgir"))
    precision = ", ".join(asked) + (f"; run as {', '.join(lowered)} dots" if lowered and lowered != asked else "")
    remarks = [r.message for r in ctx.capture.remarks if r.kind == "mma"]
    out = []
    for name, n in kinds.items():
        if not n:
            continue
        rx = {"wgmma_dot": P.WGMMA_OP, "mma_dot": re.compile(r"\btt\.dot\b|\bttng\.tc_gen5_mma\b"),
              "fma_dot": re.compile(r"\btt\.dot\b")}[name]
        src, ev = ctx.op_lines("ttgir", rx)
        ptx_note = ", ".join(f"{v} {k}" for k, v in ptx_counts.items() if v)
        detail = (
            f"{n} dot(s) lowered as {name.replace('_dot', '').upper()}"
            + (f" (input precision: {precision})" if precision else "")
            + (f"; PTX: {ptx_note}" if ptx_note else "")
            + (f"; remark: {remarks[0]}" if remarks and name == "fma_dot" else "")
        )
        where = ctx.decided_by(name) if name in DECIDED_BY else (None, None, "")
        if where[0] is None:
            where = ctx.attribute(_dot_kind(name))
        sig = _sig(ctx, name, n, "ttgir", src, ev, detail, where)
        out.append(sig.model_copy(update={"facts": {"input_precision": ", ".join(asked)}}) if asked else sig)
    return out


def detect_pipelining(ctx: Ctx) -> list[Signature]:
    t = ctx.capture.target
    text = ctx.final("ttgir")
    if t.backend != "cuda" or not isinstance(t.arch, int) or t.arch < 80 or not text:
        return []
    lines = text.split("\n")
    loops, loads = [], []
    for m in P.SCF_FOR.finditer(text):
        i = text.count("\n", 0, m.start())
        end = _loop_end(lines, i)
        body = "\n".join(lines[i:end])
        if not re.search(r"\btt\.dot\b|\bttng\.warp_group_dot\b|\bttng\.tc_gen5_mma\b", body):
            continue
        if "async_copy_global_to_local" in body or "ttng.async_tma" in body:
            continue
        sync = [ln for ln in lines[i:end] if P.TT_LOAD_TENSOR.search(ln)]
        if sync:
            loops.append(i)
            loads += sync
    reg_pipelined = [r for r in ctx.capture.remarks if r.kind == "pipelining"]
    if not loops and not reg_pipelined:
        return []
    res = ctx.resolver("ttgir")
    src = [n for ln in loads if (n := res.line_of(ln)) is not None] + [r.line for r in reg_pipelined]
    stages = ctx.capture.options.get("num_stages")
    parts = [f"{len(loops)} dot loop(s) keep {len(loads)} global load(s) synchronous (no async copies into shared "
             "memory)" if loops else "", f"num_stages={stages}" if stages is not None else "",
             f"the pipeliner reported: {reg_pipelined[0].message}" if reg_pipelined else ""]
    detail = "; ".join(p for p in parts if p)
    return [_sig(ctx, "no_software_pipelining", len(loops) or len(reg_pipelined), "ttgir", src,
                 [ln.strip()[:240] for ln in loads], detail, ctx.decided_by("no_software_pipelining"))]


def _loop_end(lines: list[str], i: int) -> int:
    indent = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i + 1, len(lines)):
        s = lines[j]
        if s.strip().startswith("}") and len(s) - len(s.lstrip()) == indent:
            return j + 1
    return len(lines)
