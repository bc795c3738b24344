"""``ladder bench ablation`` (issue 34): the report on a synthetic results fixture, the resumable runner with a fake
session, and the committed problem list."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "ablation"))

import ablation  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def row(arm: str, problem: str, speedup: float, gpu_s: float, *, best_round: int = 2, best_level: str = "L1",
        families: list[str] | None = None, rounds: list[str | None] = (), headroom: float = 4.0,
        status: str = "done") -> dict[str, Any]:
    return {"arm": arm, "problem": problem, "set": problem.split("/")[0], "status": status, "backend": "cuda", "rounds_requested": 15,
            "speedup": speedup, "gpu_s": gpu_s, "wall_s": gpu_s / 2, "best_round": best_round if speedup > 1 else 0,
            "best_level": best_level if speedup > 1 else None, "headroom": headroom,
            "label_families": families, "cause_source": "label" if families else "decided",
            "rounds": [{"index": 0, "family": None}] + [{"index": i + 1, "family": f} for i, f in enumerate(rounds)]}


def write(out: Path, rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_report_on_a_synthetic_fixture(tmp_path: Path) -> None:
    fam = ["block-per-program"]
    rows = [
        row("hierarchical", "d/a", 4.0, 100, families=fam, rounds=["block-per-program", "num-warps"], best_level="L1"),
        row("hierarchical", "n/b", 2.0, 60, best_round=3, best_level="L2"),
        row("hierarchical", "n/c", 1.0, 40),
        row("always-deep", "d/a", 4.0, 300, families=fam, rounds=["block-per-program"], best_level="L4", best_round=1),
        row("always-deep", "n/b", 2.0, 200, best_level="L3", best_round=1),
        row("always-deep", "n/c", 1.0, 100),
        row("l1-only", "d/a", 1.0, 20, families=fam, rounds=["num-warps", "rows-per-program"]),
        row("l1-only", "n/b", 1.0, 20),
        row("l1-only", "n/c", 1.0, 20),
        row("hierarchical", "n/only-one-arm", 9.0, 10),  # not finished by every arm: left out of the paired table
        row("always-deep", "n/d", 3.0, 10, status="error"),  # errors never count
    ]
    rows.insert(0, row("hierarchical", "d/a", 1.5, 999))  # an earlier record of the same pair: the latest wins
    write(tmp_path, rows)
    doc = ablation.report(tmp_path, ["hierarchical", "l1-only", "profile-first", "always-deep"])
    assert doc["arms"] == ["hierarchical", "l1-only", "always-deep"]  # profile-first has no results
    assert doc["common_problems"] == ["d/a", "n/b", "n/c"]
    h, d, l1 = (doc["per_arm"][a] for a in ("hierarchical", "always-deep", "l1-only"))
    assert h["geomean_speedup"] == pytest.approx(2.0)  # (4 * 2 * 1) ** (1/3)
    assert d["geomean_speedup"] == pytest.approx(2.0) and l1["geomean_speedup"] == pytest.approx(1.0)
    assert h["gpu_s_per_session"] == pytest.approx(200 / 3) and h["gpu_s_total"] == 200
    assert h["gpu_s_per_doubling"] == pytest.approx(200 / 3)  # log2(4) + log2(2) = 3 doublings
    assert d["gpu_s_per_doubling"] == pytest.approx(600 / 3) and l1["gpu_s_per_doubling"] is None
    assert h["captured_headroom"] == pytest.approx((math.log(4) / math.log(4) + math.log(2) / math.log(4) + 0) / 3)
    assert h["rounds_to_best_median"] == pytest.approx(2.5) and d["rounds_to_best_median"] == 1
    assert h["wrong_family_rounds"] == 1 and d["wrong_family_rounds"] == 0 and l1["wrong_family_rounds"] == 2
    assert h["best_level"] == {"L1": 1, "L2": 1, "baseline": 1} and d["best_level"] == {"L3": 1, "L4": 1, "baseline": 1}
    assert h["ended_at_1x"] == 1 and l1["ended_at_1x"] == 3
    assert h["by_set"]["d"]["geomean_speedup"] == pytest.approx(4.0) and h["by_set"]["n"]["geomean_speedup"] == pytest.approx(2 ** 0.5)
    t = doc["target"]
    assert t["quality_vs_always_deep"] == pytest.approx(1.0) and t["cost_vs_always_deep"] == pytest.approx(200 / 600)
    assert t["matches_always_deep"] is True and t["beats_l1-only"] is True and "beats_profile-first" not in t
    md = (tmp_path / "report.md").read_text()
    assert "| hierarchical | 3 | 2.000x |" in md and "target (>= 0.97x at <= 60%) met" in md
    assert "hierarchical beats profile-first: not measured" in md
    for fig in ("fig_speedup.png", "fig_cost_quality.png"):
        assert (tmp_path / fig).read_bytes()[:8] == PNG
    assert json.loads((tmp_path / "report.json").read_text())["provenance"]["date"]


def test_report_says_when_the_default_loses(tmp_path: Path) -> None:
    write(tmp_path, [row("hierarchical", "p", 2.0, 100), row("always-deep", "p", 3.0, 120),
                     row("random-family", "p", 2.5, 50)])
    doc = ablation.report(tmp_path, figures=False)
    t = doc["target"]
    assert t["matches_always_deep"] is False and t["beats_random-family"] is False
    assert "NOT met" in (tmp_path / "report.md").read_text()


class FakeSession:
    """Records the settings each session got and returns a small trajectory (no worker, no GPU)."""

    made: list[Any] = []

    def __init__(self, problem: Path, candidate: Path, *, settings: Any, progress: Any, out_dir: Path, **kw: Any) -> None:
        self.settings, self.progress, self.out, self.problem, self.candidate = settings, progress, out_dir, problem, candidate
        FakeSession.made.append(self)

    def run(self, rounds: int) -> Any:
        from kb.models import (
            EscalationTests,
            ProblemRef,
            Round,
            RoundRewrite,
            Selection,
            StopDecision,
            Timing,
            TimingProtocol,
            Trajectory,
        )
        from kb.models.trajectory import RatioCI
        from optimizer.events import RoundEnded

        assert self.candidate.exists() and self.problem.is_dir()
        tests = EscalationTests(localized=True, single_family=True, justified=True)
        r1 = Round(index=1, outcome="improved", levels_reached=["L1"], rewrite=RoundRewrite(family="block-per-program"),
                   stop=StopDecision(level="L1", tests=tests, rationale="x", cause="per_element_grid"),
                   timing=Timing(protocol=TimingProtocol(method="interleaved-blocks"), geomean_speedup=3.0), duration_s=1.0)
        traj = Trajectory(id="t-" + self.settings.policy, problem=ProblemRef(name="x"), backend="cuda",
                          rounds=[Round(index=0, outcome="baseline"), r1], best_round=1, initial_ms=1.0, best_ms=0.4,
                          selection=Selection(round=1, confirmed={1: RatioCI(point=2.5, lo=2.4, hi=2.6)}))
        self.progress(RoundEnded(r1))
        from optimizer.harness.timing_cache import open_cache

        cache = open_cache(self.settings.timing_cache)  # as evaluate() would: the first session misses, later ones hit
        if cache.get("baseline") is None:
            cache.put("baseline", {"cost_s": 5.0, "evaluation": {}})
        return traj


def args(tmp_path: Path, **over: Any) -> Any:
    a = ablation.parse_args(["--out", str(tmp_path), "--arms", "hierarchical,l1-only", "--problems",
                             "diagnosis/axpby,naive/softmax", "--rounds", "2"])
    for k, v in over.items():
        setattr(a, k, v)
    return a


def test_runner_runs_each_arm_with_its_policy_and_resumes(tmp_path: Path) -> None:
    from optimizer.settings import LadderSettings

    FakeSession.made = []
    kw = {"kb": object(), "settings": LadderSettings(), "session_cls": FakeSession, "log": lambda m: None}
    assert ablation.Runner(args(tmp_path), **kw).run() == 0
    got = [(s.settings.policy, s.problem.name, s.candidate.name) for s in FakeSession.made]
    # problem-major; the first arm rotates with the problem's place in problems.json (axpby 1, softmax 24), so no
    # arm always pays the cold caches
    assert got == [("l1-only", "axpby", "initial.py"), ("hierarchical", "axpby", "initial.py"),
                   ("hierarchical", "softmax", "naive.py"), ("l1-only", "softmax", "naive.py")]
    assert all(s.settings.timing_cache == str(tmp_path.resolve() / "timing_cache.jsonl") for s in FakeSession.made)
    rows = ablation.read_results(tmp_path)
    assert len(rows) == 4 and all(r["status"] == "done" and r["speedup"] == 2.5 for r in rows)  # the confirmed point
    axpby = next(r for r in rows if r["problem"] == "diagnosis/axpby" and r["arm"] == "hierarchical")
    assert axpby["label_families"] == ["block-per-program"] and axpby["best_level"] == "L1"
    assert ablation.wrong_family_rounds(axpby) == 0
    first, *later = rows
    assert (first["cache_hits"], first["cache_misses"], first["gpu_s"] >= first["wall_s"]) == (0, 1, True)
    assert all(r["cache_hits"] == 1 and r["cache_saved_s"] == 5.0 for r in later)  # charged what the hit saved
    assert all(r["gpu_s"] == pytest.approx(r["wall_s"] + 5.0, abs=0.02) for r in later)
    FakeSession.made = []
    ablation.Runner(args(tmp_path), **kw).run()
    assert FakeSession.made == []  # resumed: every pair is done
    ablation.Runner(args(tmp_path, arms=["hierarchical", "always-deep"]), **kw).run()
    assert [(s.settings.policy, s.problem.name) for s in FakeSession.made] == [("always-deep", "axpby"), ("always-deep", "softmax")]
    assert {r["problem_list"] for r in ablation.read_results(tmp_path)} == {ablation.list_sha(ablation.PROBLEMS)}
    # the list is fixed across slices: results of another list are refused
    changed = tmp_path / "problems.json"
    changed.write_text(ablation.PROBLEMS.read_text().replace('"rule"', '"rule_"', 1))
    with pytest.raises(SystemExit, match="another problem list"):
        ablation.Runner(args(tmp_path, problem_list=str(changed)), **kw).plan()


def test_unknown_arm_or_problem_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown arm"):
        ablation.Runner(args(tmp_path, arms=["deepest"]), kb=object()).plan()
    with pytest.raises(SystemExit, match="unknown problem"):
        ablation.Runner(args(tmp_path, problems=["nope"]), kb=object()).plan()


def test_the_committed_problem_list_is_what_select_chooses_and_meets_the_rule() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ablation_select", ROOT / "benchmarks" / "ablation" / "select_problems.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0
    doc = json.loads((ROOT / "benchmarks" / "ablation" / "problems.json").read_text())
    probs = doc["problems"]
    assert len(probs) >= 30 and sum(p["real"] for p in probs) >= 10 and len({p["id"] for p in probs}) == len(probs)
    from benchmarks import _data

    def committed(rel: str) -> bool:  # a committed result, packed or not (a .gz name: its plain logical file)
        return _data.exists(ROOT / rel) or _data.exists(ROOT / rel.removesuffix(".gz"))

    for p in probs:
        assert p["headroom"] >= 1.5 and committed(p["headroom_file"]) and committed(p["cause_file"])
        folder = ROOT / p["folder"]
        assert (folder / "problem.py").exists() and (folder / p.get("initial", "initial.py")).exists()
    assert {p["set"] for p in probs} == {"realistic", "diagnosis", "naive"}


def test_untimed_sessions_make_no_figure_and_say_so(tmp_path: Path) -> None:
    r = row("l1-only", "p", 1.0, 30)
    r["speedup"] = None  # the interpreter validates only
    write(tmp_path, [r])
    doc = ablation.report(tmp_path)
    assert doc["per_arm"]["l1-only"]["geomean_speedup"] is None and doc["per_arm"]["l1-only"]["timed"] == 0
    assert not (tmp_path / "fig_speedup.png").exists() and "No session was timed" in (tmp_path / "report.md").read_text()


def test_the_cache_is_committed_compressed_and_restored_for_a_run(tmp_path: Path) -> None:
    from optimizer.harness.timing_cache import TimingCache

    TimingCache(tmp_path / "timing_cache.jsonl", gpu="g").put("k", {"cost_s": 1.0, "evaluation": {}})
    traj = tmp_path / "sessions" / "hierarchical" / "naive__softmax" / "trajectory.json"
    traj.parent.mkdir(parents=True)
    traj.write_text("{}")
    ablation.compress(tmp_path)
    assert not (tmp_path / "timing_cache.jsonl").exists() and (tmp_path / "timing_cache.jsonl.gz").exists()
    assert not traj.exists() and traj.with_name("trajectory.json.gz").exists()
    assert ablation.restore_cache(tmp_path) and len(TimingCache(tmp_path / "timing_cache.jsonl", gpu="g")) == 1
    assert not ablation.restore_cache(tmp_path)  # a plain cache (this run's) is never overwritten
