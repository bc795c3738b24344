"""Compile every initial kernel for an H200 (sm_90) on a machine without a GPU, at the real CASES' launch configs.

    python benchmarks/suite/_compile_check.py                 # every operator, every CASE
    python benchmarks/suite/_compile_check.py matmul softmax  # some operators
    python benchmarks/suite/_compile_check.py --smoke         # SMOKE_CASES only (fast)
    python benchmarks/suite/_compile_check.py --initial naive # the naive.py kernels instead of initial.py

It catches what the interpreter cannot: code the compiler rejects, and launch configs whose shared memory
exceeds the 227 KiB an sm_90 block may use. Nothing runs: the model and its inputs are built on the ``meta``
device (no memory), ``JITFunction.run`` is replaced by a recorder that turns each launch into
``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))``, and ``forward`` continues without a
launch. Each distinct (kernel, signature, constexprs, num_warps) compiles once. Prints one JSON object;
exit status 0 only if everything compiled within limits.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import _harness  # noqa: F401  (puts the repository root on sys.path for a bare checkout)
from optimizer.harness.compile_only import SM90_MAX_SHARED, CompileRecorder  # None arguments compile as constexpr None

Recorder = CompileRecorder  # the recorder lives in optimizer.harness.compile_only (the CPU compile-only check uses it too)

__all__ = ["SM90_MAX_SHARED", "Recorder", "main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*")
    parser.add_argument("--smoke", action="store_true", help="compile the SMOKE_CASES' configs instead of CASES'")
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--initial", choices=["initial", "naive"], default="initial",
                        help="which starting point to compile: initial.py (default) or naive.py")
    args = parser.parse_args(argv)

    import torch
    from _harness import build_case, list_ops, load_op
    from triton.runtime.jit import JITFunction

    recorder = Recorder(args.arch)
    JITFunction.run = lambda self, *a, **kw: recorder(self, *a, **kw)  # this process never launches a kernel

    report: dict[str, Any] = {}
    for op in args.ops or list_ops():
        entry: dict[str, Any] = {"ok": False, "cases": [], "error": None}
        try:
            problem, new_cls = load_op(op, args.initial)
            for case in problem.smoke_cases if args.smoke else problem.cases:
                recorder.current = []
                try:
                    _, new, inputs = build_case(problem, new_cls, case, seed=0, device="meta")
                    with torch.no_grad():
                        new(*inputs)
                    launches = list(recorder.current)
                    ok = bool(launches) and all(r["ok"] for r in launches)
                    entry["cases"].append({"case": case, "ok": ok, "launches": launches,
                                           "message": "" if launches else "forward launched no Triton kernel"})
                except Exception as exc:
                    entry["cases"].append({"case": case, "ok": False, "message": f"{type(exc).__name__}: {exc}"})
            entry["ok"] = all(c["ok"] for c in entry["cases"])
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
        report[op] = entry
    import triton

    ok = all(e["ok"] for e in report.values())
    print(json.dumps({"triton": triton.__version__, "arch": args.arch, "ok": ok, "ops": report}, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
