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
import inspect
import json
import sys
import time
from typing import Any

SM90_MAX_SHARED = 232448  # bytes of shared memory one block may use on sm_90 (227 KiB)

_TT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "i8", "int16": "i16",
       "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1"}


def _arg_type(v: Any) -> str:
    if hasattr(v, "dtype") and hasattr(v, "data_ptr"):
        return "*" + _TT[str(v.dtype).removeprefix("torch.")]
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        return "i32" if -(2**31) <= v < 2**31 else "i64"
    if isinstance(v, float):
        return "fp32"
    raise TypeError(f"cannot type kernel argument {v!r}")


class Recorder:
    """Stands in for ``JITFunction.run``: compiles each new launch config for sm_90 and records the outcome."""

    def __init__(self, arch: int = 90) -> None:
        self.arch = arch
        self.seen: dict[tuple, dict[str, Any]] = {}
        self.current: list[dict[str, Any]] = []

    def __call__(self, fn: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> None:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        options = {k: kwargs.pop(k) for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in kwargs}
        names = list(fn.arg_names)
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        constexpr_names = {p.name for p in fn.params if p.is_constexpr}
        sig: dict[str, str] = {}
        constexprs: dict[str, Any] = {}
        attrs: dict[tuple[int, ...], list] = {}
        for i, name in enumerate(names):
            value = bound[name]
            if name in constexpr_names:
                sig[name] = "constexpr"
                constexprs[name] = value
                continue
            if isinstance(value, int) and not isinstance(value, bool) and value == 1:
                sig[name] = "constexpr"  # the JIT specializes ints equal to 1 (unit strides) into constants
                constexprs[name] = 1
                continue
            sig[name] = _arg_type(value)
            aligned_int = isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0
            if sig[name].startswith("*") or aligned_int:
                attrs[(i,)] = [["tt.divisibility", 16]]  # what the JIT infers for aligned pointers and ints
        key = (fn.__name__, tuple(sig.items()), tuple(sorted(constexprs.items())), tuple(sorted(options.items())))
        if key not in self.seen:
            record: dict[str, Any] = {"kernel": fn.__name__, "constexprs": constexprs, "options": options,
                                      "signature": {k: v for k, v in sig.items() if v != "constexpr"}}
            t0 = time.perf_counter()
            try:
                src_kwargs = {"constexprs": constexprs, "attrs": attrs}
                if "constexprs" not in inspect.signature(ASTSource.__init__).parameters:  # triton 3.2
                    src_kwargs = {"constants": constexprs}
                src = ASTSource(fn=fn, signature=sig, **src_kwargs)
                compiled = triton.compile(src, target=GPUTarget("cuda", self.arch, 32), options=options)
                shared = int(getattr(compiled.metadata, "shared", 0))
                record.update(ok=shared <= SM90_MAX_SHARED, shared_bytes=shared,
                              message="" if shared <= SM90_MAX_SHARED else f"needs {shared} B of shared memory")
            except Exception as exc:  # the compiler's own message is the useful part
                record.update(ok=False, message=f"{type(exc).__name__}: {str(exc)[-1500:]}")
            record["compile_s"] = round(time.perf_counter() - t0, 2)
            self.seen[key] = record
        self.current.append(self.seen[key])


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
