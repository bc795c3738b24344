"""What a session reports while it runs: one small frozen record per event, and ``Event``, their union.

The session and its round stages (``optimizer.round``) call ``progress(event)``; a consumer dispatches on the type
(``match`` with ``assert_never``, so an event added here that a consumer does not handle fails mypy there). Each
record's ``name`` is the event's wire name: the cluster's relay forwards it to the driver with a small plain dict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from kb.models import Round, Trajectory, UnseenReport
from optimizer.backend import Backend

__all__ = ["BaselineStarted", "Event", "LadderDone", "PointsScreened", "Progress", "ProposalMade", "RoundEnded",
           "RoundStarted", "SessionDone", "Stopped", "SubmitFailed", "Submitted", "UnseenFlagged", "quiet"]


@dataclass(frozen=True)
class BaselineStarted:
    """The initial candidate is about to be validated and timed against itself."""

    name: ClassVar[str] = "baseline"
    candidate: Path
    backend: Backend


@dataclass(frozen=True)
class RoundStarted:
    name: ClassVar[str] = "round_start"
    round: int
    #: file name of the round's base candidate
    base: str


@dataclass(frozen=True)
class LadderDone:
    """The ladder's diagnosis of the round's base."""

    name: ClassVar[str] = "ladder"
    round: int
    summary: str
    levels: tuple[str, ...]


@dataclass(frozen=True)
class PointsScreened:
    """Several points of one recipe were validated and timed together; the summary names the one that goes on."""

    name: ClassVar[str] = "screen"
    round: int
    summary: str


@dataclass(frozen=True)
class ProposalMade:
    """The rewrite that goes on to the round's full judgement."""

    name: ClassVar[str] = "proposal"
    round: int
    family: str
    description: str
    diff: str


@dataclass(frozen=True)
class RoundEnded:
    """A round (the baseline included) is judged and recorded."""

    name: ClassVar[str] = "round_end"
    round: Round


@dataclass(frozen=True)
class Stopped:
    """The session stops before its round budget."""

    name: ClassVar[str] = "stopped"
    reason: str


@dataclass(frozen=True)
class UnseenFlagged:
    """The best candidate was flagged on the problem's unseen cases."""

    name: ClassVar[str] = "unseen"
    flags: tuple[str, ...]
    report: UnseenReport


@dataclass(frozen=True)
class Submitted:
    name: ClassVar[str] = "submitted"
    #: False: the KB already held this trajectory id
    stored: bool
    id: str


@dataclass(frozen=True)
class SubmitFailed:
    """The trajectory is on disk but the KB did not take it."""

    name: ClassVar[str] = "submit_failed"
    error: str


@dataclass(frozen=True)
class SessionDone:
    name: ClassVar[str] = "done"
    trajectory: Trajectory
    path: Path


Event = (BaselineStarted | RoundStarted | LadderDone | PointsScreened | ProposalMade | RoundEnded | Stopped
         | UnseenFlagged | Submitted | SubmitFailed | SessionDone)
Progress = Callable[[Event], None]


def quiet(_event: Event) -> None:
    """The progress of a session nobody watches."""
    return None
