"""Typed contracts of the sandboxed worker (``optimizer.harness.worker``): one request model per task and its result.

On the pipe everything stays JSON: the parent writes ``to_wire(request)``, the worker reads it back with
``parse_request`` and answers ``to_wire(result)`` (plus the sandbox's ``token`` and ``worker_s``), and the parent
reads that with ``parse_result``. Both raise ``ContractError`` naming the field
that is wrong. Tasks: ``evaluate``, ``time``, ``profile``, ``run``, ``launches``, ``compile_check``; any task
may answer ``{"error": WorkerError}`` instead (the sandbox classifies it).

``TimingCase`` is one case's interleaved timing (``Evaluation.timing_cases``): ``stats`` of the candidate,
``reference_stats`` of the PyTorch reference, block medians and stats per role.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from kb.errors import InvalidArgument
from kb.models import CaseValidation, TimingProtocol, Validation
from optimizer.backend import Backend

if TYPE_CHECKING:
    from optimizer.settings import LadderSettings

__all__ = [
    "Backend", "CompileCase", "CompileCheckRequest", "CompileCheckResult", "ContractError", "CudaProfileCase",
    "AscendProfileCase", "ErrorResult", "EvaluateRequest", "EvaluateResult", "Finding", "KernelTime", "LaunchRecord",
    "LaunchesRequest",
    "LaunchesResult", "ProfileRequest", "ProfileResult", "RunRequest", "RunResult", "Stats", "TimeRequest",
    "TimeResult", "TimingCase", "TimingOptions", "TimingResult", "WorkerError", "WorkerRequest", "parse_request",
    "timing_request",
    "ReferenceRequest", "ReferenceCase", "ReferenceResult", "JudgeRequest", "JudgeResult", "JudgeCase",
    "JudgeRunRequest", "JudgeRunResult", "DescribeRequest",
    "DescribeResult",
    "parse_result", "to_wire",
]

Case = dict[str, Any]


@with_config(ConfigDict(extra="allow"))
class LaunchRecord(TypedDict, total=False):
    """One launch configuration recorded by ``optimizer.harness.probes.LaunchRecorder.summary`` (or a compile record
    of ``compile_only``). A ``TypedDict``: at run time it IS a dict (``rec["kernel"]``, ``rec.get("options")`` keep
    working, unknown keys are kept), while type checkers and readers see the fields. Every field is optional."""

    kernel: str  #: the kernel's name (the JITFunction's ``__name__``)
    file: str  #: the source file that defines it
    signature: dict[str, str]  #: non-constexpr parameter -> Triton type (``*fp32``, ``i32``, ``fp32``)
    constexprs: dict[str, Any]  #: constexpr parameter -> value of this launch
    divisible_by_16: list[str]  #: pointer / integer parameters the JIT specialized as 16-divisible
    numel: dict[str, int]  #: pointer parameter -> elements of the tensor passed
    ir_args: dict[str, Any]  #: the specialization as ``ladder ir --arg`` reads it (``optimizer.ir.capture``)
    options: dict[str, Any]  #: num_warps / num_stages / num_ctas / maxnreg of this launch
    grid: Any  #: the grid as launched (a list of ints, or the callable's repr)
    error: str  #: why the launch could not be described (the record then holds only ``kernel``)
    launches: int  #: how many launches had exactly this configuration
    cases: list[str]  #: labels of the cases whose calls launched it (validation sets them; empty where unknown)


#: a launch record (kept as an alias: every field of a contract that holds launch records is a ``list[Launch]``)
Launch = LaunchRecord


class ContractError(InvalidArgument, ValueError):
    """A worker request or result does not match its contract; the message names the field. In the product's
    exception tree (``kb.errors``) as an invalid argument; still a ``ValueError`` for callers that catch that."""


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------- requests
class TimingOptions(_Contract):
    """How ``evaluate`` / ``time`` measure: the interleaved-block protocol (``optimizer.harness.timing``)."""

    warmup_ms: float = 25.0
    rep_ms: float = 20.0
    blocks: int = Field(default=8, ge=1)
    graph_below_us: float | None = 50.0
    flush_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    reference: bool = Field(default=True, description="also time the PyTorch reference once per case")
    against: dict[str, str] = Field(default_factory=dict, description="role (initial, base) -> candidate file")
    aa: bool = Field(default=False, description="time a second instance of the candidate (the A/A noise floor)")
    methods: dict[str, Literal["do_bench", "cudagraph"]] = Field(
        default_factory=dict,
        description="case label -> the device-time method the session fixed for it at its baseline; "
        "a case not listed is decided from the initial kernel (role initial, else the candidate) in this call",
    )
    host: bool = Field(default=True, description="also measure each role's steady-state wall and launch time per call")


def timing_request(settings: LadderSettings, against: Mapping[str, Path] | None, aa: bool,
                   methods: Mapping[str, str] | None = None) -> TimingOptions:
    """The ``TimingOptions`` the session's settings ask for (``against``: role -> candidate file; ``aa``: the A/A
    instance; ``methods``: the session's fixed per-case timing methods)."""
    return TimingOptions.model_validate({  # ``methods`` values are checked against the contract's literal
        "warmup_ms": settings.timing_warmup_ms, "rep_ms": settings.timing_rep_ms, "blocks": settings.timing_blocks,
        "graph_below_us": settings.timing_graph_below_us, "flush_bytes": settings.l2_flush_mb * 1024 * 1024,
        "reference": True, "against": {k: str(v) for k, v in (against or {}).items()}, "aa": aa,
        "methods": dict(methods or {})})


class _CandidateRequest(_Contract):
    problem: str
    candidate: str


class EvaluateRequest(_CandidateRequest):
    task: Literal["evaluate"] = "evaluate"
    backend: Backend
    cases: list[Case]
    seeds: list[int]
    timing: TimingOptions | None = None
    out_dir: str | None = Field(default=None, description="judged mode: per case, outputs and observations are "
                                "written here and the worker waits for the parent's verdict (optimizer.harness.judge)")


class ReferenceRequest(_Contract):
    """The reference's outputs for every case (a worker that imports the problem only, never a candidate)."""

    task: Literal["reference"] = "reference"
    problem: str
    backend: Backend
    cases: list[Case]
    seeds: list[int]
    out_dir: str


class JudgeRequest(_Contract):
    """Decide one case from the reference's and the candidate's files (a worker that never imports a candidate)."""

    task: Literal["judge"] = "judge"
    problem: str
    backend: Backend
    case: Case
    seeds: list[int]
    ref_file: str
    meta: dict[str, Any]
    out_file: str
    obs_file: str


class JudgeCase(_Contract):
    """One case of a ``JudgeRunRequest``: the reference's record and where the candidate writes its own."""

    case: Case
    ref_file: str
    meta: dict[str, Any]
    out_file: str
    obs_file: str


class JudgeRunRequest(_Contract):
    """Decide a candidate's cases in one process (never imports a candidate): case ``k`` once the parent writes
    ``go_k`` into ``ctl_dir`` (its outputs are then ready), its ``JudgeResult`` to ``out_dir/judged_k.json``; the run
    ends at the last case, the first failing one, or ``ctl_dir/stop``. The final result lists every decision."""

    task: Literal["judge_run"] = "judge_run"
    problem: str
    backend: Backend
    seeds: list[int]
    cases: list[JudgeCase]
    ctl_dir: str
    out_dir: str


class DescribeRequest(_Contract):
    """What the parent needs of a problem without importing it (onboarding: the reference is untrusted code)."""

    task: Literal["describe"] = "describe"
    problem: str


class TimeRequest(_CandidateRequest):
    task: Literal["time"] = "time"
    backend: Backend
    cases: list[Case]
    timing: TimingOptions


class ProfileRequest(_CandidateRequest):
    task: Literal["profile"] = "profile"
    backend: Backend
    cases: list[Case]
    iters: int = Field(default=20, ge=1)
    out_dir: str = Field(default=".", description="where the Ascend profiler writes its traces")


class RunRequest(_CandidateRequest):
    """Run the forward ``iters`` times per case: the process ``ncu`` or ``msprof`` wraps.

    ``warmup`` forwards per case run first (JIT compilation and autotuning happen there); with
    ``profiler_range`` the measured forwards sit between ``cudaProfilerStart``/``Stop``, so ``ncu
    --profile-from-start off`` sees only them, not the autotuner's benchmark launches."""

    task: Literal["run"] = "run"
    backend: Backend
    cases: list[Case]
    iters: int = Field(default=3, ge=1)
    warmup: int = Field(default=0, ge=0)
    profiler_range: bool = False


class LaunchesRequest(_CandidateRequest):
    task: Literal["launches"] = "launches"
    case: Case


class CompileCheckRequest(_CandidateRequest):
    task: Literal["compile_check"] = "compile_check"
    cases: list[Case]
    arch: int = 90


WorkerRequest = Annotated[
    EvaluateRequest | TimeRequest | ProfileRequest | RunRequest | LaunchesRequest | CompileCheckRequest
    | ReferenceRequest | JudgeRequest | JudgeRunRequest | DescribeRequest,
    Field(discriminator="task"),
]
_REQUEST: TypeAdapter[Any] = TypeAdapter(WorkerRequest)


# ----------------------------------------------------------------------------------------------- results
class Stats(_Contract):
    """``optimizer.harness.timing.BenchStats`` as JSON; only the median is required (older records carry only it)."""

    median_ms: float
    mean_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    p20_ms: float | None = None
    p80_ms: float | None = None
    n: int | None = None


class TimingCase(_Contract):
    case: str = Field(description="the case label (optimizer.harness.problem.case_label)")
    stats: Stats = Field(description="the candidate")
    reference_stats: Stats | None = Field(default=None, description="the PyTorch reference (timed once per case)")
    method: str = ""
    method_note: str = ""
    blocks: dict[str, list[float]] = Field(default_factory=dict, description="role -> interleaved block medians (ms)")
    role_stats: dict[str, Stats] = Field(default_factory=dict, description="role -> stats over its blocks")
    decided_ms: float | None = Field(default=None, description="the deciding kernel's first median when the method was "
                                     "chosen in this call (None: the session's fixed method)")
    fell_back: bool = Field(default=False, description="a fixed cudagraph method could not capture: do_bench this call")
    host: dict[str, dict[str, float]] = Field(default_factory=dict, description="role -> {wall_ms, launch_ms, calls}: "
                                              "steady-state host figures per call (timing.host_wall_ms)")


class TimingResult(_Contract):
    protocol: TimingProtocol
    cases: list[TimingCase] = Field(default_factory=list)


class Finding(_Contract):
    """``optimizer.harness.hacks.HackFinding`` as JSON."""

    code: str
    severity: Literal["reject", "warn"]  #: ``optimizer.harness.hacks.Severity``
    message: str
    line: int | None = None


class WorkerError(_Contract):
    kind: str = "runtime_error"
    stage: str = "?"
    message: str = ""
    traceback: str = ""


class ErrorResult(_Contract):
    """The answer of a task that failed (the sandbox turns it into a non-ok ``SandboxResult``)."""

    error: WorkerError


class EvaluateResult(_Contract):
    validation: Validation
    findings: list[Finding] = Field(default_factory=list)
    launches: list[Launch] = Field(default_factory=list)
    torch_compute_ops: list[str] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    device: str = ""
    timing: TimingResult | None = None
    timing_error: str = ""
    phase_s: dict[str, float] = Field(default_factory=dict)


class TimeResult(_Contract):
    timing: TimingResult
    device: str = ""
    versions: dict[str, str] = Field(default_factory=dict)
    phase_s: dict[str, float] = Field(default_factory=dict)


class KernelTime(_Contract):
    name: str
    us_per_call: float
    launches_per_call: float


class CudaProfileCase(_Contract):
    """One case of the torch.profiler breakdown (``optimizer.profile.cuda.profile_cases``)."""

    case: str
    wall_ms: float
    device_ms: float
    kernel_fraction: float | None = Field(description="device / wall time; None when no kernel was seen")
    launches_per_call: float
    kernels: list[KernelTime] = Field(default_factory=list)


class AscendProfileCase(_Contract):
    """One case of the torch-npu profiler (``optimizer.profile.ascend.profile_cases_npu``; untested on hardware)."""

    case: str
    csv: str | None = None
    summary: dict[str, Any] = Field(default_factory=dict)
    classification: dict[str, Any] | None = None


class ProfileResult(_Contract):
    profile: list[CudaProfileCase] | list[AscendProfileCase] | None = None
    note: str = ""


class RunResult(_Contract):
    ran: bool


class LaunchesResult(_Contract):
    launches: list[Launch] = Field(default_factory=list)
    note: str = ""
    case: Case = Field(default_factory=dict)


class CompileCase(_Contract):
    case: Case
    ok: bool
    launches: list[dict[str, Any]] = Field(
        default_factory=list, description="compile records (case, ok, launches, message)"
    )
    message: str = ""


class CompileCheckResult(_Contract):
    compile: list[CompileCase]
    versions: dict[str, str] = Field(default_factory=dict)
    device: str = ""


class ReferenceCase(_Contract):
    case: Case
    file: str = Field(description="the reference's outputs (torch.save) in the request's out_dir")
    meta: dict[str, Any] = Field(default_factory=dict, description="error, label, largest, half, ref_ops ...")


class ReferenceResult(_Contract):
    cases: list[ReferenceCase] = Field(description="smallest case first (the order the candidate runs them)")
    versions: dict[str, str] = Field(default_factory=dict)


class JudgeResult(_Contract):
    case: CaseValidation
    findings: list[Finding] = Field(default_factory=list)
    #: the judge's own seconds: ``load`` (the reference's and the candidate's records), ``compare`` (every rule)
    phase_s: dict[str, float] = Field(default_factory=dict)


class JudgeRunResult(_Contract):
    judged: list[JudgeResult] = Field(default_factory=list, description="case k's decision at index k, in order, up "
                                      "to the first failing case or the stop")


class DescribeResult(_Contract):
    name: str
    path: str
    cases: list[Case]
    smoke_cases: list[Case]
    inplace_outputs: list[int] = Field(default_factory=list)
    int_atol: int = 0
    allowed_torch_ops: list[str] = Field(default_factory=list)
    output_dtypes: dict[int, str] = Field(default_factory=dict)
    cpu_validation: str = "execute"
    fp32_reference: bool = True
    sizes: dict[str, list[float | None]] = Field(default_factory=dict, description="case label -> [bytes, flops]")
    forward_params: list[str] = Field(default_factory=list, description="Model.forward's parameters after self")


#: what the sandbox adds to every result, and the error answer any task may give instead
ENVELOPE = frozenset({"token", "worker_s"})
R = TypeVar("R", bound=BaseModel)


def _explain(exc: ValidationError, what: str) -> ContractError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return ContractError(f"{what}: field {where!r}: {first['msg']}{more}")


def to_wire(model: BaseModel) -> dict[str, Any]:
    """``model`` as the dict the sandbox writes with ``json.dumps(..., default=str)``: Python mode, so a value JSON
    cannot hold (a torch dtype in a case, a tuple in a launch record) is written as before, not refused."""
    return model.model_dump()


def parse_request(data: dict[str, Any]) -> WorkerRequest:
    """The typed request for ``data`` (its ``task`` picks the model); ``ContractError`` names a wrong field."""
    if not isinstance(data, dict) or "task" not in data:
        tasks = "evaluate, time, profile, run, launches, compile_check, reference, judge or describe"
        raise ContractError(f"worker request: field 'task' is missing ({tasks})")
    try:
        return _REQUEST.validate_python(data)
    except ValidationError as exc:
        raise _explain(exc, f"worker request {data.get('task')!r}") from None


def parse_result(model: type[R], payload: dict[str, Any]) -> R:
    """``payload`` (a worker result without its envelope) as ``model``; ``ContractError`` names a wrong field."""
    try:
        return model.model_validate({k: v for k, v in payload.items() if k not in ENVELOPE})
    except ValidationError as exc:
        raise _explain(exc, f"worker result {model.__name__}") from None
