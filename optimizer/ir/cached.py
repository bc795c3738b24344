"""The IR report of a candidate's hot kernel, cached in memory and on disk (L3 and L4 both read it).

The report is keyed by what decides the compiled IR (``ir_cache_key``: kernel source file, kernel name,
specialization, target, launch options, Triton version), so an unchanged kernel is never recompiled, also
across sessions, and a changed one always is. ``SIGNATURE_CLASS`` maps problem signatures to the bottleneck
class each indicates.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import MutableMapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from kb.errors import InvalidArgument
from kb.vocab import BottleneckClass
from optimizer.ir import analysis
from optimizer.ir import capture as ir_capture
from optimizer.ir.types import IRReport
from optimizer.phases import PhaseClock

__all__ = ["IR_CACHE_HITS", "SIGNATURE_CLASS", "capture_report", "hot_launch", "ir_cache_key"]

#: Problem signatures and the bottleneck class each indicates (healthy ones such as mma_dot are absent).
SIGNATURE_CLASS: dict[str, BottleneckClass] = {
    "register_spill": "occupancy_limited",
    "ascend_max_with_index": "scalar_bound",
    "ascend_min_with_index": "scalar_bound",
    "ascend_discrete_mem_access": "scalar_bound",
    "scalar_global_load": "memory_bound",
    "masked_load_not_vectorized": "memory_bound",
    "ascend_padding_fill": "memory_bound",
    "multi_operand_reduction": "sync_bound",
    "cross_warp_reduction": "sync_bound",
    "warp_shuffle": "sync_bound",
    "barrier": "sync_bound",
    "shared_memory_roundtrip": "sync_bound",
    "surviving_convert_layout": "sync_bound",
    "fma_dot": "compute_bound",
    "no_software_pipelining": "latency_bound",
}
#: ``memo`` key counting reports read back from the disk cache
IR_CACHE_HITS = "ir_cache_hits"
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def hot_launch(launches: Sequence[dict[str, Any]], hot_kernel: str | None = None,
               case: str | None = None, *, prefer_budget: bool = False) -> dict[str, Any] | None:
    """The recorded launch to compile: of the profiler's hot kernel when named, else the most launched one; with
    ``case`` (the label of the case that loses the most time to its roofline), among the records that case launched
    when any did -- a kernel specialized per shape (a stride not divisible by 16 loads without vectors) is diagnosed
    in the specialization where the time goes, not the most frequent one.

    With ``prefer_budget`` (launches from a dry record, whose autotuner chose nothing), a configuration within the
    compile budget (``optimizer.ir.compile_cost``: its largest tile fits a
    thread's registers) comes first: a CPU dry record keeps an autotuner's first configuration (one warp), which a GPU
    autotuner would not keep for a 65536-wide row, and whose compile is unbounded. None within it: the one with the
    fewest values per thread. Without it (a GPU's record) the most launched configuration is the one the autotuner
    kept, and it is diagnosed whatever its cost."""
    from optimizer.ir.compile_cost import per_thread, within_budget

    recs = [r for r in launches if r.get("kernel") and "error" not in r]
    if not recs:
        return None
    by_name = [r for r in recs if hot_kernel and r["kernel"] in str(hot_kernel)] or recs
    by_case = [r for r in by_name if case and case in (r.get("cases") or [])] or by_name
    fits = [r for r in by_case if within_budget(r)] if prefer_budget else by_case
    if not fits:
        return min(by_case, key=lambda r: (per_thread(r) or 0.0, -int(r.get("launches", 1))))
    return max(fits, key=lambda r: (r.get("launches", 1), len(str(r.get("grid")))))


def ir_cache_key(rec: dict[str, Any], target: str, options: dict[str, Any]) -> str:
    """sha256 of what decides the compiled IR: kernel file, kernel name, specialization, target, options, Triton."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        triton_version = version("triton")
    except PackageNotFoundError:
        triton_version = "?"
    h = hashlib.sha256(Path(rec["file"]).read_bytes())
    what = [rec["kernel"], rec.get("ir_args") or {}, target, options, triton_version]
    h.update(json.dumps(what, sort_keys=True, default=str).encode())
    return h.hexdigest()


def capture_report(launches: Sequence[dict[str, Any]], *, target: str, cache_dir: str | Path,
                   memo: MutableMapping[str, Any], memo_key: str, hot_kernel: str | None = None,
                   workdir: Path | None = None, timeout_s: float = 600.0, clock: PhaseClock | None = None,
                   case: str | None = None, prefer_budget: bool = False) -> IRReport:
    """The IRReport of the hot launch: from ``memo[memo_key]``, else the on-disk cache (``<cache_dir>/ir/<key>.json``),
    else captured now (timed as ``ir_capture`` on ``clock``) and cached; raises on toolchain errors."""
    if memo_key in memo:
        return memo[memo_key]
    rec = hot_launch(launches, hot_kernel, case, prefer_budget=prefer_budget)
    if rec is None:
        raise InvalidArgument("no recorded kernel launch to compile: validate the candidate first (its forward must "
                              "launch a @triton.jit kernel)", field="launches")
    options = {k: v for k, v in (rec.get("options") or {}).items() if k in _OPTIONS}
    key = ir_cache_key(rec, target, options)
    disk = Path(cache_dir) / "ir" / f"{key}.json"
    if disk.is_file():
        try:
            memo[memo_key] = IRReport.model_validate_json(disk.read_text())
            memo[IR_CACHE_HITS] = memo.get(IR_CACHE_HITS, 0) + 1
            return memo[memo_key]
        except ValueError:  # a stale or torn entry: capture again and overwrite it
            pass
    where = workdir / f"{rec['kernel']}-{key[:8]}" if workdir else None
    with clock.time("ir_capture") if clock else nullcontext():
        capture = ir_capture.capture_kernel(f"{rec['file']}::{rec['kernel']}", target, rec.get("ir_args") or {},
                                    options=options, workdir=where, timeout_s=timeout_s)
        report = analysis.analyze(capture)
    memo[memo_key] = report
    disk.parent.mkdir(parents=True, exist_ok=True)
    tmp = disk.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(report.model_dump_json())
    os.replace(tmp, disk)
    return report
