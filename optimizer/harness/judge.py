"""The judge out of the candidate's reach: validation in three jailed processes, decided where no candidate ran.

``run_judged(request, ...)`` replaces the single evaluation worker of earlier versions, where the candidate's
process also computed the reference and compared (a candidate could replace ``compare_outputs.__code__`` at
import and pass with a wrong kernel):

1. **reference** (``worker._reference``; imports the problem, never a candidate): per case, smallest first, the
   reference's outputs per seed and on the cache probe, and what the rules need, written to a folder the
   candidate's jail cannot see.
2. **candidate** (``worker._evaluate`` in judged mode): runs the candidate on the same inputs (drawn from the
   same seeds), writes its outputs and observations per case to its own folder, then waits for a verdict.
3. **judge** (``worker._judge``, one per case; never imports a candidate): loads both records
   (``torch.load(weights_only=True)``: candidate data is data) and decides the case: comparison, in-place
   outputs, the cache probe, and every hack rule. The parent writes the verdict; the candidate stops at the
   first failing case, and is timed only when every case passed.

The parent ignores whatever validation the candidate's process reports; the result's ``validation`` and
``findings`` are the judge's. What the candidate's process observes about itself (launch counts, ATen ops, inputs
changed, storages shared, patched globals) is still measured there, so a hostile candidate can forge those
observations and dodge the rules they feed (``reference_op_call``, ``no_kernel_launch`` ...), but not the output
comparison: its outputs are checked against references computed in a process it never reached, stored where its
jail cannot read them (on a platform without mount namespaces the reference folder is only hidden by name: see
README "Sandbox").
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from optimizer.harness.contracts import (
    ContractError,
    EvaluateRequest,
    EvaluateResult,
    Finding,
    JudgeRequest,
    JudgeResult,
    ReferenceRequest,
    ReferenceResult,
    parse_result,
    to_wire,
)
from optimizer.harness.hacks import HackFinding
from optimizer.harness.sandbox import SandboxLimits, SandboxResult, run_worker

__all__ = ["ProblemInfo", "describe_problem", "run_judged"]


class _Verdicts:
    """The hook the sandbox calls while the candidate runs: judge each case whose outputs are ready."""

    def __init__(self, request: EvaluateRequest, refs: ReferenceResult, ref_dir: Path, cand_dir: Path,
                 run: dict[str, Any]) -> None:
        self.request, self.refs, self.ref_dir, self.cand_dir, self.run = request, refs, ref_dir, cand_dir, run
        self.judged: dict[int, tuple[Any, list[HackFinding]]] = {}
        self.errors: list[str] = []

    def __call__(self) -> float:
        t0 = time.monotonic()
        k = len(self.judged)
        if k < len(self.refs.cases) and (self.cand_dir / f"ready_{k}").exists():
            passed = self.judge(k)
            tmp = self.cand_dir / f".verdict_{k}.tmp"  # atomic: the worker polls for the file
            tmp.write_text(json.dumps({"continue": passed}))
            os.replace(tmp, self.cand_dir / f"verdict_{k}.json")
        return time.monotonic() - t0

    def judge(self, k: int) -> bool:
        ref = self.refs.cases[k]
        req = JudgeRequest(problem=self.request.problem, backend=self.request.backend, case=ref.case,
                           seeds=self.request.seeds, ref_file=ref.file, meta=ref.meta,
                           out_file=str(self.cand_dir / f"out_{k}.pt"), obs_file=str(self.cand_dir / f"obs_{k}.json"))
        res = run_worker(to_wire(req), readable=[str(self.ref_dir), str(self.cand_dir)], **self.run)
        from kb.models import CaseValidation
        from optimizer.harness.problem import case_label

        try:
            out = parse_result(JudgeResult, res.payload) if res.ok else None
        except ContractError as exc:
            out, res.reason = None, f"bad_result: {exc}"
        if out is None:
            cv = CaseValidation(case=case_label(ref.case), passed=False, message=f"judge_error: {res.reason}"[:2000])
            self.judged[k] = (cv, [])
            return False
        self.judged[k] = (out.case, [HackFinding(f.code, f.severity, f.message, f.line) for f in out.findings])  # type: ignore[arg-type]
        for f in (self.cand_dir / f"out_{k}.pt", self.cand_dir / f"obs_{k}.json"):
            f.unlink(missing_ok=True)  # bounded disk: one case of outputs at a time
        return out.case.passed


def run_judged(request: EvaluateRequest, *, limits: SandboxLimits, interpreter: bool, use_zygote: bool,
               python: str | None = None) -> SandboxResult:
    """Validate (and, when every case passed, time) ``request``'s candidate with the judge out of its reach.

    Returns the candidate worker's ``SandboxResult`` whose payload is an ``EvaluateResult`` carrying the judge's
    validation and findings (the candidate's own are discarded), or a failed result saying which process
    failed (``reference_error: ...``)."""
    run = {"limits": limits, "interpreter": interpreter, "use_zygote": use_zygote, "python": python}
    base = Path(tempfile.mkdtemp(prefix="ladder_judge_"))
    cand_dir = base / "candidate"
    cand_dir.mkdir()
    ref_dir: Path | None = None
    try:
        got = _reference(request, run)
        if isinstance(got, SandboxResult):
            return got
        refs, ref_dir = got
        # the worker orders the cases for validation as the reference did (smallest first, the same function);
        # timing keeps the caller's order
        cand_req = request.model_copy(update={"out_dir": str(cand_dir)})
        verdicts = _Verdicts(request, refs, ref_dir, cand_dir, run)
        res = run_worker(to_wire(cand_req), writable=[str(cand_dir)], hook=verdicts, **run)
        if not res.ok:
            return res
        return _merge(res, verdicts, refs)
    finally:
        if ref_dir is not None:
            _release(ref_dir)
        shutil.rmtree(base, ignore_errors=True)


#: reference runs kept for this process (a session validates many candidates against the same reference):
#: key -> (result, folder); the oldest is dropped beyond ``_KEEP``
_REFERENCES: dict[tuple, tuple[ReferenceResult, Path]] = {}
_KEEP = 2
#: evaluations run in threads (a round's screen validates its points in parallel): a reference folder in use is
#: never deleted under a reader; an evicted one goes when its last user releases it
_LOCK = threading.Lock()
_IN_USE: dict[Path, int] = {}
_DOOMED: set[Path] = set()


def _hold(folder: Path) -> None:  # under _LOCK
    _IN_USE[folder] = _IN_USE.get(folder, 0) + 1


def _release(folder: Path) -> None:
    with _LOCK:
        _IN_USE[folder] -= 1
        if _IN_USE[folder] > 0:
            return
        del _IN_USE[folder]
        if folder in _DOOMED:
            _DOOMED.discard(folder)
            shutil.rmtree(folder, ignore_errors=True)


def _evict(folder: Path) -> None:  # under _LOCK
    if folder in _IN_USE:
        _DOOMED.add(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _reference_key(request: EvaluateRequest, python: str | None) -> tuple | None:
    """What the reference's outputs depend on: the problem folder's files (paths, mtimes, sizes), backend, cases,
    seeds and interpreter."""
    try:
        st = Path(request.problem).stat()
        problem = Path(request.problem)
        files = sorted(problem.parent.glob("*.py")) if problem.is_file() else sorted(problem.glob("*.py"))
        stamp = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    except OSError:
        return None
    return (request.problem, st.st_mtime_ns, stamp, request.backend, json.dumps(request.cases, sort_keys=True,
            default=str), tuple(request.seeds), python)


def _reference(request: EvaluateRequest, run: dict[str, Any]) -> tuple[ReferenceResult, Path] | SandboxResult:
    """The reference's outputs for ``request`` (computed once per problem, cases, seeds and backend in this
    process, in a folder no candidate's jail can see), or the failed run."""
    key = _reference_key(request, run.get("python"))
    with _LOCK:
        if key is not None and key in _REFERENCES and all(Path(c.file).exists() for c in _REFERENCES[key][0].cases):
            _hold(_REFERENCES[key][1])
            return _REFERENCES[key]
    ref_dir = Path(tempfile.mkdtemp(prefix="ladder_reference_"))
    ref_req = ReferenceRequest(problem=request.problem, backend=request.backend, cases=request.cases,
                               seeds=request.seeds, out_dir=str(ref_dir))
    ref_res = run_worker(to_wire(ref_req), writable=[str(ref_dir)], **run)
    try:
        refs = parse_result(ReferenceResult, ref_res.payload) if ref_res.ok else None
    except ContractError as exc:
        refs, ref_res.reason = None, f"bad_result: {exc}"
    if refs is None:
        shutil.rmtree(ref_dir, ignore_errors=True)
        return SandboxResult("error", f"reference_error: the reference could not run: {ref_res.reason}"[:2000],
                             {}, ref_res.returncode, ref_res.duration_s, ref_res.stdout_tail, ref_res.stderr_tail,
                             ref_res.isolation)
    with _LOCK:
        slot = key if key is not None else ("uncached", str(ref_dir))
        if slot in _REFERENCES:  # another thread computed the same reference meanwhile: its folder retires
            _evict(_REFERENCES.pop(slot)[1])
        _REFERENCES[slot] = (refs, ref_dir)
        _hold(ref_dir)
        while len(_REFERENCES) > _KEEP:
            _evict(_REFERENCES.pop(next(iter(_REFERENCES)))[1])
    return refs, ref_dir


def _drop_references() -> None:
    with _LOCK:
        for _, folder in _REFERENCES.values():
            _evict(folder)
        _REFERENCES.clear()


atexit.register(_drop_references)


def _merge(res: SandboxResult, verdicts: _Verdicts, refs: ReferenceResult) -> SandboxResult:
    """The candidate's result with the judge's validation: every case up to the first failure must be judged."""
    from kb.models import CaseValidation
    from optimizer.harness.validate import summarize

    try:
        cand = parse_result(EvaluateResult, res.payload)
    except ContractError:
        return res  # the caller reports the contract error
    results = []
    for k, ref in enumerate(refs.cases):
        if k in verdicts.judged:
            results.append(verdicts.judged[k])
            if not verdicts.judged[k][0].passed:
                break
        else:
            from optimizer.harness.problem import case_label

            results.append((CaseValidation(case=case_label(ref.case), passed=False,
                                           message="no_result: the candidate reported no outputs for this case"), []))
            break
    run = summarize(results, cand.launches, cand.torch_compute_ops)
    cand.validation = run.validation
    cand.findings = [Finding(code=f.code, severity=f.severity, message=f.message, line=f.line) for f in run.findings]
    if not run.validation.passed:
        cand.timing, cand.timing_error = None, ""
    payload = {**to_wire(cand), **{k: v for k, v in res.payload.items() if k in ("token", "worker_s")}}
    res.payload = payload
    return res


class ProblemInfo:
    """A problem as the parent knows it without importing it (``describe_problem``): what ``evaluate`` and onboarding
    read of a ``Problem`` (cases, declarations, the fp32 judgement, sizes), the reference code having run only in a
    jailed worker with a deadline."""

    def __init__(self, d: Any) -> None:
        from optimizer.harness.problem import _parse_tolerances

        self.name, self.path = d.name, Path(d.path)
        self.cases, self.smoke_cases = d.cases, d.smoke_cases
        self.inplace_outputs, self.int_atol = tuple(d.inplace_outputs), d.int_atol
        self.allowed_torch_ops, self.output_dtypes = frozenset(d.allowed_torch_ops), d.output_dtypes
        self.cpu_validation, self._fp32, self._sizes = d.cpu_validation, d.fp32_reference, d.sizes
        self.forward_params = list(d.forward_params)
        self.tolerances = _parse_tolerances(None)

    def fp32_reference(self, cases: Any = None) -> bool:
        return self._fp32

    def cases_for(self, backend: str) -> list[dict[str, Any]]:
        return self.smoke_cases if backend == "interpreter" else self.cases

    def _size(self, case: dict[str, Any], i: int) -> float | None:
        from optimizer.harness.problem import case_label

        return (self._sizes.get(case_label(case)) or [None, None])[i]

    def bytes_moved(self, case: dict[str, Any]) -> float | None:
        return self._size(case, 0)

    def flops(self, case: dict[str, Any]) -> float | None:
        return self._size(case, 1)

    def size(self, case: dict[str, Any]) -> float:
        return self.bytes_moved(case) or self.flops(case) or 0.0


def describe_problem(path: str | Path, *, timeout_s: float = 300.0, memory_mb: int = 8192,
                     python: str | None = None) -> ProblemInfo:
    """Load a problem in a jailed worker with a deadline (a reference that hangs at import, or reads secrets, does
    so there) and return what the parent needs; ``InvalidArgument`` says why it could not be loaded."""
    from kb.errors import InvalidArgument
    from optimizer.harness.contracts import DescribeRequest, DescribeResult

    p = Path(path).expanduser().resolve()
    req = DescribeRequest(problem=str(p))
    res = run_worker(to_wire(req), limits=SandboxLimits(timeout_s, memory_mb), interpreter=True, python=python,
                     use_zygote=python is None)
    try:
        out = parse_result(DescribeResult, res.payload) if res.ok else None
    except ContractError as exc:
        out, res.reason = None, f"bad_result: {exc}"
    if out is None:
        why = res.reason
        err = res.payload.get("error", {}) if isinstance(res.payload, dict) else {}
        if err.get("message"):
            why = str(err["message"])
        raise InvalidArgument(f"the reference {p} could not be loaded (in a sandboxed process): {why}"[:1500],
                              field="reference")
    return ProblemInfo(out)
