"""Fan sessions out over the devices of ONE machine with plain processes: the no-Ray runner.

This is not Ray. It exists for machines where Ray cannot be installed (the lent GPU image has no network and
the Ray wheel is larger than what can be carried there). One slot per device; each slot runs its sessions one
after another, each in a fresh ``python -m optimizer.cluster.procs --worker`` process that sees only its
device (``CUDA_VISIBLE_DEVICES`` / ``ASCEND_RT_VISIBLE_DEVICES``). The session body, the deterministic
trajectory ids, the retry rules (a dead worker or a transient KB error -> run again, up to ``max_retries``)
and the progress aggregation are the ones the Ray runner uses.

Worker protocol: the spec arrives as JSON on stdin; the worker writes JSON lines on its original stdout
(``{"event", "data"}`` then ``{"result"}`` or ``{"error", "retryable"}``); everything else it prints goes to
a log file per attempt, next to the session's outputs.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optimizer.backend import Backend
from optimizer.cluster.progress import Aggregator, Progress
from optimizer.cluster.spec import (
    ClusterResult,
    SessionSpec,
    default_backend,
    make_specs,
    new_campaign_id,
)

__all__ = ["run_local", "worker_main"]

_VISIBLE = {"GPU": "CUDA_VISIBLE_DEVICES", "NPU": "ASCEND_RT_VISIBLE_DEVICES"}


def run_local(problems: Sequence[str | Path], *, devices: list[str], resource: str = "GPU", server: str | None = None,
              token: str | None = None, rounds: int = 15, backend: Backend | None = None, proposer: str = "offline",
              max_retries: int = 2, progress: Progress | None = None, campaign: str | None = None,
              candidates: dict[str, str | Path] | None = None, settings: dict[str, Any] | None = None,
              out_root: str | Path | None = None) -> list[ClusterResult]:
    """One session per problem, at most one at a time per device in ``devices`` (``["0", "1"]``)."""
    from kb.errors import InvalidArgument
    from optimizer.cluster.task import require_central_kb

    resource = resource.upper()
    if resource not in ("GPU", "NPU", "CPU"):
        raise InvalidArgument(f"resource must be GPU, NPU or CPU, not {resource!r}", field="resource")
    if not devices:
        raise InvalidArgument("give at least one device (e.g. 0,1)", field="devices")
    require_central_kb(server)
    campaign = campaign or new_campaign_id()
    root = Path(out_root).resolve() if out_root else Path(tempfile.gettempdir()) / "ladder-cluster"
    specs = make_specs(
        problems,
        campaign=campaign,
        backend=backend or default_backend(resource),
        rounds=rounds,
        proposer=proposer,
        server=server,
        token=token,
        out_root=root,
        settings=settings,
        candidates=candidates,
    )
    agg = Aggregator(specs, progress)
    work: queue.Queue[SessionSpec] = queue.Queue()
    for s in specs:
        work.put(s)
    threads = [threading.Thread(target=_slot, args=(dev, resource, work, agg, max_retries, root), daemon=True,
                                name=f"ladder-slot-{dev}") for dev in devices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return agg.results()


def _slot(device: str, resource: str, work: queue.Queue[SessionSpec], agg: Aggregator, max_retries: int,
          root: Path) -> None:
    env = dict(os.environ)
    if resource in _VISIBLE:
        env[_VISIBLE[resource]] = device
    while True:
        try:
            spec = work.get_nowait()
        except queue.Empty:
            return
        error = ""
        for attempt in range(max_retries + 1):
            result, error, retryable = _attempt(
                spec, env, agg, root / spec.campaign / f"{spec.key}.attempt{attempt}.log"
            )
            if result is not None:
                agg.finished(spec.key, result)
                break
            if not retryable:
                break
        else:
            error = f"gave up after {max_retries + 1} attempts; last: {error}"
        if result is None:
            agg.failed(spec.key, error)


def _attempt(
    spec: SessionSpec, env: dict[str, str], agg: Aggregator, log: Path
) -> tuple[dict[str, Any] | None, str, bool]:
    """Run one worker process; (result, error, retryable)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "optimizer.cluster.procs", "--worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, env=env, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(spec.to_dict()))
        proc.stdin.close()
        result, error, retryable = None, "", True
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "event" in msg:
                agg.event(spec.key, msg["event"], msg.get("data", {}))
            elif "result" in msg:
                result = msg["result"]
            elif "error" in msg:
                error, retryable = msg["error"], bool(msg.get("retryable"))
        rc = proc.wait()
    if result is None and not error:
        error = f"worker exited with {rc} before reporting (killed or crashed; log: {log})"
    return result, error, retryable


def worker_main() -> int:
    """``python -m optimizer.cluster.procs --worker``: run the spec on stdin, JSON lines on stdout."""
    spec = SessionSpec.from_dict(json.loads(sys.stdin.read()))
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed to stdout goes to the log, not into the protocol
    sys.stdout = sys.stderr

    def send(msg: dict[str, Any]) -> None:
        channel.write(json.dumps(msg, default=str) + "\n")
        channel.flush()

    from optimizer.cluster.task import RETRYABLE, run_session

    try:
        send({"result": run_session(spec, lambda e, d: send({"event": e, "data": d}))})
        return 0
    except Exception as exc:  # noqa: BLE001 - worker process boundary: reported to the driver, which decides on a retry
        from kb.errors import log_error

        # the traceback goes to this worker's log (its stderr: logging's last resort where nothing is configured)
        error_id = log_error(logging.getLogger(__name__), exc, f"campaign session {spec.key}")
        send({"error": f"{type(exc).__name__}: {exc} (error {error_id})", "retryable": isinstance(exc, RETRYABLE)})
        return 1


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    sys.exit(worker_main())
