"""A round's set-up: one typed context carrying the problem, backend, settings and the session's running state, and
making the harness calls with them, so no stage passes ``(problem, backend=..., settings=...)`` again.

``Session`` opens it once per session; ``optimizer.diagnosis.diagnose`` opens the same set-up for one diagnosis.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.client import KBClient
from kb.errors import InvalidArgument, log_error
from kb.models import CaseMethod, Timing, Trajectory
from optimizer.backend import Backend
from optimizer.events import Progress, quiet
from optimizer.harness.evaluation import Evaluation, evaluate, record_launches, retime, to_timing
from optimizer.harness.problem import Problem, load_problem
from optimizer.kernel.features import kernel_compute_kind
from optimizer.ladder import keys
from optimizer.ladder.types import LadderContext
from optimizer.phases import PhaseClock, TimedKB
from optimizer.settings import LadderSettings

log = logging.getLogger(__name__)

__all__ = ["Launches", "RoundSetup", "default_candidate", "problem_input_dtypes"]

#: launch records of one full-size case and that case
Launches = tuple[list[dict[str, Any]], dict[str, Any]]


def default_candidate(problem_path: str | Path) -> Path:
    """``initial.py`` next to the problem (the suite layout ``<op>/{problem.py,initial.py}``)."""
    p = Path(problem_path)
    folder = p if p.is_dir() else p.parent
    cand = folder / "initial.py"
    if not cand.is_file():
        raise InvalidArgument(
            f"no --candidate given and no initial.py next to {p}; pass --candidate FILE", field="candidate"
        )
    return cand.resolve()


def problem_input_dtypes(problem: Problem) -> list[str]:
    import torch

    try:
        xs = problem.make_inputs(problem.smoke_cases[0], 0)
    except Exception as exc:  # noqa: BLE001 - user-code boundary: the problem's own make_inputs may raise anything
        log_error(log, exc, f"{problem.name}: make_inputs of the first smoke case", level=logging.DEBUG)
        return []
    return [str(x.dtype).removeprefix("torch.") for x in xs if isinstance(x, torch.Tensor)]


@dataclass
class RoundSetup:
    """What every stage reads. ``methods``, ``floor``, ``initial``, ``exhausted`` and ``launch_memo`` are the session's
    running state: the baseline fixes the first three, rounds set families aside and record launches once per base."""

    problem: Problem
    candidate: Path
    backend: Backend
    settings: LadderSettings
    kb: KBClient
    workdir: Path
    cache: dict[str, Any]
    progress: Progress = quiet
    #: case label -> the timing method fixed at the baseline (one timing truth)
    methods: dict[str, str] = field(default_factory=dict)
    #: the A/A noise floor of the baseline (None: untimed)
    floor: float | None = None
    #: the initial candidate's copy (``round_00.py``)
    initial: Path | None = None
    #: card ids and families set aside until the base changes
    exhausted: set[str] = field(default_factory=set)
    #: candidate sha256 -> its full-size launches (interpreter)
    launch_memo: dict[str, Launches] = field(default_factory=dict)

    @classmethod
    def open(cls, problem: Problem | str | Path, candidate: str | Path | None, *, backend: Backend,
             settings: LadderSettings, kb: KBClient, workdir: str | Path,
             progress: Progress | None = None) -> RoundSetup:
        """Load the problem, resolve the candidate (default: ``initial.py`` next to it), read its input dtypes."""
        prob = problem if isinstance(problem, Problem) else load_problem(problem)
        cand = Path(candidate).resolve() if candidate else default_candidate(prob.path)
        return cls(problem=prob, candidate=cand, backend=backend, settings=settings, kb=kb,
                   workdir=Path(workdir), cache={keys.INPUT_DTYPES: problem_input_dtypes(prob)},
                   progress=progress or quiet)

    # the harness, called with this set-up ----------------------------------------------------------------------
    def evaluate(self, candidate: Path, *, settings: LadderSettings | None = None, **kw: Any) -> Evaluation:
        """``optimizer.harness.evaluation.evaluate`` of ``candidate`` on this problem and backend."""
        return evaluate(self.problem, candidate, backend=self.backend, settings=settings or self.settings, **kw)

    def retime(self, candidate: Path, against: dict[str, Path], **kw: Any) -> Evaluation:
        """``optimizer.harness.evaluation.retime`` with the session's fixed per-case methods."""
        return retime(self.problem, candidate, against, backend=self.backend, settings=self.settings,
                      methods=self.methods, **kw)

    def record_launches(self, candidate: Path,
                        case: dict[str, Any] | None) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
        """(launch records, note, case) of one full-size case, recorded without executing a kernel."""
        return record_launches(self.problem, candidate, self.settings, case=case)

    def timing(self, ev: Evaluation, baseline_ms: dict[str, float] | None,
               cases: list[dict[str, Any]] | None = None) -> Timing:
        return to_timing(ev, baseline_ms, backend=self.backend, problem=self.problem, cases=cases,
                         compute=kernel_compute_kind(ev.candidate, ev.launches))

    # ------------------------------------------------------------------------------------------------------------
    def size(self, case: dict[str, Any]) -> float | None:
        """A case's size: the problem's bytes_moved, else its flops (None when it declares neither)."""
        return self.problem.bytes_moved(case) or self.problem.flops(case)

    def ladder_context(self, candidate: Path, ev: Evaluation, clock: PhaseClock, **kw: Any) -> LadderContext:
        """The ladder's context for ``candidate``: this set-up's problem, backend, settings, cache and workdir, the KB
        timed on ``clock``."""
        return LadderContext(problem=self.problem, candidate=candidate, backend=self.backend,
                             kb=TimedKB(self.kb, clock), settings=self.settings, evaluation=ev, workdir=self.workdir,
                             cache=self.cache, phases=clock, **kw)

    def fix_methods(self, traj: Trajectory, ev: Evaluation, *, unseen: bool) -> None:
        """Record each newly timed case's method (decided from the initial kernel) so every later call reuses it."""
        for c in ev.timing_cases:
            if c.case in self.methods or c.method not in ("do_bench", "cudagraph"):
                continue
            self.methods[c.case] = c.method
            traj.timing_methods[c.case] = CaseMethod.model_validate(  # method: one of the two kept just above
                {"method": c.method, "decided_ms": c.decided_ms, "note": c.method_note, "unseen": unseen})
