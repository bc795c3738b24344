"""Case labels: the one name every layer gives a problem case (``M=4096,N=256``).

A pure function at the bottom of the optimizer package, so the profilers (``optimizer.profile``), which the harness
calls, can name cases without importing the harness above them (``optimizer.harness.problem`` re-exports it).
"""

from __future__ import annotations

from typing import Any

__all__ = ["case_label"]


def case_label(case: dict[str, Any]) -> str:
    """A short stable name for a case, e.g. ``M=4096,N=256``; ``default`` for the empty case."""
    if not case:
        return "default"
    return ",".join(f"{k}={case[k]}" for k in sorted(case))
