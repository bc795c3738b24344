"""The sandboxed worker: ``python -m optimizer.harness.worker REQUEST.json RESULT.json`` (spawned by ``sandbox``).

It reads a one-line token from stdin before anything else, runs one task, and writes a JSON result carrying
that token, so a candidate cannot forge a result file it was never told about. Tasks:

- ``evaluate``: validate a candidate, then time it per case, interleaved with its comparison kernels, when the
  backend can; reports seconds per phase. With ``out_dir`` (what ``optimizer.harness.judge`` sends) nothing is
  compared here: per case the outputs and observations are written and the parent's verdict awaited; without it the
  whole protocol runs in this process (tools and tests only: the candidate could reach the comparison).
- ``reference``: the reference's outputs per case (smallest first) into ``out_dir``; never imports a candidate.
- ``judge``: decide one case from the reference's and the candidate's records; never imports a candidate.
- ``describe``: what the parent needs of a problem (onboarding never imports an untrusted reference itself).
- ``time``: time an already validated candidate against comparison kernels (the winner's re-time).
- ``profile``: torch.profiler kernel breakdown per case (CUDA; GPU only) and, on Ascend, the torch-npu path.
- ``run``: just run the candidate forward a few times (the target process for ncu / msprof).
- ``launches``: record the launches of one full-size forward on the CPU without executing a kernel.
- ``compile_check``: compile every launch for ``cuda:90`` without executing anything
  (``optimizer.harness.compile_only``), for kernels the CPU interpreter cannot run.

Requests and results are the models of ``optimizer.harness.contracts``, validated here: a malformed request is answered
with a ``bad_request`` error naming the field.

Probes (launch recorder, global snapshot) are installed before the candidate is imported.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from optimizer.backend import Backend
from optimizer.harness.compile_only import CompileRecorder, compile_cases
from optimizer.harness.contracts import (
    CompileCase,
    CompileCheckRequest,
    CompileCheckResult,
    ContractError,
    DescribeRequest,
    DescribeResult,
    ErrorResult,
    EvaluateRequest,
    EvaluateResult,
    Finding,
    JudgeRequest,
    JudgeResult,
    JudgeRunRequest,
    JudgeRunResult,
    LaunchesRequest,
    LaunchesResult,
    ProfileRequest,
    ProfileResult,
    ReferenceCase,
    ReferenceRequest,
    ReferenceResult,
    RunRequest,
    RunResult,
    TimeRequest,
    TimeResult,
    TimingCase,
    TimingOptions,
    TimingResult,
    WorkerError,
    parse_request,
    to_wire,
)

__all__ = ["inplace_restore", "main", "run_request", "smallest_first", "time_cases"]


def _device_for(backend: Backend) -> str:
    return {"interpreter": "cpu", "cuda": "cuda", "ascend": "npu"}.get(backend, "cpu")


def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for mod in ("torch", "triton", "torch_npu"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = str(getattr(m, "__version__", "?"))
    return out


def _call(model: Any, inputs: Sequence[Any]) -> Callable[[], Any]:
    """``model(*inputs)`` as a call of no arguments (what the timing functions repeat)."""
    return lambda: model(*inputs)


def _device_name(backend: Backend) -> str:
    import torch

    if backend == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    if backend == "ascend":
        npu_torch: Any = torch  # torch-npu adds ``torch.npu`` when imported; torch's own stubs do not declare it
        try:
            return str(npu_torch.npu.get_device_name())
        except (AttributeError, RuntimeError):  # torch-npu not imported, or no NPU visible to it
            return "npu"
    return "cpu"


def time_cases(run_cases: list[dict[str, Any]], t: TimingOptions, problem: Any, cand_cls: type, device: str,
                backend: Backend) -> TimingResult:
    """Interleaved timing per case of the candidate and its comparison kernels (GPU/NPU only; untested on CPU CI).

    Roles: ``candidate``; ``initial`` / ``base`` from ``timing.against`` (other candidate files); ``aa`` (a second
    instance of the candidate: the A/A noise floor). The PyTorch reference is timed once per case, not interleaved.
    """
    import torch

    from optimizer.harness import timing
    from optimizer.harness.problem import case_label, load_candidate

    warmup_ms, rep_ms, blocks, graph_us, flush = t.warmup_ms, t.rep_ms, t.blocks, t.graph_below_us, t.flush_bytes
    others = {role: _load_once(load_candidate, path) for role, path in t.against.items()}
    protocol = timing.interleaved_protocol(_device_name(backend), blocks=blocks, warmup_ms=warmup_ms, rep_ms=rep_ms,
                                           graph_below_us=graph_us if backend == "cuda" else None)
    cases: list[TimingCase] = []
    for case in run_cases:
        inputs = problem.make_inputs(case, 0, device=device)
        models = {"candidate": problem.instantiate(cand_cls, case, seed=0, device=device)}
        models |= {role: problem.instantiate(cls, case, seed=0, device=device) for role, cls in others.items()}
        if t.aa:
            models["aa"] = problem.instantiate(cand_cls, case, seed=0, device=device)
        fns = {role: _call(m, inputs) for role, m in models.items()}
        # INPLACE_OUTPUTS: the inputs start pristine; the interleaved blocks (do_bench) repeat the call without a
        # restore between repetitions (a restore inside the timed region would time the copy), so an in-place
        # kernel is timed on its own evolving output. The single-kernel path (bench_cuda setup=) restores per rep.
        if (restore := inplace_restore(problem, inputs)) is not None:
            restore()
        with torch.no_grad():
            label = case_label(case)
            res = timing.time_interleaved(fns, backend=backend, blocks=blocks, warmup_ms=warmup_ms, rep_ms=rep_ms,
                                          graph_below_us=graph_us, flush_bytes=flush, method=t.methods.get(label),
                                          decide_by="initial" if "initial" in fns else "candidate", host=t.host)
            r = None
            if t.reference:
                ref = problem.make_model(case, seed=0, device=device)
                bench = timing.bench_cuda if backend == "cuda" else timing.bench_npu
                r = bench(_call(ref, inputs), warmup_ms=warmup_ms, rep_ms=rep_ms, flush_bytes=flush)
        cases.append(TimingCase.model_validate({
            "case": case_label(case), "stats": res["stats"]["candidate"], "reference_stats": r.as_dict() if r else None,
            "method": res["method"], "method_note": res["method_note"], "blocks": res["blocks"],
            "role_stats": res["stats"], "decided_ms": res.get("decided_ms"), "fell_back": res.get("fell_back", False),
            "host": res.get("host", {})}))
    return TimingResult(protocol=protocol, cases=cases)


def inplace_restore(problem: Any, inputs: list[Any]) -> Any:
    """For INPLACE_OUTPUTS: a callable copying pristine values back into those inputs (run outside the timed
    region by ``timing.bench_*``), or None when the problem declares none."""
    import torch

    pairs = [(inputs[i], inputs[i].clone()) for i in problem.inplace_outputs
             if i < len(inputs) and isinstance(inputs[i], torch.Tensor)]
    if not pairs:
        return None

    def restore() -> None:
        for dst, src in pairs:
            dst.copy_(src)

    return restore


_LOADED: dict[tuple[str, int], type] = {}


def _load_once(load: Any, path: str) -> type:
    """A comparison kernel imported once per process (and file version), so repeated timing never recompiles it."""
    key = (str(Path(path).resolve()), Path(path).stat().st_mtime_ns)
    if key not in _LOADED:
        _LOADED[key] = load(path)
    return _LOADED[key]


class _CompileClock:
    """Seconds spent in ``triton.compiler.compile`` (the JIT binds it when a kernel first launches)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def install(self) -> _CompileClock:
        try:
            import triton.compiler as tc
            import triton.compiler.compiler as tcc
        except ImportError:  # pragma: no cover
            return self
        inner = tcc.compile

        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0

        tc.compile = tcc.compile = timed
        return self


def _interpreter_shims(*, dry: bool = False) -> None:
    """Let @triton.autotune run under TRITON_INTERPRET=1 (it needs a GPU driver to benchmark configs).

    Each config runs once and the autotuner keeps the one with the lowest interpreter wall time: meaningless
    for performance, but it makes autotuned candidates executable on the CPU so they can be validated. ``dry``
    (launches recorded, never executed): every config times the same, so the autotuner keeps the FIRST config;
    a noise-picked one made static diagnoses of autotuned kernels differ from run to run (L3 compiled whichever
    config the timer's jitter chose).
    """
    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    _device_query_stand_in()
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover - no Triton (or one without the autotuner)
        return

    def _cpu_bench(kernel_call: Any, quantiles: Any = None, **_: Any) -> list[float]:
        t0 = time.perf_counter()
        kernel_call()
        dt = 1.0 if dry else (time.perf_counter() - t0) * 1e3
        return [dt, dt, dt]

    Autotuner.do_bench = property(lambda self: _cpu_bench)


#: What a CPU run reports for the device it analyses for (the lent H200): launchers that ask the device before
#: launching (``torch.cuda.get_device_capability()[0] >= 8``, an SM count for the grid) get the target's answer
H200_STAND_IN = {"name": "NVIDIA H200 (CPU stand-in: nothing runs on it)", "major": 9, "minor": 0,
                 "multi_processor_count": 132, "total_memory": 150_000_000_000, "warp_size": 32,
                 "max_threads_per_multi_processor": 2048, "regs_per_multiprocessor": 65536,
                 "shared_memory_per_block_optin": 232448, "L2_cache_size": 50_331_648}


def _device_query_stand_in() -> None:
    """On a machine without CUDA, answer ``torch.cuda.get_device_capability`` / ``get_device_properties`` with the
    static target (sm_90, H200 figures) instead of raising "Torch not compiled with CUDA": used where nothing
    executes on a GPU anyway (dry launch records, the sm_90 compile check, the CPU interpreter), so a launcher that
    checks the device before launching still reaches its launches. ``is_available()`` stays False."""
    import types

    import torch

    if torch.cuda.is_available():
        return
    props: Any = types.SimpleNamespace(**H200_STAND_IN)  # read by attribute, as torch's device properties are

    def capability(device: Any = None) -> tuple[int, int]:
        return props.major, props.minor

    def properties(device: Any = None) -> Any:
        return props

    torch.cuda.get_device_capability = capability
    torch.cuda.get_device_properties = properties


def _failure(kind: str, stage: str, exc: BaseException) -> ErrorResult:
    return ErrorResult(error=WorkerError(kind=kind, stage=stage, message=f"{type(exc).__name__}: {exc}"[:4000],
                                         traceback=traceback.format_exc()[-4000:]))


def _evaluate(req: EvaluateRequest) -> EvaluateResult | ErrorResult:
    from optimizer.harness.probes import GlobalSnapshot, LaunchRecorder, classify_exception
    from optimizer.harness.problem import load_candidate, load_problem
    from optimizer.harness.validate import validate_candidate

    backend = req.backend
    device = _device_for(backend)
    if backend == "ascend":
        import torch_npu  # noqa: F401
    import optimizer.harness.timing  # binds timer functions before the candidate can touch them

    optimizer.harness.timing.bind_timers()

    _interpreter_shims()
    compile_clock = _CompileClock().install()
    launches = LaunchRecorder().install()
    snapshot = GlobalSnapshot()
    problem = load_problem(req.problem)
    stage = "import"
    t0 = time.perf_counter()
    try:
        cand_cls = load_candidate(req.candidate)
        stage = "validate"
        if req.out_dir is not None:  # judged: outputs go to the parent, which decides (optimizer.harness.judge)
            run = _observe_judged(req, problem, cand_cls, device, snapshot, launches)
        else:  # in-process (tools and tests only: here the candidate can reach the comparison)
            run = validate_candidate(problem, cand_cls, smallest_first(problem, req.cases), req.seeds, device=device,
                                     snapshot=snapshot, launches=launches, stop_on_failure=True)
    except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's import and forward raise
        # anything; the failure (kind, type, traceback) is the case's result
        kind = classify_exception(exc)
        return _failure(kind if stage == "validate" or kind != "runtime_error" else "import_error", stage, exc)
    validated, val_compile = time.perf_counter(), compile_clock.seconds
    result = EvaluateResult(validation=run.validation, findings=[Finding(**f.__dict__) for f in run.findings],
                            launches=run.launches, torch_compute_ops=run.torch_compute_ops, versions=_versions(),
                            device=_device_name(backend))
    if run.validation.passed and req.timing is not None and backend in ("cuda", "ascend"):
        try:
            result.timing = _time_unrecorded(launches, req, problem, cand_cls, device, backend)
        except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: timing runs the candidate; recorded
            result.timing_error = f"{classify_exception(exc)}: {type(exc).__name__}: {exc}"[:2000]
    c_val, c_all = val_compile, compile_clock.seconds
    result.phase_s = {"compile": c_all, "validation": max(0.0, validated - t0 - c_val),
                      "timing": max(0.0, time.perf_counter() - validated - (c_all - c_val))}
    return result


def _time_unrecorded(launches: Any, req: Any, problem: Any, cand_cls: type, device: str, backend: Backend) -> Any:
    """Time with the launch recorder removed: it describes every launch on the host (signature, constexprs,
    divisibility: ~30-40 us a launch), which a kernel timed after validation would otherwise pay on every call. With
    it installed, flushed do_bench timed the host for launchers of a few launches (the L2 flush hides only ~60 us of
    host work), so a round (recorder on) and the selection re-time (no recorder) measured one kernel differently."""
    launches.uninstall()
    return time_cases(req.cases, req.timing, problem, cand_cls, device, backend)


def _observe_judged(req: EvaluateRequest, problem: Any, cand_cls: type, device: str, snapshot: Any,
                    launches: Any) -> Any:
    """Run the candidate on every case (in the reference's order), write its outputs and observations, and wait
    for the parent's verdict per case; nothing is compared here. The ``validation`` this returns only says whether
    every verdict said continue (it gates timing); the parent's judged validation replaces it."""
    import torch

    from kb.models import Validation
    from optimizer.harness.validate import ValidationRun, deterministic, observe_case

    out_dir = Path(str(req.out_dir))
    ops: set[str] = set()
    go = True
    with deterministic():
        for k, case in enumerate(smallest_first(problem, req.cases)):  # the reference's order
            outs, obs = observe_case(problem, cand_cls, case, req.seeds, device, snapshot, launches)
            torch.save(outs, out_dir / f"out_{k}.pt")
            (out_dir / f"obs_{k}.json").write_text(json.dumps(obs, default=str))
            (out_dir / f"ready_{k}").write_text("")
            verdict = out_dir / f"verdict_{k}.json"
            while not verdict.exists():
                time.sleep(0.01)
            go = bool(json.loads(verdict.read_text()).get("continue"))
            ops |= set(obs.get("cand_ops", []))
            if not go:
                break
    return ValidationRun(Validation(passed=go, failure_reason="" if go else "judged by the parent"), [],
                         launches.summary(), sorted(ops))


def _reference(req: ReferenceRequest) -> ReferenceResult:
    """The reference's outputs per case (smallest first) into ``out_dir``; this process never imports a candidate."""
    import torch

    from optimizer.harness.problem import load_problem
    from optimizer.harness.validate import deterministic, reference_case

    device = _device_for(req.backend)
    if req.backend == "ascend":
        import torch_npu  # noqa: F401
    _interpreter_shims()
    problem = load_problem(req.problem)
    out: list[ReferenceCase] = []
    with deterministic():
        for k, case in enumerate(smallest_first(problem, req.cases)):
            refs, meta = reference_case(problem, case, req.seeds, device)
            f = Path(req.out_dir) / f"ref_{k}.pt"
            torch.save(refs, f)
            out.append(ReferenceCase(case=case, file=str(f), meta=meta))
    return ReferenceResult(cases=out, versions=_versions())


def _judge_run(req: JudgeRunRequest) -> JudgeRunResult:
    """Decide the cases of one candidate in this process (one start per evaluation instead of one per case; never
    imports a candidate): case ``k`` when the parent writes ``go_k``, its result to ``judged_k.json`` at once."""
    from optimizer.harness.problem import load_problem

    ctl, out = Path(req.ctl_dir), Path(req.out_dir)
    problem = None
    judged: list[JudgeResult] = []
    for k, c in enumerate(req.cases):
        while not (ctl / f"go_{k}").exists():
            if (ctl / "stop").exists():
                return JudgeRunResult(judged=judged)
            time.sleep(0.005)
        if problem is None:
            problem = load_problem(req.problem)
        one = _judge(JudgeRequest(problem=req.problem, backend=req.backend, case=c.case, seeds=req.seeds,
                                  ref_file=c.ref_file, meta=c.meta, out_file=c.out_file, obs_file=c.obs_file), problem)
        judged.append(one)
        tmp = out / f".judged_{k}.tmp"  # atomic: the parent polls for the file
        tmp.write_text(json.dumps(to_wire(one), default=str))
        os.replace(tmp, out / f"judged_{k}.json")
        if not one.case.passed:
            break
    return JudgeRunResult(judged=judged)


def _judge(req: JudgeRequest, problem: Any = None) -> JudgeResult:
    """Decide one case (this process never imports a candidate: the candidate's records are data, loaded with
    ``weights_only=True``, and a record it cannot read fails the case)."""
    import torch

    from kb.models import CaseValidation
    from optimizer.harness.problem import case_label, load_problem
    from optimizer.harness.validate import judge_case

    device = _device_for(req.backend)
    if req.backend == "ascend":
        import torch_npu  # noqa: F401
    tp = time.perf_counter()
    problem = load_problem(req.problem) if problem is None else problem
    t0 = time.perf_counter()
    refs = torch.load(req.ref_file, map_location=device, weights_only=True)
    t2 = time.perf_counter()
    try:
        outs = torch.load(req.out_file, map_location=device, weights_only=True)
        obs = json.loads(Path(req.obs_file).read_text())
        t2 = time.perf_counter()
        cv, found = judge_case(problem, req.case, req.seeds, refs, req.meta, outs, obs)
    except Exception as exc:  # noqa: BLE001 - untrusted-data boundary: whatever the candidate wrote fails the case,
        # never the judge
        cv, found = CaseValidation(case=case_label(req.case), passed=False,
                                   message=f"bad_output: the candidate's outputs could not be read: {exc!r}"[:2000]), []
    phase_s = {"problem": t0 - tp, "load": t2 - t0, "compare": time.perf_counter() - t2}
    return JudgeResult(case=cv, findings=[Finding(**f.__dict__) for f in found], phase_s=phase_s)


def _describe(req: DescribeRequest) -> DescribeResult:
    """What the parent needs of a problem (onboarding never imports an untrusted reference in its own process)."""
    import inspect

    from optimizer.harness.problem import case_label, load_problem

    _device_query_stand_in()
    problem = load_problem(req.problem)
    sizes = {}
    for case in [*problem.smoke_cases, *problem.cases]:
        try:
            sizes[case_label(case)] = [problem.bytes_moved(case), problem.flops(case)]
        except Exception:  # noqa: BLE001 - user-code boundary: a broken size helper only loses the ordering
            sizes[case_label(case)] = [None, None]
    try:
        params = [n for n, p in inspect.signature(problem.module.Model.forward).parameters.items() if n != "self"
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = []
    return DescribeResult(name=problem.name, path=str(problem.path), cases=problem.cases,
                          smoke_cases=problem.smoke_cases, inplace_outputs=list(problem.inplace_outputs),
                          int_atol=problem.int_atol, allowed_torch_ops=sorted(problem.allowed_torch_ops),
                          output_dtypes=problem.output_dtypes, cpu_validation=problem.cpu_validation,
                          fp32_reference=problem.fp32_reference(), sizes=sizes, forward_params=params)


def _time(req: TimeRequest) -> TimeResult:
    """Time an already validated candidate against ``timing.against`` (the winner's confirmation re-time)."""
    import optimizer.harness.timing  # binds timer functions before the candidate can touch them

    optimizer.harness.timing.bind_timers()
    from optimizer.harness.problem import load_candidate, load_problem

    backend = req.backend
    problem = load_problem(req.problem)
    cand_cls = load_candidate(req.candidate)
    t0 = time.perf_counter()
    timing = time_cases(req.cases, req.timing, problem, cand_cls, _device_for(backend), backend)
    return TimeResult(timing=timing, device=_device_name(backend), versions=_versions(),
                      phase_s={"timing": time.perf_counter() - t0})


def smallest_first(problem: Any, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cases ordered by ``bytes_moved`` (else ``flops``), smallest first, so a wrong kernel fails fast and cheap."""
    return sorted(cases, key=problem.size)


def _profile(req: ProfileRequest) -> ProfileResult:
    from optimizer.harness.problem import load_candidate, load_problem

    backend = req.backend
    problem = load_problem(req.problem)
    cand_cls = load_candidate(req.candidate)
    if backend == "cuda":
        from optimizer.profile.cuda import profile_cases

        return ProfileResult.model_validate({"profile": profile_cases(problem, cand_cls, req.cases, iters=req.iters)})
    if backend == "ascend":
        from optimizer.profile.ascend import profile_cases_npu

        return ProfileResult.model_validate(
            {"profile": profile_cases_npu(problem, cand_cls, req.cases, out_dir=req.out_dir)}
        )
    return ProfileResult(profile=None, note=f"no profiler for backend {backend}")


def _run(req: RunRequest) -> RunResult:
    """Run the forward ``iters`` times per case (the process ncu or msprof wraps)."""
    import torch

    from optimizer.harness.problem import load_candidate, load_problem

    backend = req.backend
    device = _device_for(backend)
    if backend == "ascend":
        import torch_npu  # noqa: F401
    problem = load_problem(req.problem)
    cand_cls = load_candidate(req.candidate)
    for case in req.cases:
        inputs = problem.make_inputs(case, 0, device=device)
        cand = problem.instantiate(cand_cls, case, seed=0, device=device)
        ranged = req.profiler_range and device == "cuda"
        with torch.no_grad():
            for _ in range(req.warmup):
                cand(*inputs)
            if ranged:
                torch.cuda.synchronize()
                torch.cuda.cudart().cudaProfilerStart()
            for _ in range(req.iters):
                cand(*inputs)
        if device == "cuda":
            torch.cuda.synchronize()
        if ranged:
            torch.cuda.cudart().cudaProfilerStop()
    return RunResult(ran=True)


def _launches(req: LaunchesRequest) -> LaunchesResult:
    """Record the launches of one forward on CPU tensors WITHOUT executing any kernel (``LaunchRecorder(dry=True)``).

    This gives L1 and L3 the grid, constexprs and argument divisibility of a full-size case on a machine that
    cannot run it (the interpreter would take minutes, or lacks libdevice). Outputs are garbage by design; host
    code that fails on them after the launches were recorded is tolerated and reported.
    """
    import torch

    from optimizer.harness.probes import LaunchRecorder
    from optimizer.harness.problem import load_candidate, load_problem

    _interpreter_shims(dry=True)
    rec = LaunchRecorder(dry=True).install()
    problem = load_problem(req.problem)
    cand_cls = load_candidate(req.candidate)
    case = req.case
    note = ""
    try:
        inputs = problem.make_inputs(case, 0, device="cpu")
        cand = problem.instantiate(cand_cls, case, seed=0, device="cpu")
        with torch.no_grad():
            cand(*inputs)
    except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: host code reading garbage outputs; the
        # launches before it are what we need (the stop is recorded in the note)
        note = f"forward stopped after {rec.count} launch(es): {type(exc).__name__}: {exc}"[:600]
    finally:
        rec.uninstall()
    return LaunchesResult(launches=rec.summary(), note=note, case=case)

def _compile_check(req: CompileCheckRequest) -> CompileCheckResult | ErrorResult:
    """Compile-only check (no TRITON_INTERPRET): every launch of the forward on meta compiles for sm_90."""
    from optimizer.harness.problem import load_candidate, load_problem

    _device_query_stand_in()
    recorder = CompileRecorder(req.arch).install()
    problem = load_problem(req.problem)
    try:
        cand_cls = load_candidate(req.candidate)
    except Exception as exc:  # noqa: BLE001 - untrusted-code boundary: the candidate's import raises anything
        return _failure("import_error", "import", exc)
    import triton  # noqa: F401  (for _versions)

    compiled = [CompileCase.model_validate(c) for c in compile_cases(problem, cand_cls, req.cases, recorder)]
    return CompileCheckResult(
        compile=compiled, versions=_versions(), device=f"none (compiled for cuda:{recorder.arch})"
    )


_TASKS: dict[str, Any] = {"evaluate": _evaluate, "time": _time, "profile": _profile, "run": _run, "launches": _launches,
                          "compile_check": _compile_check, "reference": _reference, "judge": _judge,
                          "judge_run": _judge_run,
                          "describe": _describe}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    token = sys.stdin.readline().strip()
    sys.stdin.close()
    return run_request(Path(argv[0]), Path(argv[1]), token)


def run_request(req_path: Path, res_path: Path, token: str) -> int:
    """Run the task in ``req_path`` and write the result (with ``token``) atomically to ``res_path``."""
    raw = json.loads(req_path.read_text())
    t0 = time.perf_counter()
    try:
        req = parse_request(raw)
        result = _TASKS[req.task](req)
    except ContractError as exc:
        result = ErrorResult(error=WorkerError(kind="bad_request", stage="request", message=str(exc)[:4000]))
    except Exception as exc:  # noqa: BLE001 - worker process boundary: recorded in the result (kind, traceback)
        from optimizer.harness.probes import classify_exception

        result = _failure(classify_exception(exc), str(raw.get("task", "?")) if isinstance(raw, dict) else "?", exc)
    payload = to_wire(result)
    payload["token"] = token
    payload["worker_s"] = time.perf_counter() - t0
    tmp = res_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, default=str))
    os.replace(tmp, res_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
