"""Structural signatures: detection on the final stages, attribution to the pass that introduced them.

Each detector reads the stage where the signature is visible (TTIR/TTGIR for ops and layouts, PTX for
instructions, the ptxas log for spills, ttadapter for Ascend), maps the hits to kernel source lines through
``loc`` / ``.loc``, and asks :meth:`Ctx.attribute` which pass introduced the construct: the pass right before
the start of the last run of snapshots in which the construct is present (so a convert inserted by Coalesce,
removed by RemoveLayoutConversions and re-inserted later is attributed to the later pass).
Names are the ``kb.vocab.IRSignature`` words that cards cite.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from optimizer.ir import patterns as P
from optimizer.ir.locs import LocResolver, PtxLines
from optimizer.ir.passes import SnapStats, snapshot_stats
from optimizer.ir.types import FRONTEND, Capture, PassSnapshot, Signature

__all__ = ["Ctx", "detect_all"]

#: Passes (matched by name, whatever the version calls them) that govern each signature.
RELATED: dict[str, re.Pattern[str]] = {
    "multi_operand_reduction": re.compile(r"TritonGPUToLLVM|TritonToLinalg"),
    "cross_warp_reduction": re.compile(r"ConvertTritonToTritonGPU|TritonGPUToLLVM|OptimizeThreadLocality"),
    "warp_shuffle": re.compile(r"TritonGPUToLLVM"),
    "barrier": re.compile(r"Membar|TritonGPUToLLVM"),
    "surviving_convert_layout": re.compile(r"RemoveLayoutConversions|Coalesce|ReduceDataDuplication"),
    "shared_memory_roundtrip": re.compile(r"AllocateSharedMemory|TritonGPUToLLVM|ReduceDataDuplication"),
    "scalar_global_load": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "vector_global_load": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "masked_load_not_vectorized": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "fma_dot": re.compile(r"AccelerateMatmul|F32DotTC"),
    "mma_dot": re.compile(r"AccelerateMatmul|F32DotTC|MMALowering"),
    "wgmma_dot": re.compile(r"AccelerateMatmul|F32DotTC|MMALowering|FenceInsertion"),
    "no_software_pipelining": re.compile(r"AssignLatencies|ScheduleLoops|TritonGPUPipeline$|Pipeline\b"),
    "ascend_max_with_index": re.compile(r"TritonToLinalg"),
    "ascend_min_with_index": re.compile(r"TritonToLinalg"),
    "ascend_discrete_mem_access": re.compile(r"TritonToUnstructure|DiscreteMaskAccess"),
    "ascend_padding_fill": re.compile(r"TritonToLinalg"),
    "ascend_mix_mode": re.compile(r"TritonToLinalg|TritonToHIVM"),
}
#: The pass that *decides* an absence-type signature (kept on FMA, not pipelined), by name.
DECIDED_BY: dict[str, re.Pattern[str]] = {
    "fma_dot": re.compile(r"AccelerateMatmul"),
    "no_software_pipelining": re.compile(r"TritonGPUPipeline|SoftwarePipeliner|Pipeline$"),
}


@dataclass
class Ctx:
    """What detectors share: the capture, the module-level snapshot chain and cached resolvers."""

    capture: Capture
    stats: dict[int, SnapStats] = field(default_factory=dict)
    chain: list[PassSnapshot] = field(default_factory=list)
    _resolvers: dict[str, LocResolver] = field(default_factory=dict)
    _ptx: PtxLines | None = None

    def __post_init__(self) -> None:
        self.chain = [s for s in self.capture.snapshots if s.is_module]

    @property
    def src(self) -> str:
        return str(self.capture.source_file)

    def final(self, stage: str) -> str:
        return self.capture.stages.get(stage, "")

    def resolver(self, stage: str) -> LocResolver:
        if stage not in self._resolvers:
            self._resolvers[stage] = LocResolver(self.final(stage), self.src)
        return self._resolvers[stage]

    @property
    def ptx(self) -> PtxLines | None:
        if self._ptx is None and self.final("ptx"):
            self._ptx = PtxLines(self.final("ptx"), self.src)
        return self._ptx

    def related(self, name: str) -> list[str]:
        rx = RELATED.get(name)
        return list(dict.fromkeys(s.pass_name for s in self.capture.snapshots if rx and rx.search(s.pass_name)))

    def feature(self, name: str) -> Callable[[PassSnapshot], int]:
        """A counter reading the cached feature ``name`` of a snapshot (see ``patterns.FEATURE_RULES``)."""

        def count(s: PassSnapshot) -> int:
            if s.index not in self.stats:
                self.stats[s.index] = snapshot_stats(s.text)
            return self.stats[s.index].features.get(name, 0)

        return count

    def attribute(self, count: Callable[[str], int] | str) -> tuple[str | None, int | None, str]:
        """(pass, snapshot index, stage) that introduced the last persistent run of ``count > 0``; ``count`` is
        a function of the IR text or the name of a cached feature."""
        if isinstance(count, str):
            feat = self.feature(count)
            counts = [feat(s) for s in self.chain]
        else:
            counts = [count(s.text) for s in self.chain]
        last = max((i for i, c in enumerate(counts) if c > 0), default=None)
        if last is None:
            return None, None, ""
        start = last
        while start > 0 and counts[start - 1] > 0:
            start -= 1
        if start == 0:
            return FRONTEND, None, self.chain[0].stage
        prev = self.chain[start - 1]
        return prev.pass_name, prev.index, prev.stage

    def decided_by(self, name: str) -> tuple[str | None, int | None, str]:
        rx = DECIDED_BY[name]
        hit = next((s for s in self.chain if not s.step and rx.search(s.pass_name)), None)
        return (hit.pass_name, hit.index, hit.stage) if hit else (None, None, "")

    def op_lines(self, stage: str, rx: re.Pattern[str]) -> tuple[list[int], list[str]]:
        """(source lines, op lines) of ops matching ``rx`` in a final MLIR stage; region ops take the loc
        printed on their closing line."""
        return op_lines(self.final(stage), rx, self.resolver(stage))


def op_lines(text: str, rx: re.Pattern[str], resolver: LocResolver) -> tuple[list[int], list[str]]:
    lines = text.split("\n")
    src, hits = [], []
    for i, line in enumerate(lines):
        if not rx.search(line) or line.startswith("#"):
            continue
        hits.append(line.strip()[:240])
        loc_line = _closing_line(lines, i) if line.rstrip().endswith(("({", "{")) or _region_follows(lines, i) else line
        if (n := resolver.line_of(loc_line)) is not None:
            src.append(n)
    return src, hits


def _region_follows(lines: list[str], i: int) -> bool:
    """linalg-style region ops print their region on the next, deeper-indented line: ``(%in: f32, ...) {``."""
    return i + 1 < len(lines) and lines[i + 1].lstrip().startswith("(%") and lines[i + 1].rstrip().endswith("{")


def _closing_line(lines: list[str], i: int) -> str:
    indent = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i + 1, min(len(lines), i + 5000)):
        s = lines[j]
        if s.strip().startswith("}") and len(s) - len(s.lstrip()) <= indent + (2 if _region_follows(lines, i) else 0):
            if len(s) - len(s.lstrip()) == indent or "loc(" in s:
                return s
    return lines[i]


def _sig(ctx: Ctx, name: str, count: int, stage: str, src: list[int], evidence: list[str], detail: str,
         attribution: tuple[str | None, int | None, str]) -> Signature:
    pass_name, index, _ = attribution
    return Signature(name=name, count=count, stage=stage, pass_introduced=pass_name, pass_index=index,
                     related_passes=ctx.related(name), source_lines=sorted(set(src)), detail=detail,
                     evidence=list(dict.fromkeys(evidence))[:3])


def _count(rx: re.Pattern[str]) -> Callable[[str], int]:
    return lambda text: len(rx.findall(text))


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
    layouts = dict(P.LAYOUT_DEF.findall(text))
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = P.REDUCE_OP.search(line)
        if not m:
            continue
        close = P.REDUCE_CLOSE_TYPES.match(_closing_line(lines, i))
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
    trips, state, src, ev = 0, 0, [], []
    st, bar, ld = P.PTX_INSTR["st_shared"], P.PTX_INSTR["bar_sync"], P.PTX_INSTR["ld_shared"]
    for i, line in enumerate(ptx.lines):
        if st.search(line):
            state, first = 1, (i, line.strip())
        elif state == 1 and bar.search(line):
            state = 2
        elif state == 2 and ld.search(line):
            trips, state = trips + 1, 0
            ev.append(first[1])
            if ptx.source_line[first[0]] is not None:
                src.append(ptx.source_line[first[0]])
    return trips, src, ev


def _load_signatures(ctx: Ctx, ptx: PtxLines) -> list[Signature]:
    out = []
    where = ctx.attribute(lambda t: t.count("ld.global"))
    s_src, s_ev = ptx.lines_matching(P.PTX_INSTR["ld_global_scalar"])
    widths = {w: len(ptx.lines_matching(P.PTX_INSTR[f"ld_global_v{w}"])[1]) for w in (2, 4, 8)}
    if s_ev:
        out.append(_sig(ctx, "scalar_global_load", len(s_ev), "ptx", s_src, s_ev,
                        f"{len(s_ev)} scalar ld.global per thread in PTX", where))
    if any(widths.values()):
        v_src, v_ev = [], []
        for w in (2, 4, 8):
            a, b = ptx.lines_matching(P.PTX_INSTR[f"ld_global_v{w}"])
            v_src, v_ev = v_src + a, v_ev + b
        desc = ", ".join(f"{n} x v{w}" for w, n in widths.items() if n)
        out.append(_sig(ctx, "vector_global_load", sum(widths.values()), "ptx", v_src, v_ev,
                        f"vectorized ld.global in PTX: {desc}", where))
    vec = [r for r in ctx.capture.remarks if r.kind == "vectorization" and "numElems" in r.message and _narrowed(r.message)]
    undivided = [a.name for a in ctx.capture.args if a.divisibility is None and a.type not in ("constexpr", "i1", "u1")
                 and (a.type.startswith("*") or a.type[:1] in ("i", "u"))]
    hint = f"; arguments without tt.divisibility=16: {', '.join(undivided)}" if undivided else ""
    if vec:
        m = P.VEC_REMARK.search(vec[0].message)
        got = f" (vec {m['vec']} instead of {m['origin']})" if m else ""
        src = [r.line for r in vec if _same(r.file, ctx.src)]
        pass_name = next((r.pass_name for r in vec if r.pass_name), None)
        attribution = (pass_name, None, "") if pass_name else where
        out.append(_sig(ctx, "masked_load_not_vectorized", len(vec), "llir", src, [r.message for r in vec],
                        f"{len(vec)} masked load(s) fell back to narrower accesses{got}: the mask is not known "
                        f"to be constant over a vector{hint}", attribution))
    elif not ctx.capture.remarks and ptx.lines_matching(P.PTX_INSTR["ld_global_masked_scalar"])[1]:
        m_src, m_ev = ptx.lines_matching(P.PTX_INSTR["ld_global_masked_scalar"])
        out.append(_sig(ctx, "masked_load_not_vectorized", len(m_ev), "ptx", m_src, m_ev,
                        f"{len(m_ev)} predicated scalar ld.global (inferred from PTX; no remarks captured){hint}", where))
    return out


def _narrowed(message: str) -> bool:
    """A vectorization remark where the achieved width is below what contiguity allowed (vec < origin vec)."""
    m = P.VEC_REMARK.search(message)
    return m is None or int(m["vec"]) < int(m["origin"])


def _same(a: str, b: str) -> bool:
    from optimizer.ir.locs import same_file

    return same_file(a, b)


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
def _dot_kinds(text: str) -> dict[str, int]:
    kinds = {"wgmma_dot": len(P.WGMMA_OP.findall(text)), "mma_dot": len(P.TCGEN5_OP.findall(text)), "fma_dot": 0}
    if "tt.dot" in text:
        layouts = dict(P.LAYOUT_DEF.findall(text))
        for m in P.DOT_OP.finditer(text):
            enc = layouts.get(m.group(1), m.group(1))
            if "mma" in enc or "mfma" in enc or "wmma" in enc:
                kinds["mma_dot"] += 1
            elif "blocked" in enc or "linear" in enc:
                kinds["fma_dot"] += 1
    return kinds


def detect_dots(ctx: Ctx) -> list[Signature]:
    kinds = _dot_kinds(ctx.final("ttgir"))
    ptx_counts = {}
    if ctx.ptx is not None:
        ptx_counts = {k: len(ctx.ptx.lines_matching(P.PTX_INSTR[k])[1]) for k in ("fma_f32", "mma_sync", "wgmma", "tcgen05")}
    # tt.dot prints inputPrecision only when it is not the default (ieee)
    dots = [ln for ln in ctx.final("ttgir").split("\n") if re.search(r"\btt\.dot\b|warp_group_dot|tc_gen5_mma", ln)]
    precision = sorted({m.group(1) if (m := re.search(r"inputPrecision = ([a-z]\w*)", ln)) else "ieee"
                        for ln in dots if "tt.dot" in ln or "inputPrecision" in ln})
    remarks = [r.message for r in ctx.capture.remarks if r.kind == "mma"]
    out = []
    for name, n in kinds.items():
        if not n:
            continue
        rx = {"wgmma_dot": P.WGMMA_OP, "mma_dot": re.compile(r"\btt\.dot\b|\bttng\.tc_gen5_mma\b"),
              "fma_dot": re.compile(r"\btt\.dot\b")}[name]
        src, ev = ctx.op_lines("ttgir", rx)
        ptx_note = ", ".join(f"{v} {k}" for k, v in ptx_counts.items() if v)
        detail = f"{n} dot(s) lowered as {name.replace('_dot', '').upper()}" + (
            f" (input precision: {', '.join(precision)})" if precision else "") + (
            f"; PTX: {ptx_note}" if ptx_note else "") + (f"; remark: {remarks[0]}" if remarks and name == "fma_dot" else "")
        where = ctx.decided_by(name) if name in DECIDED_BY else (None, None, "")
        if where[0] is None:
            where = ctx.attribute(lambda t, k=name: _dot_kinds(t)[k])
        out.append(_sig(ctx, name, n, "ttgir", src, ev, detail, where))
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
        out.append(_sig(ctx, "ascend_discrete_mem_access", n, "ttadapter", src, ev,
                        f"{n} element-wise accesses tagged DiscreteMemAccess in {loops} scalar loop(s) "
                        "(ExtractedLoadOrStore): the gather runs on the scalar pipeline", ctx.attribute(_count(P.DISCRETE))))
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


DETECTORS = (detect_reductions, detect_ptx, detect_dots, detect_pipelining, detect_ascend)

#: The TTGIR/TTIR op a signature is about, to read its dtype and block shape at the signature's source lines.
SIGNATURE_OPS: dict[str, str] = {
    "scalar_global_load": "tt.load", "vector_global_load": "tt.load", "masked_load_not_vectorized": "tt.load",
    "multi_operand_reduction": "tt.reduce", "cross_warp_reduction": "tt.reduce", "warp_shuffle": "tt.reduce",
    "fma_dot": "tt.dot", "mma_dot": "tt.dot", "wgmma_dot": "ttng.warp_group_dot", "no_software_pipelining": "tt.load",
    "ascend_max_with_index": "linalg.reduce", "ascend_min_with_index": "linalg.reduce",
    "ascend_discrete_mem_access": "tensor.extract", "ascend_padding_fill": "linalg.fill",
}
# tensor<1024x!tt.ptr<f32>, #blocked>  /  tensor<64x32xf32, #mma>  /  memref<256xf32>
_TENSOR_TYPE = re.compile(r"(?:tensor|memref)<((?:\d+x)*)(?:!tt\.ptr<)?(\w+?)[,>]")


def detect_all(capture: Capture, stats: dict[int, SnapStats] | None = None) -> list[Signature]:
    """Every signature found in ``capture``, in a stable order (``stats``: shared per-snapshot cache)."""
    ctx = Ctx(capture, {} if stats is None else stats)
    out: list[Signature] = []
    for detector in DETECTORS:
        out += detector(ctx)
    return [s.model_copy(update={"facts": _facts(ctx, s)}) for s in out]


def _facts(ctx: Ctx, sig: Signature) -> dict[str, str]:
    """op / dtype / block_shape of the op the signature is about, read at its source lines."""
    op = SIGNATURE_OPS.get(sig.name)
    stage = "ttadapter" if sig.stage == "ttadapter" else "ttgir" if ctx.final("ttgir") else "ttir"
    if not op or not sig.source_lines or not ctx.final(stage):
        return {}
    wanted = set(sig.source_lines)
    lines = ctx.final(stage).split("\n")
    res = ctx.resolver(stage)
    for i, line in enumerate(lines):
        if op not in line or line.startswith("#"):
            continue
        loc_line = _closing_line(lines, i) if line.rstrip().endswith(("({", "{")) or _region_follows(lines, i) else line
        if res.line_of(loc_line) not in wanted:
            continue
        typed = loc_line if "tensor<" in loc_line or "memref<" in loc_line else line
        if m := _TENSOR_TYPE.search(typed.rsplit("->", 1)[-1]) or _TENSOR_TYPE.search(typed):
            return {"op": op, "dtype": m.group(2), "block_shape": m.group(1).rstrip("x") or "scalar"}
        return {"op": op}
    return {}
