"""The parent's side of a compile-only check (``optimizer.harness.compile_only`` says when and how): run it in the
sandbox and turn the worker's ``CompileCheckResult`` into an ``Evaluation``. The worker's side (the recorder that
compiles each launch) stays in ``compile_only``, which the worker imports; this module is imported by
``optimizer.harness.evaluation`` only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.models import CaseValidation, Validation
from optimizer.harness.compile_only import STATIC_ONLY
from optimizer.harness.contracts import CompileCheckRequest, CompileCheckResult, ContractError, parse_result, to_wire
from optimizer.harness.hacks import HackFinding
from optimizer.harness.outcome import Evaluation
from optimizer.harness.problem import Problem, case_label
from optimizer.harness.sandbox import SandboxLimits, run_worker
from optimizer.settings import LadderSettings

__all__ = ["evaluate_compile_only"]


def evaluate_compile_only(problem: Problem, candidate: Path, source_findings: list[HackFinding], *,
                          settings: LadderSettings, cases: list[dict[str, Any]], why: str,
                          python: str | None = None) -> Evaluation:
    """An ``Evaluation`` from a compile-only check in the sandbox (a fresh process, no TRITON_INTERPRET).

    ``why`` says why the kernel was not executed (declared ``CPU_VALIDATION``, or the interpreter limitation
    that was detected); it is part of every case message and of the reason, beside ``STATIC_ONLY``.
    """
    request = CompileCheckRequest(problem=str(problem.path), candidate=str(candidate), cases=cases, arch=90)
    limits = SandboxLimits(settings.sandbox_timeout_s, settings.sandbox_memory_mb, address_space_limit=False)
    res = run_worker(to_wire(request), limits=limits, interpreter=False, python=python)
    codes = list(dict.fromkeys(f.code for f in source_findings))
    p, err = None, res.reason
    if res.ok:
        try:
            p = parse_result(CompileCheckResult, res.payload)
        except ContractError as exc:
            err = f"bad_result: {exc}"
    if p is None:
        reason = f"{STATIC_ONLY} ({why}); the compile-only check failed: {err}"
        return Evaluation(candidate=candidate, backend="interpreter", status=res.status if not res.ok else "error",
                          reason=reason, validation=Validation(passed=False, hack_flags=codes, failure_reason=reason),
                          findings=list(source_findings), duration_s=res.duration_s, static_only=True)
    triton_v = p.versions.get("triton", "?")
    case_results = []
    for c in p.compile:
        note = f"{STATIC_ONLY} ({why}); {len(c.launches)} launch(es) compiled for cuda:90 with Triton {triton_v}"
        msg = note if c.ok else f"compile_error: {c.message} [{note}]"
        case_results.append(CaseValidation(case=case_label(c.case), passed=c.ok, message=msg[:2000]))
    passed = bool(case_results) and all(c.passed for c in case_results)
    first = next((f"[{c.case}] {c.message}" for c in case_results if not c.passed), "")
    reason = first or f"{STATIC_ONLY} ({why}): compiled for cuda:90 with Triton {triton_v}; validate on the GPU"
    return Evaluation(
        candidate=candidate, backend="interpreter", status="ok", reason=reason,
        validation=Validation(passed=passed, cases=case_results, hack_flags=codes, failure_reason=first),
        findings=list(source_findings), launches=[r for c in p.compile for r in c.launches],
        device=p.device, versions=p.versions, duration_s=res.duration_s, static_only=True,
    )
