"""Shared helpers for the pattern-card micro-benchmarks: device choice and the measure-and-check wrapper."""

from __future__ import annotations

import json

import torch
import triton

DEV = "cuda" if torch.cuda.is_available() else "cpu"


def measure(exp, variant, fn, result, ref, small, *, bytes_moved=None, flops=None, tol=(1e-4, 1e-4)) -> dict:
    """Run ``fn`` once, compare ``result()`` with ``ref`` (allclose at ``tol`` = (atol, rtol)), then time it.

    Timing (do_bench median, ms) and the derived GB/s or TFLOP/s are recorded only on a GPU and not with
    ``small``. A variant that raises is recorded with its error instead of stopping the run.
    """
    rec = {"experiment": exp, "variant": variant}
    try:
        fn()
        if DEV == "cuda":
            torch.cuda.synchronize()
        got = result()
        rec["correct"] = bool(torch.allclose(got.to(ref.dtype), ref, atol=tol[0], rtol=tol[1]))
        rec["max_abs_err"] = float((got.to(ref.dtype) - ref).abs().max())
        if not small and DEV == "cuda":
            ms = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
            rec["ms"] = round(ms, 5)
            if bytes_moved:
                rec["GB_per_s"] = round(bytes_moved / ms / 1e6, 1)
            if flops:
                rec["TFLOP_per_s"] = round(flops / ms / 1e9, 1)
    except Exception as e:  # one failing variant must not hide the others
        rec["error"] = f"{type(e).__name__}: {e}"[:500]
    print(json.dumps(rec), flush=True)
    return rec

