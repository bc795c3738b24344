"""GPU check that ``bench_cuda``'s two paths measure the same thing (H200, Triton 3.6, torch 2.11; no network).

    python benchmarks/timing_paths_check.py OUT_DIR [--rounds 6]

``bench_cuda(fn)`` is ``triton.testing.do_bench(return_mode="all")``; with a ``setup`` or another flush size it
runs the event loop kept in ``optimizer.harness.timing`` (``_bench_events``, the code bench_cuda ran before). For a few
memory-bound torch ops (4 MB to 512 MB tensors, and a softmax), both paths are timed in interleaved rounds (ABAB...,
order reversed every other round); the paired ratio loop/do_bench per round is summarised by its median.
A third path, the loop with a no-op ``setup``, shows the setup hook itself costs nothing measurable.
Writes ``OUT_DIR/timing_paths.json`` with provenance; exit status 0 if every op's median ratio is within 3%.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from _provenance import write_result  # noqa: E402  (after the path setup)

TOLERANCE = 0.03


def _ops() -> dict[str, Any]:
    import torch

    ops: dict[str, Any] = {}
    for n in (1 << 20, 1 << 24, 1 << 27):  # fp32 elements: 4 MB, 64 MB, 512 MB per tensor
        a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        out = torch.empty_like(a)
        ops[f"add_{n * 4 >> 20}MB"] = lambda a=a, b=b, out=out: torch.add(a, b, out=out)
    x = torch.randn(4096, 4096, device="cuda")
    ops["softmax_4096x4096"] = lambda x=x: torch.softmax(x, dim=-1)
    return ops


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args(argv)

    import torch

    from optimizer.harness import timing

    timing.bind_timers()
    paths = {
        "do_bench": lambda fn: timing.bench_cuda(fn, warmup_ms=25, rep_ms=100),
        "loop": lambda fn: timing._bench_events(fn, timing._CudaEvent, timing._cuda_sync, "cuda", warmup_ms=25,
                                                rep_ms=100, flush_bytes=timing.TRITON_FLUSH_BYTES, max_reps=2000,
                                                setup=None),
        "loop_noop_setup": lambda fn: timing.bench_cuda(fn, warmup_ms=25, rep_ms=100, setup=lambda: None),
    }
    results, ok = [], True
    with torch.no_grad():
        for name, fn in _ops().items():
            medians: dict[str, list[float]] = {p: [] for p in paths}
            reps: dict[str, list[int]] = {p: [] for p in paths}
            for r in range(args.rounds):
                for p in (list(paths) if r % 2 == 0 else list(paths)[::-1]):
                    s = paths[p](fn)
                    medians[p].append(s.median_ms)
                    reps[p].append(s.n)
            ratio = {p: statistics.median(m / d for m, d in zip(medians[p], medians["do_bench"], strict=True))
                     for p in paths if p != "do_bench"}
            good = all(abs(v - 1) <= TOLERANCE for v in ratio.values())
            ok &= good
            results.append({"op": name, "ok": good, "median_ratio_vs_do_bench": ratio, "block_medians_ms": medians,
                            "reps": reps})
            print(f"{'ok ' if good else 'BAD'} {name}: do_bench {statistics.median(medians['do_bench']):.4f} ms; "
                  + ", ".join(f"{p}/do_bench {v:.4f}" for p, v in ratio.items()))
    path = write_result("timing_paths", {"ok": ok, "tolerance": TOLERANCE, "rounds": args.rounds,
                                         "device": torch.cuda.get_device_name(), "ops": results}, args.out_dir)
    print(f"wrote {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
