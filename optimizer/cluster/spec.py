"""What a fanned-out session is (``SessionSpec``) and what it reports back (``ClusterResult``).

A campaign is one fan-out: every session in it gets a trajectory id derived from the campaign id and the
problem key, never a random one. A session that is retried (its worker died, or it hit a transient error after
submitting) therefore re-submits the *same* id, and the KB's idempotent ``submit_trajectory`` stores it once.
Re-running a command with the same ``--campaign`` resumes without duplicates for the same reason.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from kb.errors import InvalidArgument
from optimizer.backend import Backend

__all__ = ["ClusterResult", "SessionSpec", "default_backend", "make_specs", "new_campaign_id", "problem_key",
           "trajectory_id"]

Resource = Literal["GPU", "NPU", "CPU"]
_ID_BAD = re.compile(r"[^A-Za-z0-9._:-]")
#: files shipped with a spec so that a worker without the driver's file system can still run the problem
_MAX_SHIPPED_BYTES = 512 * 1024


def new_campaign_id() -> str:
    return f"cl-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{secrets.token_hex(2)}"


#: the backend a session runs on when the campaign names only the resource its tasks ask for
BY_RESOURCE: dict[str, Backend] = {"GPU": "cuda", "NPU": "ascend", "CPU": "interpreter"}


def default_backend(resource: str) -> Backend:
    return BY_RESOURCE[resource]


def trajectory_id(campaign: str, key: str, backend: str) -> str:
    """Deterministic, valid trajectory id (``kb.models.Trajectory.id``: 3..128 of ``[A-Za-z0-9._:-]``)."""
    raw = _ID_BAD.sub("-", f"{campaign}:{key}:{backend}").lstrip("._:-") or "t"
    if len(raw) <= 128:
        return raw.ljust(3, "0")
    digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
    return f"{raw[:117]}-{digest}"


def problem_key(problem: str | Path) -> str:
    """``benchmarks/suite/softmax`` and ``.../softmax/problem.py`` -> ``softmax``; ``foo.py`` -> ``foo``."""
    p = Path(problem)
    if p.suffix == ".py":
        return p.parent.name if p.stem == "problem" else p.stem
    return p.name


@dataclass(frozen=True)
class SessionSpec:
    """One session to run somewhere: plain values only (it travels through Ray's object store or a pipe)."""

    campaign: str
    key: str
    trajectory_id: str
    problem: str  # absolute path on the driver
    candidate: str | None
    backend: Backend
    rounds: int
    proposer: str = "offline"
    server: str | None = None  # the central KB, HOST:PORT; None: the worker's own connect() (e.g. LADDER_SNAPSHOT)
    token: str | None = None  # None: the worker's LADDER_TOKEN
    out_root: str | None = None  # per-session folders go under it; None: a temp folder on the worker
    settings: dict[str, Any] = field(default_factory=dict)  # LadderSettings overrides (no secrets: those come from env)
    sources: dict[str, str] = field(default_factory=dict)  # problem folder files, used if `problem` is absent there

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionSpec:
        return cls(**d)


@dataclass
class ClusterResult:
    """The small summary one session returns (the trajectory itself went to the KB)."""

    key: str
    problem: str
    trajectory_id: str
    status: Literal["ok", "failed"]
    created: bool | None = None  # True: stored by this attempt; False: an earlier attempt had stored it
    attempts: int = 0
    rounds: int = 0
    outcomes: list[str] = field(default_factory=list)
    best_round: int | None = None
    best_speedup: float | None = None
    device: str = ""
    node: str = ""
    duration_s: float = 0.0
    out_dir: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ship(problem: Path, candidate: Path | None) -> dict[str, str]:
    folder = problem if problem.is_dir() else problem.parent
    files = sorted(folder.glob("*.py")) if problem.is_dir() or problem.name == "problem.py" else [problem]
    if candidate is not None and candidate not in files:
        files.append(candidate)
    out, total = {}, 0
    for f in files:
        text = f.read_text()
        total += len(text)
        if total > _MAX_SHIPPED_BYTES:
            break  # workers then need the driver's paths (a shared checkout); the problem path is still tried first
        out[f.name] = text
    return out


def make_specs(
    problems: Sequence[str | Path],
    *,
    campaign: str,
    backend: Backend,
    rounds: int,
    proposer: str = "offline",
    server: str | None = None,
    token: str | None = None,
    out_root: str | Path | None = None,
    settings: dict[str, Any] | None = None,
    candidates: dict[str, str | Path] | None = None,
) -> list[SessionSpec]:
    """One spec per problem; keys are unique (a repeated name gets ``-2``, ``-3`` ...)."""
    if not problems:
        raise InvalidArgument(
            "no problems given: pass problem files or folders (e.g. benchmarks/suite/softmax)", field="problems"
        )
    candidates = dict(candidates or {})  # problem key -> candidate file
    specs, seen = [], set()
    for prob in problems:
        path = Path(prob).resolve()
        if not path.exists():
            raise InvalidArgument(f"problem {prob} does not exist", field="problems")
        base = problem_key(path)
        key, n = base, 1
        while key in seen:
            n += 1
            key = f"{base}-{n}"
        seen.add(key)
        cand = candidates.get(key) or candidates.get(base)
        cand_path = Path(cand).resolve() if cand else None
        if cand_path is None:
            folder = path if path.is_dir() else path.parent
            cand_path = (folder / "initial.py") if (folder / "initial.py").is_file() else None
        specs.append(
            SessionSpec(
                campaign=campaign,
                key=key,
                trajectory_id=trajectory_id(campaign, key, backend),
                problem=str(path),
                candidate=str(cand_path) if cand_path else None,
                backend=backend,
                rounds=rounds,
                proposer=proposer,
                server=server,
                token=token,
                out_root=str(Path(out_root).resolve()) if out_root else None,
                settings=dict(settings or {}),
                sources=_ship(path, cand_path),
            )
        )
    return specs
