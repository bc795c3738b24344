"""The unseen policy: after selection the winner is validated and timed on the problem's ``UNSEEN_CASES`` (or, when
it declares none, on one case derived from its largest: :func:`derived_unseen_cases`), and flagged where it fails
them, regresses on them or loses most of its gain. In: the selected :class:`~kb.models.Trajectory`; out: its
:class:`~kb.models.UnseenReport` (None when there is nothing to check).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.errors import InvalidArgument
from kb.models import Trajectory, UnseenReport
from optimizer.harness.problem import Problem
from optimizer.round.context import RoundSetup

__all__ = ["DERIVE_FROM", "derived_unseen_cases", "runnable", "unseen_cases", "unseen_report"]

#: integer case values from this size up are changed in a derived unseen case; smaller ones (batch, heads, dtype
#: codes, tiny dims a kernel may hard-code) stay
DERIVE_FROM = 32


def unseen_cases(problem: Problem) -> list[dict[str, Any]]:
    """The problem's ``UNSEEN_CASES`` (cases the session never sees); [] when it declares none."""
    raw = getattr(problem.module, "UNSEEN_CASES", None) or []
    if not isinstance(raw, (list, tuple)) or not all(isinstance(c, dict) for c in raw):
        raise InvalidArgument(f"{problem.path}: UNSEEN_CASES must be a list of dicts like CASES", field="UNSEEN_CASES")
    return [dict(c) for c in raw]


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


def runnable(setup: RoundSetup, cases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(run, skipped): on the interpreter, the unseen cases at most 64x the largest smoke case (by bytes_moved, else
    flops) run; elsewhere all do."""
    if setup.backend != "interpreter":
        return cases, []

    smoke = [setup.size(c) for c in setup.problem.smoke_cases]
    sizes = [x for x in smoke if x is not None]
    if len(sizes) != len(smoke):
        return cases, []
    limit = 64 * max(sizes)
    ok = [c for c in cases if (setup.size(c) or 0) <= limit]
    return ok, [c for c in cases if c not in ok]


def unseen_report(setup: RoundSetup, traj: Trajectory) -> UnseenReport | None:
    """The report on the selected best; an invalid ``UNSEEN_CASES`` is reported, not raised."""
    try:
        return _check(setup, traj)
    except InvalidArgument as exc:
        return UnseenReport(failure_reason=str(exc), flags=["invalid_unseen_cases"])


def _check(setup: RoundSetup, traj: Trajectory) -> UnseenReport | None:
    """Validate (and time vs the initial candidate) the selected best on the unseen cases; flag failures and lost
    gains."""
    declared, source = unseen_cases(setup.problem), "declared"
    if not declared and setup.settings.derive_unseen:
        declared, source = derived_unseen_cases(setup.problem), "derived"
    if not declared or traj.best_round is None:
        return None
    cases, skipped = runnable(setup, declared)
    if not cases:
        return UnseenReport(
            skipped=skipped,
            source=source,
            note=f"all {len(skipped)} unseen cases are too large for the "
            f"{setup.backend} backend (more than 64x its largest smoke case); run on a GPU to check them",
        )
    if source == "derived" and setup.initial is not None:
        first = setup.evaluate(setup.initial, cases=cases, timing=False)
        if not first.passed:  # the derived sizes are outside what this problem's kernels take: no claim either way
            return UnseenReport(
                cases=cases,
                source=source,
                note="the derived case does not validate on the initial "
                f"kernel either, so it is outside the problem's domain: {first.reason[:300]}",
            )
    best = traj.rounds[traj.best_round]
    against = {"initial": setup.initial} if setup.initial is not None and traj.best_round != 0 else {}
    ev = setup.evaluate(Path(best.candidate_path), cases=cases, against=against, methods=setup.methods)
    setup.fix_methods(traj, ev, unseen=True)  # chosen from the initial kernel in that call, like the seen cases
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
    rep.timing = setup.timing(ev, None, cases=cases)
    rep.unseen_ci = rep.timing.geomean_ci
    rep.unseen_speedup = rep.unseen_ci.point if rep.unseen_ci else None
    if rep.unseen_ci is not None and setup.floor is not None:
        if rep.unseen_ci.clears(max(setup.floor, setup.settings.improvement_threshold)) == -1:
            rep.flags.append("regresses_unseen")
        if rep.seen_speedup and rep.unseen_speedup:
            rep.kept_fraction = rep.unseen_speedup / rep.seen_speedup
            if rep.seen_speedup > 1 and rep.kept_fraction < 0.9:
                rep.flags.append("loses_gain_unseen")
    return rep
