"""Optimization sessions: a validated baseline, then N rounds of ladder -> proposal -> sandboxed evaluation.

Each round records what ``kb.models.Round`` asks for: levels reached, hypothesis, evidence (every level's
items, including its three escalation tests), cards cited, the rewrite (family, recipe with the applied
point, diff), the comparison target (the initial candidate), validation per case, timing per case with the
geomean speedup under the declared protocol, the outcome, the stop decision and a next recommendation.
Rounds that produce nothing actionable are ``inconclusive``; faulty candidates are ``failed`` with their
reason, and the session continues.

Honest timing (``optimizer.harness.verdict`` has the exact rule): the baseline is timed against itself (A/A) to measure
the session's noise floor; every candidate is timed interleaved with the initial candidate and the round's base,
and a round is ``improved`` only when the interval of its geomean speedup over the base clears
``max(noise floor, improvement_threshold)``. On a GPU the session holds a per-GPU lock (``optimizer.harness.gpulock``).
The session is the loop; the stages are ``optimizer.round``: ``baseline``, then per round ``pipeline.run_round``
(diagnose -> propose -> screen -> judge), then ``select`` and the ``unseen`` check, with ``persist`` writing the
trajectory. Each round records seconds per phase (``Round.phase_s``, see ``optimizer.phases``).
"""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

from kb.client import KBClient
from kb.errors import log_error
from kb.models import Round, Trajectory
from optimizer.backend import Backend
from optimizer.events import Progress, RoundEnded, SessionDone, Stopped, UnseenFlagged
from optimizer.harness import stages
from optimizer.harness.gpulock import GPULock, device_key
from optimizer.harness.problem import Problem
from optimizer.harness.timing import geomean
from optimizer.proposers.base import Proposer
from optimizer.round import persist
from optimizer.round.baseline import baseline, versions
from optimizer.round.context import RoundSetup
from optimizer.round.diagnose import AT_ROOFLINE_STOP, Base
from optimizer.round.pipeline import run_round
from optimizer.round.select import select
from optimizer.round.unseen import unseen_report
from optimizer.settings import LadderSettings

log = logging.getLogger(__name__)

__all__ = ["Session"]


def close_stages(rnd: Round, sc: stages.StageClock) -> None:
    """The round's wall-clock stages (``Round.stages``): from its start to after its trajectory write and progress
    report, which ``duration_s`` then includes too (the remainder goes to ``phase_s['other']`` as well)."""
    wall = max(rnd.duration_s, sc.elapsed())
    rnd.phase_s["other"] = round(rnd.phase_s.get("other", 0.0) + wall - rnd.duration_s, 3)
    rnd.duration_s = wall
    rnd.stages = sc.finish(wall)


class Session:
    def __init__(
        self,
        problem: Problem | str | Path,
        candidate: str | Path | None,
        *,
        kb: KBClient,
        settings: LadderSettings,
        backend: Backend,
        proposer: Proposer,
        out_dir: str | Path,
        progress: Progress | None = None,
        force_shared_gpu: bool = False,
    ) -> None:
        self.setup = RoundSetup.open(problem, candidate, backend=backend, settings=settings, kb=kb,
                                     workdir=Path(out_dir).resolve(), progress=progress)
        self.problem, self.candidate, self.out = self.setup.problem, self.setup.candidate, self.setup.workdir
        self.kb, self.settings, self.backend, self.proposer = kb, settings, backend, proposer
        self.force_shared_gpu = force_shared_gpu

    # ----------------------------------------------------------------------------------------------------
    def run(self, rounds: int | None = None, *, submit: bool = False) -> Trajectory:
        n_rounds = self.settings.rounds if rounds is None else rounds
        self.out.mkdir(parents=True, exist_ok=True)
        traj = persist.new_trajectory(self.setup, self.proposer.name)
        self._warm_kb()
        lock = None
        if self.backend in ("cuda", "ascend"):  # timing sessions never share a device
            key = device_key(0) if self.backend == "cuda" else "npu0"
            lock = GPULock(Path(self.settings.lock_dir), key, owner=traj.id)
            traj.timing_env = lock.acquire(force=self.force_shared_gpu).record()
        try:
            return self._run(traj, n_rounds, submit)
        finally:
            if lock is not None:
                lock.release()

    def _warm_kb(self) -> None:
        """Load the KB's query encoder in a thread while the baseline is evaluated: its first load (5-7 s on the H200
        host) was charged to round 1's ``kb`` phase. Clients without ``warm`` (gRPC: the server holds the encoder)
        skip."""
        warm = getattr(self.kb, "warm", None)
        if callable(warm):
            def run() -> None:
                try:
                    warm()
                except Exception as exc:  # noqa: BLE001 - thread boundary: the first query loads it again and
                    # reports a real failure there
                    log_error(log, exc, "warming the KB's query encoder", level=logging.DEBUG)

            threading.Thread(target=run, name="kb-warm", daemon=True).start()

    def _run(self, traj: Trajectory, n_rounds: int, submit: bool) -> Trajectory:
        setup, progress = self.setup, self.setup.progress
        b = baseline(setup, traj)
        traj.rounds.append(b.round)
        close_stages(b.round, b.stages)
        traj.device, traj.versions = b.evaluation.device, versions(b.evaluation)
        traj.initial_ms = geomean(b.baseline_ms.values()) if b.baseline_ms else None
        progress(RoundEnded(b.round))
        if not b.evaluation.passed:  # every candidate must validate before the session continues
            return self._finish(traj, submit)
        base_path, base_eval = b.path, b.evaluation
        streak = 0
        for i in range(1, n_rounds + 1):
            with stages.recording() as sc:
                base = Base(index=i, path=base_path, evaluation=base_eval, baseline_ms=b.baseline_ms,
                            history=list(traj.rounds[1:]), require_recipe=self.proposer.requires_recipe)
                result = run_round(setup, base, self.proposer)
                rnd = result.round
                traj.rounds.append(rnd)
                with stages.span("persist"):
                    persist.write_trajectory(traj, self.out)
                with stages.span("progress"):
                    progress(RoundEnded(rnd))
            close_stages(rnd, sc)
            if rnd.next_recommendation.startswith(AT_ROOFLINE_STOP):
                progress(Stopped(rnd.next_recommendation[:200]))
                break
            if rnd.outcome == "inconclusive":
                streak += 1
                if streak >= self.settings.max_inconclusive_streak:
                    progress(Stopped(f"{streak} inconclusive rounds in a row"))
                    break
                continue
            streak = 0
            if rnd.outcome == "improved" and result.evaluation is not None:
                base_path, base_eval = Path(rnd.candidate_path), result.evaluation
                setup.exhausted.clear()  # a new base re-opens every family
        return self._finish(traj, submit)

    def _finish(self, traj: Trajectory, submit: bool) -> Trajectory:
        setup = self.setup
        sel = select(setup, traj)
        traj.best_round, traj.selection = sel.round, sel
        if traj.best_round is not None:
            best = traj.rounds[traj.best_round]
            ms = [c.ms for c in best.timing.cases if c.ms] if best.timing else []
            traj.best_ms = geomean(ms) if ms else None
            shutil.copyfile(best.candidate_path, self.out / "best.py")
            traj.unseen = unseen_report(setup, traj)
            if traj.unseen and traj.unseen.flags:
                setup.progress(UnseenFlagged(flags=tuple(traj.unseen.flags), report=traj.unseen))
        traj.finished = True
        path = persist.write_trajectory(traj, self.out)
        if submit:
            persist.submit(setup, traj)
        setup.progress(SessionDone(trajectory=traj, path=path))
        return traj
