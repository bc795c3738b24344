"""Stage 3, screen: several points of one family narrowed to the one that goes on. In: :class:`Proposed`; out:
:class:`Screened` (the chosen point written as the round's candidate, and the screen's evidence when it ran).

Every point is validated on the largest case, then the valid ones are timed together, interleaved, in one worker (a
screen, not a verdict); the fastest goes on to the round's full judgement. The losers are recorded as tried. On a GPU
the validations run in parallel worker processes (the host's CPU cores; nothing is timed while they run) and the
timing is one ``retime`` of all valid points: one process start and compile instead of one per point (the sequential
screen cost 17-26 s a round on the H200).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb.models import EvidenceItem
from optimizer.events import PointsScreened, ProposalMade
from optimizer.harness import stages
from optimizer.harness.evaluation import Evaluation
from optimizer.harness.problem import case_label
from optimizer.phases import PhaseClock
from optimizer.proposers.base import Proposal
from optimizer.round.context import RoundSetup
from optimizer.round.diagnose import Diagnosed
from optimizer.round.propose import Proposed

__all__ = ["SCREEN_WORKERS", "Screened", "screen", "screen_points"]

#: parallel validation workers of one in-round screen (GPU hosts; each is a sandboxed process on one case)
SCREEN_WORKERS = 4


@dataclass(frozen=True)
class Screened:
    """The point that goes on, written to ``path``; ``evidence`` is the screen's (None when there was one point)."""

    diagnosed: Diagnosed
    proposal: Proposal
    evidence: EvidenceItem | None
    path: Path


def screen(setup: RoundSetup, p: Proposed) -> Screened:
    with stages.span("screen"):
        if len(p.proposals) > 1:
            prop, item = screen_points(setup, p.diagnosed.base.index, p.proposals, p.diagnosed.clock)
        else:
            prop, item = p.proposals[0], None
    path = setup.workdir / p.new_name
    path.write_text(prop.source)
    setup.progress(ProposalMade(round=p.diagnosed.base.index, family=prop.family, description=prop.description,
                                diff=prop.diff))
    return Screened(diagnosed=p.diagnosed, proposal=prop, evidence=item, path=path)


def screen_case(setup: RoundSetup) -> dict[str, Any]:
    """The largest of the backend's cases (by bytes_moved, else flops)."""
    return max(setup.problem.cases_for(setup.backend), key=lambda c: setup.size(c) or 0.0)


def screen_points(setup: RoundSetup, i: int, props: list[Proposal],
                  clock: PhaseClock) -> tuple[Proposal, EvidenceItem]:
    """Round ``i``'s points validated, then the valid ones timed together; the fastest valid one and the evidence."""
    case = screen_case(setup)
    paths = []
    for j, prop in enumerate(props):
        path = setup.workdir / "screen" / f"round_{i:02d}_v{j}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(prop.source)
        paths.append(path)
    t0 = time.monotonic()

    # one validation seed here: the point that goes on is validated again with every seed on every case; on a GPU
    # each point gets screen_timeout_s (a variant whose huge tile takes minutes to compile leaves the screen: one
    # such point cost a round 84 s on the H200 while its siblings validated in 11 s)
    settings = setup.settings
    update: dict[str, Any] = {"validation_seeds": list(settings.validation_seeds[:1])}
    if setup.backend != "interpreter":
        update["sandbox_timeout_s"] = min(settings.sandbox_timeout_s, settings.screen_timeout_s)
    screen_settings = settings.model_copy(update=update)

    def check(path: Path) -> Evaluation:
        return setup.evaluate(path, settings=screen_settings, cases=[case], timing=False)

    if setup.backend == "interpreter" or len(paths) == 1:
        evs = [check(p) for p in paths]
    else:
        with ThreadPoolExecutor(max_workers=min(len(paths), SCREEN_WORKERS)) as pool:
            evs = list(pool.map(check, paths))
    clock.add("screen_validate", time.monotonic() - t0)
    ok = [j for j, ev in enumerate(evs) if ev.passed]
    ms: dict[int, float] = {}
    note = ""
    if len(ok) > 1 and setup.backend != "interpreter":
        t1 = time.monotonic()
        tev = setup.retime(paths[ok[0]], {f"v{j}": paths[j] for j in ok[1:]}, cases=[case])
        clock.add("screen_time", time.monotonic() - t1)
        tc = tev.timing_cases[0] if tev.passed and tev.timing_cases else None
        if tc is None:
            note = f"; the screen's timing failed ({tev.reason[:160]}): the first valid point goes on"
        else:
            ms[ok[0]] = tc.stats.median_ms
            ms |= {j: tc.role_stats[f"v{j}"].median_ms for j in ok[1:] if f"v{j}" in tc.role_stats}
    rows = [{"variant": j, "applied": prop.recipe.applied, "passed": evs[j].passed, "ms": ms.get(j),
             "reason": "" if evs[j].passed else evs[j].reason[:200]} for j, prop in enumerate(props)]
    win = min(ms, key=lambda j: ms[j]) if ms else (ok[0] if ok else 0)
    chosen = props[win]
    chosen.recipe = chosen.recipe.with_screened([p.recipe.applied for p in props])
    summary = (
        f"{len(props)} points of {chosen.family} screened on {case_label(case)} (validated, then timed together): "
        + ", ".join(
            f"v{r['variant']} "
            + (f"{r['ms']:.4g} ms" if r["ms"] is not None else "valid" if r["passed"] else "failed")
            for r in rows
        )
        + f"; v{win} goes on to the full judgement{note}"
    )
    setup.progress(PointsScreened(round=i, summary=summary))
    return chosen, EvidenceItem(level="L2", kind="variant_screen", reference=chosen.family, summary=summary[:2000],
                                data={"case": case_label(case), "rows": rows, "chosen": win})
