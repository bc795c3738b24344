"""Shared plumbing for the suite's check scripts: list operators, load them, run one case, compare outputs.

Used by ``_check.py`` (CPU, Triton interpreter), ``_gpu_check.py`` (CUDA) and ``_readme.py``. Problems load
through ``optimizer.harness.problem`` so the suite exercises the same loader the optimizer uses; the repository root
is put on ``sys.path`` so the scripts run from a bare checkout (``python benchmarks/suite/_check.py``).

Nothing here imports triton: the interpreter switch (``TRITON_INTERPRET=1``) must be set by the caller before
the first ``initial.py`` is imported.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUITE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SUITE_DIR.parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def _import_problem_module() -> Any:
    """``optimizer.harness.problem``, even where ``kb``'s package init cannot load (the GPU machine has no pydantic).

    ``optimizer.harness.problem`` needs only ``kb.errors``, which imports nothing; ``kb/__init__.py`` pulls in the
    models, the store and the settings. If that fails, register ``kb`` as a bare package so that
    ``kb.errors`` loads from its file without the package init.
    """
    import importlib
    import types

    try:
        return importlib.import_module("optimizer.harness.problem")
    except ImportError:
        for name in [m for m in sys.modules if m == "kb" or m.startswith(("kb.", "optimizer.harness.problem"))]:
            del sys.modules[name]
        bare = types.ModuleType("kb")
        bare.__path__ = [str(REPO_ROOT / "kb")]
        sys.modules["kb"] = bare
        return importlib.import_module("optimizer.harness.problem")


_problem = _import_problem_module()
Problem = _problem.Problem
Tolerance = _problem.Tolerance
case_label = _problem.case_label
load_candidate = _problem.load_candidate
load_problem = _problem.load_problem

#: The categories of issue 7, in the order the README lists them.
CATEGORIES: dict[str, str] = {
    "elementwise": "Elementwise and activations",
    "reduction": "Reductions, norms, softmax and log-softmax",
    "argmax_topk": "Argmax / top-k style ops",
    "scan": "Scans",
    "matmul": "Matmul variants",
    "fusion": "Fusions without convolution",
    "loss": "Losses",
}

#: H200 ceilings for roofline figures (vendor datasheet: 4.8 TB/s HBM3e, ~989 dense bf16 TFLOP/s).
H200_BYTES_PER_S = 4.8e12
H200_FLOPS_PER_S = 989e12


#: Problem sets the suite runner can drive: the operator suite, the real kernels of ``benchmarks/realistic`` and the
#: labelled planted-cause kernels of ``benchmarks/diagnosis`` (their ``fix.py`` is timed beside the best, never shown
#: to the session).
PROBLEM_ROOTS = {"suite": SUITE_DIR, "realistic": REPO_ROOT / "benchmarks" / "realistic",
                 "diagnosis": REPO_ROOT / "benchmarks" / "diagnosis"}


def list_ops(root: Path = SUITE_DIR) -> list[str]:
    """Every operator folder (one holding problem.py and initial.py) under ``root``, sorted by name."""
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith(("_", "."))
        and (p / "problem.py").is_file() and (p / "initial.py").is_file()
    )


#: The starting-point sets an operator folder can hold: ``initial.py`` (a good first translation, tunable at launch)
#: and ``naive.py`` (a naive first translation of the kind a code model writes on the first try).
INITIAL_SETS = ("initial", "naive")


def initial_path(op: str, initial: str = "initial", root: Path = SUITE_DIR) -> Path:
    """``<root>/<op>/<initial>.py``; a clear error for an unknown set name or a missing file."""
    if initial not in INITIAL_SETS:
        raise ValueError(f"unknown initial set {initial!r}: use one of {', '.join(INITIAL_SETS)}")
    path = root / op / f"{initial}.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: write it, or pick another set ({', '.join(INITIAL_SETS)})")
    return path


def load_op(op: str, initial: str = "initial") -> tuple[Problem, type]:
    """The problem and the ``ModelNew`` class of one operator's ``initial.py`` (or ``naive.py``: ``initial="naive"``)."""
    return load_problem(SUITE_DIR / op), load_candidate(initial_path(op, initial))


def roofline_seconds(problem: Problem, case: dict[str, Any]) -> float | None:
    """max(bytes / HBM bandwidth, flops / matrix rate) on an H200, or None if the problem declares neither."""
    b, f = problem.bytes_moved(case), problem.flops(case)
    if b is None and f is None:
        return None
    return max((b or 0.0) / H200_BYTES_PER_S, (f or 0.0) / H200_FLOPS_PER_S)


@dataclass
class Comparison:
    """Outcome of comparing a candidate's outputs with the reference's, every element checked."""

    ok: bool
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    n_bad: int = 0
    n_total: int = 0
    message: str = ""
    details: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "max_abs_err": _finite(self.max_abs_err),
            "max_rel_err": _finite(self.max_rel_err),
            "n_bad": self.n_bad,
            "n_total": self.n_total,
            "message": self.message,
        }


def _finite(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _flatten(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def compare_outputs(ref: Any, out: Any, tolerance: Any) -> Comparison:
    """Compare outputs element by element: ``|out - ref| <= atol + rtol * |ref|`` everywhere.

    ``tolerance`` maps an output dtype to a :class:`Tolerance` (``Problem.tolerance``). Shapes and dtypes must
    match exactly; integer and bool outputs must be equal; a NaN anywhere in the candidate's output fails.
    """
    import torch

    refs, outs = _flatten(ref), _flatten(out)
    if len(refs) != len(outs):
        return Comparison(False, message=f"reference returned {len(refs)} tensors, candidate {len(outs)}")
    result = Comparison(True)
    for i, (r, o) in enumerate(zip(refs, outs, strict=True)):
        if not isinstance(o, torch.Tensor):
            return Comparison(False, message=f"output {i}: candidate returned {type(o).__name__}, not a tensor")
        if tuple(r.shape) != tuple(o.shape):
            return Comparison(False, message=f"output {i}: shape {tuple(o.shape)} != reference {tuple(r.shape)}")
        if r.dtype != o.dtype:
            return Comparison(False, message=f"output {i}: dtype {o.dtype} != reference {r.dtype}")
        tol: Tolerance = tolerance(r.dtype)
        o_ = o.detach().to(r.device)
        result.n_total += r.numel()
        if not (r.is_floating_point() or r.is_complex()):
            bad = int((o_ != r).sum())
            if bad:
                result.details.append(f"output {i}: {bad} of {r.numel()} integer elements differ")
            result.n_bad += bad
            continue
        rf, of = r.detach().float(), o_.float()
        close = torch.isclose(of, rf, atol=tol.atol, rtol=tol.rtol, equal_nan=False)
        bad = int((~close).sum())
        n_nan = int(torch.isnan(of).sum())
        diff = (of - rf).abs()
        finite = torch.isfinite(diff)
        if bool(finite.any()):
            max_abs = float(diff[finite].max())
            rel = diff / rf.abs().clamp_min(tol.atol if tol.atol > 0 else 1e-30)
            max_rel = float(rel[finite].max())
            result.max_abs_err = max(result.max_abs_err, max_abs)
            result.max_rel_err = max(result.max_rel_err, max_rel)
        if bad:
            idx = int((~close).flatten().nonzero()[0])
            result.details.append(
                f"output {i}: {bad} of {r.numel()} elements outside atol={tol.atol} rtol={tol.rtol}"
                f" ({n_nan} NaN); first at flat index {idx}:"
                f" got {float(of.flatten()[idx])}, want {float(rf.flatten()[idx])}"
            )
        result.n_bad += bad
    result.ok = result.n_bad == 0
    result.message = "; ".join(result.details) if result.details else "all elements within tolerance"
    return result


def compare_problem(problem: Any, ref: Any, out: Any) -> Comparison:
    """The product judge's verdict (``optimizer.harness.validate.compare_outputs``: tolerances, ``INT_ATOL``,
    ``OUTPUT_DTYPES``), with this module's element counts beside it. One truth: a check here never passes what a
    session's validation would fail, or the other way round."""
    from optimizer.harness.validate import compare_outputs as judge

    verdict = judge(out, ref, problem)
    if verdict.passed:  # the element counts are only needed to describe a failure: no second pass over the outputs
        n_total = sum(int(getattr(r, "numel", lambda: 0)()) for r in _flatten(ref))
        return Comparison(True, max_abs_err=verdict.max_abs_err, max_rel_err=verdict.max_rel_err, n_bad=0,
                          n_total=n_total, message="all elements within tolerance")
    counted = _count_problem(problem, ref, out)
    counted.ok = False
    if not counted.details:  # the judge's own rule (NaN, infinities, type, device): its message says which
        counted.message = verdict.message
    return counted


def _count_problem(problem: Any, ref: Any, out: Any) -> Comparison:
    """``compare_outputs`` under the problem's tolerances, with integer outputs allowed to differ by its ``INT_ATOL``
    (default 0: exact): the per-element counts of a failure."""
    import torch

    int_atol = int(getattr(problem.module, "INT_ATOL", 0) or 0)
    refs, outs = _flatten(ref), _flatten(out)
    if int_atol <= 0 or len(refs) != len(outs):
        return compare_outputs(ref, out, problem.tolerance)
    merged = Comparison(True)
    for i, (r, o) in enumerate(zip(refs, outs, strict=True)):
        integer = isinstance(r, torch.Tensor) and isinstance(o, torch.Tensor) and not r.is_floating_point() \
            and r.shape == o.shape and r.dtype == o.dtype
        if integer:
            bad = int(((o.to(r.device).long() - r.long()).abs() > int_atol).sum())
            c = Comparison(bad == 0, n_bad=bad, n_total=r.numel(),
                           message=f"output {i}: {bad} of {r.numel()} integer elements differ by more than "
                                   f"INT_ATOL={int_atol}" if bad else "")
        else:
            c = compare_outputs(r, o, problem.tolerance)
        merged.n_bad += c.n_bad
        merged.n_total += c.n_total
        merged.max_abs_err = max(merged.max_abs_err, c.max_abs_err)
        merged.max_rel_err = max(merged.max_rel_err, c.max_rel_err)
        if c.message and not c.ok:
            merged.details.append(c.message)
    merged.ok = merged.n_bad == 0 and not merged.details
    merged.message = "; ".join(merged.details) or "all elements within tolerance"
    return merged


def inplace_views(problem: Any, result: Any, inputs: list[Any]) -> Any:
    """The result a problem is judged on: the return value plus its ``INPLACE_OUTPUTS`` inputs after the call."""
    inplace = list(getattr(problem.module, "INPLACE_OUTPUTS", []) or [])
    if not inplace:
        return result
    extra = tuple(inputs[i] for i in inplace)
    return (result, *extra) if result is not None else extra


def build_case(
    problem: Problem, new_cls: type, case: dict[str, Any], seed: int, device: str
) -> tuple[Any, Any, list[Any]]:
    """Construct Model and ModelNew (same seed, same init inputs) and draw the inputs, all on ``device``.

    Tensors are created directly on ``device`` (a ``torch.device`` context), so large cases never pass through
    host memory.
    """
    import torch

    with torch.device(device):
        model = problem.make_model(case, seed=seed, device=device)
        new = problem.instantiate(new_cls, case, seed=seed, device=device)
        inputs = problem.make_inputs(case, seed=seed + 1, device=device)
    return model, new, inputs


def check_case(
    problem: Problem, new_cls: type, case: dict[str, Any], seed: int = 0, device: str = "cpu"
) -> dict[str, Any]:
    """Run Model and ModelNew on one case and compare; returns a JSON-ready record."""
    import torch

    model, new, inputs = build_case(problem, new_cls, case, seed, device)
    with torch.no_grad():
        ref = model(*inputs)
        out = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    cmp = compare_outputs(ref, out, problem.tolerance)
    return {"case": case, "label": case_label(case), **cmp.as_dict()}
