"""Driver-side progress of a fan-out: per-session state and the campaign's counts.

Runners feed it the events sessions report (``start`` once per attempt, ``round_end`` per round, ...) and the
final outcome of each session; it keeps attempts (a second ``start`` means the session was retried), the
latest round, the best validated speedup seen so far, and the counts done / failed / running / pending /
retried. Each change is passed on to ``progress(event, data)`` with the counts attached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from optimizer.cluster.spec import ClusterResult, SessionSpec

__all__ = ["Aggregator", "SessionState"]

Progress = Callable[[str, dict[str, Any]], None]


@dataclass
class SessionState:
    spec: SessionSpec
    status: str = "pending"  # pending | running | done | failed
    attempts: list[str] = field(default_factory=list)  # attempt tokens, in order
    pid: int | None = None
    node: str = ""
    round: int | None = None
    best_speedup: float | None = None
    result: ClusterResult | None = None


class Aggregator:
    """Thread-safe (the process runner feeds it from one thread per device)."""

    def __init__(self, specs: list[SessionSpec], progress: Progress | None = None) -> None:
        self.states = {s.key: SessionState(s) for s in specs}
        self.progress = progress or (lambda _e, _d: None)
        self._lock = threading.RLock()

    def counts(self) -> dict[str, int]:
        with self._lock:
            st = [s.status for s in self.states.values()]
            return {"total": len(st), "done": st.count("done"), "failed": st.count("failed"),
                    "running": st.count("running"), "pending": st.count("pending"),
                    "retried": sum(len(s.attempts) > 1 for s in self.states.values()),
                    "attempts": sum(len(s.attempts) for s in self.states.values())}

    def event(self, key: str, event: str, data: dict[str, Any]) -> None:
        with self._lock:
            s = self.states[key]
            if event == "start":
                if data.get("attempt") in s.attempts:
                    return
                s.attempts.append(data.get("attempt", f"a{len(s.attempts)}"))
                s.pid, s.node = data.get("pid"), data.get("node", "")
                if s.status in ("pending", "running"):
                    s.status = "running"
                out = {"attempt": len(s.attempts), "pid": s.pid, "node": s.node, "visible": data.get("visible", "")}
                self._emit("retry" if len(s.attempts) > 1 else "start", key, out)
                return
            if event == "round_end":
                s.round = data.get("round")
                sp = data.get("speedup")
                if data.get("valid") and sp is not None and (s.best_speedup is None or sp > s.best_speedup):
                    s.best_speedup = sp
            elif event == "round_start":
                s.round = data.get("round")
            self._emit(event, key, {**data, "pid": s.pid, "attempt": len(s.attempts)})

    def finished(self, key: str, summary: dict[str, Any]) -> ClusterResult:
        with self._lock:
            s = self.states[key]
            fields = {k: v for k, v in summary.items() if k in ClusterResult.__dataclass_fields__}
            res = ClusterResult(**{**fields, "attempts": max(len(s.attempts), 1)})
            if res.best_speedup is None:
                res.best_speedup = s.best_speedup
            s.status, s.result = "done", res
            self._emit("session_done", key, res.to_dict())
            return res

    def failed(self, key: str, error: str) -> ClusterResult:
        with self._lock:
            s = self.states[key]
            res = ClusterResult(key=key, problem=s.spec.problem, trajectory_id=s.spec.trajectory_id, status="failed",
                                attempts=len(s.attempts), best_speedup=s.best_speedup, node=s.node, error=error[:2000])
            s.status, s.result = "failed", res
            self._emit("session_failed", key, res.to_dict())
            return res

    def results(self) -> list[ClusterResult]:
        """In the order the specs were given; sessions never finished count as failed."""
        with self._lock:
            return [s.result or self.failed(k, "never finished") for k, s in self.states.items()]

    def _emit(self, event: str, key: str, data: dict[str, Any]) -> None:
        self.progress(event, {"key": key, **data, "counts": self.counts()})
