"""No recipe is applied outside its declared domain in the committed campaign trajectories.

Trajectories recorded by the cause-deciding ladder (their rounds carry ``cause_decision`` evidence) must have no
violation at all. Older ones predate the domain check: their violations are pinned here, so that the list can
only shrink (a re-run replaces them) and the scanner itself is exercised on real records.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import _data
from kb.models import Round, RoundRewrite, Trajectory
from kb.models.trajectory import EvidenceItem, ProblemRef
from optimizer.rewrite.domains import domain_violations

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
#: Pre-domain campaign rounds (session 3, before recipe domains): a BLOCK_K search on reductions without tl.dot.
KNOWN_OLD = {f"{op} round {r} (shared-memory-budget)" for op, r in
             (("matvec", 1), ("matvec", 3), ("max_dim", 1), ("max_dim", 3), ("mean_dim", 1), ("mean_dim", 3), ("sum_dim", 2))}


def _trajectories() -> list[tuple[Path, Trajectory]]:
    # plain, .gz or inside a campaign archive (benchmarks/_data.py)
    return [(p, Trajectory.model_validate_json(_data.read_text(p))) for p in _data.find(RESULTS)]


def _new_ladder(t: Trajectory) -> bool:
    return any(ev.kind == "cause_decision" for r in t.rounds for ev in r.evidence)


def test_committed_trajectories_stay_inside_recipe_domains() -> None:
    trajs = _trajectories()
    assert trajs, "no committed trajectories found under benchmarks/results"
    new_bad = [v for p, t in trajs if _new_ladder(t) for v in domain_violations(t)]
    assert new_bad == [], new_bad
    old_bad = {v.split(":")[0] for p, t in trajs if not _new_ladder(t) for v in domain_violations(t)}
    assert old_bad <= KNOWN_OLD, sorted(old_bad - KNOWN_OLD)


def test_scanner_flags_a_planted_violation() -> None:
    ev = [EvidenceItem(level="L1", kind="code_features", summary="x", data={"features": ["tl.load", "tl.sum", "row_per_program"]})]
    rw = RoundRewrite(family="matmul-tile-config-search", recipe={"kind": "autotune", "params": {"configs": [
        {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 8}]}})
    t = Trajectory(id="planted-1", problem=ProblemRef(name="rmsnorm"), backend="cuda",
                   rounds=[Round(index=1, evidence=ev, rewrite=rw, outcome="neutral")])
    assert len(domain_violations(t)) == 1 and "needs a tl.dot" in domain_violations(t)[0]
