"""Trajectory persistence: a new trajectory's id and header, ``trajectory.json`` written after every round, and the
finished trajectory submitted to the KB."""

from __future__ import annotations

import json
import logging
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path

from kb.errors import LadderError, log_error
from kb.models import ProblemRef, Trajectory
from optimizer.events import SubmitFailed, Submitted
from optimizer.round.context import RoundSetup

log = logging.getLogger(__name__)

__all__ = ["TRAJECTORY_FILE", "new_trajectory", "submit", "write_trajectory"]

TRAJECTORY_FILE = "trajectory.json"


def new_trajectory(setup: RoundSetup, proposer: str) -> Trajectory:
    """An empty trajectory for this problem and backend, its id ``<problem>-<backend>-<UTC stamp>-<4 hex>``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    raw_id = f"{setup.problem.name}-{setup.backend}-{stamp}-{secrets.token_hex(2)}"
    tid = re.sub(r"[^A-Za-z0-9._:-]", "-", raw_id)[:128]
    p = setup.problem
    problem = ProblemRef(name=p.name, path=str(p.path), sha256=p.sha256, cases=p.cases_for(setup.backend))
    return Trajectory(id=tid, problem=problem, backend=setup.backend, proposer=proposer)


def write_trajectory(traj: Trajectory, out: Path) -> Path:
    path = out / TRAJECTORY_FILE
    path.write_text(json.dumps(json.loads(traj.model_dump_json()), indent=2))
    return path


def submit(setup: RoundSetup, traj: Trajectory) -> None:
    """Submit to the KB and report ``submitted``, or ``submit_failed`` with the error (the trajectory is on disk)."""
    try:
        stored = setup.kb.submit_trajectory(traj)
        setup.progress(Submitted(stored=stored, id=traj.id))
    except Exception as exc:  # noqa: BLE001 - KB boundary (often a server): the trajectory is on disk;
        # submission can be retried with ladder synthesize
        error = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, LadderError):  # a domain error's message says what to do; anything else: an id
            error += f" (error {log_error(log, exc, f'submitting {traj.id}', level=logging.INFO)})"
        setup.progress(SubmitFailed(error=error))
