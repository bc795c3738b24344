"""Validation protocol (runs inside the sandboxed worker): correctness on every element plus runtime hack probes.

For each case the reference ``Model`` and the candidate ``ModelNew`` are built under the same seed; for each
validation seed fresh inputs are drawn, the reference output computed, memory poisoned (uninitialised
allocations read as NaN, the previous candidate output overwritten with NaN), and the candidate run under
recorders for ATen ops and Triton launches. Every element is compared with the per-dtype tolerance
(``|a-b| <= atol + rtol*|b|``); NaN in a candidate output never passes. A final probe changes the inputs in
place (same addresses, new values) to catch results cached across calls.

Onboarding rules (``optimizer.harness.problem``): tensors named in ``INPLACE_OUTPUTS`` are the reference's result,
compared like outputs after both forwards ran on their own fresh copies; integer outputs compare within
``INT_ATOL``; an output may take a dtype ``OUTPUT_DTYPES`` declares. The reference-op rule rejects a candidate
that dispatches the reference's compute ops, except the cheap epilogue ops in ``EPILOGUE_OPS`` applied to a
small tensor (at most ``1/EPILOGUE_MAX_FRACTION`` of the reference's largest input or parameter) and any op the
problem declares in ``ALLOWED_TORCH_OPS``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from kb.models import CaseValidation, Validation
from optimizer.harness.hacks import HackFinding, by_code
from optimizer.harness.probes import GlobalSnapshot, LaunchRecorder, OpRecorder, classify_exception, poison_allocator
from optimizer.harness.problem import Problem, case_label

if TYPE_CHECKING:
    from optimizer.harness.contracts import LaunchRecord

__all__ = ["EPILOGUE_MAX_FRACTION", "EPILOGUE_OPS", "compare_outputs", "CompareResult", "judge_case", "observe_case",
           "reference_case", "reference_op_findings", "summarize", "validate_candidate", "ValidationRun"]

_CACHE_PROBE_SEED_OFFSET = 10_007

#: Cheap torch ops a launcher may run after its kernel even when the reference uses them too (a final
#: ``.sum()`` or ``/ n`` over per-row losses, a ``logsumexp`` over per-block partial maxima), provided the
#: tensor they touch is small: at most 1/EPILOGUE_MAX_FRACTION of the reference's largest input or parameter,
#: so the kernel has done the heavy work. Allocation, view and copy ops never count (``probes.NON_COMPUTE_OPS``).
#: A problem extends this with ``ALLOWED_TORCH_OPS`` (any size).
EPILOGUE_OPS: frozenset[str] = frozenset(
    "aten." + n
    for n in (
        "sum mean logsumexp amax amin max min add sub mul div neg rsub reciprocal sqrt rsqrt exp log abs "
        "clamp clamp_min clamp_max where cat stack pow square"
    ).split()
)
EPILOGUE_MAX_FRACTION = 16


@dataclass
class CompareResult:
    passed: bool
    reason: str = (
        ""  # wrong_structure | wrong_type | wrong_shape | wrong_dtype | wrong_device | nan | inf_mismatch | mismatch
    )
    message: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flatten(item)]
    return [x]


def compare_outputs(out: Any, ref: Any, problem: Problem) -> CompareResult:
    """Compare every element of ``out`` with ``ref`` under the problem's per-dtype tolerance."""
    import torch

    outs, refs = _flatten(out), _flatten(ref)
    if len(outs) != len(refs):
        return CompareResult(False, "wrong_structure", f"candidate returned {len(outs)} outputs, reference {len(refs)}")
    worst_abs = worst_rel = 0.0
    for i, (o, r) in enumerate(zip(outs, refs, strict=True)):
        tag = f"output {i}" if len(outs) > 1 else "output"
        if not isinstance(r, torch.Tensor):
            if o != r:
                return CompareResult(False, "mismatch", f"{tag}: {o!r} != reference {r!r}")
            continue
        if type(o) is not torch.Tensor and not isinstance(o, torch.nn.Parameter):
            return CompareResult(False, "wrong_type", f"{tag} is {type(o).__name__}, expected a plain torch.Tensor")
        if o.shape != r.shape:
            return CompareResult(False, "wrong_shape", f"{tag} shape {tuple(o.shape)} != reference {tuple(r.shape)}")
        declared = problem.output_dtypes.get(i)
        if o.dtype != r.dtype and str(o.dtype).removeprefix("torch.") != declared:
            return CompareResult(
                False,
                "wrong_dtype",
                f"{tag} dtype {o.dtype} != reference {r.dtype} (silent precision "
                f"change; if this dtype is by design, declare OUTPUT_DTYPES = {{{i}: "
                f'"{str(o.dtype).removeprefix("torch.")}"}} in the problem)',
            )
        if o.device.type != r.device.type:
            return CompareResult(False, "wrong_device", f"{tag} on {o.device}, reference on {r.device}")
        tol = _looser(problem.tolerance(r.dtype), problem.tolerance(o.dtype))
        if not (r.is_floating_point() or r.is_complex()) and not o.is_floating_point():
            if r.dtype == torch.bool or o.dtype == torch.bool:
                bad = int((o != r).sum())
            else:
                bad = int(((o.to(torch.int64) - r.to(torch.int64)).abs() > int(tol.atol)).sum())
            if bad:
                return CompareResult(False, "mismatch", f"{tag}: {bad}/{r.numel()} elements differ by more than "
                                     f"{int(tol.atol)} (integer dtype {r.dtype}; a problem whose integer results may "
                                     "differ by rounding declares INT_ATOL = n)")
            continue
        # compare in float64 on the tensors' own device (a GB-sized output copied to the host took minutes)
        o64, r64 = o.detach().to(torch.float64), r.detach().to(torch.float64)
        n_nan = int(torch.isnan(o64).sum())
        if n_nan:
            return CompareResult(False, "nan", f"{tag}: {n_nan}/{o.numel()} elements are NaN (NaN never passes)")
        ref_inf, out_inf = torch.isinf(r64), torch.isinf(o64)
        if not torch.equal(ref_inf, out_inf) or not torch.equal(o64[out_inf], r64[ref_inf]):
            return CompareResult(False, "inf_mismatch", f"{tag}: infinities differ from the reference")
        finite = ~ref_inf & ~torch.isnan(r64)
        diff = (o64 - r64).abs()[finite]
        if diff.numel():
            rel = diff / r64.abs()[finite].clamp_min(1e-30)
            worst_abs = max(worst_abs, float(diff.max()))
            worst_rel = max(worst_rel, float(rel.max()))
            allowed = tol.atol + tol.rtol * r64.abs()[finite]
            n_bad = int((diff > allowed).sum())
            if n_bad:
                return CompareResult(
                    False, "mismatch",
                    f"{tag}: {n_bad}/{diff.numel()} elements outside atol={tol.atol:g} rtol={tol.rtol:g} "
                    f"(max abs err {float(diff.max()):.3g})", worst_abs, worst_rel,
                )
    return CompareResult(True, "", "", worst_abs, worst_rel)


def _looser(a: Any, b: Any) -> Any:
    return a if (a.atol, a.rtol) >= (b.atol, b.rtol) else b


def compare_inplace(inputs: list[Any], ref_inputs: list[Any], problem: Problem) -> CompareResult:
    """Compare the tensors named in ``INPLACE_OUTPUTS`` after the candidate and the reference mutated them."""
    worst_abs = worst_rel = 0.0
    for i in problem.inplace_outputs:
        if i >= len(inputs):
            return CompareResult(False, "wrong_structure", f"INPLACE_OUTPUTS names input {i} but get_inputs() returns "
                                 f"{len(inputs)} values; fix the index in the problem")
        res = compare_outputs(inputs[i], ref_inputs[i], problem)
        if not res.passed:
            return CompareResult(
                False, res.reason, f"in-place input {i}: {res.message}", res.max_abs_err, res.max_rel_err
            )
        worst_abs, worst_rel = max(worst_abs, res.max_abs_err), max(worst_rel, res.max_rel_err)
    return CompareResult(True, "", "", worst_abs, worst_rel)


@dataclass
class ValidationRun:
    """What the worker reports: the schema ``Validation`` plus the raw findings and launch records."""

    validation: Validation
    findings: list[HackFinding] = field(default_factory=list)
    launches: list[LaunchRecord] = field(default_factory=list)
    torch_compute_ops: list[str] = field(default_factory=list)


def _clone_inputs(inputs: list[Any]) -> list[Any]:
    import torch

    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elif device.startswith("npu"):
        cast(Any, torch).npu.synchronize()  # registered by torch_npu; torch's stubs do not declare it


def _finding(code: str, message: str) -> HackFinding:
    return HackFinding(code, by_code(code).severity, message)


def _storages(x: Any) -> set[int]:
    import torch

    return {t.untyped_storage().data_ptr() for t in _flatten(x) if isinstance(t, torch.Tensor) and t.numel()}


def _poison_outputs(x: Any) -> None:
    import torch

    for t in _flatten(x):
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
            t.data.fill_(float("nan"))


@contextlib.contextmanager
def deterministic() -> Iterator[None]:
    """Deterministic algorithms, and ``torch.empty`` reading as NaN, for the reference and the candidate alike."""
    import torch

    torch.use_deterministic_algorithms(True, warn_only=True)
    # torch.empty reads as NaN (a module property torch's stubs do not declare)
    cast(Any, torch.utils.deterministic).fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)
        cast(Any, torch.utils.deterministic).fill_uninitialized_memory = False


def validate_candidate(
    problem: Problem,
    cand_cls: type,
    cases: list[dict[str, Any]],
    seeds: list[int],
    *,
    device: str,
    snapshot: GlobalSnapshot,
    launches: LaunchRecorder,
    stop_on_failure: bool = False,
) -> ValidationRun:
    """The whole protocol in ONE process (tests and tools only: the candidate could reach the judge here).

    The sandboxed evaluation runs the same three parts in three processes (``optimizer.harness.judge``):
    ``reference_case`` where only the problem is imported, ``observe_case`` where the candidate runs, and
    ``judge_case`` in a process that never imported the candidate."""
    results: list[tuple[CaseValidation, list[HackFinding]]] = []
    compute_ops: set[str] = set()
    with deterministic():
        for case in cases:
            refs, meta = reference_case(problem, case, seeds, device)
            outs, obs = observe_case(problem, cand_cls, case, seeds, device, snapshot, launches)
            cv, found = judge_case(problem, case, seeds, refs, meta, outs, obs)
            results.append((cv, found))
            if cv.passed:
                compute_ops |= set(obs.get("cand_ops", []))
            if not cv.passed and stop_on_failure:
                break
    return summarize(results, launches.summary(), sorted(compute_ops))


def summarize(results: list[tuple[CaseValidation, list[HackFinding]]], launches: list[LaunchRecord],
              compute_ops: list[str]) -> ValidationRun:
    """The schema ``Validation`` over judged cases: passed when every case passed and no reject finding fired."""
    findings = [f for _, fs in results for f in fs]
    case_results = [cv for cv, _ in results]
    first_failure = next((f"[{c.case}] {c.message}" for c in case_results if not c.passed), "")
    unique = list({(f.code, f.message): f for f in findings}.values())
    rejected = [f for f in unique if f.severity == "reject"]
    if rejected and not first_failure:
        first_failure = f"hack check {rejected[0].render()}"
    validation = Validation(
        passed=bool(case_results) and all(c.passed for c in case_results) and not rejected,
        cases=case_results,
        hack_flags=list(dict.fromkeys(f.code for f in unique)),
        failure_reason=first_failure,
    )
    return ValidationRun(validation, unique, launches, compute_ops)


# ---------------------------------------------------------------------------------------------- reference side
def _probe_inputs(problem: Problem, case: dict[str, Any], seeds: list[int], device: str,
                  inputs: list[Any]) -> tuple[list[Any], bool]:
    """The cache probe's inputs: fresh values (seed ``max(seeds) + offset``) written over ``inputs`` in place where
    shapes agree (floating tensors, and declared in-place outputs); whether anything changed."""
    import torch

    fresh = problem.make_inputs(case, max(seeds) + _CACHE_PROBE_SEED_OFFSET, device=device)
    changed = False
    for i, (x, y) in enumerate(zip(inputs, fresh, strict=False)):
        restore = i in problem.inplace_outputs  # the candidate's last result must not be the next call's input
        if (
            isinstance(x, torch.Tensor)
            and isinstance(y, torch.Tensor)
            and x.shape == y.shape
            and (x.is_floating_point() or restore)
        ):
            x.copy_(y)
            changed = True
    return inputs, changed


def _inplace(problem: Problem, inputs: list[Any]) -> dict[int, Any]:
    """The declared in-place outputs among ``inputs``, copied (the cache probe writes over the inputs later)."""
    return {i: x.detach().clone() if hasattr(x, "detach") else x
            for i, x in enumerate(inputs) if i in problem.inplace_outputs}


def reference_case(problem: Problem, case: dict[str, Any], seeds: list[int],
                   device: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reference's side of one case (a process that imports the problem, never a candidate): per seed the
    outputs and the in-place inputs after the forward, the cache probe's outputs, and what the rules need (ops
    dispatched, the largest tensor, whether half types are touched). ``meta["error"]`` names a broken problem."""
    import torch

    meta: dict[str, Any] = {"case": case, "label": case_label(case), "error": ""}
    refs: dict[str, Any] = {"outs": [], "inputs_after": [], "probe": None}
    try:
        ref_model = problem.make_model(case, seed=0, device=device)
    except Exception as exc:  # noqa: BLE001 - user-code boundary: a broken problem, not a broken candidate (recorded)
        meta["error"] = f"reference construction failed: {exc!r}"
        return refs, meta
    ref_ops = OpRecorder()
    inputs: list[Any] = []
    ref_out: Any = None
    for seed in seeds:
        inputs = problem.make_inputs(case, seed, device=device)
        ref_inputs = _clone_inputs(inputs)  # the reference mutates its own copy (INPLACE_OUTPUTS)
        with torch.no_grad(), ref_ops:
            ref_out = ref_model(*ref_inputs)
        _sync(device)
        if any(
            torch.isnan(t).any() for t in _flatten(ref_out) if isinstance(t, torch.Tensor) and t.is_floating_point()
        ):
            meta["error"] = "reference output has NaN: the problem is ill-posed for this case"
            return refs, meta
        refs["outs"].append(_flatten(ref_out))
        refs["inputs_after"].append(_inplace(problem, ref_inputs))
    meta.update(largest=_largest_reference_tensor(ref_model, inputs), half=_touches_half(ref_model, inputs, ref_out),
                ref_ops=sorted(ref_ops.compute_ops()), ref_downcasts=sorted(ref_ops.downcasts()))
    probe, changed = _probe_inputs(problem, case, seeds, device, inputs)
    if changed:
        with torch.no_grad():
            ref_inputs = _clone_inputs(probe)
            out = ref_model(*ref_inputs)
        _sync(device)
        refs["probe"] = {"out": _flatten(out), "inputs_after": _inplace(problem, ref_inputs)}
    return refs, meta


# ---------------------------------------------------------------------------------------------- candidate side
def _portable(out: Any) -> tuple[list[Any], list[str]]:
    """A candidate's output as plain values a judge can load (``torch.load(weights_only=True)``) plus each one's type
    name: tensor subclasses become plain tensors (their type is recorded), other objects a ``__object__`` marker."""
    import torch

    values: list[Any] = []
    types: list[str] = []
    for t in _flatten(out):
        types.append(type(t).__name__)
        if isinstance(t, torch.Tensor):  # a copy: the next call poisons this output, the probe rewrites inputs
            values.append(t.detach().as_subclass(torch.Tensor).clone())
        elif t is None or isinstance(t, (bool, int, float, str, complex)):
            values.append(t)
        else:
            values.append(f"__object__:{type(t).__name__}:{t!r}"[:300])
    return values, types


def observe_case(problem: Problem, cand_cls: type, case: dict[str, Any], seeds: list[int], device: str,
                 snapshot: GlobalSnapshot, launches: LaunchRecorder) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate's side of one case (the process that imported it): its outputs per seed and on the cache probe,
    and what only this process can observe (launch counts, ATen ops, inputs changed, storages shared, globals
    replaced). Nothing is decided here: ``judge_case`` does that in another process. Observations made in the
    candidate's process can be forged by a hostile candidate; its outputs are judged against references it never
    saw."""
    import torch

    launches.case = case_label(case)  # each launch record lists the cases that made it (L3 diagnoses the slow one)
    outs: dict[str, Any] = {"outs": [], "types": [], "inputs_after": [], "probe": None}
    obs: dict[str, Any] = {
        "construct_error": "",
        "seed_error": "",
        "launches": [],
        "mutated": [],
        "reuse": [],
        "snapshot": [],
        "cand_ops": [],
        "cand_max_numel": {},
        "cand_downcasts": [],
        "probe_error": "",
    }
    try:
        cand = problem.instantiate(cand_cls, case, seed=0, device=device)
    except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's constructor (recorded)
        obs["construct_error"] = f"{classify_exception(exc)}: candidate construction failed: {exc!r}"[:2000]
        return outs, obs
    cand_ops = OpRecorder()
    prev_out: Any = None
    held: list[Any] = []  # keep outputs alive so their storage cannot be recycled into the next call
    inputs: list[Any] = []
    for seed in seeds:
        inputs = problem.make_inputs(case, seed, device=device)
        before = _clone_inputs(inputs)
        if prev_out is not None:
            _poison_outputs(prev_out)
        poison_allocator(device)
        n_before = launches.count
        try:
            with torch.no_grad(), cand_ops:
                out = cand(*inputs)
            _sync(device)
        except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's forward (recorded)
            obs["seed_error"] = f"{classify_exception(exc)}: {type(exc).__name__}: {exc}"[:2000]
            return outs, obs
        obs["launches"].append(launches.count - n_before)
        obs["mutated"].append([i for i, (x, x0) in enumerate(zip(inputs, before, strict=True))
                               if i not in problem.inplace_outputs and isinstance(x, torch.Tensor)
                               and not torch.equal(x, x0) and not (x.isnan().any() and x0.isnan().any())])
        obs["reuse"].append(prev_out is not None and bool(_storages(out) & _storages(prev_out)))
        obs["snapshot"] += [list(c) for c in snapshot.changes(device)]
        values, types = _portable(out)
        outs["outs"].append(values)
        outs["types"].append(types)
        outs["inputs_after"].append(_inplace(problem, inputs))
        held.append((inputs, out))  # inputs too: fresh addresses per seed, so address-keyed caches miss here
        prev_out = out
    obs.update(cand_ops=sorted(cand_ops.compute_ops()), cand_max_numel=dict(cand_ops.max_numel),
               cand_downcasts=sorted(cand_ops.downcasts()))
    probe, changed = _probe_inputs(problem, case, seeds, device, inputs)
    if changed:
        try:
            with torch.no_grad():
                out = cand(*probe)
            _sync(device)
            outs["probe"] = {"out": _portable(out)[0], "inputs_after": _inplace(problem, probe)}
        except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's forward (recorded)
            obs["probe_error"] = repr(exc)[:500]
    return outs, obs


# ---------------------------------------------------------------------------------------------- judge side
def _type_check(values: list[Any], types: list[str]) -> CompareResult | None:
    import torch

    for i, (v, name) in enumerate(zip(values, types, strict=False)):
        tag = f"output {i}" if len(values) > 1 else "output"
        if isinstance(v, torch.Tensor) and name not in ("Tensor", "Parameter"):
            return CompareResult(False, "wrong_type", f"{tag} is {name}, expected a plain torch.Tensor")
    return None


def _compare(out: list[Any], ref: list[Any], after: dict[int, Any], ref_after: dict[int, Any], problem: Problem,
             types: list[str] | None = None) -> CompareResult:
    res = (_type_check(out, types) if types else None) or compare_outputs(out, ref, problem)
    if res.passed and problem.inplace_outputs:
        res = compare_inplace(_as_list(after), _as_list(ref_after), problem)
    return res


def _as_list(d: dict[int, Any]) -> list[Any]:
    """In-place inputs keyed by index as a list indexable by that index (``compare_inplace`` reads ``[i]``)."""
    n = max(d, default=-1) + 1
    return [d.get(i) for i in range(n)]


def judge_case(problem: Problem, case: dict[str, Any], seeds: list[int], refs: dict[str, Any], meta: dict[str, Any],
               outs: dict[str, Any], obs: dict[str, Any]) -> tuple[CaseValidation, list[HackFinding]]:
    """Decide one case from the reference's and the candidate's records (runs where the candidate never ran)."""
    label = case_label(case)
    findings: list[HackFinding] = []
    worst_abs = worst_rel = 0.0
    if meta.get("error"):
        return CaseValidation(case=label, passed=False, seeds=list(seeds) if refs["outs"] else [],
                              message=meta["error"]), findings
    if obs.get("construct_error"):
        return CaseValidation(case=label, passed=False, message=obs["construct_error"]), findings
    for k, seed in enumerate(seeds):
        if k >= len(outs["outs"]):
            msg = obs.get("seed_error") or "no_result: the candidate's outputs for this seed are missing"
            return CaseValidation(case=label, passed=False, seeds=list(seeds), message=msg), findings
        findings += _call_findings(obs, k, outs["outs"][k], outs["types"][k])
        res = _compare(outs["outs"][k], refs["outs"][k], outs["inputs_after"][k], refs["inputs_after"][k], problem,
                       outs["types"][k])
        worst_abs, worst_rel = max(worst_abs, res.max_abs_err), max(worst_rel, res.max_rel_err)
        if not res.passed:
            msg = f"{res.reason}: {res.message} (seed {seed})"
            return CaseValidation(case=label, passed=False, seeds=list(seeds), max_abs_err=worst_abs,
                                  max_rel_err=worst_rel, message=msg), _unique(findings)
    findings += _reference_op_findings_from(meta, obs, problem)
    cache, wrong = _judge_probe(problem, seeds, refs, outs, obs)
    if wrong:  # the output followed the new inputs but is wrong on them: a plain mismatch, not a cache
        return CaseValidation(case=label, passed=False, seeds=list(seeds), max_abs_err=worst_abs, max_rel_err=worst_rel,
                              message=wrong), _unique(findings)
    if cache is not None:
        findings.append(cache)
    findings = _unique(findings)
    ok = not any(f.severity == "reject" for f in findings)
    msg = "" if ok else "; ".join(dict.fromkeys(f.render() for f in findings if f.severity == "reject"))
    return CaseValidation(case=label, passed=ok, seeds=list(seeds), max_abs_err=worst_abs, max_rel_err=worst_rel,
                          message=msg), findings


def _unique(findings: list[HackFinding]) -> list[HackFinding]:
    return list({(f.code, f.message): f for f in findings}.values())


def _call_findings(obs: dict[str, Any], k: int, values: list[Any], types: list[str]) -> list[HackFinding]:
    found: list[HackFinding] = []
    if obs["launches"][k] == 0:
        found.append(_finding("no_kernel_launch", "the forward launched no Triton kernel"))
    for i in obs["mutated"][k]:
        found.append(_finding("input_mutation", f"input {i} was modified in place (if the reference mutates it too, "
                              f"declare INPLACE_OUTPUTS = [{i}] in the problem)"))
    import torch

    for value, name in zip(values, types, strict=False):
        if isinstance(value, torch.Tensor) and name not in ("Tensor", "Parameter"):
            found.append(_finding("lazy_output", f"output is a {name}, not a plain torch.Tensor"))
    if obs["reuse"][k]:
        found.append(_finding("output_buffer_reuse", "the output shares storage with the previous call's output"))
    for code, message in obs["snapshot"]:
        found.append(_finding(code, message))
    return found


class OpSummary(Protocol):
    """What the reference-op rule reads of a run's ops: an ``OpRecorder``, or the sets one recorded."""

    max_numel: dict[str, int]

    def compute_ops(self) -> set[str]: ...

    def downcasts(self) -> set[str]: ...


def _reference_op_findings_from(meta: dict[str, Any], obs: dict[str, Any], problem: Problem) -> list[HackFinding]:
    class _Ops:  # the recorded sets, shaped like an OpRecorder
        def __init__(self, ops: list[str], downcasts: list[str], max_numel: dict[str, int]) -> None:
            self._ops, self._down, self.max_numel = set(ops), set(downcasts), max_numel

        def compute_ops(self) -> set[str]:
            return set(self._ops)

        def downcasts(self) -> set[str]:
            return set(self._down)

    ref = _Ops(meta.get("ref_ops", []), meta.get("ref_downcasts", []), {})
    cand = _Ops(obs.get("cand_ops", []), obs.get("cand_downcasts", []), obs.get("cand_max_numel", {}))
    return reference_op_findings(ref, cand, problem, int(meta.get("largest", 0)), bool(meta.get("half")))


def _judge_probe(problem: Problem, seeds: list[int], refs: dict[str, Any], outs: dict[str, Any],
                 obs: dict[str, Any]) -> tuple[HackFinding | None, str]:
    """The cache probe (inputs changed in place, same addresses, new values): (a result_caching finding, or None; a
    mismatch message when the output did change but is wrong on the new inputs: that is a correctness failure
    on one more seed, e.g. a rounding difference that this draw exposes, not a cache)."""
    if refs.get("probe") is None:
        return None, ""
    if obs.get("probe_error") or outs.get("probe") is None:
        return _finding(
            "result_caching", f"the candidate failed when inputs changed in place: {obs.get('probe_error')}"[:500]
        ), ""
    probe_seed = max(seeds) + _CACHE_PROBE_SEED_OFFSET
    out = outs["probe"]["out"]
    res = _compare(out, refs["probe"]["out"], outs["probe"]["inputs_after"], refs["probe"]["inputs_after"], problem)
    if res.passed:
        return None, ""
    last_out = outs["outs"][-1] if outs["outs"] else None
    if last_out is not None and not _same_values(out, last_out):
        return None, (f"{res.reason}: {res.message} (seed {probe_seed}: fresh inputs written in place; the output "
                      "followed them but does not match the reference)")
    return _finding("result_caching", "inputs changed in place at the same addresses and the output did not follow "
                    f"({res.message})"), ""


def _largest_reference_tensor(ref_model: Any, inputs: list[Any]) -> int:
    import torch

    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    if isinstance(ref_model, torch.nn.Module):
        tensors += list(ref_model.parameters()) + list(ref_model.buffers())
    return max((t.numel() for t in tensors), default=0)


def _touches_half(ref_model: Any, inputs: list[Any], ref_out: Any) -> bool:
    import torch

    tensors = [x for x in [*inputs, *_flatten(ref_out)] if isinstance(x, torch.Tensor)]
    if isinstance(ref_model, torch.nn.Module):
        tensors += list(ref_model.parameters())
    return any(t.dtype in (torch.float16, torch.bfloat16) or "float8" in str(t.dtype) for t in tensors)


def reference_op_findings(ref_ops: OpSummary, cand_ops: OpSummary, problem: Problem, largest: int,
                           half_reference: bool) -> list[HackFinding]:
    """The reference-op rule (aimed at the replaced op, not at a cheap epilogue) and the downcast rule."""
    found: list[HackFinding] = []
    limit = largest // EPILOGUE_MAX_FRACTION
    overlap: list[str] = []
    big_epilogue: list[str] = []
    for op in sorted(ref_ops.compute_ops() & cand_ops.compute_ops()):
        if op in problem.allowed_torch_ops:
            continue
        if op in EPILOGUE_OPS and cand_ops.max_numel.get(op, 0) <= limit:
            continue
        (big_epilogue if op in EPILOGUE_OPS else overlap).append(op)
    if overlap or big_epilogue:
        parts = []
        if overlap:
            parts.append(f"candidate dispatches the reference's compute ops: {', '.join(overlap)}")
        if big_epilogue:
            sizes = ", ".join(f"{op} on {cand_ops.max_numel.get(op, 0)} elements" for op in big_epilogue)
            parts.append(f"epilogue ops on a large tensor ({sizes}; the default allow-list covers tensors of at most "
                         f"{limit} elements, 1/{EPILOGUE_MAX_FRACTION} of the largest reference tensor)")
        names = ", ".join(f'"{op.removeprefix("aten.")}"' for op in overlap + big_epilogue)
        found.append(_finding("reference_op_call", "; ".join(parts) + f"; if this torch work after the kernel is by "
                              f"design, declare ALLOWED_TORCH_OPS = [{names}] in the problem"))
    downcasts = cand_ops.downcasts() - ref_ops.downcasts()
    if downcasts and not ref_ops.downcasts() and not half_reference:
        found.append(
            _finding(
                "precision_flags",
                f"candidate casts to lower precision ({', '.join(sorted(downcasts))}) where the reference does not",
            )
        )
    return found


def _same_values(a: Any, b: Any) -> bool:
    """Whether two outputs hold the same values (NaN equal to NaN): the second call returned the first one's result."""
    import torch

    xs, ys = _flatten(a), _flatten(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys, strict=True):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or not torch.equal(torch.nan_to_num(x.detach().float(), nan=0.0),
                                                     torch.nan_to_num(y.detach().float(), nan=0.0)):
                return False
        elif x != y:
            return False
    return True


def finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None
