"""Fan optimization sessions out over a Ray cluster: one Ray task per session, one accelerator each.

Each task asks for its accelerator (``num_gpus=1``; ``resources={"NPU": 1}``; ``num_cpus=1`` for the CPU
interpreter), connects to the central KB over gRPC (``--server``), runs the session and submits the trajectory
under a deterministic id (``spec.trajectory_id``). Ray re-runs a task whose worker died (``max_retries``) or
that raised a transient KB error (``retry_exceptions``); the re-submission carries the same id, and the server
stores it once. Tasks report progress to a small actor; the driver drains it while it ``ray.wait``s on the
tasks and aggregates done / failed / retried counts and each session's best speedup.

Workers must be able to import this package (same checkout or an installed wheel). Problem sources travel
with the spec, so workers need not see the driver's files. Secrets (LLM keys) are read from the workers'
environment (``LADDER_LLM_*``), never shipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kb.errors import InvalidArgument, ToolchainError, log_error
from optimizer.backend import Backend
from optimizer.cluster.progress import Aggregator, Progress
from optimizer.cluster.spec import (
    ClusterResult,
    SessionSpec,
    default_backend,
    make_specs,
    new_campaign_id,
)
from optimizer.cluster.task import RETRYABLE, Connect, require_central_kb, run_session

log = logging.getLogger(__name__)

__all__ = ["run_cluster", "task_options"]


class _Board:
    """Collects the events tasks post (fire-and-forget) until the driver drains them."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def post(self, key: str, event: str, data: dict[str, Any]) -> None:
        self.events.append((key, event, data))

    def drain(self) -> list[tuple[str, str, dict[str, Any]]]:
        out, self.events = self.events, []
        return out


def _task(spec: SessionSpec, board: Any, connect: Connect | None) -> dict[str, Any]:
    import ray

    def report(event: str, data: dict[str, Any]) -> None:
        board.post.remote(spec.key, event, data)

    summary = run_session(spec, report, connect)
    ray.get(board.post.remote(spec.key, "returning", {}))  # actor calls run in order: every event is in before this
    return summary


def task_options(resource: str, max_retries: int) -> dict[str, Any]:
    """Ray options for one session task."""
    opts: dict[str, Any] = {"max_retries": max_retries, "retry_exceptions": list(RETRYABLE), "num_cpus": 1}
    if resource == "GPU":
        opts |= {"num_gpus": 1, "max_calls": 1}  # a fresh worker per session: no CUDA state from another device
    elif resource == "NPU":
        opts |= {"resources": {"NPU": 1}, "max_calls": 1}  # Ray sets ASCEND_RT_VISIBLE_DEVICES for NPU tasks
    elif resource != "CPU":
        raise InvalidArgument(f"--resource must be GPU, NPU or CPU, not {resource!r}", field="resource")
    return opts


def _init(address: str, num_cpus: int | None) -> bool:
    """Connect to (or start) Ray; True when this call started it (and must shut it down)."""
    try:
        import ray
    except ImportError as exc:
        raise ToolchainError("Ray is not installed: pip install 'ray[default]' (or use the per-device process "
                             "runner, optimizer.cluster.procs, on a single machine)") from exc
    if ray.is_initialized():
        return False
    if address == "local":
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return True


def run_cluster(
    problems: Sequence[str | Path],
    *,
    address: str = "auto",
    server: str | None = None,
    token: str | None = None,
    resource: str = "GPU",
    rounds: int = 15,
    backend: Backend | None = None,
    proposer: str = "offline",
    max_retries: int = 2,
    progress: Progress | None = None,
    campaign: str | None = None,
    candidates: dict[str, str | Path] | None = None,
    settings: dict[str, Any] | None = None,
    out_root: str | Path | None = None,
    num_cpus: int | None = None,
    connect: Connect | None = None,
    poll_s: float = 0.5,
    stop: Callable[[], bool] | None = None,
) -> list[ClusterResult]:
    """Run one session per problem on the Ray cluster at ``address`` (``local`` starts one on this machine).

    Returns one ``ClusterResult`` per problem, in order. ``connect`` replaces the KB factory inside tasks
    (tests inject faults with it); it must be picklable. ``stop()`` returning True cancels what is left.
    """
    resource = resource.upper()
    opts = task_options(resource, max_retries)
    require_central_kb(server)
    backend = backend or default_backend(resource)
    specs = make_specs(problems, campaign=campaign or new_campaign_id(), backend=backend, rounds=rounds,
                       proposer=proposer, server=server, token=token, out_root=out_root, settings=settings,
                       candidates=candidates)
    started = _init(address, num_cpus)
    import ray

    try:
        have = ray.cluster_resources().get(resource, 0)
        if have < 1:
            raise InvalidArgument(
                f"the Ray cluster at {address} has no {resource} resource ({dict(ray.cluster_resources())}); "
                f"start workers with it (ray start --resources='{{\"{resource}\": N}}' or --num-gpus N)",
                field="resource",
            )
        return _drive(specs, opts, connect, Aggregator(specs, progress), poll_s, stop)
    finally:
        if started:
            ray.shutdown()


def _drive(specs: list[SessionSpec], opts: dict[str, Any], connect: Connect | None, agg: Aggregator, poll_s: float,
           stop: Callable[[], bool] | None) -> list[ClusterResult]:
    import ray

    board: Any = ray.remote(num_cpus=0)(_Board).remote()  # an actor handle: its methods gain .remote
    task = ray.remote(_task).options(**opts)
    refs = {task.remote(s, board, connect): s.key for s in specs}
    pending = list(refs)

    def drain() -> None:
        for key, event, data in ray.get(board.drain.remote()):
            if event != "returning":
                agg.event(key, event, data)

    while pending:
        done, pending = ray.wait(pending, num_returns=len(pending), timeout=poll_s)
        drain()
        for ref in done:
            try:
                agg.finished(refs[ref], ray.get(ref))
            except Exception as exc:  # noqa: BLE001 - per-session boundary: retries exhausted or a non-retryable
                # error is recorded with its id, the other sessions go on
                error_id = log_error(log, exc, f"campaign session {refs[ref]}", level=logging.INFO)
                agg.failed(refs[ref], f"{type(exc).__name__}: {exc} (error {error_id})")
        if stop is not None and stop():
            for ref in pending:
                ray.cancel(ref, force=True)
                agg.failed(refs[ref], "cancelled")
            break
    drain()
    ray.kill(board)
    return agg.results()
