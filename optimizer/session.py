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
Selection: the best improved rounds are re-timed interleaved with the initial candidate (more blocks) and the
highest confirmed one whose interval clears the margin wins; none confirmed -> round 0. Untimed backends keep the
earliest validated round. Afterwards the winner is validated and timed on the problem's ``UNSEEN_CASES`` (or, when
it declares none, on one case derived from its largest: ``derived_unseen_cases``).
Each round records seconds per phase (``Round.phase_s``, see ``optimizer.phases``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kb.client import KBClient
from kb.errors import InvalidArgument, LadderError, log_error
from kb.models import (
    CaseMethod,
    EvidenceItem,
    ProblemRef,
    Round,
    RoundRewrite,
    Selection,
    Timing,
    Trajectory,
    UnseenReport,
)
from kb.models.trajectory import Outcome
from kb.vocab import Level
from optimizer.harness import stages, verdict
from optimizer.harness.evaluation import Evaluation, evaluate, record_launches, retime, to_timing
from optimizer.harness.gpulock import GPULock, device_key
from optimizer.harness.problem import Problem, case_label, load_problem
from optimizer.harness.timing import geomean
from optimizer.ladder import keys
from optimizer.ladder.cases import representative_case
from optimizer.ladder.engine import LadderOutcome, run_ladder
from optimizer.ladder.types import LadderContext
from optimizer.phases import PhaseClock, TimedKB
from optimizer.proposers.base import Proposal, Proposer
from optimizer.rewrite.errors import NotApplicable
from optimizer.settings import LadderSettings

log = logging.getLogger(__name__)

__all__ = ["default_candidate", "derived_unseen_cases", "detect_backend", "make_proposer", "problem_input_dtypes",
           "select_best", "Session", "unseen_cases"]

#: how many of the best improved rounds are re-timed against the initial candidate before one is selected
CONFIRM_TOP = 2
#: parallel validation workers of one in-round screen (GPU hosts; each is a sandboxed process on one case)
SCREEN_WORKERS = 4

Progress = Callable[[str, dict[str, Any]], None]


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
    except (ImportError, OSError):  # no torch, or a broken CUDA library under it: the interpreter backend
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
            raise InvalidArgument(
                "--backend cuda: no CUDA device on this machine (torch.cuda.is_available() is False); "
                "use --backend interpreter for correctness and static (code + IR) diagnosis"
            )
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


def unseen_cases(problem: Problem) -> list[dict[str, Any]]:
    """The problem's ``UNSEEN_CASES`` (cases the session never sees); [] when it declares none."""
    raw = getattr(problem.module, "UNSEEN_CASES", None) or []
    if not isinstance(raw, (list, tuple)) or not all(isinstance(c, dict) for c in raw):
        raise InvalidArgument(f"{problem.path}: UNSEEN_CASES must be a list of dicts like CASES", field="UNSEEN_CASES")
    return [dict(c) for c in raw]


#: integer case values from this size up are changed in a derived unseen case; smaller ones (batch, heads, dtype
#: codes, tiny dims a kernel may hard-code) stay
DERIVE_FROM = 32


def derived_unseen_cases(problem: Problem) -> list[dict[str, Any]]:
    """One case for problems that declare no ``UNSEEN_CASES``: the largest case (by bytes_moved, else flops) with every
    integer of at least ``DERIVE_FROM`` made odd and about 20% smaller (``(4v // 5) | 1``), so the best meets other
    sizes and other divisibility than it was tuned on. [] when nothing changes. The case may not suit every kernel
    (a head dim a kernel requires as a power of two): the session checks it on the initial kernel first."""
    if not problem.cases:
        return []
    base = max(problem.cases, key=problem.size)
    out = {k: ((4 * v) // 5) | 1 if isinstance(v, int) and not isinstance(v, bool) and v >= DERIVE_FROM else v
           for k, v in base.items()}
    return [] if out == base or out in problem.cases else [out]


def problem_input_dtypes(problem: Problem) -> list[str]:
    import torch

    try:
        xs = problem.make_inputs(problem.smoke_cases[0], 0)
    except Exception as exc:  # noqa: BLE001 - user-code boundary: the problem's own make_inputs may raise anything
        log_error(log, exc, f"{problem.name}: make_inputs of the first smoke case", level=logging.DEBUG)
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


def _minus_speedup(r: Round) -> float:
    """Sort key, fastest first: minus the round's geomean speedup (0 where untimed)."""
    return -((r.timing.geomean_speedup if r.timing is not None else None) or 0.0)


class Session:
    def __init__(
        self,
        problem: Problem | str | Path,
        candidate: str | Path | None,
        *,
        kb: KBClient,
        settings: LadderSettings,
        backend: str,
        proposer: Proposer,
        out_dir: str | Path,
        progress: Progress | None = None,
        force_shared_gpu: bool = False,
    ) -> None:
        self.problem = problem if isinstance(problem, Problem) else load_problem(problem)
        self.candidate = Path(candidate).resolve() if candidate else default_candidate(self.problem.path)
        self.kb, self.settings, self.backend, self.proposer = kb, settings, backend, proposer
        self.out = Path(out_dir).resolve()
        self.progress = progress or (lambda _e, _d: None)
        self.cache: dict[str, Any] = {keys.INPUT_DTYPES: problem_input_dtypes(self.problem)}
        self._launch_memo: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
        self.exhausted: set[str] = set()
        self.force_shared_gpu = force_shared_gpu
        self.floor: float | None = None
        self.initial: Path | None = None
        self.methods: dict[str, str] = {}  # case label -> the timing method fixed at the baseline (one timing truth)

    # ----------------------------------------------------------------------------------------------------
    def run(self, rounds: int | None = None, *, submit: bool = False) -> Trajectory:
        n_rounds = self.settings.rounds if rounds is None else rounds
        self.out.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        raw_id = f"{self.problem.name}-{self.backend}-{stamp}-{secrets.token_hex(2)}"
        tid = re.sub(r"[^A-Za-z0-9._:-]", "-", raw_id)[:128]
        problem = ProblemRef(name=self.problem.name, path=str(self.problem.path), sha256=self.problem.sha256,
                             cases=self.problem.cases_for(self.backend))
        # backend: a str checked by check_backend at the CLI; the model validates it against kb's literal again
        traj = Trajectory.model_validate(
            {"id": tid, "problem": problem, "backend": self.backend, "proposer": self.proposer.name})
        self._warm_kb()
        lock = None
        if self.backend in ("cuda", "ascend"):  # timing sessions never share a device
            lock = GPULock(Path(self.settings.lock_dir), device_key(0) if self.backend == "cuda" else "npu0", owner=tid)
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
        base_path = self.out / "round_00.py"
        shutil.copyfile(self.candidate, base_path)
        self.initial = base_path
        self.progress("baseline", {"candidate": str(self.candidate), "backend": self.backend})
        t0 = time.monotonic()
        sc = stages.StageClock()
        with stages.recording(sc), stages.span("evaluate"):
            base_eval = evaluate(self.problem, base_path, backend=self.backend, settings=self.settings, aa=True)
        baseline_ms = base_eval.case_ms()
        self._fix_methods(traj, base_eval, unseen=False)
        timing = to_timing(base_eval, baseline_ms, backend=self.backend, problem=self.problem)
        aa = base_eval.pairs("aa")
        if aa and len(aa) == len(baseline_ms):
            traj.noise_floor = verdict.noise_floor(aa, method=base_eval.protocol.method if base_eval.protocol else "")
            self.floor = traj.noise_floor.floor
            timing.verdict = (
                f"A/A noise floor {self.floor:.2%} (baseline vs itself {traj.noise_floor.aa.point:.3f}x, "
                f"95% [{traj.noise_floor.aa.lo:.3f}, {traj.noise_floor.aa.hi:.3f}]); "
                + verdict.rule_text(self.floor, self.settings.improvement_threshold)
            )
        clock = PhaseClock()
        clock.merge(base_eval.phase_s)
        r0 = Round(
            index=0,
            hypothesis="baseline: the initial candidate",
            comparison_target="initial",
            evidence=[self._validation_evidence(base_eval, "L1")],
            validation=base_eval.validation,
            timing=timing,
            outcome="baseline" if base_eval.passed else "failed",
            candidate_path=str(base_path),
            duration_s=time.monotonic() - t0,
            phase_s=clock.finish(time.monotonic() - t0),
            next_recommendation="" if base_eval.passed else f"fix the initial candidate first: {base_eval.reason}",
        )
        traj.rounds.append(r0)
        self._close_stages(r0, sc)
        traj.device, traj.versions = base_eval.device, _versions(base_eval)
        traj.initial_ms = geomean(baseline_ms.values()) if baseline_ms else None
        self.progress("round_end", {"round": r0})
        if not base_eval.passed:  # every candidate must validate before the session continues
            return self._finish(traj, submit)
        best_g = timing.geomean_speedup
        streak = 0
        for i in range(1, n_rounds + 1):
            with stages.recording() as sc:
                rnd, new_eval = self._round(i, traj, base_path, base_eval, baseline_ms, best_g)
                traj.rounds.append(rnd)
                with stages.span("persist"):
                    self._write(traj)
                with stages.span("progress"):
                    self.progress("round_end", {"round": rnd})
            self._close_stages(rnd, sc)
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
        clock = PhaseClock()
        with stages.span("launches"):
            ladder_eval = (
                self._full_size_launches(base_path, base_eval, clock) if self.backend == "interpreter" else base_eval
            )
        ctx = LadderContext(
            problem=self.problem,
            candidate=base_path,
            backend=self.backend,
            kb=TimedKB(self.kb, clock),
            settings=self.settings,
            evaluation=ladder_eval,
            history=list(traj.rounds[1:]),
            exclude_cards=set(self.exhausted),
            require_recipe=self.proposer.requires_recipe,
            workdir=self.out,
            cache=self.cache,
            baseline_ms=baseline_ms,
            phases=clock,
        )
        with stages.span("ladder"):
            outcome = run_ladder(ctx, max_level=self.settings.max_level)
        self.progress("ladder", {"round": i, "summary": outcome.summary(), "levels": outcome.levels_reached})
        common: dict[str, Any] = dict(  # the fields every Round of this call shares
            index=i,
            levels_reached=outcome.levels_reached,
            evidence=outcome.evidence,
            cards_cited=outcome.cards_cited,
            comparison_target="initial",
            stop=outcome.stop,
        )

        def wall() -> dict[str, Any]:
            d = time.monotonic() - t0
            return {"duration_s": d, "phase_s": clock.finish(d)}

        if outcome.inconclusive:
            return Round(**common, outcome="inconclusive", **wall(), next_recommendation=self._need_more(outcome)), None
        if outcome.stop is not None and outcome.stop.cause == "at_roofline" and outcome.chosen is None:
            return Round(
                **common,
                outcome="inconclusive",
                hypothesis="at the roofline: nothing structural to gain",
                **wall(),
                next_recommendation=f"{AT_ROOFLINE_STOP}: {outcome.stop.rationale[:300]}",
            ), None
        new_name = f"round_{i:02d}.py"
        try:
            with clock.time("proposer"):  # the stage "proposer" too (PhaseClock.time opens the span)
                props = self._proposals(ctx, outcome, new_name)
        except NotApplicable as exc:
            if outcome.chosen is not None:
                self.exhausted.add(outcome.chosen.id)
            return Round(
                **common,
                outcome="inconclusive",
                hypothesis=f"{outcome.chosen.id if outcome.chosen else '?'} chosen but not applied",
                **wall(),
                next_recommendation=f"proposal failed ({exc}); the family is set aside",
            ), None
        with stages.span("screen"):
            prop, screen = self._screen(i, props, clock) if len(props) > 1 else (props[0], None)
        path = self.out / new_name
        path.write_text(prop.source)
        self.progress(
            "proposal", {"round": i, "family": prop.family, "description": prop.description, "diff": prop.diff}
        )
        against = {"initial": self.initial or base_path} | ({"base": base_path} if base_path != self.initial else {})
        with stages.span("evaluate"):
            ev = evaluate(
                self.problem, path, backend=self.backend, settings=self.settings, against=against, methods=self.methods
            )
        clock.merge(ev.phase_s)
        timing = to_timing(ev, baseline_ms, backend=self.backend, problem=self.problem)
        result, advice = self._judge(ev, timing, best_g, prop.family)
        if (
            result != "improved"
            and prop.recipe.get("kind") == "llm"
            and self._applied_count(traj, prop.family, ctx.source_sha) >= 1
        ):
            self.exhausted.add(
                prop.family
            )  # offline recipes track tried points themselves; an LLM family gets two tries per base
        target = None
        if (self.backend == "cuda" and self.settings.ncu_account and ev.validation is not None and ev.validation.passed
                and outcome.stop is not None and outcome.stop.cause not in ("unknown", "at_roofline")):
            from optimizer.ladder.measured_account import round_target

            with stages.span("target"):  # did the rewrite remove what its cause names? (issue 30 item 4)
                target = round_target(ctx, path, outcome.stop.cause)
        rewrite = RoundRewrite(family=prop.family, recipe=prop.recipe, diff=prop.diff, description=prop.description)
        evidence = outcome.evidence + ([screen] if screen else []) + [
            self._validation_evidence(ev, outcome.stop.level if outcome.stop else "L1")]
        rnd = Round(
            **{**common, "evidence": evidence},
            hypothesis=prop.hypothesis,
            rewrite=rewrite,
            validation=ev.validation,
            timing=timing,
            outcome=result,
            target=target,
            candidate_path=str(path),
            **wall(),
            next_recommendation=advice
            + (f"; improved, but {target.cause}'s measured parts are {target.verdict} ({target.note})"
               if target is not None and result == "improved" and target.verdict in ("unchanged", "grew") else ""),
        )
        return rnd, ev

    def _proposals(self, ctx: LadderContext, outcome: Any, new_name: str) -> list[Proposal]:
        """The proposer's points for this round: several (``settings.round_variants``) where it offers variants."""
        n = self.settings.round_variants
        if n > 1 and hasattr(self.proposer, "variants") and self.backend != "interpreter":
            return list(self.proposer.variants(ctx, outcome, new_filename=new_name, limit=n)) or [
                self.proposer.propose(ctx, outcome, new_filename=new_name)]
        return [self.proposer.propose(ctx, outcome, new_filename=new_name)]

    def _size(self, case: dict[str, Any]) -> float | None:
        """A case's size: the problem's bytes_moved, else its flops (None when it declares neither)."""
        return self.problem.bytes_moved(case) or self.problem.flops(case)

    def _full_size_launches(self, path: Path, ev: Evaluation, clock: PhaseClock) -> Evaluation:
        """On the interpreter a base's launches are those of the smoke cases (tiny grids, other divisibility); the
        ladder and the recipes read the first full-size case's launches instead, recorded without executing a kernel
        as ``ladder diagnose`` does, once per base. The validation and timing records stay the smoke cases'."""
        key = hashlib.sha256(path.read_bytes()).hexdigest()
        if key not in self._launch_memo:
            t0 = time.monotonic()
            launches, _note, case = record_launches(self.problem, path, self.settings,
                                                    case=representative_case(self.problem))  # as `ladder diagnose` does
            clock.add("other", time.monotonic() - t0)
            self._launch_memo[key] = (launches, case)
        launches, case = self._launch_memo[key]
        if not launches:
            return ev
        self.cache[keys.LAUNCH_CASE] = case
        return dataclasses.replace(ev, launches=launches)

    def _screen_case(self) -> dict[str, Any]:
        return max(self.problem.cases_for(self.backend), key=lambda c: self._size(c) or 0.0)

    def _screen(self, i: int, props: list[Proposal], clock: PhaseClock) -> tuple[Proposal, EvidenceItem]:
        """Validate every point on the largest case, then time the valid ones together, interleaved, in one worker (a
        screen, not a verdict); the fastest goes on to the round's full judgement. The losers are recorded as tried.

        On a GPU the validations run in parallel worker processes (the host's CPU cores; nothing is timed while they
        run) and the timing is one ``retime`` of all valid points: one process start and compile instead of one per
        point (the sequential screen cost 17-26 s a round on the H200)."""
        case = self._screen_case()
        paths = []
        for j, prop in enumerate(props):
            path = self.out / "screen" / f"round_{i:02d}_v{j}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(prop.source)
            paths.append(path)
        t0 = time.monotonic()

        # one validation seed here: the point that goes on is validated again with every seed on every case; on a GPU
        # each point gets screen_timeout_s (a variant whose huge tile takes minutes to compile leaves the screen: one
        # such point cost a round 84 s on the H200 while its siblings validated in 11 s)
        update: dict[str, Any] = {"validation_seeds": list(self.settings.validation_seeds[:1])}
        if self.backend != "interpreter":
            update["sandbox_timeout_s"] = min(self.settings.sandbox_timeout_s, self.settings.screen_timeout_s)
        screen_settings = self.settings.model_copy(update=update)

        def check(path: Path) -> Evaluation:
            return evaluate(
                self.problem, path, backend=self.backend, settings=screen_settings, cases=[case], timing=False
            )

        if self.backend == "interpreter" or len(paths) == 1:
            evs = [check(p) for p in paths]
        else:
            with ThreadPoolExecutor(max_workers=min(len(paths), SCREEN_WORKERS)) as pool:
                evs = list(pool.map(check, paths))
        clock.add("screen_validate", time.monotonic() - t0)
        ok = [j for j, ev in enumerate(evs) if ev.passed]
        ms: dict[int, float] = {}
        note = ""
        if len(ok) > 1 and self.backend != "interpreter":
            t1 = time.monotonic()
            tev = retime(self.problem, paths[ok[0]], {f"v{j}": paths[j] for j in ok[1:]}, backend=self.backend,
                         settings=self.settings, cases=[case], methods=self.methods)
            clock.add("screen_time", time.monotonic() - t1)
            tc = tev.timing_cases[0] if tev.passed and tev.timing_cases else None
            if tc is None:
                note = f"; the screen's timing failed ({tev.reason[:160]}): the first valid point goes on"
            else:
                ms[ok[0]] = tc.stats.median_ms
                ms |= {j: tc.role_stats[f"v{j}"].median_ms for j in ok[1:] if f"v{j}" in tc.role_stats}
        rows = [{"variant": j, "applied": prop.recipe.get("applied"), "passed": evs[j].passed, "ms": ms.get(j),
                 "reason": "" if evs[j].passed else evs[j].reason[:200]} for j, prop in enumerate(props)]
        win = min(ms, key=lambda j: ms[j]) if ms else (ok[0] if ok else 0)
        chosen = props[win]
        chosen.recipe = {**chosen.recipe, "screened": [r["applied"] for r in rows]}
        summary = (
            f"{len(props)} points of {chosen.family} screened on {case_label(case)} (validated, then timed together): "
            + ", ".join(
                f"v{r['variant']} "
                + (f"{r['ms']:.4g} ms" if r["ms"] is not None else "valid" if r["passed"] else "failed")
                for r in rows
            )
            + f"; v{win} goes on to the full judgement{note}"
        )
        self.progress("screen", {"round": i, "summary": summary})
        return chosen, EvidenceItem(level="L2", kind="variant_screen", reference=chosen.family, summary=summary[:2000],
                                    data={"case": case_label(case), "rows": rows, "chosen": win})

    def _judge(self, ev: Evaluation, timing: Timing, best_g: float | None, family: str) -> tuple[Outcome, str]:
        """The verdict by ``optimizer.harness.verdict.judge`` on the interval over the base; the rule is written into
        the timing."""
        if not ev.passed:
            return "failed", f"{family} produced an invalid candidate ({ev.failure_kind}): {ev.reason[:300]}"
        g, vb = timing.geomean_speedup, timing.vs_base
        if g is None or vb is None or self.floor is None:
            timing.verdict = "neutral: no interval (timing unavailable on this backend or no A/A noise floor)"
            return "neutral", ("validated; timing unavailable on this backend, so it cannot be ranked "
                               "(the best round stays the earliest validated one)")
        thr = self.settings.improvement_threshold
        result = verdict.judge(vb, self.floor, thr)
        span = f"{vb.point:.3f}x over the base, 95% [{vb.lo:.3f}, {vb.hi:.3f}]"
        timing.verdict = f"{result}: {span}; " + verdict.rule_text(self.floor, thr)
        if result == "improved":
            return result, f"{g:.3f}x vs initial ({span}): continue from this candidate"
        if result == "regressed":
            return result, f"{span} is below the noise margin: keep the base, try another point or family"
        return result, f"{span} does not clear the margin {max(self.floor, thr):.2%}: not distinguishable from the base"

    def _runnable(self, cases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """On the interpreter, the unseen cases at most 64x the largest smoke case (by bytes_moved, else flops)."""
        if self.backend != "interpreter":
            return cases, []

        smoke = [self._size(c) for c in self.problem.smoke_cases]
        sizes = [x for x in smoke if x is not None]
        if len(sizes) != len(smoke):
            return cases, []
        limit = 64 * max(sizes)
        ok = [c for c in cases if (self._size(c) or 0) <= limit]
        return ok, [c for c in cases if c not in ok]

    @staticmethod
    def _applied_count(traj: Trajectory, family: str, base_sha: str) -> int:
        return sum(
            1
            for r in traj.rounds
            if r.rewrite and r.rewrite.family == family and r.rewrite.recipe.get("base") == base_sha
        )

    @staticmethod
    def _need_more(outcome: LadderOutcome) -> str:
        failed = [f"{r.level}: {r.tests.notes[:160]}" for r in outcome.results]
        return "inconclusive, no rewrite guessed; collect the missing evidence -> " + " | ".join(failed)

    @staticmethod
    def _validation_evidence(ev: Evaluation, level: Level) -> EvidenceItem:
        v = ev.validation
        summary = ("validated: " + ", ".join(f"{c.case} max_rel {c.max_rel_err or 0:.2g}" for c in v.cases) if v.passed
                   else f"failed ({ev.failure_kind}): {ev.reason[:400]}")
        return EvidenceItem(level=level, kind="validation", reference=ev.candidate.name, summary=summary,
                            data={"status": ev.status, "hack_flags": v.hack_flags, "launches": ev.launches[:4]})

    def _finish(self, traj: Trajectory, submit: bool) -> Trajectory:
        self._select(traj)
        if traj.best_round is not None:
            best = traj.rounds[traj.best_round]
            ms = [c.ms for c in best.timing.cases if c.ms] if best.timing else []
            traj.best_ms = geomean(ms) if ms else None
            shutil.copyfile(best.candidate_path, self.out / "best.py")
            try:
                traj.unseen = self._unseen(traj)
            except InvalidArgument as exc:
                traj.unseen = UnseenReport(failure_reason=str(exc), flags=["invalid_unseen_cases"])
            if traj.unseen and traj.unseen.flags:
                self.progress("unseen", {"flags": traj.unseen.flags, "report": traj.unseen})
        traj.finished = True
        self._write(traj)
        if submit:
            try:
                stored = self.kb.submit_trajectory(traj)
                self.progress("submitted", {"stored": stored, "id": traj.id})
            except Exception as exc:  # noqa: BLE001 - KB boundary (often a server): the trajectory is on disk;
                # submission can be retried with ladder synthesize
                error = f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, LadderError):  # a domain error's message says what to do; anything else: an id
                    error += f" (error {log_error(log, exc, f'submitting {traj.id}', level=logging.INFO)})"
                self.progress("submit_failed", {"error": error})
        self.progress("done", {"trajectory": traj, "path": str(self.out / "trajectory.json")})
        return traj

    def _select(self, traj: Trajectory) -> None:
        """Re-time the best improved rounds interleaved with the initial candidate; the highest confirmed one wins."""
        improved = [r for r in traj.rounds[1:] if r.outcome == "improved" and r.timing and r.timing.geomean_speedup]
        if self.floor is None or self.initial is None:
            traj.best_round = select_best(traj.rounds)
            traj.selection = Selection(round=traj.best_round, note="untimed: the earliest validated round")
            return
        margin = max(self.floor, self.settings.improvement_threshold)
        top = sorted(improved, key=_minus_speedup)[:CONFIRM_TOP]
        sel = Selection(round=0, note="no improved round" if not top else "")
        for r in top:
            ev = retime(self.problem, Path(r.candidate_path), {"initial": self.initial}, backend=self.backend,
                        settings=self.settings, blocks=self.settings.timing_confirm_blocks, methods=self.methods)
            pairs = ev.pairs("initial")
            if not ev.passed or not pairs:
                sel.note += f"round {r.index}: re-time failed ({ev.reason[:200]}); "
                continue
            sel.confirmed[r.index] = verdict.geomean_ratio(pairs)
        ok = {i: ci for i, ci in sel.confirmed.items() if ci.clears(margin) == 1}
        if ok:
            sel.round = max(ok, key=lambda i: ok[i].point)
            best = ok[sel.round]
            sel.note += f"round {sel.round} confirmed {best.point:.3f}x [{best.lo:.3f}, {best.hi:.3f}] vs initial"
        elif top:
            sel.note += (
                f"no re-timed round cleared the margin {margin:.2%} vs initial: the initial candidate stays best"
            )
        traj.best_round, traj.selection = sel.round, sel

    def _unseen(self, traj: Trajectory) -> UnseenReport | None:
        """Validate (and time vs the initial candidate) the selected best on UNSEEN_CASES; flag failures and lost
        gains."""
        declared, source = unseen_cases(self.problem), "declared"
        if not declared and self.settings.derive_unseen:
            declared, source = derived_unseen_cases(self.problem), "derived"
        if not declared or traj.best_round is None:
            return None
        cases, skipped = self._runnable(declared)
        if not cases:
            return UnseenReport(
                skipped=skipped,
                source=source,
                note=f"all {len(skipped)} unseen cases are too large for the "
                f"{self.backend} backend (more than 64x its largest smoke case); run on a GPU to check them",
            )
        if source == "derived" and self.initial is not None:
            first = evaluate(
                self.problem, self.initial, backend=self.backend, settings=self.settings, cases=cases, timing=False
            )
            if not first.passed:  # the derived sizes are outside what this problem's kernels take: no claim either way
                return UnseenReport(
                    cases=cases,
                    source=source,
                    note="the derived case does not validate on the initial "
                    f"kernel either, so it is outside the problem's domain: {first.reason[:300]}",
                )
        best = traj.rounds[traj.best_round]
        against = {"initial": self.initial} if self.initial is not None and traj.best_round != 0 else {}
        ev = evaluate(
            self.problem,
            Path(best.candidate_path),
            backend=self.backend,
            settings=self.settings,
            cases=cases,
            against=against,
            methods=self.methods,
        )
        self._fix_methods(traj, ev, unseen=True)  # chosen from the initial kernel in that call, like the seen cases
        rep = UnseenReport(
            cases=cases,
            skipped=skipped,
            source=source,
            passed=ev.passed,
            failure_reason="" if ev.passed else ev.reason[:2000],
            validation=ev.validation,
            note=f"{len(skipped)} case(s) too large for the interpreter skipped" if skipped else "",
        )
        sel = traj.selection.confirmed.get(traj.best_round) if traj.selection else None
        rep.seen_speedup = sel.point if sel else (best.timing.geomean_speedup if best.timing else None)
        if not ev.passed:
            rep.flags.append("fails_unseen")
            return rep
        rep.timing = to_timing(ev, None, backend=self.backend, problem=self.problem, cases=cases)
        rep.unseen_ci = rep.timing.geomean_ci
        rep.unseen_speedup = rep.unseen_ci.point if rep.unseen_ci else None
        if rep.unseen_ci is not None and self.floor is not None:
            if rep.unseen_ci.clears(max(self.floor, self.settings.improvement_threshold)) == -1:
                rep.flags.append("regresses_unseen")
            if rep.seen_speedup and rep.unseen_speedup:
                rep.kept_fraction = rep.unseen_speedup / rep.seen_speedup
                if rep.seen_speedup > 1 and rep.kept_fraction < 0.9:
                    rep.flags.append("loses_gain_unseen")
        return rep

    def _fix_methods(self, traj: Trajectory, ev: Evaluation, *, unseen: bool) -> None:
        """Record each newly timed case's method (decided from the initial kernel) so every later call reuses it."""
        for c in ev.timing_cases:
            if c.case in self.methods or c.method not in ("do_bench", "cudagraph"):
                continue
            self.methods[c.case] = c.method
            traj.timing_methods[c.case] = CaseMethod.model_validate(  # method: one of the two kept just above
                {"method": c.method, "decided_ms": c.decided_ms, "note": c.method_note, "unseen": unseen})

    @staticmethod
    def _close_stages(rnd: Round, sc: stages.StageClock) -> None:
        """The round's wall-clock stages (``Round.stages``): from its start to after its trajectory write and progress
        report, which ``duration_s`` then includes too (the remainder goes to ``phase_s['other']`` as well)."""
        wall = max(rnd.duration_s, sc.elapsed())
        rnd.phase_s["other"] = round(rnd.phase_s.get("other", 0.0) + wall - rnd.duration_s, 3)
        rnd.duration_s = wall
        rnd.stages = sc.finish(wall)

    def _write(self, traj: Trajectory) -> None:
        (self.out / "trajectory.json").write_text(json.dumps(json.loads(traj.model_dump_json()), indent=2))
