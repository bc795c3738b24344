"""Profilers run in the sandbox for L2: torch.profiler, Nsight Compute and the Ascend profiler (GPU/NPU only).

The ladder's levels reach the sandbox only through here and ``optimizer.harness.evaluation``. Each function builds the
worker request of ``optimizer.harness.contracts``, runs it with the session's limits and returns a typed result whose
``error`` says why nothing was measured; none raises for a candidate or tool fault.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from optimizer.harness.contracts import (
    AscendProfileCase,
    ContractError,
    CudaProfileCase,
    ProfileRequest,
    ProfileResult,
    RunRequest,
    parse_result,
    to_wire,
)
from optimizer.harness.problem import Problem
from optimizer.harness.sandbox import SandboxLimits, SandboxResult, run_worker
from optimizer.settings import LadderSettings

__all__ = ["AscendProfile", "NcuCounters", "NcuLaunches", "Profile", "ascend_profile", "ncu", "ncu_launches", "profile"]


class Profile(BaseModel):
    """The torch.profiler breakdown per case, or why there is none."""

    model_config = ConfigDict(extra="forbid")

    cases: list[CudaProfileCase] = Field(default_factory=list)
    error: str = ""


class AscendProfile(BaseModel):
    """The torch-npu profiler per case (untested on hardware), or why there is none."""

    model_config = ConfigDict(extra="forbid")

    cases: list[AscendProfileCase] = Field(default_factory=list)
    error: str = ""


class NcuCounters(BaseModel):
    """``optimizer.profile.cuda.summarize_ncu`` over the launches ncu saw (empty if none), or why the run failed."""

    model_config = ConfigDict(extra="forbid")

    summary: dict[str, object] = Field(default_factory=dict)
    error: str = ""


def _limits(settings: LadderSettings, timeout_s: float | None = None) -> SandboxLimits:
    return SandboxLimits(timeout_s or settings.sandbox_timeout_s, settings.sandbox_memory_mb, False)


def _profile_result(res: SandboxResult) -> tuple[ProfileResult | None, str]:
    if not res.ok:
        return None, res.reason
    try:
        return parse_result(ProfileResult, res.payload), ""
    except ContractError as exc:
        return None, f"bad_result: {exc}"


def profile(problem: Problem, candidate: Path, *, settings: LadderSettings, iters: int = 20) -> Profile:
    """torch.profiler per case of ``problem.cases_for("cuda")`` (kernels, device vs host wall time); GPU only."""
    req = ProfileRequest(problem=str(problem.path), candidate=str(candidate), backend="cuda",
                         cases=problem.cases_for("cuda"), iters=iters)
    res = run_worker(to_wire(req), limits=_limits(settings), use_zygote=settings.sandbox_fork_server)
    out, error = _profile_result(res)
    if out is None:
        return Profile(error=error)
    return Profile(cases=[c for c in out.profile or [] if isinstance(c, CudaProfileCase)])


def ncu(problem: Problem, candidate: Path, *, settings: LadderSettings, kernels: str | None) -> NcuCounters:
    """Nsight Compute counters (``CLASSIFIER_METRICS``) of one forward of the largest case (by ``bytes_moved``, else
    ``flops``; the first when the problem declares neither), for kernels matching the regular expression ``kernels``
    (all when None). The summary is time-weighted over launches, so the largest case dominated it when every case
    ran; one case saves a replay per case (ncu was the largest phase of a round once workers forked). Needs ``ncu``
    on PATH and a GPU; untested in CI."""
    from optimizer.profile.cuda import CLASSIFIER_METRICS, ncu_command, parse_ncu_csv, summarize_ncu

    # ncu runs inside the worker's jail, whose /tmp is private: its log folder is bound writable, else ncu cannot open
    # the log, exits 1 at once and writes nothing anywhere
    log = Path(tempfile.mkdtemp(prefix="ladder_ncu_")) / "ncu.csv"
    cases = problem.cases_for("cuda")
    req = RunRequest(problem=str(problem.path), candidate=str(candidate), backend="cuda",
                     cases=[max(cases, key=problem.size)] if cases else [], iters=1, warmup=1, profiler_range=True)
    res = run_worker(to_wire(req), limits=_limits(settings, max(settings.sandbox_timeout_s, 600)),
                     prefix_cmd=ncu_command(str(log), kernels or None, metrics=CLASSIFIER_METRICS, ranged=True,
                                            launch_count=settings.ncu_launch_count),
                     writable=[str(log.parent)])
    rows = parse_ncu_csv(log.read_text()) if log.exists() else []
    if rows:
        return NcuCounters(summary=summarize_ncu(rows))
    return NcuCounters(error="" if res.ok else res.reason)


class NcuLaunches(BaseModel):
    """Every launch of one forward of one case as ncu's raw metrics (``optimizer.profile.ncu_account``), or why
    there are none."""

    model_config = ConfigDict(extra="forbid")

    rows: list[dict[str, object]] = Field(default_factory=list)
    units: dict[str, str] = Field(default_factory=dict, description="the unit ncu printed for each metric")
    error: str = ""


def ncu_launches(problem: Problem, candidate: Path, case: dict[str, object], *, settings: LadderSettings,
                 metrics: tuple[str, ...] | None = None, kernels: str | None = None,
                 timeout_s: float = 600.0) -> NcuLaunches:
    """The raw metrics of the measured account (``ncu_account.ACCOUNT_METRICS`` unless ``metrics``) for each launch
    of one forward of ``case`` (one warm-up forward first, outside the profiled range). Needs ``ncu`` and a GPU;
    untested in CI."""
    from optimizer.profile.ncu_account import (
        ACCOUNT_METRICS,
        NcuUnitError,
        account_command,
        parse_raw_metrics,
        raw_units,
    )

    log = Path(tempfile.mkdtemp(prefix="ladder_ncu_account_")) / "ncu.csv"  # bound writable, as in ncu_counters
    req = RunRequest(problem=str(problem.path), candidate=str(candidate), backend="cuda", cases=[case], iters=1,
                     warmup=1, profiler_range=True)
    res = run_worker(to_wire(req), limits=_limits(settings, timeout_s),
                     prefix_cmd=account_command(str(log), metrics or ACCOUNT_METRICS, kernel_regex=kernels),
                     writable=[str(log.parent)])
    text = log.read_text(errors="replace") if log.exists() else ""
    try:
        rows = parse_raw_metrics(text)
    except NcuUnitError as e:
        return NcuLaunches(units=raw_units(text), error=str(e))
    if rows:
        return NcuLaunches(rows=rows, units=raw_units(text))
    # ncu writes its own errors (==ERROR== ...) to the log file, not to the worker's stderr
    said = " | ".join(ln.strip() for ln in text.splitlines() if ln.startswith("==") and "PROF" not in ln)[-600:]
    why = res.reason if not res.ok else "ncu saw no launch"
    return NcuLaunches(error=f"{why}; ncu log: {said}" if said else why)


def ascend_profile(problem: Problem, candidate: Path, *, settings: LadderSettings) -> AscendProfile:
    """torch-npu profiler + msprof op-summary per case of ``problem.cases_for("ascend")``. UNTESTED: no NPU here."""
    req = ProfileRequest(problem=str(problem.path), candidate=str(candidate), backend="ascend",
                         cases=problem.cases_for("ascend"), out_dir=tempfile.mkdtemp(prefix="ladder_msprof_"))
    out, error = _profile_result(run_worker(to_wire(req), limits=_limits(settings)))
    if out is None:
        return AscendProfile(error=error)
    return AscendProfile(cases=[c for c in out.profile or [] if isinstance(c, AscendProfileCase)])
