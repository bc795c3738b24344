"""Optimization sessions: a validated baseline, then N rounds of ladder -> proposal -> sandboxed evaluation.

Each round records what ``kb.models.Round`` asks for: levels reached, hypothesis, evidence (every level's
items, including its three escalation tests), cards cited, the rewrite (family, recipe with the applied
point, diff), the comparison target (the initial candidate), validation per case, timing per case with the
geomean speedup under the declared protocol, the outcome, the stop decision and a next recommendation.
Rounds that produce nothing actionable are ``inconclusive``; faulty candidates are ``failed`` with their
reason, and the session continues. The best validated round wins by geomean speedup (ties: the earlier one).
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kb.client import KBClient
from kb.errors import InvalidArgument
from kb.models import EvidenceItem, ProblemRef, Round, RoundRewrite, Timing, Trajectory
from optimizer.evaluation import Evaluation, evaluate, to_timing
from optimizer.ladder.engine import LadderOutcome, run_ladder
from optimizer.ladder.types import LadderContext
from optimizer.problem import Problem, load_problem
from optimizer.proposers.base import Proposer
from optimizer.proposers.recipes import NotApplicable
from optimizer.settings import LadderSettings
from optimizer.timing import geomean

__all__ = ["Session", "default_candidate", "detect_backend", "make_proposer", "select_best"]

Progress = Callable[[str, dict[str, Any]], None]


def default_candidate(problem_path: str | Path) -> Path:
    """``initial.py`` next to the problem (the suite layout ``<op>/{problem.py,initial.py}``)."""
    p = Path(problem_path)
    folder = p if p.is_dir() else p.parent
    cand = folder / "initial.py"
    if not cand.is_file():
        raise InvalidArgument(f"no --candidate given and no initial.py next to {p}; pass --candidate FILE", field="candidate")
    return cand.resolve()


#: The recommendation prefix of a round that found the kernel at its roofline: the session stops there.
AT_ROOFLINE_STOP = "stop: the kernel runs at its roofline"


def detect_backend() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return "cuda"
        import importlib.util

        if importlib.util.find_spec("torch_npu") is not None:
            return "ascend"
    except Exception:
        pass
    return "interpreter"


BACKENDS = ("cuda", "interpreter", "ascend")


def check_backend(name: str | None) -> str:
    """The backend to run on, validated up front: an unknown name lists the valid ones; ``cuda`` without a CUDA
    device and ``ascend`` without torch-npu say so, and how to run instead."""
    from kb.errors import InvalidArgument

    if name is None:
        return detect_backend()
    if name not in BACKENDS:
        hint = " (the CPU backend is called 'interpreter')" if name.lower() in ("cpu", "triton_interpret") else ""
        raise InvalidArgument(f"unknown backend {name!r}{hint}: use one of {', '.join(BACKENDS)}")
    if name == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InvalidArgument("--backend cuda: no CUDA device on this machine (torch.cuda.is_available() is False); "
                                  "use --backend interpreter for correctness and static (code + IR) diagnosis")
    if name == "ascend":
        import importlib.util

        if importlib.util.find_spec("torch_npu") is None:
            raise InvalidArgument("--backend ascend: torch_npu is not installed, so no Ascend NPU can be used; "
                                  "install the ascend extra on an NPU machine, or use --backend interpreter")
    return name


def make_proposer(name: str, settings: LadderSettings) -> Proposer:
    if name == "offline":
        from optimizer.proposers.offline import OfflineProposer

        return OfflineProposer()
    if name == "llm":
        from optimizer.proposers.llm import LLMProposer

        return LLMProposer(settings)
    raise InvalidArgument(f"unknown proposer {name!r}: use offline or llm", field="proposer")


def select_best(rounds: list[Round]) -> int | None:
    """Index of the best validated round by geomean speedup; ties (and untimed rounds) go to the earlier one."""
    best, best_g = None, None
    for r in rounds:
        if r.validation is None or not r.validation.passed:
            continue
        g = r.timing.geomean_speedup if r.timing else None
        if best is None or (g is not None and (best_g is None or g > best_g)):
            best, best_g = r.index, g
    return best


def _input_dtypes(problem: Problem) -> list[str]:
    import torch

    try:
        xs = problem.make_inputs(problem.smoke_cases[0], 0)
    except Exception:
        return []
    return [str(x.dtype).removeprefix("torch.") for x in xs if isinstance(x, torch.Tensor)]


def _versions(ev: Evaluation | None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = dict(ev.versions) if ev else {}
    try:
        out["kernel-ladder"] = version("kernel-ladder")
    except PackageNotFoundError:
        out["kernel-ladder"] = "dev"
    return out


class Session:
    def __init__(self, problem: Problem | str | Path, candidate: str | Path | None, *, kb: KBClient, settings: LadderSettings,
                 backend: str, proposer: Proposer, out_dir: str | Path, progress: Progress | None = None) -> None:
        self.problem = problem if isinstance(problem, Problem) else load_problem(problem)
        self.candidate = Path(candidate).resolve() if candidate else default_candidate(self.problem.path)
        self.kb, self.settings, self.backend, self.proposer = kb, settings, backend, proposer
        self.out = Path(out_dir).resolve()
        self.progress = progress or (lambda _e, _d: None)
        self.cache: dict[str, Any] = {"input_dtypes": _input_dtypes(self.problem)}
        self.exhausted: set[str] = set()

    # ----------------------------------------------------------------------------------------------------
    def run(self, rounds: int | None = None, *, submit: bool = False) -> Trajectory:
        n_rounds = self.settings.rounds if rounds is None else rounds
        self.out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        tid = re.sub(r"[^A-Za-z0-9._:-]", "-", f"{self.problem.name}-{self.backend}-{stamp}-{secrets.token_hex(2)}")[:128]
        traj = Trajectory(id=tid, problem=ProblemRef(name=self.problem.name, path=str(self.problem.path), sha256=self.problem.sha256,
                                                     cases=self.problem.cases_for(self.backend)),
                          backend=self.backend, proposer=self.proposer.name)  # type: ignore[arg-type]
        base_path = self.out / "round_00.py"
        shutil.copyfile(self.candidate, base_path)
        self.progress("baseline", {"candidate": str(self.candidate), "backend": self.backend})
        t0 = time.monotonic()
        base_eval = evaluate(self.problem, base_path, backend=self.backend, settings=self.settings)
        baseline_ms = base_eval.case_ms()
        timing = to_timing(base_eval, baseline_ms, backend=self.backend, problem=self.problem)
        r0 = Round(index=0, hypothesis="baseline: the initial candidate", comparison_target="initial",
                   evidence=[self._validation_evidence(base_eval, "L1")], validation=base_eval.validation, timing=timing,
                   outcome="baseline" if base_eval.passed else "failed", candidate_path=str(base_path),
                   duration_s=time.monotonic() - t0,
                   next_recommendation="" if base_eval.passed else f"fix the initial candidate first: {base_eval.reason}")
        traj.rounds.append(r0)
        traj.device, traj.versions = base_eval.device, _versions(base_eval)
        traj.initial_ms = geomean(baseline_ms.values()) if baseline_ms else None
        self.progress("round_end", {"round": r0})
        if not base_eval.passed:  # every candidate must validate before the session continues
            return self._finish(traj, submit)
        best_g = timing.geomean_speedup
        streak = 0
        for i in range(1, n_rounds + 1):
            rnd, new_eval = self._round(i, traj, base_path, base_eval, baseline_ms, best_g)
            traj.rounds.append(rnd)
            self._write(traj)
            self.progress("round_end", {"round": rnd})
            if rnd.next_recommendation.startswith(AT_ROOFLINE_STOP):
                self.progress("stopped", {"reason": rnd.next_recommendation[:200]})
                break
            if rnd.outcome == "inconclusive":
                streak += 1
                if streak >= self.settings.max_inconclusive_streak:
                    self.progress("stopped", {"reason": f"{streak} inconclusive rounds in a row"})
                    break
                continue
            streak = 0
            if rnd.outcome == "improved" and new_eval is not None:
                base_path, base_eval = Path(rnd.candidate_path), new_eval
                best_g = rnd.timing.geomean_speedup if rnd.timing else best_g
                self.exhausted.clear()  # a new base re-opens every family
        return self._finish(traj, submit)

    # ----------------------------------------------------------------------------------------------------
    def _round(self, i: int, traj: Trajectory, base_path: Path, base_eval: Evaluation, baseline_ms: dict[str, float],
               best_g: float | None) -> tuple[Round, Evaluation | None]:
        t0 = time.monotonic()
        self.progress("round_start", {"round": i, "base": base_path.name})
        ctx = LadderContext(problem=self.problem, candidate=base_path, backend=self.backend, kb=self.kb, settings=self.settings,
                            evaluation=base_eval, history=list(traj.rounds[1:]), exclude_cards=set(self.exhausted),
                            require_recipe=self.proposer.requires_recipe, workdir=self.out, cache=self.cache, baseline_ms=baseline_ms)
        outcome = run_ladder(ctx, max_level=self.settings.max_level)  # type: ignore[arg-type]
        self.progress("ladder", {"round": i, "summary": outcome.summary(), "levels": outcome.levels_reached})
        common = dict(index=i, levels_reached=outcome.levels_reached, evidence=outcome.evidence, cards_cited=outcome.cards_cited,
                      comparison_target="initial", stop=outcome.stop)
        if outcome.inconclusive:
            return Round(**common, outcome="inconclusive", duration_s=time.monotonic() - t0,
                         next_recommendation=self._need_more(outcome)), None
        if outcome.stop is not None and outcome.stop.cause == "at_roofline" and outcome.chosen is None:
            return Round(**common, outcome="inconclusive", hypothesis="at the roofline: nothing structural to gain",
                         duration_s=time.monotonic() - t0,
                         next_recommendation=f"{AT_ROOFLINE_STOP}: {outcome.stop.rationale[:300]}"), None
        new_name = f"round_{i:02d}.py"
        try:
            prop = self.proposer.propose(ctx, outcome, new_filename=new_name)
        except NotApplicable as exc:
            if outcome.chosen is not None:
                self.exhausted.add(outcome.chosen.id)
            return Round(**common, outcome="inconclusive", hypothesis=f"{outcome.chosen.id if outcome.chosen else '?'} chosen but not applied",
                         duration_s=time.monotonic() - t0, next_recommendation=f"proposal failed ({exc}); the family is set aside"), None
        path = self.out / new_name
        path.write_text(prop.source)
        self.progress("proposal", {"round": i, "family": prop.family, "description": prop.description, "diff": prop.diff})
        ev = evaluate(self.problem, path, backend=self.backend, settings=self.settings)
        timing = to_timing(ev, baseline_ms, backend=self.backend, problem=self.problem)
        result, advice = self._judge(ev, timing, best_g, prop.family)
        if result != "improved" and prop.recipe.get("kind") == "llm" and self._applied_count(traj, prop.family, ctx.source_sha) >= 1:
            self.exhausted.add(prop.family)  # offline recipes track tried points themselves; an LLM family gets two tries per base
        rewrite = RoundRewrite(family=prop.family, recipe=prop.recipe, diff=prop.diff, description=prop.description)
        evidence = outcome.evidence + [self._validation_evidence(ev, outcome.stop.level if outcome.stop else "L1")]
        rnd = Round(**{**common, "evidence": evidence}, hypothesis=prop.hypothesis, rewrite=rewrite, validation=ev.validation,
                    timing=timing, outcome=result, candidate_path=str(path), duration_s=time.monotonic() - t0,  # type: ignore[arg-type]
                    next_recommendation=advice)
        return rnd, ev

    def _judge(self, ev: Evaluation, timing: Timing, best_g: float | None, family: str) -> tuple[str, str]:
        if not ev.passed:
            return "failed", f"{family} produced an invalid candidate ({ev.failure_kind}): {ev.reason[:300]}"
        g = timing.geomean_speedup
        if g is None or best_g is None:
            return "neutral", ("validated; timing unavailable on this backend, so it cannot be ranked "
                               "(the best round stays the earliest validated one)")
        thr = self.settings.improvement_threshold
        if g > best_g * (1 + thr):
            return "improved", f"{g:.3f}x vs initial (best was {best_g:.3f}x): continue from this candidate"
        if g < best_g * (1 - thr):
            return "regressed", f"{g:.3f}x is below the best {best_g:.3f}x: keep the best candidate, try another point or family"
        return "neutral", f"{g:.3f}x is within {thr:.0%} of the best {best_g:.3f}x"

    @staticmethod
    def _applied_count(traj: Trajectory, family: str, base_sha: str) -> int:
        return sum(1 for r in traj.rounds if r.rewrite and r.rewrite.family == family and r.rewrite.recipe.get("base") == base_sha)

    @staticmethod
    def _need_more(outcome: LadderOutcome) -> str:
        failed = [f"{r.level}: {r.tests.notes[:160]}" for r in outcome.results]
        return "inconclusive, no rewrite guessed; collect the missing evidence -> " + " | ".join(failed)

    @staticmethod
    def _validation_evidence(ev: Evaluation, level: str) -> EvidenceItem:
        v = ev.validation
        summary = ("validated: " + ", ".join(f"{c.case} max_rel {c.max_rel_err or 0:.2g}" for c in v.cases) if v.passed
                   else f"failed ({ev.failure_kind}): {ev.reason[:400]}")
        return EvidenceItem(level=level, kind="validation", reference=ev.candidate.name, summary=summary,  # type: ignore[arg-type]
                            data={"status": ev.status, "hack_flags": v.hack_flags, "launches": ev.launches[:4]})

    def _finish(self, traj: Trajectory, submit: bool) -> Trajectory:
        traj.best_round = select_best(traj.rounds)
        if traj.best_round is not None:
            best = traj.rounds[traj.best_round]
            ms = [c.ms for c in best.timing.cases if c.ms] if best.timing else []
            traj.best_ms = geomean(ms) if ms else None
            shutil.copyfile(best.candidate_path, self.out / "best.py")
        traj.finished = True
        self._write(traj)
        if submit:
            try:
                stored = self.kb.submit_trajectory(traj)
                self.progress("submitted", {"stored": stored, "id": traj.id})
            except Exception as exc:  # the trajectory is on disk; submission can be retried with ladder synthesize
                self.progress("submit_failed", {"error": f"{type(exc).__name__}: {exc}"})
        self.progress("done", {"trajectory": traj, "path": str(self.out / "trajectory.json")})
        return traj

    def _write(self, traj: Trajectory) -> None:
        (self.out / "trajectory.json").write_text(json.dumps(json.loads(traj.model_dump_json()), indent=2))
