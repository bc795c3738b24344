"""The body of one fanned-out session, the same under Ray (``fanout``) and under plain processes (``procs``).

It connects to the central KB, runs ``optimizer.session.Session`` without letting it submit, gives the
trajectory the spec's deterministic id, writes it, and submits it. Progress goes through ``report(event,
data)`` with small plain dicts (never whole rounds). A transient KB error raises ``Unavailable`` so that the
runner retries the session; the retry re-submits the same id and the KB stores it once.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typing_extensions import assert_never

from kb.client import KBClient
from kb.errors import InvalidArgument, ToolchainError, Unavailable
from optimizer.cluster.spec import SessionSpec
from optimizer.events import (
    BaselineStarted,
    Event,
    LadderDone,
    PointsScreened,
    Progress,
    ProposalMade,
    RoundEnded,
    RoundStarted,
    SessionDone,
    Stopped,
    SubmitFailed,
    Submitted,
    UnseenFlagged,
)

__all__ = ["RETRYABLE", "default_connect", "materialize", "relay", "Report", "require_central_kb", "run_session"]

Report = Callable[[str, dict[str, Any]], None]
Connect = Callable[[SessionSpec], KBClient]
#: exceptions after which a session is worth running again (the KB or the network blinked)
RETRYABLE: tuple[type[BaseException], ...] = (Unavailable, ConnectionError, TimeoutError)


def require_central_kb(server: str | None) -> None:
    """Sessions on many workers must share ONE KB: the gRPC server, or a snapshot whose outbox collects them."""
    if server:
        return
    from kb.settings import Settings

    if Settings().snapshot is None:
        raise InvalidArgument("give --server HOST:PORT (the central KB server); workers must not open embedded KBs "
                              "of their own. On a machine with no route to the server set LADDER_SNAPSHOT=DIR "
                              "(trajectories then go to $LADDER_HOME/outbox)", field="server")


def default_connect(spec: SessionSpec) -> KBClient:
    """``retrieval.client.connect`` (gRPC when the spec names a server; LADDER_SNAPSHOT otherwise).

    Where the wire layer cannot be imported (grpc missing, or older than the generated code needs, as on the
    lent GPU image) and a snapshot is set,
    this opens ``kb.snapshot.SnapshotKB`` the same way ``connect()`` does: that fallback exists only for
    snapshot mode; with a server, a missing grpc is an error.
    """
    try:
        from retrieval.client import connect
    except (ImportError, RuntimeError) as exc:  # RuntimeError: grpcio older than the generated code needs
        if spec.server:
            raise ToolchainError(f"cannot reach {spec.server}: the gRPC client does not import here ({exc}); "
                                 "install grpcio and protobuf on the workers") from exc
        from kb.settings import Settings

        settings = Settings()
        if settings.snapshot is None:
            raise ToolchainError(f"no KB: grpc does not import here ({exc}) and LADDER_SNAPSHOT is not set") from exc
        from kb.search.embedding import Embedder
        from kb.snapshot import SnapshotKB

        return SnapshotKB(settings.snapshot, outbox=settings.home / "outbox",
                          embedder=Embedder(model_path=settings.embedding_model_dir, backend=settings.embed_backend))
    return connect(server=spec.server, token=spec.token)


def _out_dir(spec: SessionSpec) -> Path:
    root = Path(spec.out_root) if spec.out_root else Path(tempfile.gettempdir()) / "ladder-cluster"
    out = root / spec.campaign / spec.key
    shutil.rmtree(out, ignore_errors=True)  # a retried attempt starts clean
    out.mkdir(parents=True, exist_ok=True)
    return out


def materialize(spec: SessionSpec, out: Path) -> tuple[Path, Path | None]:
    """The driver's paths when this worker sees them, else the shipped sources written under ``out``."""
    prob = Path(spec.problem)
    cand = Path(spec.candidate) if spec.candidate else None
    if prob.exists() and (cand is None or cand.exists()):
        return prob, cand
    if not spec.sources:
        raise InvalidArgument(f"{prob} is not on this worker and no sources were shipped", field="problems")
    folder = out / "_problem"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in spec.sources.items():
        (folder / name).write_text(text)
    local_prob = folder if prob.suffix != ".py" else folder / prob.name
    return local_prob, (folder / cand.name) if cand else None


def relay(report: Report) -> Progress:
    """A session's events as the small plain dicts the driver reads (``optimizer.cluster.progress``): never whole
    rounds. The submission is reported by ``run_session`` itself, and the ladder's and the screen's summaries stay
    on the worker (its trajectory holds them)."""

    def on(event: Event) -> None:
        match event:
            case RoundStarted(round=i):
                report(event.name, {"round": i})
            case ProposalMade(round=i, family=family):
                report(event.name, {"round": i, "family": family})
            case RoundEnded(round=r):
                report(event.name, {"round": r.index, "outcome": r.outcome,
                                    "speedup": r.timing.geomean_speedup if r.timing else None,
                                    "valid": bool(r.validation is not None and r.validation.passed)})
            case BaselineStarted(candidate=candidate, backend=backend):
                report(event.name, {"candidate": str(candidate), "backend": str(backend)})
            case Stopped(reason=reason):
                report(event.name, {"reason": reason})
            case LadderDone() | PointsScreened() | UnseenFlagged() | Submitted() | SubmitFailed() | SessionDone():
                pass
            case _:
                assert_never(event)

    return on


def run_session(spec: SessionSpec, report: Report | None = None, connect: Connect | None = None) -> dict[str, Any]:
    """Run one session and submit its trajectory under ``spec.trajectory_id``; returns ClusterResult fields."""
    from optimizer.proposers.factory import make_proposer
    from optimizer.session import Session
    from optimizer.settings import LadderSettings

    report = report or (lambda _e, _d: None)
    node = socket.gethostname()
    report(
        "start",
        {
            "attempt": uuid.uuid4().hex[:8],
            "pid": os.getpid(),
            "node": node,
            "visible": os.environ.get("CUDA_VISIBLE_DEVICES") or os.environ.get("ASCEND_RT_VISIBLE_DEVICES") or "",
        },
    )
    t0 = time.monotonic()
    out = _out_dir(spec)
    problem, candidate = materialize(spec, out)
    settings = LadderSettings(**spec.settings)
    kb = (connect or default_connect)(spec)
    try:
        session = Session(problem, candidate, kb=kb, settings=settings, backend=spec.backend,
                          proposer=make_proposer(spec.proposer, settings), out_dir=out, progress=relay(report))
        traj = session.run(spec.rounds, submit=False)
        traj = traj.model_copy(update={"id": spec.trajectory_id})
        (out / "trajectory.json").write_text(traj.model_dump_json(indent=2))
        created = kb.submit_trajectory(traj)  # idempotent by id: False when an earlier attempt stored it
        report("submitted", {"created": created, "id": traj.id})
    finally:
        kb.close()
    best = traj.rounds[traj.best_round] if traj.best_round is not None else None
    return {"key": spec.key, "problem": spec.problem, "trajectory_id": traj.id, "status": "ok", "created": created,
            "rounds": len(traj.rounds) - 1, "outcomes": [r.outcome for r in traj.rounds], "best_round": traj.best_round,
            "best_speedup": best.timing.geomean_speedup if best is not None and best.timing else None,
            "device": traj.device, "node": node, "duration_s": round(time.monotonic() - t0, 3), "out_dir": str(out)}
