"""The four-level diagnosis ladder: L1 triage, L2 profiling, L3 IR attribution, L4 compiler escalation."""

from optimizer.ladder.engine import LadderOutcome, default_levels, run_ladder
from optimizer.ladder.types import CardRef, LadderContext, LadderLevel, LevelResult

__all__ = ["CardRef", "LadderContext", "LadderLevel", "LadderOutcome", "LevelResult", "default_levels", "run_ladder"]
