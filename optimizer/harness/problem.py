"""Problems and candidates in the KernelBench format, plus our extensions (DESIGN "Problem format").

A problem is a Python file (or a folder holding ``problem.py``) defining ``class Model(nn.Module)``,
``get_inputs()`` and ``get_init_inputs()`` exactly as KernelBench does; any KernelBench problem loads
unmodified. Optional extensions, all module-level names in the problem file:

- ``CASES``: a list of dicts; when present ``get_inputs(**case)`` and ``get_init_inputs(**case)`` take them.
- ``SMOKE_CASES``: small cases the CPU interpreter backend runs (falls back to ``CASES``).
- ``TOLERANCES``: per-dtype tolerances, ``{"float32": 1e-4}`` or ``{"bfloat16": {"atol": .., "rtol": ..}}``.
- ``flops(**case)`` and ``bytes_moved(**case)``: work and traffic of one forward, for roofline figures.

Onboarding extensions (real kernels as they are; README "Onboarding a kernel"):

- ``INPLACE_OUTPUTS = [i, ...]``: indices into ``get_inputs()`` of tensors the reference forward mutates in
  place (its result). The candidate must mutate them the same way; they are compared like outputs, and every
  run and timing repetition starts from fresh copies.
- ``INT_ATOL = n``: absolute tolerance for integer outputs (default 0: exact).
- ``ALLOWED_TORCH_OPS = ["sum", ...]``: torch ops a launcher may call after its kernel although the reference
  uses them too, beyond the validator's default epilogue allow-list (``optimizer.harness.validate.EPILOGUE_OPS``).
- ``OUTPUT_DTYPES = {i: "float32"}``: output ``i`` may have this dtype instead of the reference's; it is
  compared in float64 under the looser of the two dtypes' tolerances.
- ``CPU_VALIDATION = "compile_only"``: the interpreter cannot run this kernel (libdevice calls, block
  pointers under Triton 3.9); on the CPU it is compiled for sm_90 only, and the result says so.

A candidate is a file defining ``class ModelNew(nn.Module)`` with the same constructor and forward signature.
Seeding follows KernelBench: the same seed is set before constructing ``Model`` and ``ModelNew`` so that
parameters drawn at construction agree, and before drawing inputs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kb.errors import InvalidArgument, NotFound, log_error
from optimizer.labels import case_label  # re-exported: the harness names cases as every layer does

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_TOLERANCES",
    "Problem",
    "Tolerance",
    "aten_name",
    "case_label",
    "load_candidate",
    "load_module",
    "load_problem",
    "parse_tolerances",
]


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


#: Default tolerance per dtype name: fp32 ~1e-4 relative, half types ~1e-2 (issue 5, KernelBench fp32 1e-4).
DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(1e-7, 1e-7),
    "float32": Tolerance(1e-4, 1e-4),
    "bfloat16": Tolerance(1e-2, 1e-2),
    "float16": Tolerance(1e-2, 1e-2),
    "float8_e4m3fn": Tolerance(1e-1, 1e-1),
    "float8_e5m2": Tolerance(1e-1, 1e-1),
}
_EXACT = Tolerance(0.0, 0.0)  # integer and bool outputs compare exactly (unless INT_ATOL says otherwise)
_HALF = ("float16", "bfloat16", "float8")
CPU_VALIDATION_MODES = ("execute", "compile_only")


_module_counter = 0


def load_module(path: str | Path, prefix: str = "ladder_user") -> ModuleType:
    """Import a Python file under a fresh module name (so two files with the same name never collide)."""
    global _module_counter
    p = Path(path).resolve()
    if not p.is_file():
        raise NotFound(f"no such file: {p}; pass a .py file or a folder that holds problem.py")
    _module_counter += 1
    digest = hashlib.sha1(str(p).encode()).hexdigest()[:8]
    name = f"{prefix}_{p.stem}_{digest}_{_module_counter}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise InvalidArgument(f"cannot import {p}: not a Python source file", field="path")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses / triton.jit look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception:  # cleanup boundary: the module's own import raised; forget it, then re-raise unchanged
        sys.modules.pop(name, None)
        raise
    return module


def _resolve(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "problem.py"
    if not p.is_file():
        raise NotFound(f"problem not found at {path}: pass a .py file or a folder that holds problem.py")
    return p.resolve()


def _accepts_kwargs(fn: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Keep only the case keys ``fn`` accepts (all of them if it takes ``**kwargs``)."""
    if not case:
        return {}
    params = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(case)
    return {k: v for k, v in case.items() if k in params}


def parse_tolerances(raw: Any) -> dict[str, Tolerance]:
    out = dict(DEFAULT_TOLERANCES)
    if raw is None:
        return out
    if not isinstance(raw, dict):
        raise InvalidArgument(
            "TOLERANCES must be a dict mapping dtype names to a float or {atol, rtol}", field="TOLERANCES"
        )
    for key, val in raw.items():
        name = str(key).removeprefix("torch.")
        if isinstance(val, (int, float)):
            out[name] = Tolerance(float(val), float(val))
        elif isinstance(val, dict) and {"atol", "rtol"} <= set(val):
            out[name] = Tolerance(float(val["atol"]), float(val["rtol"]))
        elif isinstance(val, (tuple, list)) and len(val) == 2:
            out[name] = Tolerance(float(val[0]), float(val[1]))
        else:
            raise InvalidArgument(
                f"tolerance for {name!r} must be a float, (atol, rtol) or {{atol, rtol}}", field="TOLERANCES"
            )
    return out


def _dtype_name(x: Any) -> str:
    return str(getattr(x, "dtype", x)).removeprefix("torch.")


def _parse_inplace(raw: Any, p: Path) -> tuple[int, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)) or not all(
        isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in raw
    ):
        raise InvalidArgument(f"{p}: INPLACE_OUTPUTS must be a list of input indices, e.g. [0] for the first tensor "
                              "get_inputs() returns", field="INPLACE_OUTPUTS")
    return tuple(dict.fromkeys(raw))


def _parse_int_atol(raw: Any, p: Path) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise InvalidArgument(f"{p}: INT_ATOL must be a non-negative integer (the allowed |candidate - reference| "
                              f"for integer outputs), got {raw!r}", field="INT_ATOL")
    return raw


def _parse_allowed_ops(raw: Any, p: Path) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, (list, tuple, set, frozenset)) or not all(isinstance(o, str) and o for o in raw):
        raise InvalidArgument(f"{p}: ALLOWED_TORCH_OPS must be a list of op names, e.g. [\"sum\", \"logsumexp\"]",
                              field="ALLOWED_TORCH_OPS")
    return frozenset(aten_name(o) for o in raw)


def aten_name(op: str) -> str:
    """``sum`` / ``torch.sum`` / ``aten.sum`` / ``aten.sum.dim_IntList`` -> ``aten.sum`` (the recorded name)."""
    name = op.strip().removeprefix("torch.").removeprefix("aten.").removeprefix("Tensor.")
    return "aten." + name.split(".", 1)[0]


def _parse_output_dtypes(raw: Any, p: Path) -> dict[int, str]:
    import torch

    if raw is None:
        return {}
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, (list, tuple)) else None
    if items is None:
        raise InvalidArgument(f"{p}: OUTPUT_DTYPES must map output indices to dtype names, e.g. {{0: \"float32\"}}",
                              field="OUTPUT_DTYPES")
    out: dict[int, str] = {}
    for i, d in items:
        if d is None:
            continue
        name = _dtype_name(d)
        if not isinstance(i, int) or not isinstance(getattr(torch, name, None), torch.dtype):
            raise InvalidArgument(f"{p}: OUTPUT_DTYPES entry {i!r}: {d!r} is not a torch dtype name (e.g. \"float32\")",
                                  field="OUTPUT_DTYPES")
        out[i] = name
    return out


def _parse_cpu_validation(raw: Any, p: Path) -> str:
    mode = raw or "execute"
    if mode not in CPU_VALIDATION_MODES:
        raise InvalidArgument(f"{p}: CPU_VALIDATION must be one of {', '.join(CPU_VALIDATION_MODES)}, got {raw!r}",
                              field="CPU_VALIDATION")
    return str(mode)


@dataclass
class Problem:
    """A loaded problem. ``cases`` is ``CASES`` or ``[{}]`` for a plain KernelBench file."""

    name: str
    path: Path
    module: ModuleType = field(repr=False)
    cases: list[dict[str, Any]]
    smoke_cases: list[dict[str, Any]]
    tolerances: dict[str, Tolerance]
    inplace_outputs: tuple[int, ...] = ()
    int_atol: int = 0
    allowed_torch_ops: frozenset[str] = frozenset()
    output_dtypes: dict[int, str] = field(default_factory=dict)
    cpu_validation: str = "execute"
    _dtypes: set[str] | None = field(default=None, repr=False, compare=False)  # reference_dtypes() over all cases

    # -- construction -------------------------------------------------------------------------------------
    def init_inputs(self, case: dict[str, Any]) -> list[Any]:
        fn = self.module.get_init_inputs
        return list(fn(**_accepts_kwargs(fn, case)))

    def make_model(self, case: dict[str, Any], seed: int = 0, device: str = "cpu") -> Any:
        """Construct the reference ``Model`` for ``case`` with parameters drawn under ``seed``."""
        return self.instantiate(self.module.Model, case, seed=seed, device=device)

    def instantiate(self, cls: type, case: dict[str, Any], seed: int = 0, device: str = "cpu") -> Any:
        """Construct ``cls`` (Model or a candidate's ModelNew) the KernelBench way: same seed, same init inputs."""
        import torch

        torch.manual_seed(seed)
        with torch.device(device):  # parameters are built where they run (a GB-sized weight never visits the host)
            model = cls(*self.init_inputs(case))
        if hasattr(model, "to"):
            model = model.to(device)
        if hasattr(model, "eval"):
            model.eval()
        return model

    def make_inputs(self, case: dict[str, Any], seed: int, device: str = "cpu") -> list[Any]:
        """Fresh forward inputs for ``case`` drawn under ``seed``, moved to ``device``."""
        import torch

        fn = self.module.get_inputs
        # Draw on the target device: get_inputs names no device (KernelBench style), and building GB-sized
        # inputs on the CPU and copying them over costs seconds per case on a GPU.
        with torch.device(device):
            torch.manual_seed(seed)
            inputs = list(fn(**_accepts_kwargs(fn, case)))
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    # -- roofline extensions ------------------------------------------------------------------------------
    def flops(self, case: dict[str, Any]) -> float | None:
        fn = getattr(self.module, "flops", None)
        return float(fn(**_accepts_kwargs(fn, case))) if callable(fn) else None

    def bytes_moved(self, case: dict[str, Any]) -> float | None:
        fn = getattr(self.module, "bytes_moved", None)
        return float(fn(**_accepts_kwargs(fn, case))) if callable(fn) else None

    def size(self, case: dict[str, Any]) -> float:
        """A case's size for ordering cases: ``bytes_moved``, else ``flops``, else 0 (also when a helper raises on this
        case's keys: a broken size helper only loses the ordering)."""
        try:
            return self.bytes_moved(case) or self.flops(case) or 0.0
        except Exception as exc:  # noqa: BLE001 - user-code boundary: the problem's size helpers
            log_error(log, exc, f"{self.name}: the size of case {case_label(case)}", level=logging.DEBUG)
            return 0.0

    # -- helpers ------------------------------------------------------------------------------------------
    def tolerance(self, dtype: Any) -> Tolerance:
        """Tolerance for an output dtype (a torch.dtype or its name); integers within ``INT_ATOL``, bools exactly."""
        name = _dtype_name(dtype)
        if name in self.tolerances:
            return self.tolerances[name]
        if name.startswith(("int", "uint")):
            return Tolerance(float(self.int_atol), 0.0)
        return _EXACT if name == "bool" else self.tolerances["float32"]

    def reference_dtypes(self, cases: list[dict[str, Any]] | None = None) -> set[str]:
        """Floating dtypes the reference touches (inputs, parameters, outputs) over ``cases`` (default: every
        smoke case and every case).

        The forward runs on the ``meta`` device (shapes and dtypes, no memory, no compute), so real-size cases
        cost nothing; a smoke case whose reference cannot run on meta (data-dependent shapes) runs on the CPU.
        A case that fails both ways contributes its inputs and parameters only.
        """
        import torch

        if cases is None:
            if self._dtypes is None:
                self._dtypes = self.reference_dtypes(
                    list({case_label(c): c for c in [*self.smoke_cases, *self.cases]}.values())
                )
            return set(self._dtypes)
        smoke = {case_label(c) for c in self.smoke_cases}
        seen: set[str] = set()
        for case in cases:
            for device in ("meta", "cpu") if case_label(case) in smoke else ("meta",):
                try:
                    model = self.make_model(case, seed=0, device=device)
                    inputs = self.make_inputs(case, 0, device=device)
                except Exception as exc:  # noqa: BLE001 - user-code boundary: the problem's own fault shows up in
                    # validation
                    log_error(log, exc, f"{self.name}: building case {case_label(case)}", level=logging.DEBUG)
                    continue
                tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
                if isinstance(model, torch.nn.Module):
                    tensors += list(model.parameters()) + list(model.buffers())
                try:
                    with torch.no_grad():
                        out = model(*inputs)
                except Exception as exc:  # noqa: BLE001 - user-code boundary: the reference's forward
                    log_error(log, exc, f"{self.name}: the reference on case {case_label(case)}", level=logging.DEBUG)
                    out = None
                tensors += [t for t in _flat(out) if isinstance(t, torch.Tensor)]
                seen |= {_dtype_name(t) for t in tensors if t.is_floating_point()}
                if out is not None:
                    break
        return seen

    def fp32_reference(self, cases: list[dict[str, Any]] | None = None) -> bool:
        """True when every floating tensor the reference touches is fp32/fp64 (then a half cast is a downgrade).

        Judged from outputs as well as inputs: a dequantizer with integer inputs and an fp16 output is a
        half-precision problem, not an fp32 one.
        """
        return not any(d.startswith(_HALF) for d in self.reference_dtypes(cases))

    def cases_for(self, backend: str) -> list[dict[str, Any]]:
        """The cases a backend runs: the small smoke cases on the CPU interpreter, the real ones elsewhere. (A str:
        the ladder's context does not carry a ``Backend`` yet.)"""
        return self.smoke_cases if backend == "interpreter" else self.cases

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    @property
    def source(self) -> str:
        return self.path.read_text()


def load_problem(path: str | Path) -> Problem:
    """Load a KernelBench-format problem (a .py file, or a folder with problem.py) and our extensions."""
    p = _resolve(path)
    module = load_module(p, prefix="ladder_problem")
    for required in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, required):
            raise InvalidArgument(
                f"{p} defines no {required}; a problem needs class Model, get_inputs() and get_init_inputs()",
                field="problem",
            )
    cases = getattr(module, "CASES", None) or [{}]
    if not isinstance(cases, (list, tuple)) or not all(isinstance(c, dict) for c in cases):
        raise InvalidArgument(f"{p}: CASES must be a list of dicts", field="CASES")
    smoke = getattr(module, "SMOKE_CASES", None) or cases
    if not isinstance(smoke, (list, tuple)) or not all(isinstance(c, dict) for c in smoke):
        raise InvalidArgument(f"{p}: SMOKE_CASES must be a list of dicts", field="SMOKE_CASES")
    name = getattr(module, "NAME", None) or (p.parent.name if p.name == "problem.py" else p.stem)
    return Problem(
        name=str(name),
        path=p,
        module=module,
        cases=[dict(c) for c in cases],
        smoke_cases=[dict(c) for c in smoke],
        tolerances=parse_tolerances(getattr(module, "TOLERANCES", None)),
        inplace_outputs=_parse_inplace(getattr(module, "INPLACE_OUTPUTS", None), p),
        int_atol=_parse_int_atol(getattr(module, "INT_ATOL", None), p),
        allowed_torch_ops=_parse_allowed_ops(getattr(module, "ALLOWED_TORCH_OPS", None), p),
        output_dtypes=_parse_output_dtypes(getattr(module, "OUTPUT_DTYPES", None), p),
        cpu_validation=_parse_cpu_validation(getattr(module, "CPU_VALIDATION", None), p),
    )


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def load_candidate(path: str | Path) -> type:
    """Import a candidate file and return its ``ModelNew`` class."""
    module = load_module(path, prefix="ladder_candidate")
    cls = getattr(module, "ModelNew", None)
    if cls is None or not isinstance(cls, type):
        raise InvalidArgument(
            f"{path} defines no class ModelNew; a candidate must define class ModelNew(nn.Module)", field="candidate"
        )
    return cls
