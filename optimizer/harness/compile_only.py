"""Compile-only checking on a machine without a GPU, for kernels the Triton interpreter cannot run.

The 3.9 interpreter does not implement libdevice calls (``tl.extra.cuda.libdevice.tanh``, ``llrint``, ``pow``)
and 3.9 removed block pointers (``tl.make_block_ptr``/``tl.advance``), which many public kernels use. Such a
problem declares ``CPU_VALIDATION = "compile_only"`` (or the evaluator detects the interpreter's error): on the
CPU its candidate is then *compiled* for an H200 (``cuda:90``) at the launch configurations its forward asks
for, and nothing is executed. The result says so plainly ("static only: not executed on CPU"); correctness
is established on the GPU. Run it with a Triton 3.6 interpreter (``make triton36-env``) for kernels that
need block pointers.

How: the model and its inputs are built on the ``meta`` device (shapes, no memory), ``JITFunction.run`` is
replaced by a recorder that turns each launch into ``triton.compile(ASTSource(...), GPUTarget("cuda", 90,
32))``, and an autotuner compiles every config it would have benchmarked. Each distinct (kernel, signature,
constexprs, options) compiles once.
"""

from __future__ import annotations

import inspect
import re
import time
from typing import Any

from optimizer.triton_types import pointer_type

__all__ = ["STATIC_ONLY", "CompileRecorder", "compile_cases", "interpreter_limitation"]

STATIC_ONLY = "static only: not executed on CPU"
SM90_MAX_SHARED = 232448  # bytes of shared memory one block may use on sm_90 (227 KiB)

#: Interpreter errors that mean "this Triton's interpreter cannot run the kernel", not "the kernel is wrong".
_LIMITATIONS = (
    (re.compile(r"Block pointers have been removed|has no attribute '(make_block_ptr|advance)'"),
     "block pointers (tl.make_block_ptr / tl.advance; removed in Triton 3.9: compile with make triton36-env)"),
    (re.compile(r"_semantic` argument must be provided outside of JIT functions"),
     "libdevice calls"),
    (re.compile(r"libdevice|InterpreterError", re.IGNORECASE), "libdevice calls"),
)


def interpreter_limitation(message: str, source: str = "") -> str | None:
    """What the interpreter could not run, if ``message`` (a failed validation) is one of its known limits.

    The libdevice cases are recognised only when the candidate source uses libdevice: the interpreter then
    fails in several ways (a "_semantic argument" error, or a libdevice call returning None inside the kernel),
    which for a source without libdevice mean real bugs. Such a kernel is compiled, not executed, and its
    correctness is left to the GPU run, as for a declared ``CPU_VALIDATION = "compile_only"``.
    """
    for rx, what in _LIMITATIONS:
        if rx.search(message):
            if "libdevice" in what and "libdevice" not in source:
                continue
            return what
    return None


def _arg_type(v: Any) -> str:
    if hasattr(v, "dtype") and hasattr(v, "data_ptr"):
        return pointer_type(v)
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        return "i32" if -(2**31) <= v < 2**31 else "i64"
    if isinstance(v, float):
        return "fp32"
    raise TypeError(f"cannot type kernel argument {v!r}")


class CompileRecorder:
    """Stands in for ``JITFunction.run``: compiles each new launch config for ``cuda:<arch>`` and records it."""

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
        for p in fn.params:  # defaults the launch did not pass
            if p.name not in bound and p.default is not inspect.Parameter.empty:
                bound[p.name] = p.default
        constexpr_names = {p.name for p in fn.params if p.is_constexpr}
        sig: dict[str, str] = {}
        constexprs: dict[str, Any] = {}
        attrs: dict[tuple[int, ...], list] = {}
        for i, name in enumerate(names):
            value = bound.get(name)
            if name in constexpr_names or value is None:  # None arguments specialise to constexpr None
                sig[name] = "constexpr"
                constexprs[name] = value
                continue
            if isinstance(value, int) and not isinstance(value, bool) and value == 1:
                sig[name] = "constexpr"  # the JIT specialises ints equal to 1 into constants
                constexprs[name] = 1
                continue
            sig[name] = _arg_type(value)
            if sig[name].startswith("*") or (
                isinstance(value, int) and not isinstance(value, bool) and value % 16 == 0
            ):
                attrs[(i,)] = [["tt.divisibility", 16]]
        key = (fn.__name__, tuple(sig.items()), repr(sorted(constexprs.items())), tuple(sorted(options.items())))
        if key not in self.seen:
            record: dict[str, Any] = {
                "kernel": fn.__name__,
                "constexprs": {k: repr(v) if v is None else v for k, v in constexprs.items()},
                "options": options,
                "signature": {k: v for k, v in sig.items() if v != "constexpr"},
            }
            t0 = time.perf_counter()
            try:
                src_kwargs: dict[str, Any] = {"constexprs": constexprs, "attrs": attrs}
                if "constexprs" not in inspect.signature(ASTSource.__init__).parameters:  # triton 3.2
                    src_kwargs = {"constants": constexprs}
                compiled = triton.compile(ASTSource(fn=fn, signature=sig, **src_kwargs),
                                          target=GPUTarget("cuda", self.arch, 32), options=options)
                shared = int(getattr(compiled.metadata, "shared", 0))
                ok = shared <= SM90_MAX_SHARED
                record.update(ok=ok, shared_bytes=shared, message="" if ok else f"needs {shared} B of shared memory")
            except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: Triton compiling the candidate's kernel
                # raises any type; recorded per launch
                record.update(ok=False, message=f"{type(exc).__name__}: {str(exc)[-1500:]}")
            record["compile_s"] = round(time.perf_counter() - t0, 2)
            self.seen[key] = record
        self.current.append(self.seen[key])

    def install(self) -> CompileRecorder:
        """Patch ``JITFunction.run`` (every launch compiles instead) and ``Autotuner.run`` (every config)."""
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        recorder = self
        JITFunction.run = lambda fn, *a, **kw: recorder(fn, *a, **kw)

        def tune_all(self: Any, *args: Any, **kwargs: Any) -> None:
            for config in self.configs:
                kw = dict(kwargs)
                kw.update(config.all_kwargs() if hasattr(config, "all_kwargs") else {**config.kwargs})
                self.fn.run(*args, **kw)

        Autotuner.run = tune_all
        return self


def compile_cases(
    problem: Any, cand_cls: type, cases: list[dict[str, Any]], recorder: CompileRecorder
) -> list[dict[str, Any]]:
    """Run the candidate's forward on ``meta`` for each case; every launch compiles. One record per case."""
    import torch

    out: list[dict[str, Any]] = []
    for case in cases:
        recorder.current = []
        try:
            cand = problem.instantiate(cand_cls, case, seed=0, device="meta")
            inputs = problem.make_inputs(case, 0, device="meta")
            with torch.no_grad():
                cand(*inputs)
            launches = list(recorder.current)
            ok = bool(launches) and all(r["ok"] for r in launches)
            msg = "" if launches else "the forward launched no Triton kernel"
            if launches and not ok:
                msg = next(r["message"] for r in launches if not r["ok"])
        except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's forward (recorded)
            launches, ok, msg = list(recorder.current), False, f"{type(exc).__name__}: {exc}"[:2000]
        out.append({"case": case, "ok": ok, "launches": launches, "message": msg})
    return out
