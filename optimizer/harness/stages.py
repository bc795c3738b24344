"""Every second of a round attributed: named, nested wall-clock spans of the parent process (``Round.stages``).

A session opens one ``StageClock`` per round (``recording``); anything the round calls marks its work with
``span("name")``, which records into the clock of the current context and does nothing when none is open (tools,
tests, other callers: one ``ContextVar`` read). Spans nest: a span opened inside ``evaluate`` is recorded as
``evaluate/judge``. ``add`` attributes seconds measured elsewhere (a worker's own account of its time) under the
current span. ``finish(wall)`` returns ``{path: seconds}`` plus ``other`` = wall time not covered by the top-level
spans (paths without ``/``), so the top-level stages and ``other`` sum to the round's wall time; nested stages
break their parent down and are not added again.

Threads started inside a round (a GPU screen's parallel validations) do not inherit the context, so their spans
are not recorded: the span around the pool covers their wall time once, where summing them would count the
overlap several times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["SEP", "StageClock", "add", "current", "recording", "span", "top_level"]

SEP = "/"


class StageClock:
    """Seconds per stage path; ``clock`` is the monotonic source (a fake one in tests)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.seconds: dict[str, float] = {}
        self.started = clock()

    def add(self, path: str, seconds: float) -> None:
        self.seconds[path] = self.seconds.get(path, 0.0) + max(0.0, float(seconds))

    def elapsed(self) -> float:
        return self.clock() - self.started

    def finish(self, wall_s: float | None = None) -> dict[str, float]:
        """The stages plus ``other`` = ``wall_s`` (default: since this clock started) minus the top-level stages,
        rounded to the millisecond."""
        wall = self.elapsed() if wall_s is None else wall_s
        out = {k: v for k, v in self.seconds.items() if k != "other"}
        out["other"] = max(0.0, wall - sum(top_level(out).values()))
        return {k: round(v, 3) for k, v in out.items()}


_CLOCK: ContextVar[StageClock | None] = ContextVar("ladder_stage_clock", default=None)
_PATH: ContextVar[str] = ContextVar("ladder_stage_path", default="")


def top_level(stages: dict[str, float]) -> dict[str, float]:
    """The stages that are not nested in another (``other`` included when present)."""
    return {k: v for k, v in stages.items() if SEP not in k}


def current() -> StageClock | None:
    return _CLOCK.get()


@contextmanager
def recording(clock: StageClock | None = None) -> Iterator[StageClock]:
    """Make ``clock`` (a new one by default) the clock of this context, at the top level, until the block ends."""
    sc = clock or StageClock()
    tok_c, tok_p = _CLOCK.set(sc), _PATH.set("")
    try:
        yield sc
    finally:
        _PATH.reset(tok_p)
        _CLOCK.reset(tok_c)


@contextmanager
def span(name: str) -> Iterator[None]:
    """Time the block as stage ``name`` nested in the current span; a no-op without a clock."""
    sc = _CLOCK.get()
    if sc is None:
        yield
        return
    parent = _PATH.get()
    path = f"{parent}{SEP}{name}" if parent else name
    tok = _PATH.set(path)
    t0 = sc.clock()
    try:
        yield
    finally:
        sc.add(path, sc.clock() - t0)
        _PATH.reset(tok)


def add(name: str, seconds: float) -> None:
    """Attribute ``seconds`` measured elsewhere to stage ``name`` nested in the current span (no-op without a clock)."""
    sc = _CLOCK.get()
    if sc is not None:
        parent = _PATH.get()
        sc.add(f"{parent}{SEP}{name}" if parent else name, seconds)
