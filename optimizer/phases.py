"""Where a round's seconds go: a per-round clock of named phases (``Round.phase_s``), and a KB client that feeds it.

Phases: ``compile`` / ``validation`` / ``timing`` (reported by the sandboxed worker), ``process_start`` (sandbox
wall time the worker did not account for: interpreter start, imports, CUDA init), ``profiler`` and ``ncu`` (L2
workers), ``ir_capture`` (L3/L4 compile with dumps), ``kb`` (every KB client call), ``proposer``, and ``other``
(the rest of the round: ladder logic, file writes), so the phases sum to the round's wall time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from optimizer.harness import stages

__all__ = ["PHASES", "PhaseClock", "TimedKB"]

PHASES = (
    "compile",
    "validation",
    "timing",
    "process_start",
    "profiler",
    "ncu",
    "ir_capture",
    "kb",
    "proposer",
    "screen",
    "other",
)


class PhaseClock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + max(0.0, float(seconds))

    def merge(self, phases: Mapping[str, float]) -> None:
        for k, v in phases.items():
            self.add(k, v)

    @contextmanager
    def time(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            with stages.span(name):  # the round's wall-clock stages (``Round.stages``) see the same span
                yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def finish(self, wall_s: float) -> dict[str, float]:
        """The phases plus ``other`` = wall time not covered by them, rounded to the millisecond."""
        out = dict(self.seconds)  # time added under "other" explicitly is part of the remainder, never counted twice
        out["other"] = max(0.0, wall_s - sum(v for k, v in out.items() if k != "other"))
        return {k: round(v, 3) for k, v in out.items()}


class TimedKB:
    """Forwards every attribute of a KB client; calls are timed into ``clock`` under ``kb``."""

    def __init__(self, kb: Any, clock: PhaseClock) -> None:
        self._kb, self._clock = kb, clock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._kb, name)
        if not callable(attr):
            return attr

        def timed(*a: Any, **k: Any) -> Any:
            with self._clock.time("kb"):
                return attr(*a, **k)

        return timed
