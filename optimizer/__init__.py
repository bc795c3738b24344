"""Optimizer client: problems, validation, timing, the diagnosis ladder, proposers and sessions.

The front door, for programs that drive the optimizer rather than the ``ladder`` CLI::

    from optimizer import LadderSettings, Session, diagnose, evaluate, load_problem

    problem = load_problem("benchmarks/realistic/tutorial_softmax")
    report = diagnose(problem.path, None, backend="interpreter", max_level="L4", kb=kb)

Names are imported on first use (PEP 562): a sandboxed worker that imports ``optimizer.harness.worker`` does not pay
for the ladder, the proposers or the KB client. Each module's own ``__all__`` is its public surface; nothing outside a
module imports its ``_private`` names (``tests/test_layering.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optimizer.diagnosis import Diagnosis, diagnose
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.outcome import Evaluation
    from optimizer.harness.problem import Problem, load_problem
    from optimizer.ladder.engine import run_ladder
    from optimizer.onboarding import check_problem, scaffold
    from optimizer.proposers.offline import OfflineProposer
    from optimizer.session import Session
    from optimizer.settings import LadderSettings

#: public name -> the module that defines it
_EXPORTS = {
    "Diagnosis": "optimizer.diagnosis",
    "diagnose": "optimizer.diagnosis",
    "Evaluation": "optimizer.harness.outcome",
    "evaluate": "optimizer.harness.evaluation",
    "Problem": "optimizer.harness.problem",
    "load_problem": "optimizer.harness.problem",
    "run_ladder": "optimizer.ladder.engine",
    "check_problem": "optimizer.onboarding",
    "scaffold": "optimizer.onboarding",
    "OfflineProposer": "optimizer.proposers.offline",
    "Session": "optimizer.session",
    "LadderSettings": "optimizer.settings",
}

__all__ = ["Diagnosis", "Evaluation", "LadderSettings", "OfflineProposer", "Problem", "Session", "check_problem",
           "diagnose", "evaluate", "load_problem", "run_ladder", "scaffold"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'optimizer' has no attribute {name!r}; its public names: {', '.join(__all__)}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
