"""IR capture cost: full capture (every stage, every pass snapshot, remarks, ptxas, signatures) vs a plain
``triton.compile`` of the same kernel, side by side in one run.

Both sides run the same worker in a fresh process with a fresh Triton cache and the same reproduced JIT
specialization; the plain side only compiles (no dumps, no remarks, no ptxas log, no parsing). Runs are
interleaved (plain, full, plain, full, ...) so machine load hits both alike; medians are reported. Two ratios:

- ``end_to_end``: wall time of ``capture_kernel + analyze`` / wall time of the plain compile process (both
  include interpreter start and ``import triton``; this is what a user waits for);
- ``compile_phase``: (in-worker compile with dumps + parent parsing + analysis) / in-worker plain compile
  (start-up excluded; the stricter figure).

Goal: both <= 2.0. Run: ``python benchmarks/ir_capture.py [--repeats 3] [--target cuda:90]``
or ``ladder bench ir-capture``. Results: ``benchmarks/results/ir_capture.json`` with provenance.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _provenance import write_result  # noqa: E402

KERNELS = Path(__file__).resolve().parents[1] / "tests" / "optimizer" / "ir" / "kernels"
_DOT = ["A=*fp32", "B=*fp32", "C=*fp32", "K=256", "stride_am=64", "stride_bk=32", "stride_cm=32", "BLOCK_M=64",
        "BLOCK_N=32", "BLOCK_K=16"]
#: name -> (spec, args, options): the golden kernels of the IR tests
CASES: dict[str, tuple[str, list[str], dict]] = {
    "top2_argmax": ("top2_argmax.py::top2_argmax", ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024", "BLOCK=256"],
                    {"num_warps": 1}),
    "masked_copy": ("masked_copy.py::masked_copy", ["X=*fp32", "Y=*fp32", "n=1000", "BLOCK=1024"], {}),
    "row_sum": ("row_sum.py::row_sum", ["X=*fp32", "OUT=*fp32", "stride=1024", "BLOCK=1024"], {"num_warps": 4}),
    "dot_tf32": ("dot_f32.py::dot_f32", [*_DOT, "PRECISION=tf32"], {"num_warps": 4, "num_stages": 3}),
    "dot_ieee": ("dot_f32.py::dot_f32", [*_DOT, "PRECISION=ieee"], {"num_warps": 4, "num_stages": 3}),
}


def _one(spec: str, target: str, args: list[str], options: dict, full: bool) -> dict[str, float]:
    from optimizer.ir import analyze, capture_kernel

    with tempfile.TemporaryDirectory(prefix="ladder-bench-ir-") as work:
        t0 = time.perf_counter()
        cap = capture_kernel(str(KERNELS / spec), target, args, options=options, mode="compile" if full else "plain",
                             workdir=work)
        t1 = time.perf_counter()
        report = analyze(cap) if full else None
        t2 = time.perf_counter()
    out = {"wall_s": t2 - t0, "compile_s": cap.timings.get("compile_s", 0.0),
           "worker_s": cap.timings.get("worker_s", 0.0)}
    if full:
        out |= {"parse_s": (t1 - t0) - cap.timings.get("wall_s", 0.0), "analysis_s": t2 - t1,
                "snapshots": len(cap.snapshots), "signatures": len(report.signatures),
                "dump_mb": sum(len(s.text) for s in cap.snapshots) / 1e6}
    return out


def run(cases: list[str], target: str, repeats: int) -> dict:
    results = {}
    for name in cases:
        spec, args, options = CASES[name]
        _one(spec, target, args, options, full=False)  # warm the OS file cache for this kernel's first compile
        plain, full = [], []
        for _ in range(repeats):
            plain.append(_one(spec, target, args, options, full=False))
            full.append(_one(spec, target, args, options, full=True))
        med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
        end_to_end = med(full, "wall_s") / med(plain, "wall_s")
        phase = (med(full, "compile_s") + med(full, "parse_s") + med(full, "analysis_s")) / med(plain, "compile_s")
        results[name] = {
            "plain": {k: round(med(plain, k), 4) for k in ("wall_s", "compile_s")},
            "full": {k: round(med(full, k), 4) for k in ("wall_s", "compile_s", "parse_s", "analysis_s", "dump_mb")}
                    | {"snapshots": full[0]["snapshots"], "signatures": full[0]["signatures"]},
            "ratio_end_to_end": round(end_to_end, 3),
            "ratio_compile_phase": round(phase, 3),
            "samples": {"plain": plain, "full": full},
        }
        print(f"{name:12s} plain {results[name]['plain']['wall_s']:6.2f} s (compile {results[name]['plain']['compile_s']:.2f})"
              f" | full {results[name]['full']['wall_s']:6.2f} s (compile {results[name]['full']['compile_s']:.2f},"
              f" parse {results[name]['full']['parse_s']:.2f}, analysis {results[name]['full']['analysis_s']:.2f},"
              f" {results[name]['full']['snapshots']} snapshots) | x{end_to_end:.2f} end-to-end, x{phase:.2f} compile phase",
              flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="cuda:90")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kernels", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    ns = ap.parse_args(argv)
    load_before = os.getloadavg()
    res = run(ns.kernels, ns.target, ns.repeats)
    e2e = statistics.geometric_mean([r["ratio_end_to_end"] for r in res.values()])
    phase = statistics.geometric_mean([r["ratio_compile_phase"] for r in res.values()])
    worst = max(max(r["ratio_end_to_end"], r["ratio_compile_phase"]) for r in res.values())
    print(f"geomean x{e2e:.2f} end-to-end, x{phase:.2f} compile phase; worst x{worst:.2f}; goal <= 2.0")
    path = write_result("ir_capture", {
        "target": ns.target, "repeats": ns.repeats, "goal": "full capture <= 2x plain triton.compile",
        "geomean_ratio_end_to_end": round(e2e, 3), "geomean_ratio_compile_phase": round(phase, 3),
        "worst_ratio": round(worst, 3), "kernels": res,
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()],
                         "note": "1/5/15-min load on this machine; other jobs shared its cores during the run"},
    }, ns.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
