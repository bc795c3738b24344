"""The judge out of the candidate's reach: validation in three jailed processes, decided where no candidate ran.

``run_judged(request, ...)`` replaces the single evaluation worker of earlier versions, where the candidate's
process also computed the reference and compared (a candidate could replace ``compare_outputs.__code__`` at
import and pass with a wrong kernel):

1. **reference** (``worker._reference``; imports the problem, never a candidate): per case, smallest first, the
   reference's outputs per seed and on the cache probe, and what the rules need, written to a folder the
   candidate's jail cannot see.
2. **candidate** (``worker._evaluate`` in judged mode): runs the candidate on the same inputs (drawn from the
   same seeds), writes its outputs and observations per case to its own folder, then waits for a verdict.
3. **judge** (``worker._judge_run``, one per evaluation, started with the candidate; never imports a candidate):
   per case, when the parent relays that the candidate's outputs are ready, loads both records
   (``torch.load(weights_only=True)``: candidate data is data) and decides the case: comparison, in-place
   outputs, the cache probe, and every hack rule. The parent writes the verdict; the candidate stops at the
   first failing case, and is timed only when every case passed (on a GPU, after the judge process has ended).
   The validation kept is the judge's final, token-checked result.

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
import dataclasses
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

from kb.errors import log_error
from optimizer.backend import Backend
from optimizer.harness import stages
from optimizer.harness.contracts import (
    ContractError,
    EvaluateRequest,
    EvaluateResult,
    Finding,
    JudgeCase,
    JudgeResult,
    JudgeRunRequest,
    JudgeRunResult,
    ReferenceRequest,
    ReferenceResult,
    parse_result,
    to_wire,
)
from optimizer.harness.hacks import HackFinding
from optimizer.harness.sandbox import SandboxLimits, SandboxResult, run_worker


class _Run(TypedDict):
    """How each of an evaluation's processes runs: ``run_worker``'s keyword arguments shared by the three."""

    limits: SandboxLimits
    interpreter: bool
    use_zygote: bool
    python: str | None


def _hack_findings(findings: list[Finding]) -> list[HackFinding]:
    return [HackFinding(f.code, f.severity, f.message, f.line) for f in findings]

log = logging.getLogger(__name__)

__all__ = ["ProblemInfo", "describe_problem", "run_judged"]


class _Verdicts:
    """The hook the sandbox calls while the candidate runs: relay each case whose outputs are ready to the judge
    process of this evaluation (``go_k``), wait for its decision, and write the verdict the candidate waits for.

    One judge process decides every case of the candidate (``worker._judge_run``), started with the candidate so
    that its start overlaps the candidate's: one process start per evaluation, not one per case (a judge process
    per case cost 0.3-0.7 s of parent wall time per case on a 2-core CPU, 25-40% of an evaluation). Its decisions
    arrive per case as files (they gate whether the candidate goes on); the validation the parent keeps is the
    judge's token-checked final result (``decisions``), so a forged per-case file can at most let a failing
    candidate run on, never pass it."""

    def __init__(self, request: EvaluateRequest, refs: ReferenceResult, ref_dir: Path, cand_dir: Path, base: Path,
                 run: _Run) -> None:
        self.request, self.refs, self.cand_dir = request, refs, cand_dir
        self.ctl_dir, self.judge_dir = base / "control", base / "judge"
        self.ctl_dir.mkdir()
        self.judge_dir.mkdir()
        self.judged: dict[int, tuple[Any, list[HackFinding]]] = {}
        self.result: SandboxResult | None = None
        cases = [JudgeCase(case=ref.case, ref_file=ref.file, meta=ref.meta, out_file=str(cand_dir / f"out_{k}.pt"),
                           obs_file=str(cand_dir / f"obs_{k}.json")) for k, ref in enumerate(refs.cases)]
        req = JudgeRunRequest(problem=request.problem, backend=request.backend, seeds=request.seeds, cases=cases,
                              ctl_dir=str(self.ctl_dir), out_dir=str(self.judge_dir))
        # the judge lives through the candidate's validation: its deadline covers that and its own work
        jrun: _Run = {**run, "limits": dataclasses.replace(run["limits"], timeout_s=2 * run["limits"].timeout_s)}
        #: before the last verdict, wait for the judge process to end, so that it never shares the device with timing
        self.join_before_timing = request.timing is not None and request.backend != "interpreter"

        def judge() -> None:
            try:
                self.result = run_worker(to_wire(req), readable=[str(ref_dir), str(cand_dir), str(self.ctl_dir)],
                                         writable=[str(self.judge_dir)], **jrun)
            except Exception as exc:  # noqa: BLE001 - thread boundary: a judge that cannot run fails the case that
                # waits for it
                error_id = log_error(log, exc, f"starting the judge of {request.problem}", level=logging.INFO)
                self.result = SandboxResult("error",
                                            f"error: the judge could not start (error {error_id}): {exc!r}"[:2000])

        self.thread = threading.Thread(target=judge, name="ladder-judge", daemon=True)
        self.thread.start()

    def __call__(self) -> float:
        t0 = time.monotonic()
        k = len(self.judged)
        if k < len(self.refs.cases) and (self.cand_dir / f"ready_{k}").exists():
            with stages.span("judge"):
                passed = self.judge(k)
                if self.join_before_timing and (not passed or k == len(self.refs.cases) - 1):
                    self.stop()
            tmp = self.cand_dir / f".verdict_{k}.tmp"  # atomic: the worker polls for the file
            tmp.write_text(json.dumps({"continue": passed}))
            os.replace(tmp, self.cand_dir / f"verdict_{k}.json")
        return time.monotonic() - t0

    def judge(self, k: int) -> bool:
        from kb.models import CaseValidation
        from optimizer.harness.problem import case_label

        (self.ctl_dir / f"go_{k}").write_text("")
        done = self.judge_dir / f"judged_{k}.json"
        while not done.exists() and self.thread.is_alive():
            time.sleep(0.002)
        out, why = None, ""
        try:
            out = parse_result(JudgeResult, json.loads(done.read_text()))
        except (OSError, ValueError, ContractError) as exc:
            res = self.result
            why = res.reason if res is not None and not res.ok else f"no decision for case {k} ({exc!r})"
        if out is None:
            self.judged[k] = (CaseValidation(case=case_label(self.refs.cases[k].case), passed=False,
                                             message=f"judge_error: {why}"[:2000]), [])
            return False
        self.judged[k] = (out.case, _hack_findings(out.findings))
        for name, seconds in out.phase_s.items():  # the judge's own account: problem import, records, comparison
            stages.add(name, seconds)
        for f in (self.cand_dir / f"out_{k}.pt", self.cand_dir / f"obs_{k}.json"):
            f.unlink(missing_ok=True)  # bounded disk: one case of outputs at a time
        return out.case.passed

    def stop(self) -> None:
        """End the judge (it also ends by itself after the last or a failing case) and wait for its process."""
        (self.ctl_dir / "stop").write_text("")
        self.thread.join()

    def decisions(self) -> dict[int, tuple[Any, list[HackFinding]]]:
        """The cases as the judge's final, token-checked result decided them (after ``stop``); a case relayed to the
        candidate without a final decision fails (``judge_error``)."""
        from kb.models import CaseValidation
        from optimizer.harness.problem import case_label

        res, final = self.result, None
        if res is not None and res.ok:
            try:
                final = parse_result(JudgeRunResult, res.payload)
            except ContractError as exc:
                res.reason = f"bad_result: {exc}"
        out: dict[int, tuple[Any, list[HackFinding]]] = {}
        for k in self.judged:
            if final is not None and k < len(final.judged):
                j = final.judged[k]
                out[k] = (j.case, _hack_findings(j.findings))
            else:
                why = res.reason if res is not None and res.reason else "the judge reported no final decision"
                out[k] = (CaseValidation(case=case_label(self.refs.cases[k].case), passed=False,
                                         message=f"judge_error: {why}"[:2000]), [])
        return out


def run_judged(request: EvaluateRequest, *, limits: SandboxLimits, interpreter: bool, use_zygote: bool,
               python: str | None = None) -> SandboxResult:
    """Validate (and, when every case passed, time) ``request``'s candidate with the judge out of its reach.

    Returns the candidate worker's ``SandboxResult`` whose payload is an ``EvaluateResult`` carrying the judge's
    validation and findings (the candidate's own are discarded), or a failed result saying which process
    failed (``reference_error: ...``)."""
    run: _Run = {"limits": limits, "interpreter": interpreter, "use_zygote": use_zygote, "python": python}
    base = Path(tempfile.mkdtemp(prefix="ladder_judge_"))
    cand_dir = base / "candidate"
    cand_dir.mkdir()
    ref_dir: Path | None = None
    verdicts: _Verdicts | None = None
    try:
        with stages.span("reference"):
            got = _reference(request, run)
        if isinstance(got, SandboxResult):
            return got
        refs, ref_dir = got
        # the worker orders the cases for validation as the reference did (smallest first, the same function);
        # timing keeps the caller's order
        cand_req = request.model_copy(update={"out_dir": str(cand_dir)})
        verdicts = _Verdicts(request, refs, ref_dir, cand_dir, base, run)
        with stages.span("candidate"):
            res = run_worker(to_wire(cand_req), writable=[str(cand_dir)], hook=verdicts, **run)
        with stages.span("judge_exit"):
            verdicts.stop()
        if not res.ok:
            return res
        with stages.span("merge"):
            return _merge(res, verdicts.decisions(), refs)
    finally:
        if verdicts is not None and verdicts.thread.is_alive():  # an exception above: never leave the judge waiting
            verdicts.stop()
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


def _reference(request: EvaluateRequest, run: _Run) -> tuple[ReferenceResult, Path] | SandboxResult:
    """The reference's outputs for ``request`` (computed once per problem, cases, seeds and backend in this
    process, in a folder no candidate's jail can see), or the failed run."""
    key = _reference_key(request, run["python"])
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


def _merge(
    res: SandboxResult, judged: dict[int, tuple[Any, list[HackFinding]]], refs: ReferenceResult
) -> SandboxResult:
    """The candidate's result with the judge's validation: every case up to the first failure must be judged."""
    from kb.models import CaseValidation
    from optimizer.harness.validate import summarize

    try:
        cand = parse_result(EvaluateResult, res.payload)
    except ContractError:
        return res  # the caller reports the contract error
    results = []
    for k, ref in enumerate(refs.cases):
        if k in judged:
            results.append(judged[k])
            if not judged[k][0].passed:
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
        from optimizer.harness.problem import parse_tolerances

        self.name, self.path = d.name, Path(d.path)
        self.cases, self.smoke_cases = d.cases, d.smoke_cases
        self.inplace_outputs, self.int_atol = tuple(d.inplace_outputs), d.int_atol
        self.allowed_torch_ops, self.output_dtypes = frozenset(d.allowed_torch_ops), d.output_dtypes
        self.cpu_validation, self._fp32, self._sizes = d.cpu_validation, d.fp32_reference, d.sizes
        self.forward_params = list(d.forward_params)
        self.tolerances = parse_tolerances(None)

    def fp32_reference(self, cases: Any = None) -> bool:
        return self._fp32

    def cases_for(self, backend: Backend) -> list[dict[str, Any]]:
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
