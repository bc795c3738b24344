"""Evaluate one candidate: static hack scan here, validation and timing in the sandbox, sanity checks after.

``evaluate(...)`` never raises for candidate faults: a static rejection, a hang, a crash, OOM, a compile
error, a wrong shape or NaN all come back as an ``Evaluation`` whose ``validation.passed`` is False and whose
``reason`` says what happened. Timing is turned into the schema's ``Timing`` by ``to_timing`` against a
baseline (the comparison target), with the protocol attached. The candidate is timed interleaved with its
comparison kernels (``against``: the initial candidate, the round's base) so that ``to_timing`` can attach
bootstrap intervals (``optimizer.harness.verdict``) to every speedup; ``phase_s`` says where the seconds went.

Requests and results are the typed contracts of ``optimizer.harness.contracts``; a worker result that does not match
its contract becomes a failed ``Evaluation`` (``bad_result: ...`` naming the field). Profilers (torch.profiler,
Nsight Compute, msprof) are reached through ``optimizer.harness.measure``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from kb.models import CaseTiming, Timing, TimingProtocol, Validation
from optimizer.backend import Backend
from optimizer.harness import stages, verdict
from optimizer.harness import timing as timing_mod
from optimizer.harness.compile_check import evaluate_compile_only
from optimizer.harness.compile_only import interpreter_limitation
from optimizer.harness.contracts import (
    ContractError,
    EvaluateRequest,
    EvaluateResult,
    LaunchesRequest,
    LaunchesResult,
    TimeRequest,
    TimeResult,
    WorkerRequest,
    parse_result,
    timing_request,
    to_wire,
)
from optimizer.harness.hacks import HackFinding, by_code, static_scan
from optimizer.harness.outcome import Evaluation
from optimizer.harness.problem import Problem, case_label
from optimizer.harness.sandbox import SandboxLimits, SandboxResult, run_worker
from optimizer.harness.timing_cache import cached
from optimizer.profile.roofline import peaks_for, roofline_fraction, roofline_ms
from optimizer.settings import LadderSettings

__all__ = ["Evaluation", "evaluate", "fp32_reference", "retime", "sanity_findings", "timing_request", "to_timing"]


def fp32_reference(problem: Problem) -> bool:
    """True when every floating tensor the reference touches, outputs included, is fp32/fp64 (over all smoke
    cases): then half-precision casts are a downgrade. See ``Problem.fp32_reference``."""
    return problem.fp32_reference()


def _failed(candidate: Path, backend: Backend, status: str, reason: str, findings: list[HackFinding] | None = None,
            sandbox: SandboxResult | None = None) -> Evaluation:
    codes = list(dict.fromkeys(f.code for f in (findings or [])))
    return Evaluation(
        candidate=candidate, backend=backend, status=status, reason=reason,
        validation=Validation(passed=False, hack_flags=codes, failure_reason=reason),
        findings=list(findings or []), duration_s=sandbox.duration_s if sandbox else 0.0,
    )


@cached("evaluate")  # opt-in (settings.timing_cache): a content-addressed cache of timed evaluations
def evaluate(
    problem: Problem,
    candidate: str | Path,
    *,
    backend: Backend,
    settings: LadderSettings,
    cases: list[dict[str, Any]] | None = None,
    timing: bool = True,
    against: dict[str, Path] | None = None,
    aa: bool = False,
    methods: dict[str, str] | None = None,
    static_gate: bool = True,
) -> Evaluation:
    """Validate ``candidate`` and time it interleaved with ``against`` (role -> candidate file; ``aa`` adds a second
    instance of the candidate itself, the A/A comparison); ``methods`` (case label -> do_bench | cudagraph) are the
    session's fixed per-case timing methods. ``static_gate=False`` (onboarding: every failed rule at once) runs the
    candidate even when the static scan rejects it; the result still fails."""
    cand = Path(candidate).resolve()
    try:
        source = cand.read_text()
    except OSError as exc:
        return _failed(cand, backend, "error", f"cannot read candidate: {exc}")
    with stages.span("static_scan"):
        static = static_scan(source, fp32_reference=fp32_reference(problem))
    rejected = [f for f in static if f.severity == "reject"]
    if rejected and static_gate:
        return _failed(
            cand, backend, "rejected_static", "static hack check: " + "; ".join(f.render() for f in rejected), static
        )
    run_cases = cases if cases is not None else problem.cases_for(backend)
    python = settings.triton_python or None  # another Triton (LADDER_TRITON_PYTHON / --triton 3.6)
    if backend == "interpreter" and problem.cpu_validation == "compile_only":
        return evaluate_compile_only(problem, cand, static, settings=settings, cases=run_cases, python=python,
                                     why='CPU_VALIDATION = "compile_only"')
    # validated as the wire reads it: ``backend`` is a str here, checked against the contract's literal
    request = EvaluateRequest.model_validate({
        "problem": str(problem.path), "candidate": str(cand), "backend": backend, "cases": run_cases,
        "seeds": list(settings.validation_seeds),
        "timing": timing_request(settings, against, aa, methods) if timing else None})
    res = _judged(request, backend, settings, python=python)
    p, failed = _parsed(res, EvaluateResult, cand, backend, static)
    if failed is not None:
        return failed
    if backend == "interpreter" and not p.validation.passed:
        what = interpreter_limitation(p.validation.failure_reason, source)
        rerun = _block_pointers_on_36(what, python, settings)
        if rerun is not None:  # Triton 3.9 removed block pointers; the GPU image's 3.6 interpreter runs them
            ev = evaluate(problem, cand, backend=backend, settings=rerun, cases=cases, timing=timing, methods=methods)
            if ev.passed:
                ev.reason = f"validated with Triton {ev.versions.get('triton', '3.6')} ({rerun.triton_python}): {what}"
            return ev
        if what:  # the interpreter cannot run it: compile-only, said plainly
            return evaluate_compile_only(problem, cand, static, settings=settings, cases=run_cases, python=python,
                                         why=f"the interpreter cannot run {what}")
    findings = static + [HackFinding(f.code, f.severity, f.message, f.line) for f in p.findings]
    validation = p.validation
    validation.hack_flags = list(dict.fromkeys([f.code for f in static] + validation.hack_flags))
    if rejected:  # static_gate=False: it ran anyway, and is still rejected
        validation.passed = False
        validation.failure_reason = validation.failure_reason or "static hack check: " + "; ".join(
            f.render() for f in rejected)
    ev = Evaluation(
        candidate=cand, backend=backend, status="ok", reason=validation.failure_reason, validation=validation,
        findings=findings, launches=p.launches, timing_cases=p.timing.cases if p.timing else [],
        protocol=p.timing.protocol if p.timing else None, device=p.device, versions=p.versions,
        duration_s=res.duration_s, torch_compute_ops=p.torch_compute_ops, timing_error=p.timing_error,
        phase_s=_phases(p.phase_s, res),
    )
    if ev.passed and ev.timing_cases:
        extra = sanity_findings(problem, ev, run_cases)
        ev.findings += extra
        ev.validation.hack_flags = list(dict.fromkeys(ev.validation.hack_flags + [f.code for f in extra]))
        bad = [f for f in extra if f.severity == "reject"]
        if bad:
            ev.validation.passed = False
            ev.validation.failure_reason = "timing sanity check: " + "; ".join(f.render() for f in bad)
            ev.reason = ev.validation.failure_reason
    return ev


#: The dry launch record allocates the case's inputs on the CPU: above this, the smallest case is used instead.
DRY_RECORD_MAX_BYTES = 4 * 1024**3


def record_launches(problem: Problem, candidate: str | Path, settings: LadderSettings,
                    case: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """(launch records, note, case) of one full-size case recorded without executing a kernel (see worker ``launches``).

    The default case is the problem's first real case (what L2 would measure first), or the smallest one when the
    first would allocate more than ``DRY_RECORD_MAX_BYTES``."""
    if case is None:
        cases = problem.cases or problem.smoke_cases
        case = cases[0]
        if (problem.bytes_moved(case) or 0) > DRY_RECORD_MAX_BYTES:
            case = min(cases, key=lambda c: problem.bytes_moved(c) or 0)
    request = LaunchesRequest(problem=str(problem.path), candidate=str(Path(candidate).resolve()), case=case)
    limits = SandboxLimits(settings.sandbox_timeout_s, max(settings.sandbox_memory_mb, 8192), address_space_limit=False)
    # forked from the interpreter zygote like the interpreter's evaluations: a spawned worker paid the torch/triton
    # import per record (12 records of benchmarks/diagnosis/beyond: 220 s spawned, 90 s forked on 2 loaded cores)
    res = run_worker(to_wire(request), limits=limits, interpreter=True, use_zygote=settings.sandbox_fork_server)
    try:
        out = parse_result(LaunchesResult, res.payload) if res.ok else None
    except ContractError as exc:
        return [], f"dry launch record failed: bad_result: {exc}"[:600], case
    if out is None:
        return [], f"dry launch record failed: {res.reason}"[:600], case
    # the ladder reads launch records by key: the plain dicts they are at run time
    return cast("list[dict[str, Any]]", out.launches), out.note, case


def _block_pointers_on_36(what: str | None, python: str | None, settings: LadderSettings) -> LadderSettings | None:
    """Settings that run the Triton 3.6 env, when block pointers stopped the 3.9 interpreter and that env exists."""
    if not what or "block pointers" not in what or python is not None:
        return None
    from optimizer.harness.triton_env import find_triton_python

    py = find_triton_python("3.6")
    return settings.model_copy(update={"triton_python": str(py)}) if py is not None else None


def _run(request: WorkerRequest, backend: Backend, settings: LadderSettings, *,
         python: str | None = None) -> SandboxResult:
    limits = SandboxLimits(
        settings.sandbox_timeout_s, settings.sandbox_memory_mb, address_space_limit=backend == "interpreter"
    )
    return run_worker(to_wire(request), limits=limits, interpreter=backend == "interpreter", python=python,
                      use_zygote=settings.sandbox_fork_server and backend in ("interpreter", "cuda"))


def _judged(
    request: EvaluateRequest, backend: Backend, settings: LadderSettings, *, python: str | None = None
) -> SandboxResult:
    """Validation with the judge out of the candidate's reach (``optimizer.harness.judge``), then timing."""
    from optimizer.harness.judge import run_judged

    limits = SandboxLimits(
        settings.sandbox_timeout_s, settings.sandbox_memory_mb, address_space_limit=backend == "interpreter"
    )
    return run_judged(request, limits=limits, interpreter=backend == "interpreter", python=python,
                      use_zygote=settings.sandbox_fork_server and backend in ("interpreter", "cuda"))


def _parsed(res: SandboxResult, model: Any, cand: Path, backend: Backend, static: Any) -> tuple[Any, Evaluation | None]:
    """The worker's typed result, or (None, the failed Evaluation saying why there is none: the sandbox status, or
    ``bad_result`` naming the field its contract rejected)."""
    if not res.ok:
        return None, _failed(cand, backend, res.status, res.reason, static, res)
    try:
        return parse_result(model, res.payload), None
    except ContractError as exc:
        return None, _failed(cand, backend, "error", f"bad_result: {exc}", static, res)


def _phases(phase_s: dict[str, float], res: SandboxResult) -> dict[str, float]:
    """The worker's own phases plus ``process_start``: sandbox wall time the worker did not account for."""
    out = {k: float(v) for k, v in phase_s.items()}
    worker_s = float(res.payload.get("worker_s") or 0.0)
    out["process_start"] = max(0.0, res.duration_s - worker_s)
    return out


@cached("retime")
def retime(problem: Problem, candidate: Path, against: dict[str, Path], *, backend: Backend, settings: LadderSettings,
           cases: list[dict[str, Any]] | None = None, blocks: int | None = None,
           methods: dict[str, str] | None = None) -> Evaluation:
    """Time an already validated candidate against ``against`` (no validation: the winner's confirmation, a screen)."""
    run_cases = cases if cases is not None else problem.cases_for(backend)
    t = timing_request(settings, against, False, methods).model_copy(
        update={"reference": False, "blocks": blocks or settings.timing_blocks})
    request = TimeRequest.model_validate({"problem": str(problem.path), "candidate": str(candidate),
                                          "backend": backend, "cases": run_cases, "timing": t})
    res = _run(request, backend, settings)
    p, failed = _parsed(res, TimeResult, candidate, backend, None)
    if failed is not None:
        return failed
    return Evaluation(candidate=candidate, backend=backend, status="ok", reason="", validation=Validation(passed=True),
                      timing_cases=p.timing.cases, device=p.device, versions=p.versions, protocol=p.timing.protocol,
                      duration_s=res.duration_s, phase_s=_phases(p.phase_s, res))


def sanity_findings(problem: Problem, ev: Evaluation, cases: list[dict[str, Any]]) -> list[HackFinding]:
    """Speed-of-light and excessive-speedup checks on a timed, validated candidate."""
    out: list[HackFinding] = []
    peaks = peaks_for(ev.device)
    ms, ref = ev.case_ms(), ev.reference_ms()
    for case in cases:
        label = case_label(case)
        if label not in ms:
            continue
        if peaks is not None:
            floor = roofline_ms(problem.flops(case), problem.bytes_moved(case), peaks)
            if floor is not None and ms[label] < 0.5 * floor:
                c = by_code("faster_than_roofline")
                out.append(
                    HackFinding(
                        c.code,
                        c.severity,
                        f"[{label}] {ms[label]:.4g} ms is below half the roofline floor {floor:.4g} ms",
                    )
                )
        if label in ref and ms[label] > 0 and ref[label] / ms[label] > 10:
            c = by_code("excessive_speedup")
            out.append(
                HackFinding(
                    c.code, c.severity, f"[{label}] {ref[label] / ms[label]:.1f}x faster than the PyTorch reference"
                )
            )
    return out


#: a candidate whose steady-state wall time per call exceeds the initial kernel's by more than this factor is flagged
HOST_REGRESSION = 1.10


def to_timing(ev: Evaluation, baseline_ms: dict[str, float] | None, *, backend: Backend, problem: Problem,
              cases: list[dict[str, Any]] | None = None, compute: str = "fp32") -> Timing:
    """The schema Timing for an evaluation; ``baseline_ms`` per case is the comparison target's time, ``compute``
    the peak its roofline fractions use (the kernel's ``optimizer.kernel.features.kernel_compute_kind``: the harness
    reads no kernel source).

    When the initial candidate was timed interleaved (role ``initial``), its block medians give each case's
    speedup interval and the geomean interval (whose point is then the geomean speedup); ``vs_base`` is the
    interval over the round's base (role ``base``, else the initial candidate).
    """
    if backend == "interpreter" or ev.protocol is None:
        proto = timing_mod.interpreter_protocol() if backend == "interpreter" else TimingProtocol(
            method="unavailable", device=ev.device, note=ev.timing_error or "no timing was taken")
        return Timing(protocol=proto, cases=[], geomean_speedup=None)
    peaks = peaks_for(ev.device)
    out: list[CaseTiming] = []
    by_label = {case_label(c): c for c in (cases if cases is not None else problem.cases_for(backend))}
    initial = ev.pairs("initial")
    init_ms = {c.case: c.role_stats["initial"].median_ms for c in ev.timing_cases if "initial" in c.role_stats}
    raw = {c.case: c for c in ev.timing_cases}
    host_flags: list[str] = []
    for label, ms in ev.case_ms().items():
        case = by_label.get(label, {})
        frac = (
            roofline_fraction(problem.flops(case), problem.bytes_moved(case), ms, peaks, compute=compute)
            if peaks
            else None
        )
        host = raw[label].host
        mine, ref = host.get("candidate", {}), host.get("initial", {})
        if mine.get("wall_ms") and ref.get("wall_ms") and mine["wall_ms"] > HOST_REGRESSION * ref["wall_ms"]:
            host_flags.append(label)
        out.append(
            CaseTiming(
                case=label,
                ms=ms,
                baseline_ms=init_ms.get(label, (baseline_ms or {}).get(label)),
                roofline_fraction=frac,
                speedup_ci=verdict.case_ratio(*initial[label]) if label in initial else None,
                method=raw[label].method,
                method_note=raw[label].method_note,
                host_ms=mine.get("wall_ms"),
                launch_ms=mine.get("launch_ms"),
                baseline_host_ms=ref.get("wall_ms"),
            )
        )
    t = timing_mod.make_timing(ev.protocol, out)
    t.host_regressed = host_flags
    if initial and len(initial) == len(out):
        t.geomean_ci = verdict.geomean_ratio(initial)
        t.geomean_speedup = t.geomean_ci.point
    base = ev.pairs("base")
    t.vs_base = verdict.geomean_ratio(base) if base and len(base) == len(out) else t.geomean_ci
    return t
