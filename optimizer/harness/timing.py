"""Timing protocol: interleaved blocks of ``triton.testing.do_bench`` per case, CUDA graphs for short kernels.

The authority metric of a session is the geometric mean over cases of ``baseline_ms / candidate_ms``, where
the baseline is the comparison target (the initial candidate by default). Every ``Timing`` carries the
``TimingProtocol`` it was measured under, so measurements from different protocols are never pooled.

``time_interleaved`` (the session's protocol, ``interleaved-blocks``): per case, every kernel being compared
is timed in ``blocks`` blocks, ABAB... with the order reversed every other block; a block is one
``do_bench(..., return_mode="all")`` call (L2 flushed before every rep) whose median is the block's figure.
When the case's initial kernel takes under ``graph_below_us`` (~50 us, launch overhead matters there), the
blocks use ``do_bench_cudagraph`` instead (no L2 flush: graph replays run back to back); if graph capture
fails (a host sync in the launcher, a CPU tensor ...) the case falls back to ``do_bench`` and records why.

One timing truth: the method of a case is chosen ONCE, at the session's baseline, from the initial kernel alone
(``choose_method``), recorded in the trajectory, and passed to every later timing of that case (rounds, variant
screens, the selection re-time, unseen cases). Before, each call chose from the slowest kernel it happened to
compare, so one case was timed with CUDA graphs in one call and with flushed do_bench in the next, and a few-us
kernel's speedup changed with the call (7.7x, 1.72x and 0.80x for one MoE kernel whose fresh re-time gave 5.11x).
Device time (what the method measures) decides; the host's steady-state wall time per call (``host_wall_ms``,
what an eager loop sees) is recorded next to it, so a rewrite that moves work onto the host is visible.
Intervals and the improved/neutral/regressed rule live in ``optimizer.harness.verdict``.

GPU paths (``bench_cuda``) are written for Triton 3.6 / torch 2.11 on an H200 and run only on a GPU; the
Ascend path (``bench_npu``) follows the torch-npu Event API and has never run on NPU hardware. On the CPU the
Triton interpreter gives correctness only: ``interpreter_protocol()`` says timing is unavailable.

A single kernel (the PyTorch reference, the suite's runs) is timed by ``bench_cuda``: ``do_bench`` itself, or
the same loop with a per-rep ``setup`` outside the timed region when in-place outputs must be restored.

The event and synchronize functions are bound when this module is imported, triton's do_bench functions by
``bind_timers`` (both in the worker, before any candidate is imported); do_bench looks ``torch.cuda.Event`` up
when called, so every do_bench call first checks that it is still the bound one (``timer_tampered``).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from kb.models import CaseTiming, Timing, TimingProtocol
from optimizer.backend import Backend

__all__ = [
    "BenchStats",
    "TRITON_FLUSH_BYTES",
    "bench_cuda",
    "bench_method",
    "bench_npu",
    "choose_method",
    "geomean",
    "geomean_speedup",
    "host_wall_ms",
    "interleaved_protocol",
    "interpreter_protocol",
    "make_timing",
    "summarize",
    "time_interleaved",
]

_torch: ModuleType | None  # torch, or None where it cannot be imported
try:  # bound at import time on purpose (see module docstring)
    import torch as _torch_module

    _torch = _torch_module
    _CudaEvent = _torch.cuda.Event
    _cuda_sync = _torch.cuda.synchronize
except (ImportError, OSError):  # pragma: no cover - no torch, or a broken CUDA library: no timing
    _torch = None
_do_bench: Any = None
_do_bench_cudagraph: Any = None


def bind_timers() -> None:
    """Bind triton's do_bench functions. The worker calls this before it imports any candidate (a candidate replacing
    them later times nothing of ours). Not done at import: importing ``triton.language`` before ``TRITON_INTERPRET``
    is set would make its jitted helpers (``tl.sum``'s combine ...) unusable by the in-process interpreter."""
    global _do_bench, _do_bench_cudagraph
    if _do_bench is not None:
        return
    # @triton.autotune decides once per (kernel source, configs, key) on this machine: the worker processes of one
    # session (validation, screens, round timing, selection) reuse that decision from Triton's disk cache instead of
    # each re-benchmarking every config (the slowest rounds on autotuned kernels) and possibly picking another one
    # (which would time a different kernel in the round and in its confirmation). Read when @autotune is applied,
    # i.e. when the candidate is imported, which is after this call.
    os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")
    try:
        from triton.testing import do_bench, do_bench_cudagraph
    except ImportError:  # pragma: no cover
        return
    _do_bench, _do_bench_cudagraph = do_bench, do_bench_cudagraph


@dataclass(frozen=True)
class BenchStats:
    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    p20_ms: float
    p80_ms: float
    n: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def summarize(times_ms: Iterable[float]) -> BenchStats:
    """Median, mean, extremes and the 20th/80th percentiles (linear interpolation, as numpy's default) of samples."""
    xs = sorted(float(t) for t in times_ms)
    if not xs:
        raise ValueError("no timing samples")
    p20, p80 = statistics.quantiles(xs, n=5, method="inclusive")[0::3] if len(xs) > 1 else (xs[0], xs[0])
    return BenchStats(statistics.median(xs), statistics.fmean(xs), xs[0], xs[-1], p20, p80, len(xs))


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of positive values; None if any value is missing or non-positive."""
    xs = list(values)
    positive = [x for x in xs if x is not None and x > 0]
    if not xs or len(positive) < len(xs):
        return None
    return math.exp(sum(math.log(x) for x in positive) / len(positive))


def geomean_speedup(cases: list[CaseTiming]) -> float | None:
    """Geomean over cases of baseline_ms / ms (the authority metric); None when any case lacks a time."""
    ratios = [(c.baseline_ms / c.ms) if (c.ms and c.baseline_ms) else None for c in cases]
    return geomean(ratios)


def interpreter_protocol() -> TimingProtocol:
    return TimingProtocol(
        method="unavailable-interpreter",
        device="cpu (TRITON_INTERPRET=1)",
        note="The Triton interpreter runs kernels as NumPy on the CPU: it checks correctness only. "
        "Timing is unavailable; run on a GPU (--backend cuda) to measure.",
    )


def make_timing(protocol: TimingProtocol, cases: list[CaseTiming]) -> Timing:
    return Timing(protocol=protocol, cases=cases, geomean_speedup=geomean_speedup(cases))


#: the L2 flush buffer of ``triton.testing.do_bench`` (``get_empty_cache_for_benchmark`` of the NVIDIA driver,
#: the same in Triton 3.6 and 3.9): 256 MiB of int32 zeroed before every rep
TRITON_FLUSH_BYTES = 256 * 1024 * 1024


def bench_cuda(
    fn: Callable[[], Any],
    *,
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    flush_bytes: int = TRITON_FLUSH_BYTES,
    max_reps: int = 2000,
    setup: Callable[[], Any] | None = None,
) -> BenchStats:
    """``triton.testing.do_bench(fn, warmup, rep, return_mode="all")`` summarised: estimate, warm up, then time
    each rep with an L2 flush (Triton's 256 MiB buffer zeroed) before it, outside the event pair. GPU only.

    Two things do_bench cannot do (Triton 3.6 and 3.9 alike), and for them the same loop runs here
    (``_bench_events``): a ``setup`` callback per rep outside the timed region (restoring ``INPLACE_OUTPUTS``
    from a pristine copy: do_bench's only per-rep hook is ``grad_to_none``), and a flush buffer of another size
    (``LADDER_L2_FLUSH_MB``). ``setup`` runs before every call, warm-up included, and before the flush, so
    neither its time nor the cache lines it touched are in the measurement. ``max_reps`` caps that loop only;
    do_bench's estimate includes the flush (~0.1 ms for 256 MiB on an H200), so it never reaches 2000 reps at
    the default 100 ms.
    """
    assert _torch is not None
    if setup is None and flush_bytes == TRITON_FLUSH_BYTES:
        _check_timer()  # do_bench looks torch.cuda.Event up when called; the loop below uses the bound one
        bind_timers()
        return summarize(_do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all"))
    return _bench_events(fn, _CudaEvent, _cuda_sync, "cuda", warmup_ms=warmup_ms, rep_ms=rep_ms,
                         flush_bytes=flush_bytes, max_reps=max_reps, setup=setup)


def bench_method(fn: Callable[[], Any], method: str | None, *, warmup_ms: float = 25.0, rep_ms: float = 100.0,
                 flush_bytes: int = TRITON_FLUSH_BYTES) -> tuple[BenchStats, str]:
    """One kernel timed under a session's fixed per-case method (the report's pass uses this, so its figures are the
    session's): ``cudagraph`` -> ``do_bench_cudagraph`` (no flush), anything else -> ``bench_cuda``. Returns the stats
    and the method actually used (``do_bench`` with the reason when a graph cannot be captured). GPU only."""
    if method == "cudagraph":
        _check_timer()
        bind_timers()
        try:
            return summarize(float(x) for x in _do_bench_cudagraph(fn, rep=rep_ms, return_mode="all")), "cudagraph"
        except Exception as exc:  # noqa: BLE001  untrusted-code boundary: a launcher that cannot be captured (any
            # type, from torch, Triton or the candidate) is timed the other way, and the method says why
            _settle()
            return (bench_cuda(fn, warmup_ms=warmup_ms, rep_ms=rep_ms, flush_bytes=flush_bytes),
                    f"do_bench (cudagraph capture failed: {type(exc).__name__})")
    return bench_cuda(fn, warmup_ms=warmup_ms, rep_ms=rep_ms, flush_bytes=flush_bytes), "do_bench"


def bench_npu(
    fn: Callable[[], Any],
    *,
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    flush_bytes: int = TRITON_FLUSH_BYTES,
    max_reps: int = 2000,
    setup: Callable[[], Any] | None = None,
) -> BenchStats:
    """The same protocol through torch-npu Events (torch-npu has no do_bench). UNTESTED: no Ascend NPU was available.

    Huawei's guidance is that events include host overhead and that msprof task time is authoritative;
    ``optimizer.profile.ascend`` parses msprof output for that reason, and the protocol note says so.
    """
    import torch_npu  # noqa: F401  (registers torch.npu)

    assert _torch is not None
    npu = _torch.npu
    return _bench_events(fn, npu.Event, npu.synchronize, "npu", warmup_ms=warmup_ms, rep_ms=rep_ms,
                         flush_bytes=flush_bytes, max_reps=max_reps, setup=setup)


def _nothing() -> None:
    return None


def _bench_events(fn: Callable[[], Any], event: Any, sync: Callable[[], Any], device: str, *, warmup_ms: float,
                  rep_ms: float, flush_bytes: int, max_reps: int, setup: Callable[[], Any] | None) -> BenchStats:
    """do_bench's loop with a per-rep ``setup`` before the flush, a flush size and a rep cap (see ``bench_cuda``)."""
    assert _torch is not None
    cache = _torch.empty(flush_bytes // 4, dtype=_torch.int32, device=device)
    setup = setup or _nothing
    setup()
    fn()
    sync()
    start, end = event(enable_timing=True), event(enable_timing=True)
    start.record()
    for _ in range(5):  # the estimate includes setup when there is one: it only sizes the rep count
        setup()
        cache.zero_()
        fn()
    end.record()
    sync()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    n_warmup = max(1, int(warmup_ms / estimate))
    n_rep = max(1, min(max_reps, int(rep_ms / estimate)))
    starts = [event(enable_timing=True) for _ in range(n_rep)]
    ends = [event(enable_timing=True) for _ in range(n_rep)]
    for _ in range(n_warmup):
        setup()
        fn()
    for i in range(n_rep):
        setup()
        cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    sync()
    return summarize(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def _check_timer() -> None:
    if _torch is None or _torch.cuda.Event is not _CudaEvent or _torch.cuda.synchronize is not _cuda_sync:
        raise RuntimeError("timer_tampered: torch.cuda.Event or torch.cuda.synchronize was replaced after import; "
                           "timing refused")


def _settle() -> None:
    """Wait for the device after a failed CUDA-graph capture, so the next measurement starts on an idle stream."""
    if _torch is not None and _torch.cuda.is_available():
        _torch.cuda.synchronize()


def _cuda_block(fn: Callable[[], Any], graph: bool, warmup_ms: float, rep_ms: float) -> list[float]:
    _check_timer()
    bind_timers()
    if graph:
        return [float(x) for x in _do_bench_cudagraph(fn, rep=rep_ms, return_mode="all")]
    return [float(x) for x in _do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")]


#: the two device-time methods of the interleaved protocol
METHODS = ("do_bench", "cudagraph")


def choose_method(first_ms: float, graph_below_us: float | None, graph_ms: float | None = None) -> tuple[str, str]:
    """(method, note) for a case from its deciding kernel: ``first_ms`` its first flushed do_bench median, ``graph_ms``
    its CUDA-graph median (None when not measured or not capturable).

    The device time decides, not do_bench's figure: CUDA graphs when the graph time is under the threshold, and also
    when flushed do_bench takes more than twice the graph time - then do_bench is timing the launcher's host work (a
    chain of launches, a Python-heavy launcher), which the L2 flush hides only up to its own ~60 us. Called once per
    case at the session's baseline (the deciding kernel is the initial candidate) and never again for that case."""
    if graph_below_us is None:
        return "do_bench", "CUDA-graph timing disabled"
    if graph_ms is None:
        if first_ms * 1e3 >= graph_below_us:
            return "do_bench", f"do_bench: the initial kernel takes {first_ms * 1e3:.1f} us >= {graph_below_us:g} us"
        return "cudagraph", f"cudagraph: the initial kernel takes {first_ms * 1e3:.1f} us < {graph_below_us:g} us"
    if graph_ms * 1e3 < graph_below_us:
        return "cudagraph", (
            f"cudagraph: the initial kernel takes {graph_ms * 1e3:.1f} us of device time < {graph_below_us:g} us "
            f"(flushed do_bench {first_ms * 1e3:.1f} us)"
        )
    if first_ms > 2 * graph_ms:
        return "cudagraph", (
            f"cudagraph: host-bound launcher (flushed do_bench {first_ms * 1e3:.1f} us > 2x its device time "
            f"{graph_ms * 1e3:.1f} us: do_bench would time the host)"
        )
    return "do_bench", (
        f"do_bench: the initial kernel takes {graph_ms * 1e3:.1f} us of device time >= {graph_below_us:g} us "
        f"(flushed do_bench {first_ms * 1e3:.1f} us)"
    )


def host_wall_ms(fn: Callable[[], Any], sync: Callable[[], Any], *, target_ms: float = 20.0,
                 max_calls: int = 2000) -> dict[str, float]:
    """What an eager loop sees: ``wall_ms``, the wall time per call from Python at steady state (back-to-back calls,
    one synchronize at the end, no L2 flush), and ``launch_ms``, the host time per call before that synchronize (the
    launcher's own cost). For a few-us kernel the launcher's host work can outweigh the kernel: then ``wall_ms`` is
    the host's figure, not the device's."""
    import time as _time

    sync()
    t0 = _time.perf_counter()
    fn()
    sync()
    one = max(_time.perf_counter() - t0, 1e-6)
    n = max(10, min(max_calls, int(target_ms / 1e3 / one)))
    t0 = _time.perf_counter()
    for _ in range(n):
        fn()
    launched = _time.perf_counter() - t0
    sync()
    total = _time.perf_counter() - t0
    return {"wall_ms": total / n * 1e3, "launch_ms": launched / n * 1e3, "calls": float(n)}


def time_interleaved(
    fns: dict[str, Callable[[], Any]],
    *,
    backend: Backend = "cuda",
    blocks: int = 8,
    warmup_ms: float = 25.0,
    rep_ms: float = 20.0,
    graph_below_us: float | None = 50.0,
    flush_bytes: int = 256 * 1024 * 1024,
    method: str | None = None,
    decide_by: str | None = None,
    host: bool = False,
) -> dict[str, Any]:
    """Time every role in ``fns`` in ``blocks`` interleaved blocks (order reversed every other block). GPU/NPU only.

    ``method`` fixes the device-time method (``do_bench`` or ``cudagraph``) when the session has already chosen it
    for this case; without it the method is chosen here by ``choose_method`` from the first do_bench median of
    ``decide_by`` (default: the first role) - never from whichever other kernels happen to be compared, so a case
    is timed the same way in every call. A fixed ``cudagraph`` that cannot capture one of the kernels (a host sync
    in its launcher ...) times every role of the case with do_bench in this call and says so (``fell_back``).
    ``host`` adds each role's steady-state wall and launch time per call (``host_wall_ms``).

    Returns ``{"method", "method_note", "decided_ms", "fell_back", "blocks": {role: [block medians ms]},
    "stats": {role: BenchStats dict}, "host": {role: {...}}}``.
    """
    roles = list(fns)
    note, graph, fell_back, decided_ms = "", False, False, None
    if method is not None and method not in METHODS:
        raise ValueError(f"unknown timing method {method!r}; expected one of {METHODS}")
    if backend == "cuda":
        first = {
            r: summarize(_cuda_block(fns[r], False, warmup_ms, rep_ms)).median_ms for r in roles
        }  # also the warm-up
        if method is None:
            decider = decide_by if decide_by in first else roles[0]
            decided_ms, graph_ms = first[decider], None
            if graph_below_us is not None:
                try:  # the deciding kernel's device time: one CUDA-graph block
                    graph_ms = summarize(_cuda_block(fns[decider], True, warmup_ms, rep_ms)).median_ms
                except Exception:  # noqa: BLE001  untrusted-code boundary: not capturable, decided on do_bench; the
                    # trial below records why
                    _settle()
            method, note = choose_method(decided_ms, graph_below_us, graph_ms)
        else:
            note = f"{method}: fixed for this case at the session's baseline"
        if method == "cudagraph":
            try:
                for r in roles:
                    _cuda_block(fns[r], True, warmup_ms, rep_ms)
                graph = True
            except Exception as exc:  # noqa: BLE001  untrusted-code boundary: capture is not possible for this
                # launcher (recorded in the note): time without graphs
                _settle()
                fell_back = True
                note = (f"cudagraph capture failed ({type(exc).__name__}: {str(exc)[:200]}); every kernel of this case "
                        "timed with do_bench in this call")

        def block(r: str) -> list[float]:  # warm already: a short warm-up per block
            return _cuda_block(fns[r], graph, min(warmup_ms, 5.0), rep_ms)
    else:
        note = "npu events (untested on hardware)"

        def block(r: str) -> list[float]:
            return [bench_npu(fns[r], warmup_ms=warmup_ms / 5, rep_ms=rep_ms, flush_bytes=flush_bytes).median_ms]
    medians: dict[str, list[float]] = {r: [] for r in roles}
    samples: dict[str, list[float]] = {r: [] for r in roles}
    for b in range(blocks):
        for r in (roles if b % 2 == 0 else roles[::-1]):
            xs = block(r)
            samples[r] += xs
            medians[r].append(summarize(xs).median_ms)
    walls: dict[str, dict[str, float]] = {}
    if host and backend == "cuda" and _torch is not None:
        walls = {r: host_wall_ms(fns[r], _cuda_sync) for r in roles}
    return {
        "method": "cudagraph" if graph else ("do_bench" if backend == "cuda" else "npu-events"),
        "method_note": note,
        "decided_ms": decided_ms,
        "fell_back": fell_back,
        "blocks": medians,
        "stats": {r: summarize(samples[r]).as_dict() for r in roles},
        "host": walls,
    }


def interleaved_protocol(
    device: str, *, blocks: int, warmup_ms: float, rep_ms: float, graph_below_us: float | None
) -> TimingProtocol:
    """The protocol record of ``time_interleaved`` (the session's; intervals from ``optimizer.harness.verdict``)."""
    graph = (f"do_bench_cudagraph when the case's initial kernel is under {graph_below_us:g} us (chosen once per "
             "case at the baseline), else ") if graph_below_us else ""
    return TimingProtocol(
        method="interleaved-blocks",
        warmup=int(warmup_ms),
        reps=int(rep_ms),
        l2_flush=True,
        device=device,
        blocks=blocks,
        graph_below_us=graph_below_us,
        confidence=0.95,
        note=f"{blocks} blocks per kernel per case, interleaved ABAB.. (order reversed every other block); a block is "
        f"one {graph}triton.testing.do_bench(warmup={warmup_ms:g} ms, rep={rep_ms:g} ms, L2 flushed before each rep); "
        "block median; speedup per case = median over blocks of the paired ratio; geomean over cases; 95% bootstrap "
        "interval over blocks",
    )


def device_protocol(backend: Backend, device: str, *, warmup_ms: float, rep_ms: float,
                    flush_bytes: int) -> TimingProtocol:
    """The protocol record for a GPU/NPU measurement (reps are filled per case in the stats)."""
    note = (
        f"median of event-timed reps after {warmup_ms:g} ms warm-up over {rep_ms:g} ms; "
        f"{flush_bytes >> 20} MB buffer zeroed before each rep (L2 flush); per-case median; geomean over cases "
        "(the warmup/reps fields hold these ms budgets; per-case rep counts are in the timing evidence)"
    )
    if backend == "ascend":
        note += "; torch-npu events include host overhead (msprof task time is authoritative) - untested on hardware"
    return TimingProtocol(
        method="do_bench-median" if backend == "cuda" else "npu-event-median",
        warmup=int(warmup_ms),
        reps=int(rep_ms),
        l2_flush=True,
        device=device,
        note=note,
    )
