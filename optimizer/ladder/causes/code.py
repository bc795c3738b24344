"""L1 cause findings from code features and recorded launches (static: no execution timing needed).

Confidences are priors, tuned on the tuning half of ``benchmarks/diagnosis`` (see its README): a construct that
by itself forces the slow path (an ieee fp32 dot, one element per program, one atomic address for all programs)
scores high; a construct that only *may* cost (a 1-D tile order, an unaligned stride) scores low and needs IR or
counters to win.
"""

from __future__ import annotations

import math
import re
from typing import Any

import libcst as cst

from optimizer.kernel.features import SMALL_TILE_AREA, CodeFeatures, dot_tile, unaligned_args
from optimizer.kernel.model import KernelFacts
from optimizer.ladder.findings import EvidenceRef, Finding, RefKind
from optimizer.rewrite.tree import walk
from optimizer.triton_types import elem_bytes

__all__ = ["code_findings"]

#: A tl.dot kernel needs at least this many output tiles for the program order to matter for L2 reuse.
MANY_TILES = 264
#: Data-indexed atomics contend when each target address is shared by at least this many programs.
CONTENDED_PROGRAMS_PER_ADDRESS = 4
#: An ungrouped dot grid this large re-reads operand tiles from DRAM on every wave.
LARGE_GRID_TILES = 1024
#: Per-program work is only a cause when the grid is many waves deep (8 x 132 SMs x 4 programs).
TINY_GRID_PROGRAMS = 4096
#: A launcher with this many launch sites (or a launch inside a loop) on a case this small is launch-bound.
MANY_LAUNCHES, SMALL_CASE_BYTES = 4, 64 * 1024 * 1024
#: A row per program is "tiny" when the row holds fewer bytes than this (one 128-byte line per warp, 4 warps).
TINY_ROW_BYTES = 2048
#: A row loop stepping by at most this many elements per iteration keeps few loads in flight (naive first versions).
SMALL_LOOP_CHUNK = 256
#: A one-program launch is a serial tail when its loop runs at least this many iterations (one SM, dependent chunks).
SERIAL_TAIL_ITERS = 64
#: An intermediate buffer under this share of the case's traffic (per-program partials) makes no redundant pass.
NEGLIGIBLE_TRIP_SHARE = 0.05


def _warps(rec: dict | None) -> int:
    """The launch's num_warps (Triton's default 4 when the launch does not name it)."""
    w = ((rec or {}).get("options") or {}).get("num_warps")
    return int(w) if isinstance(w, int) and w > 0 else 4


def pointer_elem_bytes(rec: dict | None) -> int:
    """Element size of a launch record's first pointer argument, the input a row reads (4 when unknown)."""
    ptrs = [t for t in ((rec or {}).get("signature") or {}).values() if isinstance(t, str) and t.startswith("*")]
    return (elem_bytes(ptrs[0]) or 4) if ptrs else 4


#: SMs of an H100 / H200 (sm_90): a persistent grid of at most this many programs puts one program on each SM.
SM90_SMS = 132


def _program_stride(st: KernelFacts, rec: dict[str, Any] | None, programs: int) -> str | None:
    """The name a persistent kernel steps its tile index by, when that step is the program count: ``tl.num_programs``,
    or a constexpr whose launch value is the grid size (``tile_idx += NUM_SM``, ``range(pid, n, NUM_SM)``)."""
    if st.tree is None or st.kernel is None:
        return None
    text = st.tree.code(st.kernel.node)
    names = [k for k, v in ((rec or {}).get("constexprs") or {}).items()
             if isinstance(v, int) and not isinstance(v, bool) and v == programs and programs > 1]
    for name in [*names, r"tl\.num_programs\(0\)"]:
        # the whole increment (``tile_idx += NUM_SM``, not ``a_ptrs += BLOCK_K * stride``) or the range's step
        arg = r"(?:[^(),]|\([^()]*\))*"  # one argument, calls one level deep
        # a program-id value stepped by the program count: ``tile_idx += NUM_SM`` (tile_idx = tl.program_id(0)),
        # ``range(tl.program_id(0), n, NUM_SM)``; not ``a_ptrs += BLOCK_K * s`` nor ``range(0, K, BLOCK_K)``
        pid = "|".join([r"tl\.program_id\(\s*\d\s*\)", *map(re.escape, sorted({*st.pid.values(), *st.pid_dependent}))])
        if re.search(rf"(?<!\w)(?:{pid})\s*\+=\s*{name}\s*(#.*)?$|(?<!\w)range\(\s*(?:{pid})\s*,{arg},\s*{name}\s*\)",
                     text, re.M):
            return name.replace("\\", "")
    return None


def _largest_config_tile(st: KernelFacts) -> tuple[tuple[int, int, int], int] | None:
    """((M, N, K) of the largest-area tile, number of configs) of an autotuned kernel's config list, where the source
    spells the list out (``rewrite.autotune_configs.parsed_configs``) and every config names the dot's tiles."""
    from types import SimpleNamespace
    from typing import cast

    from optimizer.rewrite.autotune_configs import parsed_configs

    if st.kernel is None or st.tree is None:
        return None
    cfgs = parsed_configs(cast(Any, SimpleNamespace(kernel=st.kernel, tree=st.tree)))
    tiles = [dot_tile(c["kwargs"]) for c in cfgs or []]
    if not tiles or any(set(t_) != {"M", "N", "K"} for t_ in tiles):
        return None
    big = max(tiles, key=lambda t_: (t_["M"] * t_["N"], t_["K"]))
    return (big["M"], big["N"], big["K"]), len(tiles)


def _fast_axis_shares_operands(st: KernelFacts) -> bool:
    """Whether a multi-axis dot kernel's loop loads all read addresses independent of program axis 0, the axis that
    varies fastest in launch order: consecutive programs then read the same operand panels (L2 hits already)."""
    from optimizer.kernel.flow import dependents, names

    if st.kernel is None or len(st.program_axes) < 2 or 0 not in st.pid:
        return False
    axis0 = dependents(st.kernel.node.body, {st.pid[0]})
    loop_loads = [a for a in st.accesses if a.op == "tl.load" and a.in_loop]
    return bool(loop_loads) and all(
        not (names(a.node.args[0].value) & axis0) and "program_id(0)" not in a.pointer.replace(" ", "")
        for a in loop_loads if a.node.args)


def _ref(kind: RefKind, reference: str, detail: str = "", lines: list[int] | None = None) -> EvidenceRef:
    return EvidenceRef(level="L1", kind=kind, reference=reference, detail=detail, source_lines=sorted(set(lines or [])))


def _programs(rec: dict[str, Any] | None) -> int | None:
    grid = (rec or {}).get("grid")
    if isinstance(grid, (list, tuple)) and grid and all(isinstance(g, int) for g in grid):
        return math.prod(grid)
    return None


def _hot(
    feats: CodeFeatures, launches: list[dict[str, Any]], hot_kernel: str | None
) -> tuple[KernelFacts | None, dict[str, Any] | None]:
    recs = [r for r in launches if r.get("kernel") in feats.structures and "error" not in r]
    if hot_kernel:
        named = [r for r in recs if r["kernel"] == hot_kernel or r["kernel"] in str(hot_kernel)]
        recs = named or recs
    if recs:
        rec = max(recs, key=lambda r: (_programs(r) or 0) * int(r.get("launches", 1)))
        return feats.structures[rec["kernel"]], rec
    if feats.structures:
        return next(iter(feats.structures.values())), None
    return None, None


def _arg_bytes(rec: dict[str, Any], param: str) -> int | None:
    """Bytes of one pointer argument of a launch record (numel x element size; 4 when the type is unknown)."""
    n, t = (rec.get("numel") or {}).get(param), (rec.get("signature") or {}).get(param)
    return n * ((elem_bytes(t) if isinstance(t, str) else None) or 4) if isinstance(n, int) else None


def _trip_bytes(trip: dict[str, Any], launches: list[dict[str, Any]]) -> int | None:
    """Bytes of an intermediate buffer, from the writer's launch record (its parameter's numel x element size)."""
    param = (trip.get("params") or {}).get("writer")
    for r in launches:
        if r.get("kernel") == trip.get("written_by") and param and (b := _arg_bytes(r, param)) is not None:
            return b
    return None


def _negligible_trip(trip: dict[str, Any], launches: list[dict[str, Any]], case_bytes: float | None) -> bool:
    """A round trip of a buffer under ``NEGLIGIBLE_TRIP_SHARE`` of the case's traffic (a two-stage reduction's
    per-program partials) costs nothing worth a fusion: it is not a redundant pass."""
    size = _trip_bytes(trip, launches)
    return size is not None and bool(case_bytes) and size < NEGLIGIBLE_TRIP_SHARE * float(case_bytes or 0)


def _serial_tail_findings(feats: CodeFeatures, launches: list[dict[str, Any]]) -> list[Finding]:
    """A launch of ONE program whose loop walks a problem-sized extent (the second pass of a two-stage reduction over
    one partial per first-pass program, a whole reduction in one program): one SM works through it alone while the
    others idle, one dependent chunk at a time. When the loop reads another kernel's per-program output, fewer,
    larger programs in that producer shrink the loop (``enlarge-tiny-blocks``); the finding names both kernels."""
    out: list[Finding] = []
    readers = {t["read_by"]: t for t in feats.details.get("roundtrips") or []}
    for rec in launches:
        st = feats.structures.get(rec.get("kernel", ""))
        if st is None or _programs(rec) != 1 or not st.loops:
            continue
        args = {**(rec.get("ir_args") or {}), **(rec.get("constexprs") or {})}
        walks = []  # (extent, step) per loop whose bound and step the launch recorded
        for b in st.loop_bounds:
            step = st.loop_steps.get(b, 1)
            step_v = args.get(step) if isinstance(step, str) else step
            if (
                isinstance(args.get(b), int)
                and not isinstance(args.get(b), bool)
                and isinstance(step_v, int)
                and step_v > 0
            ):
                walks.append((int(args[b]), int(step_v)))
        if not walks:
            continue
        extent, chunk = max(walks, key=lambda w: w[0] // w[1])
        iters = extent // chunk
        if iters < SERIAL_TAIL_ITERS:
            continue
        trip = readers.get(st.name)
        feeds = f" over {trip['buffer']}, one entry per program of {trip['written_by']}" if trip else ""
        out.append(
            Finding(
                cause="serial_tail",
                level="L1",
                confidence=0.7 if trip else 0.55,
                structural=True,
                supporting=[
                    _ref(
                        "launch",
                        "single_program_loop",
                        f"{st.name} runs as 1 program whose loop walks "
                        f"{extent} elements in {iters} iterations of {chunk}{feeds}",
                        st.load_lines + (trip["lines"] if trip else []),
                    )
                ],
                summary=f"{st.name} is one program looping {iters} times{feeds}: one SM works, the rest idle",
            )
        )
        break
    return out


def _host_setup_findings(feats: CodeFeatures) -> list[Finding]:
    """Host setup on every call (a kernel warmup, device queries): host time per forward the GPU waits for. A prior
    below ``decide.EARLY_STOP``: whether it dominates depends on the kernel's own time, which L2's profiler shows
    (host wall vs device time; a launch_bound class adds the bonus that decides it)."""
    lines = list(feats.details.get("host_setup") or [])
    if not lines:
        return []
    return [
        Finding(
            cause="launch_overhead",
            level="L1",
            confidence=0.65,
            structural=True,
            supporting=[
                _ref(
                    "code_feature",
                    "per_call_host_setup",
                    "the launcher compiles or queries the device on "
                    "every call (kernel.warmup / _init_handles / get_device_properties)",
                    lines,
                )
            ],
            summary="per-call host setup in the launcher: the GPU waits for the host between launches",
        )
    ]


def _launch_findings(feats: CodeFeatures, launches: list[dict[str, Any]], case_bytes: float | None) -> list[Finding]:
    sites = list(feats.details.get("launch_lines") or [])
    loop = list(feats.details.get("launch_in_loop") or [])
    total = sum(int(r.get("launches", 1)) for r in launches) if launches else len(sites)
    if case_bytes is None or case_bytes >= SMALL_CASE_BYTES or not (loop or len(sites) >= MANY_LAUNCHES):
        return []
    what = f"a launch inside a loop (lines {loop})" if loop else f"{len(sites)} launch sites"
    return [
        Finding(
            cause="launch_overhead",
            level="L1",
            confidence=0.6 if loop else 0.55,
            structural=True,
            supporting=[
                _ref(
                    "launch",
                    "launch_in_loop" if loop else "multiple_kernels",
                    f"{what}, {total} launches recorded, {case_bytes / 1e6:.1f} MB per forward",
                    loop or sites,
                )
            ],
            summary=f"{what} for {case_bytes / 1e6:.1f} MB of traffic: launch overhead dominates",
        )
    ]


def code_findings(feats: CodeFeatures, launches: list[dict[str, Any]], *, hot_kernel: str | None = None,
                  row_bytes: float | None = None, case_bytes: float | None = None) -> list[Finding]:
    """Findings for the hot kernel (the most-launched recorded one) plus launcher-level causes.

    ``case_bytes``: the problem's ``bytes_moved`` for the case the launches were recorded on (per-program work)."""
    st, rec = _hot(feats, launches, hot_kernel)
    if st is None:
        return []
    out = (
        _launch_findings(feats, launches, case_bytes)
        + _host_setup_findings(feats)
        + _serial_tail_findings(feats, launches)
    )
    out += _kernel_findings(feats, st, rec, launches, row_bytes=row_bytes, case_bytes=case_bytes)
    if hot_kernel is None:  # static: no profile names the hot kernel, so the grid is only a guess at it
        out += _other_kernel_findings(feats, st, launches, {f.cause for f in out})
    return out


#: Kernel-local structural evidence that holds whatever the kernel's share of the time (L1 references).
_LOCAL_REFERENCES = frozenset({"multi_pass", "repeated_index_load", "same_address_atomic", "no_block_range",
                               "div_mod_index", "grid", "reduction_in_loop", "input_precision_ieee"})
#: A kernel moving at least this share of the launches' pointer traffic may hold the cause when nothing is profiled.
OTHER_KERNEL_SHARE = 0.25


def _traffic(rec: dict[str, Any]) -> float:
    """Bytes of every pointer argument of one launch record (numel x element size), times its launch count."""
    per = sum(b for p in (rec.get("numel") or {}) if (b := _arg_bytes(rec, p)) is not None)
    return float(per) * int(rec.get("launches", 1))


def _other_kernel_findings(feats: CodeFeatures, hot: KernelFacts, launches: list[dict[str, Any]],
                           known: set[str]) -> list[Finding]:
    """Kernel-local structural findings of the launched kernels besides the largest grid (static diagnosis only):
    a residual add launched over more programs than the two-pass norm after it must not hide the norm's second read.
    Only kernels moving at least ``OTHER_KERNEL_SHARE`` of the pointer traffic, only causes not found already."""
    recs = [
        r for r in launches if r.get("kernel") in feats.structures and r.get("kernel") != hot.name and "error" not in r
    ]
    total = sum(_traffic(r) for r in launches if "error" not in r)
    out: list[Finding] = []
    seen = set(known)
    for rec in sorted(recs, key=_traffic, reverse=True):
        if not total or _traffic(rec) < OTHER_KERNEL_SHARE * total:
            continue
        for f in _kernel_findings(
            feats, feats.structures[rec["kernel"]], rec, launches, row_bytes=None, case_bytes=None
        ):
            if f.cause not in seen and f.supporting and all(r.reference in _LOCAL_REFERENCES for r in f.supporting):
                f.summary = f"{rec['kernel']}: {f.summary}"
                out.append(f)
                seen.add(f.cause)
    return out


def _held_row_bytes(st: KernelFacts, rec: dict[str, Any] | None, block_bytes: float) -> float:
    """The bytes a row holds, not its padded block: a block of ``next_power_of_2(n)`` lanes masked by ``offs < n``
    holds ``n`` elements (768 of a 1024-lane block). ``n`` is a parameter the kernel compares a range against whose
    recorded value lies in (BLOCK / 2, BLOCK] for the largest recorded BLOCK constexpr; the block's bytes otherwise."""
    consts = (rec or {}).get("constexprs") or {}
    args = (rec or {}).get("ir_args") or {}
    block = max((int(v) for n, v in consts.items() if "BLOCK" in n.upper() and isinstance(v, int)
                 and not isinstance(v, bool)), default=0)
    if block <= 0 or st.tree is None or st.kernel is None:
        return block_bytes
    bounds = [int(args[b]) for b in _compared_params(st) if isinstance(args.get(b), int)
              and not isinstance(args.get(b), bool) and block // 2 < int(args[b]) <= block]
    return block_bytes * min(bounds) / block if bounds else block_bytes


def _compared_params(st: KernelFacts) -> set[str]:
    """Kernel parameters that bound a comparison ``x < n`` in the kernel body."""
    assert st.kernel is not None
    return {c.comparisons[0].comparator.value for c in walk(st.kernel.node.body)
            if isinstance(c, cst.Comparison) and len(c.comparisons) == 1
            and isinstance(c.comparisons[0].operator, cst.LessThan)
            and isinstance(c.comparisons[0].comparator, cst.Name) and c.comparisons[0].comparator.value in st.params}


def _kernel_findings(
    feats: CodeFeatures,
    st: KernelFacts,
    rec: dict[str, Any] | None,
    launches: list[dict[str, Any]],
    *,
    row_bytes: float | None,
    case_bytes: float | None,
) -> list[Finding]:
    """Findings of one launched kernel ``st`` (its launch record ``rec``)."""
    toks = set(feats.tokens)
    out: list[Finding] = []
    programs = _programs(rec)
    grid_note = f"grid of {programs} programs" if programs else "grid not recorded"
    if not st.block_range and st.load_lines:
        supp = [
            _ref(
                "code_feature",
                "no_block_range",
                f"{st.name} loads without tl.arange: one element per program",
                st.load_lines,
            )
        ]
        if st.div_mod_lines:
            supp.append(
                _ref("code_feature", "div_mod_index", "per-element // and % on the program id", st.div_mod_lines)
            )
        if programs:
            supp.append(_ref("launch", "grid", grid_note))
        out.append(Finding(cause="per_element_grid", level="L1", confidence=0.85, structural=True, supporting=supp,
                           summary=f"{st.name} handles one element per program ({grid_note})"))
    if st.same_address_atomics:
        out.append(Finding(cause="same_address_atomics", level="L1", confidence=0.8, structural=True,
                           supporting=[_ref("code_feature", "same_address_atomic",
                                            "atomic addresses independent of program id and loaded values",
                                            st.same_address_lines)],
                           summary=f"every program of {st.name} updates the same address atomically"))
    for line, base in st.scatter_atomics:  # data-indexed atomics into a small buffer: many programs per address
        target = ((rec or {}).get("numel") or {}).get(base)
        if target and programs and programs >= CONTENDED_PROGRAMS_PER_ADDRESS * target:
            out.append(
                Finding(
                    cause="same_address_atomics",
                    level="L1",
                    confidence=0.65,
                    structural=True,
                    supporting=[
                        _ref(
                            "code_feature",
                            "scatter_atomic",
                            f"atomics indexed by loaded values into {base} "
                            f"({target} elements) from {programs} programs",
                            [line],
                        )
                    ],
                    summary=f"{programs} programs scatter atomics into {target} addresses: heavy contention",
                )
            )
            break
    if st.multi_pass or "multi_kernel_same_input" in toks:
        supp = [
            _ref("code_feature", "multi_pass", f"{p} read by {len(ls)} passes", ls) for p, ls in st.multi_pass.items()
        ]
        if "multi_kernel_same_input" in toks:
            supp.append(
                _ref("code_feature", "multi_kernel_same_input", "the launcher passes one input to several kernels")
            )
        shared = int(feats.details.get("kernels_sharing_input", 0))
        conf = 0.7 if st.multi_pass else 0.65 if shared >= 3 else 0.5
        out.append(
            Finding(
                cause="redundant_passes",
                level="L1",
                confidence=conf,
                structural=bool(st.multi_pass),
                supporting=supp,
                summary="the same data is read in several passes: "
                + ", ".join(f"{p} x{len(ls)}" for p, ls in st.multi_pass.items())
                if st.multi_pass
                else "one input feeds several kernels",
            )
        )
    small: list[Any] = []  # round trips too small to matter
    trips: list[Any] = []  # and the rest
    for t in feats.details.get("roundtrips") or []:
        (small if _negligible_trip(t, launches, case_bytes) else trips).append(t)
    if small and "multi_kernel_same_input" in toks:
        # a chain of kernels re-reading one input, linked by small per-row buffers (a three-kernel softmax): the
        # buffers cost nothing, the re-reads do, and fusing the chain removes them (tied to the launch lines)
        shared = int(feats.details.get("kernels_sharing_input", 0))
        what = ", ".join(f"{t['buffer']} ({t['written_by']} -> {t['read_by']})" for t in small[:4])
        out.append(
            Finding(
                cause="redundant_passes",
                level="L1",
                confidence=0.7 if shared >= 3 else 0.6,
                structural=True,
                supporting=[
                    _ref(
                        "code_feature",
                        "chained_rereads",
                        f"one input read by {shared or 'several'} kernels chained through small buffers: {what}",
                        [n for t in small for n in t["lines"]],
                    )
                ],
                summary=f"kernels chained through small buffers ({what}) each re-read the same input",
            )
        )
    if trips:
        what = ", ".join(f"{t['buffer']} ({t['written_by']} -> {t['read_by']})" for t in trips[:4])
        out.append(
            Finding(
                cause="redundant_passes",
                level="L1",
                confidence=0.7 if len(trips) >= 2 else 0.6,
                structural=True,
                supporting=[
                    _ref(
                        "code_feature",
                        "intermediate_roundtrip",
                        f"written to DRAM and read back: {what}",
                        [n for t in trips for n in t["lines"]],
                    )
                ],
                summary=f"{len(trips)} intermediate buffer(s) make a DRAM round trip between launches: {what}",
            )
        )
    if st.repeated_index_loads:
        # a tile load at row index idx // R moves R times the words it needs (packed int4 weights: R = 8); the copy
        # is not deduplicated, so the kernel's operand traffic is R-fold whatever its tile shape
        out.append(Finding(cause="redundant_passes", level="L1", confidence=0.85, structural=True,
                           supporting=[_ref("code_feature", "repeated_index_load",
                                            "tile load at a lane index idx // R: each element read R times",
                                            st.repeated_index_loads)],
                           summary="a tile load indexes rows (or columns) with idx // R: every element is fetched "
                                   "R times"))
    tile = dot_tile((rec or {}).get("constexprs") or {})
    fp32 = any(v == "*fp32" for v in ((rec or {}).get("signature") or {}).values())
    for d in st.dots:
        if d.precision == "ieee" or (d.precision is None and "input_precision_ieee" in toks):
            conf = 0.85 if fp32 or rec is None else 0.5
            out.append(
                Finding(
                    cause="fma_dot",
                    level="L1",
                    confidence=conf,
                    structural=True,
                    supporting=[
                        _ref(
                            "code_feature",
                            "input_precision_ieee",
                            "tl.dot with ieee input precision" + (" on fp32 operands" if fp32 else ""),
                            [st.line(d.node)],
                        )
                    ],
                    summary="an ieee-precision tl.dot cannot use tensor cores: it lowers to FMA",
                )
            )
            break
    listed = _largest_config_tile(st) if st.dots and st.autotuned else None
    if listed is not None:
        # an autotuned kernel runs whichever config the autotuner picks on the GPU, not the one a CPU run recorded:
        # its tiles are small only when the largest config is (below the 128x128 of the Hopper configs)
        (m, n, k), count = listed
        if min(m, n) < 64 or k < 32 or m * n < 128 * 128:
            out.append(Finding(cause="small_dot_tiles", level="L1", confidence=0.6, structural=True,
                               supporting=[_ref("launch", "small_dot_tile", f"largest of {count} autotune configs "
                                                f"{m}x{n}x{k}", st.dot_lines)],
                               summary=f"tl.dot tiles of at most {m}x{n}x{k} in all {count} autotune configs: none "
                                       "feeds Hopper tensor cores like a 128x128 or larger tile"))
    elif st.dots and tile:
        m, n, k = tile.get("M", 128), tile.get("N", 128), tile.get("K", 64)
        if min(m, n) < 64 or k < 32:
            out.append(Finding(cause="small_dot_tiles", level="L1", confidence=0.6, structural=True,
                               supporting=[_ref("launch", "small_dot_tile", f"tile {m}x{n}x{k}", st.dot_lines)],
                               summary=f"tl.dot on a {m}x{n}x{k} tile: too small to feed Hopper tensor cores"))
        elif m * n < SMALL_TILE_AREA and any(d.in_loop for d in st.dots):
            # a K loop over a 64x64 output tile reuses each loaded operand element 64 times: below the reuse of
            # every Hopper tile config (>= 128x64), so the loop is bound by shared-memory and L2 bandwidth
            out.append(Finding(cause="small_dot_tiles", level="L1", confidence=0.5, structural=True,
                               supporting=[_ref("launch", "small_dot_tile", f"output tile {m}x{n} (K {k}) < "
                                                f"{SMALL_TILE_AREA} elements", st.dot_lines)],
                               summary=f"a K loop of tl.dot on a {m}x{n} output tile: less operand reuse than any "
                                       f"Hopper tile config (>= 128x64)"))
    if st.dots and programs and _warps(rec) <= 4 and programs <= SM90_SMS and (
            stride := _program_stride(st, rec, programs)):
        # a persistent dot kernel (its programs stride over the output tiles by the program count) launched with one
        # program per SM or fewer, each of one warp group: every SM runs a single warp group that issues the tile's
        # copies, its MMAs and its epilogue in turn, nothing overlaps them (the labelled grouped GEMM: 0.23-0.29 of
        # the tensor-core roofline with a fully pipelined 128x128x64 wgmma loop)
        out.append(Finding(cause="small_dot_tiles", level="L1", confidence=0.6, structural=True,
                           supporting=[_ref("launch", "one_warp_group_per_sm",
                                            f"{programs} programs of {_warps(rec)} warps step over the output tiles "
                                            f"by {stride}: one warp group per SM", st.dot_lines)],
                           summary=f"a persistent tl.dot loop on {programs} programs of {_warps(rec)} warps: one warp "
                                   "group per SM feeds the tensor cores (no config with more warps per SM)"))
    if st.dots and not st.grouped_order and programs and programs >= MANY_TILES and _fast_axis_shares_operands(st):
        # attention: the programs along axis 0 are one head's query blocks; every K/V tile the loop loads depends on
        # axis 1 only, so neighbours in launch order already read the same panels: nothing for a regrouping to gain
        out.append(Finding(cause="l2_unfriendly_order", level="L1", confidence=0.0, structural=True,
                           refute_strength=1.0, refuting=[_ref("code_feature", "fast_axis_shares_operands",
                                          f"{programs} programs; the loop's loads do not depend on program axis 0 "
                                          f"({st.pid[0]}), which varies fastest in launch order", st.dot_lines)],
                           summary=f"launch order is L2-friendly: consecutive programs (axis 0, {st.pid[0]}) read the "
                                   "same operand tiles in their loop"))
    elif st.dots and not st.grouped_order and programs and programs >= MANY_TILES:
        conf = 0.55 if programs >= LARGE_GRID_TILES else 0.35
        out.append(
            Finding(
                cause="l2_unfriendly_order",
                level="L1",
                confidence=conf,
                structural=True,
                supporting=[
                    _ref(
                        "code_feature",
                        "pid_2d_matmul" if len(st.program_axes) >= 2 else "pid_1d_matmul",
                        f"{programs} output tiles in launch order, no grouped remap",
                        st.dot_lines,
                    )
                ],
                summary=f"{programs} tiles walked in row order: operand tiles are re-read from DRAM",
            )
        )
    per_program = case_bytes / programs if case_bytes and programs else None
    if (st.block_range and per_program is not None and per_program < TINY_ROW_BYTES and programs
            and programs >= TINY_GRID_PROGRAMS and not st.loops and not st.dots and "no_block_range" not in toks):
        out.append(
            Finding(
                cause="tiny_programs",
                level="L1",
                confidence=0.7 if "row_per_program" in toks else 0.55,
                structural=True,
                supporting=[
                    _ref(
                        "launch",
                        "bytes_per_program",
                        f"{per_program:.0f} B of the case's traffic per program over {programs} programs",
                        st.load_lines,
                    )
                ],
                summary=f"{per_program:.0f} B per program: too little work per program to hide latency",
            )
        )
    elif "row_per_program" in toks and st.block_range and row_bytes is not None and (
            row_bytes := _held_row_bytes(st, rec, row_bytes)) < TINY_ROW_BYTES:
        out.append(
            Finding(
                cause="tiny_programs",
                level="L1",
                confidence=0.55 if "group_per_program" not in toks else 0.7,
                structural=True,
                supporting=[
                    _ref("code_feature", "row_per_program", f"one row of {row_bytes:.0f} B per program", st.load_lines)
                ],
                summary=f"one short row ({row_bytes:.0f} B) per program: too little work per program",
            )
        )
    chunk = min((int(v) for n, v in ((rec or {}).get("constexprs") or {}).items()
                 if "BLOCK" in n.upper() and isinstance(v, int) and not isinstance(v, bool)), default=0)
    # the extent the loop walks, from the recorded launch's value of the loop's bound (n_cols = 4096 ...); without
    # one, the launch's row estimate (BLOCK x element size) stands in
    args = (rec or {}).get("ir_args") or {}
    extents = [
        int(args[b]) for b in st.loop_bounds if isinstance(args.get(b), int) and not isinstance(args.get(b), bool)
    ]
    long_loop = max(extents) >= 4 * chunk if extents else (row_bytes is None or row_bytes > 4 * chunk * 2)
    # not in a kernel that re-reads its rows: the passes are the larger cost and fusing them comes first (the fused
    # kernel's next round sees its step again)
    if (
        st.loops
        and st.block_range
        and not st.dots
        and 0 < chunk <= SMALL_LOOP_CHUNK
        and "inner_loop" in toks
        and long_loop
        and not st.multi_pass
    ):
        # a prior only: the class (latency_bound) has to agree before it decides (decide.CLASS_BONUS) -- unless each
        # thread gets less than one 16-byte vector per iteration: then its loads are narrow by construction (a
        # 128-element step over 4 warps is one element per thread) and the step itself is the cause
        per_thread = chunk / (32 * _warps(rec))
        narrow = per_thread * pointer_elem_bytes(rec) < 16
        out.append(Finding(cause="tiny_programs", level="L1", confidence=0.6 if narrow else 0.45, structural=True,
                           supporting=[_ref("launch", "small_loop_chunk", f"the row loop steps by {chunk} elements "
                                            f"({per_thread:g} per thread over {_warps(rec)} warps"
                                            + (", under one 16-byte vector" if narrow else "") + ")", st.load_lines)],
                           summary=f"a loop over {chunk}-element chunks keeps too few bytes in flight per program"))
    if st.loop_reductions and st.block_range and not st.dots:
        # a prior below the multi-pass one (0.7), by more than decide.MARGIN even with the sync_bound class bonus:
        # when fusing the passes is possible it comes first (it removes loops); when every fusion refuses, the
        # decision falls through to this cause (``decide.fall_back``), whose rewrite keeps the loops and moves their
        # reductions out. A small loop step (tiny_programs) explains it (``decide.EXPLAINS``): a larger step means
        # fewer iterations, each paying one reduction.
        iters = f", {max(extents) // chunk} iterations of {chunk}" if extents and chunk else ""
        out.append(
            Finding(
                cause="loop_reductions",
                level="L1",
                confidence=0.45 if st.multi_pass else 0.55,
                structural=True,
                supporting=[
                    _ref(
                        "code_feature",
                        "reduction_in_loop",
                        f"{len(st.loop_reductions)} block reduction(s) "
                        f"to a scalar inside a column loop{iters}: a cross-warp reduction and barriers "
                        "every iteration",
                        st.loop_reductions,
                    )
                ],
                summary=f"{st.name} reduces every chunk of its row loop to a scalar (lines {st.loop_reductions})",
            )
        )
    if "unaligned_launch_arg" in toks and ("masked_load" in toks or "strides" in toks) and st.block_range:
        names = unaligned_args(rec or {})
        out.append(
            Finding(
                cause="unvectorized_access",
                level="L1",
                confidence=0.35,
                structural=True,
                supporting=[
                    _ref("launch", "unaligned_launch_arg", "not divisible by 16: " + ", ".join(names), st.load_lines)
                ],
                summary="sizes/strides not divisible by 16 keep loads from vectorizing",
            )
        )
    return out
