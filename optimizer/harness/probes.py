"""Runtime probes used by validation inside the worker: op recording, launch recording, global snapshots.

- ``OpRecorder``: a TorchDispatchMode that records the ATen ops a forward dispatches (to detect a candidate
  calling the reference's compute op, and downcasts to half types).
- ``LaunchRecorder``: patches ``JITFunction.run`` and the interpreter's ``InterpretedFunction.run`` at class
  level (before the candidate is imported) to count Triton launches and record their signatures, which the
  IR level (L3) uses to compile the same specialization.
- ``GlobalSnapshot``: identities of timer, synchronize and comparison functions plus precision flags, taken
  before the candidate is imported and compared after every call.
"""

from __future__ import annotations

import importlib
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from optimizer.triton_types import pointer_type

if TYPE_CHECKING:  # pydantic and the KB models stay out of the worker's import until a contract is built
    from optimizer.harness.contracts import LaunchRecord

log = logging.getLogger(__name__)

__all__ = ["GlobalSnapshot", "LaunchRecorder", "OpRecorder", "classify_exception", "poison_allocator"]

#: ATen ops that allocate, view, copy or inspect: they are glue, never "the reference's compute op".
NON_COMPUTE_OPS: frozenset[str] = frozenset(
    "aten." + n
    for n in (
        "empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like ones ones_like full full_like "
        "new_zeros new_ones new_full fill_ zero_ view _unsafe_view reshape as_strided expand permute transpose t "
        "contiguous clone copy_ _to_copy to detach alias select slice squeeze unsqueeze flatten unflatten split "
        "split_with_sizes chunk narrow unbind stride size numel lift_fresh lift_fresh_copy resize_ set_ item "
        "_local_scalar_dense is_nonzero arange scalar_tensor _reshape_alias view_as expand_as randn rand randint "
        "normal_ uniform_ random_ masked_fill_ as_strided_ _has_compatible_shallow_copy_type"
    ).split()
)
_HALF_DTYPES = {"torch.float16", "torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2", "torch.float8_e4m3fnuz"}


class OpRecorder:
    """Context manager recording dispatched ATen ops (names) and downcast targets."""

    def __init__(self) -> None:
        self.ops: Counter[str] = Counter()
        self.max_numel: dict[str, int] = {}  # per op: the largest tensor it read or wrote (epilogue-size rule)
        self._downcasts: set[str] = set()
        self._mode: Any = None

    def __enter__(self) -> OpRecorder:
        from torch.utils._python_dispatch import TorchDispatchMode

        recorder = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
                kwargs = kwargs or {}
                name = str(func.overloadpacket)
                recorder.ops[name] += 1
                if name not in NON_COMPUTE_OPS:
                    flat = [b for a in (*args, *kwargs.values()) for b in (a if isinstance(a, (list, tuple)) else (a,))]
                    sizes = [b.numel() for b in flat if hasattr(b, "numel") and hasattr(b, "dtype")]
                    recorder.max_numel[name] = max([recorder.max_numel.get(name, 0), *sizes])
                if name in ("aten._to_copy", "aten.to") and str(kwargs.get("dtype")) in _HALF_DTYPES:
                    recorder._downcasts.add(str(kwargs.get("dtype")))
                return func(*args, **kwargs)

        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)

    def compute_ops(self) -> set[str]:
        return {op for op in self.ops if op not in NON_COMPUTE_OPS}

    def downcasts(self) -> set[str]:
        return set(self._downcasts)


def _describe_launch(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> LaunchRecord:
    import torch

    arg_names: list[str] = list(getattr(fn, "arg_names", []) or [])
    params = getattr(fn, "params", None)
    if params:
        constexpr_names = {p.name for p in params if getattr(p, "is_constexpr", False)}
    else:  # the interpreter keeps no params: read the annotations
        import inspect

        sig = inspect.signature(getattr(fn, "fn", fn))
        constexpr_names = {n for n, p in sig.parameters.items() if "constexpr" in str(p.annotation)}
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    divisible_16: list[str] = []
    numel: dict[str, int] = {}  # elements of each tensor argument (how many addresses an atomic can spread over)
    ir_args: dict[str, Any] = {}  # the IR engine's --arg syntax: x=*fp32[:unaligned], n=4096, BLOCK=1024
    values = dict(zip(arg_names, args, strict=False))
    values.update({k: v for k, v in kwargs.items() if k in arg_names})
    for name in arg_names:
        if name not in values:
            continue
        v = values[name]
        if name in constexpr_names:
            constexprs[name] = v if isinstance(v, (int, float, bool, str)) or v is None else repr(v)
            ir_args[name] = constexprs[name]
        elif isinstance(v, torch.Tensor):
            signature[name] = pointer_type(v)
            numel[name] = int(v.numel())
            aligned = v.data_ptr() % 16 == 0
            if aligned:
                divisible_16.append(name)
            ir_args[name] = signature[name] + ("" if aligned else ":unaligned")
        elif isinstance(v, bool):
            signature[name] = "i1"
            ir_args[name] = v
        elif isinstance(v, int):
            signature[name] = "i32" if -(2**31) <= v < 2**31 else "i64"
            if v % 16 == 0:
                divisible_16.append(name)
            ir_args[name] = v
        elif isinstance(v, float):
            signature[name] = "fp32"
            ir_args[name] = v
        elif v is None:  # an optional pointer left out: the JIT compiles it as constexpr None
            constexprs[name] = None
            ir_args[name] = None
    options: dict[str, Any] = {k: kwargs[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in kwargs}
    inner = getattr(fn, "fn", None)
    source_file = getattr(getattr(inner, "__code__", None), "co_filename", "")
    return {
        "kernel": str(getattr(fn, "__name__", None) or getattr(inner, "__name__", "?")),
        "file": source_file,
        "signature": signature,
        "constexprs": constexprs,
        "divisible_by_16": divisible_16,
        "numel": numel,
        "ir_args": ir_args,
        "options": options,
        "grid": grid if isinstance(grid, (tuple, list)) else _called_grid(grid, {**values, **kwargs}),
    }


def _called_grid(grid: Any, meta: dict[str, Any]) -> Any:
    """A callable grid (``lambda META: (triton.cdiv(n, META["BLOCK"]),)``) evaluated on the launch's arguments and
    the meta-parameters the autotuner / heuristics set, as Triton does: a list of ints; its repr where it fails."""
    try:
        got = grid(meta)
        dims = list(got) if isinstance(got, (tuple, list)) else [got]
        if dims and all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            return dims
    except Exception as exc:  # noqa: BLE001 - user-code boundary: the candidate's grid callable may raise anything;
        # a grid that needs something else is kept as what it is
        from kb.errors import log_error  # here: the KB models (pydantic) stay out of the worker's import

        log_error(log, exc, "evaluating a launch's grid", level=logging.DEBUG)
    return repr(grid)


class LaunchRecorder:
    """Counts Triton launches and keeps one record per distinct (kernel, signature, constexprs, options)."""

    def __init__(self, *, dry: bool = False) -> None:
        self.count = 0
        self.dry = dry  # record the launch, do not execute it (static diagnosis of a full-size case on CPU)
        #: the label of the case being run (set by validation per case): each record lists the cases that launched it
        self.case: str | None = None
        self._records: dict[str, LaunchRecord] = {}
        self._installed: list[tuple[type[Any], Any]] = []

    def install(self) -> LaunchRecorder:
        classes: list[type[Any]] = []  # triton's JIT classes, patched in place
        try:
            from triton.runtime.jit import JITFunction

            classes.append(JITFunction)
        except ImportError:  # pragma: no cover - triton missing
            pass
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - triton missing, or one without the interpreter
            pass
        recorder = self
        for cls in classes:
            original = cls.run

            def run(self, *args, grid, warmup, _orig=original, **kwargs):  # noqa: ANN001
                if not warmup:
                    recorder._record(self, args, kwargs, grid)
                if recorder.dry:
                    return None
                return _orig(self, *args, grid=grid, warmup=warmup, **kwargs)

            cls.run = run
            self._installed.append((cls, original))
        return self

    def uninstall(self) -> None:
        for cls, original in self._installed:
            cls.run = original
        self._installed.clear()

    def _record(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> None:
        self.count += 1
        try:
            rec = _describe_launch(fn, args, kwargs, grid)
        except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the launch's own arguments; never let
            # bookkeeping break a launch (the error is recorded in the launch record)
            rec = {"kernel": getattr(fn, "__name__", "?"), "error": repr(exc)}
        key = repr(
            (
                rec.get("kernel"),
                rec.get("signature"),
                rec.get("constexprs"),
                rec.get("options"),
                rec.get("divisible_by_16"),
            )
        )
        if key in self._records:
            old = self._records[key]
            old["launches"] += 1
            if self.case and self.case not in old.setdefault("cases", []):
                old["cases"].append(self.case)
        else:
            rec["launches"] = 1
            rec["cases"] = [self.case] if self.case else []
            self._records[key] = rec

    def summary(self) -> list[LaunchRecord]:
        return list(self._records.values())


_WATCHED = (
    ("time", "perf_counter"),
    ("time", "perf_counter_ns"),
    ("time", "time"),
    ("time", "monotonic"),
    ("torch", "allclose"),
    ("torch", "isclose"),
    ("torch", "equal"),
    ("torch", "isnan"),
    ("torch.testing", "assert_close"),
    ("torch", "Tensor.__eq__"),
    ("torch", "Tensor.__ne__"),
    ("torch.cuda", "synchronize"),
    ("torch.cuda", "Event"),
    ("torch.cuda", "Event.elapsed_time"),
    ("torch.cuda", "Event.record"),
    ("torch.cuda", "current_stream"),
    ("torch.cuda", "set_stream"),
    ("triton.testing", "do_bench"),
    ("triton.testing", "do_bench_cudagraph"),
    ("optimizer.harness.timing", "bench_cuda"),
    ("optimizer.harness.timing", "time_interleaved"),
    ("optimizer.harness.validate", "compare_outputs"),
)


def _resolve(module: str, attr: str) -> Any:
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):  # a module or name of this list that this Triton/torch build lacks
        return None


def _precision_flags() -> dict[str, Any]:
    import torch

    return {
        "cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "default_dtype": str(torch.get_default_dtype()),
    }


class GlobalSnapshot:
    """Identities of watched functions and precision flags; ``changes()`` lists what differs now."""

    def __init__(self) -> None:
        self._ids = {f"{m}.{a}": id(_resolve(m, a)) for m, a in _WATCHED}
        self._flags = _precision_flags()

    def changes(self, device: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for m, a in _WATCHED:
            key = f"{m}.{a}"
            if id(_resolve(m, a)) != self._ids[key]:
                out.append(("global_patch", f"{key} was replaced while the candidate ran"))
        flags = _precision_flags()
        for k, v in flags.items():
            if v != self._flags[k]:
                out.append(("precision_flags", f"{k} changed from {self._flags[k]!r} to {v!r}"))
        if device.startswith("cuda"):
            import torch

            if torch.cuda.current_stream() != torch.cuda.default_stream():
                out.append(
                    ("side_stream_runtime", "the current CUDA stream is not the default stream after the forward")
                )
        return out


def classify_exception(exc: BaseException) -> str:
    """compile_error | oom | kernel_error | runtime_error, for a failure raised by candidate code."""
    name, mod, text = type(exc).__name__, type(exc).__module__, str(exc)
    if (
        isinstance(exc, MemoryError)
        or "OutOfMemory" in name
        or "out of memory" in text
        or "can't allocate memory" in text
    ):
        return "oom"
    if "Compil" in name or mod.startswith("triton.compiler"):
        return "compile_error"
    if name == "InterpreterError" or mod.startswith("triton"):
        return "kernel_error"
    return "runtime_error"


def poison_allocator(device: str, nbytes: int = 64 * 1024 * 1024) -> None:
    """Fill freed caching-allocator blocks with NaN so a candidate cannot inherit a stale result.

    On the CPU this is a no-op: ``fill_uninitialized_memory`` already makes every torch.empty read as NaN.
    """
    import torch

    if device.startswith("cuda"):
        junk = torch.full((nbytes // 4,), float("nan"), dtype=torch.float32, device=device)
        del junk
