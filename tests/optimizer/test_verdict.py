"""The improved/neutral/regressed rule on synthetic timing blocks, intervals in Timing, and the winner's re-time."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from benchmarks import _data
from kb.models import Round, Timing, TimingProtocol, Trajectory, Validation
from optimizer.harness import verdict
from optimizer.harness.evaluation import Evaluation, to_timing
from optimizer.harness.problem import load_problem
from optimizer.proposers.offline import OfflineProposer
from optimizer.round.diagnose import full_size_launches
from optimizer.round.screen import screen_points
from optimizer.round.select import select
from optimizer.session import Session
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"


def blocks(ms: float, noise: float, n: int = 8, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [ms * (1 + rng.gauss(0, noise)) for _ in range(n)]


def pairs(ref_ms: float, cand_ms: float, noise: float, cases: int = 2) -> dict[str, tuple[list[float], list[float]]]:
    return {f"c{i}": (blocks(ref_ms, noise, seed=2 * i), blocks(cand_ms, noise, seed=2 * i + 1)) for i in range(cases)}


def test_identical_kernels_are_neutral_and_give_the_noise_floor() -> None:
    aa = verdict.noise_floor(pairs(1.0, 1.0, 0.01))
    assert 0 < aa.floor < 0.05 and aa.aa.lo < 1 < aa.aa.hi and set(aa.cases) == {"c0", "c1"}
    exact = verdict.noise_floor({"c": ([2.0] * 8, [2.0] * 8)})
    assert exact.floor == 0 and exact.aa.point == 1
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 1.0, 0.01)), aa.floor, 0.02) == "neutral"


def test_clear_gains_and_losses_are_called_small_ones_are_not() -> None:
    floor = verdict.noise_floor(pairs(1.0, 1.0, 0.01)).floor
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 0.8, 0.01)), floor, 0.02) == "improved"
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 1.25, 0.01)), floor, 0.02) == "regressed"
    assert verdict.judge(verdict.geomean_ratio(pairs(1.0, 0.99, 0.03)), floor, 0.02) == "neutral"  # 1% in 3% noise
    gain = verdict.geomean_ratio(pairs(1.0, 1 / 1.04, 0.002))  # a tight 4% gain
    assert gain.lo > 1.03
    assert verdict.judge(gain, 0.005, 0.02) == "improved"
    assert verdict.judge(gain, 0.05, 0.02) == "neutral"  # ... inside a 5% noise floor
    assert verdict.judge(gain, 0.005, 0.06) == "neutral"  # ... below the threshold
    assert verdict.judge(None, 0.01, 0.02) == verdict.judge(gain, None, 0.02) == "neutral"


def test_interval_is_reproducible_and_blocks_must_pair() -> None:
    p = pairs(1.0, 0.9, 0.02)
    assert verdict.geomean_ratio(p) == verdict.geomean_ratio(p)
    ci = verdict.geomean_ratio(p)
    assert ci.lo <= ci.point <= ci.hi and ci.blocks == 8
    with pytest.raises(ValueError, match="pair up"):
        verdict.case_ratio([1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        verdict.case_ratio([1.0, 0.0], [1.0, 1.0])
    assert "1.020" in verdict.rule_text(0.01, 0.02) and "1.050" in verdict.rule_text(0.05, 0.02)


def _case(label: str, roles: dict[str, list[float]]) -> dict:
    stats = {r: {"median_ms": sorted(b)[len(b) // 2]} for r, b in roles.items()}
    return {"case": label, "stats": stats["candidate"], "reference_stats": None, "method": "cudagraph", "method_note": "",
            "blocks": roles, "role_stats": stats}


def _ev(cases: list[dict]) -> Evaluation:
    return Evaluation(candidate=Path("c.py"), backend="cuda", status="ok", reason="", validation=Validation(passed=True),
                      timing_cases=cases, protocol=TimingProtocol(method="interleaved-blocks", blocks=8), device="NVIDIA H200")


def test_to_timing_attaches_intervals_vs_initial_and_base() -> None:
    problem = load_problem(DATA / "softmax")
    cases = [_case(f"M={c['M']},N={c['N']}", {"candidate": blocks(0.5, 0.01, seed=i), "initial": blocks(1.0, 0.01, seed=10 + i),
                                               "base": blocks(0.55, 0.01, seed=20 + i)}) for i, c in enumerate(problem.cases)]
    t = to_timing(_ev(cases), None, backend="cuda", problem=problem)
    assert t.geomean_ci is not None and t.geomean_speedup == t.geomean_ci.point and 1.9 < t.geomean_speedup < 2.1
    assert t.vs_base is not None and 1.05 < t.vs_base.point < 1.15  # over the round's base, not the initial
    assert all(c.speedup_ci and c.method == "cudagraph" and c.baseline_ms for c in t.cases)
    no_base = to_timing(_ev([{**c, "blocks": {k: v for k, v in c["blocks"].items() if k != "base"}} for c in cases]), None,
                        backend="cuda", problem=problem)
    assert no_base.vs_base == no_base.geomean_ci  # the base is the initial candidate


def _timed_round(i: int, g: float, path: Path) -> Round:
    t = Timing(protocol=TimingProtocol(method="interleaved-blocks"), geomean_speedup=g)
    return Round(index=i, outcome="improved", validation=Validation(passed=True), timing=t, candidate_path=str(path))


def test_winner_is_retimed_and_selection_uses_the_retime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    confirmed = {"round_01.py": 1.0, "round_02.py": 1.1, "round_03.py": 1.5}
    calls: list[str] = []

    def fake_retime(problem, candidate, against, **kw):
        calls.append(candidate.name)
        assert set(against) == {"initial"} and kw["blocks"] == 16 and kw["methods"] == {"c": "do_bench"}
        r = {"case": "c", "stats": {"median_ms": 1 / confirmed[candidate.name]},
             "blocks": {"initial": blocks(1.0, 0.002, seed=1),
                        "candidate": blocks(1 / confirmed[candidate.name], 0.002, seed=2)}}
        return _ev([r])

    monkeypatch.setattr("optimizer.round.context.retime", fake_retime)
    s = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=LadderSettings(), backend="cuda",
                proposer=OfflineProposer(), out_dir=tmp_path)
    setup = s.setup
    setup.floor, setup.initial, setup.methods = 0.01, tmp_path / "round_00.py", {"c": "do_bench"}
    traj = Trajectory(id="t-1", problem={"name": "softmax"}, backend="cuda",
                      rounds=[Round(index=0, outcome="baseline"), _timed_round(1, 1.3, tmp_path / "round_01.py"),
                              _timed_round(2, 1.1, tmp_path / "round_02.py")])
    sel = select(setup, traj)
    assert calls == ["round_01.py", "round_02.py"]  # the best two by in-round speedup
    assert sel.round == 2 and sel.confirmed[1].point == pytest.approx(1.0, abs=0.01)  # 1.3x did not hold
    traj.rounds = traj.rounds[:2]
    sel = select(setup, traj)
    assert sel.round == 0 and "initial candidate stays best" in sel.note


def test_committed_trajectories_still_load() -> None:
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "suite"
    files = _data.glob(root, "*/session/trajectory.json")  # committed ones are packed (benchmarks/_data.py)
    assert files, "no committed suite trajectories"
    for f in files[:10]:
        t = Trajectory.model_validate_json(_data.read_text(f))
        assert t.noise_floor is None and t.selection is None and all(r.phase_s == {} for r in t.rounds)


def test_synthesis_follows_the_interval_verdict_not_the_raw_ratio() -> None:
    from kb.models import RatioCI, RoundRewrite
    from synthesis.rounds import categorize

    def rnd(outcome: str, ci: RatioCI | None) -> Round:
        t = Timing(protocol=TimingProtocol(method="interleaved-blocks"), geomean_speedup=1.2, vs_base=ci)
        return Round(index=1, outcome=outcome, rewrite=RoundRewrite(family="f"), validation=Validation(passed=True), timing=t)

    noisy = RatioCI(point=1.2, lo=0.9, hi=1.5)
    assert categorize(rnd("neutral", noisy), 1.2) == "neutral"  # a 1.2x point inside the noise is no pattern evidence
    assert categorize(rnd("improved", RatioCI(point=1.2, lo=1.15, hi=1.25)), 1.2) == "improved"
    assert categorize(rnd("regressed", RatioCI(point=0.8, lo=0.75, hi=0.85)), 0.8) == "slower"
    assert categorize(rnd("neutral", None), 1.2) == "improved"  # old trajectories keep the 3% tolerance


def test_round_screens_the_points_on_the_largest_case_and_keeps_the_fastest_valid(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from optimizer.phases import PhaseClock
    from optimizer.proposers.base import Proposal

    problem = load_problem(DATA / "softmax")
    speed = {"v0": 2.0, "v1": 0.5, "v2": 0.25}  # ms on the screen case; v2 is fastest but fails validation
    seen: list[tuple[str, list, bool]] = []
    timed: list[tuple[str, dict, list]] = []
    seeds: list[list[int]] = []
    boxes: list[float] = []

    def fake_evaluate(problem, path, *, backend, settings, cases=None, timing=True, **kw):
        tag = Path(path).read_text()
        seen.append((tag, cases, timing))
        seeds.append(list(settings.validation_seeds))
        boxes.append(settings.sandbox_timeout_s)
        ok = tag != "v2"
        return Evaluation(candidate=Path(path), backend="cuda", status="ok" if ok else "mismatch",
                          reason="" if ok else "max_rel 3.1 on case 0", validation=Validation(passed=ok),
                          device="NVIDIA H200", phase_s={"validation": 1.0})

    def fake_retime(problem, candidate, against, *, backend, settings, cases=None, blocks=None, methods=None):
        assert methods == {"c": "cudagraph"}  # the session's fixed method travels with the screen
        timed.append((Path(candidate).read_text(), {k: Path(v).read_text() for k, v in against.items()}, cases))
        stats = {k: {"median_ms": speed[Path(v).read_text()]} for k, v in against.items()}
        return Evaluation(candidate=Path(candidate), backend="cuda", status="ok", reason="", validation=Validation(passed=True),
                          timing_cases=[{"case": "c", "stats": {"median_ms": speed[Path(candidate).read_text()]}, "role_stats": stats}],
                          device="NVIDIA H200")

    monkeypatch.setattr("optimizer.round.context.evaluate", fake_evaluate)
    monkeypatch.setattr("optimizer.round.context.retime", fake_retime)
    s = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=LadderSettings(), backend="cuda",
                proposer=OfflineProposer(), out_dir=tmp_path)
    s.setup.methods = {"c": "cudagraph"}
    props = [Proposal(source=f"v{j}", diff="", family="block-scale", recipe={"applied": {"BLOCK": 512 << j}},
                      description="", hypothesis="") for j in range(3)]
    clock = PhaseClock()
    chosen, ev = screen_points(s.setup, 3, props, clock)
    largest = max(problem.cases, key=lambda c: problem.bytes_moved(c) or 0)
    # every point validated on the largest case only, untimed; the valid ones timed together in one worker
    assert sorted(t for t, _, _ in seen) == ["v0", "v1", "v2"] and all(c == [largest] and not t for _, c, t in seen)
    assert timed == [("v0", {"v1": "v1"}, [largest])]
    assert seeds == [[0]] * 3  # one seed in the screen; the winner is validated with every seed afterwards
    assert boxes == [LadderSettings().screen_timeout_s] * 3 < [LadderSettings().sandbox_timeout_s] * 3  # a slow point leaves
    assert chosen.source == "v1" and ev.kind == "variant_screen" and ev.data["chosen"] == 1
    assert chosen.recipe["screened"] == [{"BLOCK": 512}, {"BLOCK": 1024}, {"BLOCK": 2048}]  # the losers count as tried
    assert "v2 failed" in ev.summary and {"screen_validate", "screen_time"} <= set(clock.seconds)


def test_an_interpreter_session_gives_the_ladder_the_full_size_launches_once_per_base(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Smoke-case launches (tiny grids) made an interpreter session pick other families than `ladder diagnose`;
    the ladder now reads the first full-size case's launches, recorded without running a kernel."""
    from optimizer.ladder import keys
    from optimizer.phases import PhaseClock

    calls: list[str] = []
    full = [{"kernel": "softmax_kernel", "grid": [65536], "ir_args": {"n_cols": 1000}}]

    cases_asked: list = []

    def fake_record(problem, candidate, settings, case=None):
        calls.append(Path(candidate).read_text())
        cases_asked.append(case)
        return full, "", {"M": 65536, "N": 1000}

    monkeypatch.setattr("optimizer.round.context.record_launches", fake_record)
    s = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=LadderSettings(), backend="interpreter",
                proposer=OfflineProposer(), out_dir=tmp_path)
    base = tmp_path / "base.py"
    base.write_text("v0")
    smoke = Evaluation(candidate=base, backend="interpreter", status="ok", reason="", validation=Validation(passed=True),
                       launches=[{"kernel": "softmax_kernel", "grid": [4]}])
    got = full_size_launches(s.setup, base, smoke, PhaseClock())
    assert got.launches == full and smoke.launches == [{"kernel": "softmax_kernel", "grid": [4]}]  # the record is untouched
    assert s.setup.cache[keys.LAUNCH_CASE] == {"M": 65536, "N": 1000}
    full_size_launches(s.setup, base, smoke, PhaseClock())
    base.write_text("v1")  # a new base is recorded again
    full_size_launches(s.setup, base, smoke, PhaseClock())
    assert calls == ["v0", "v1"]
    from optimizer.ladder.cases import representative_case

    assert cases_asked == [representative_case(s.problem)] * 2  # the case `ladder diagnose` reads, not CASES[0]


def test_the_baseline_fixes_each_cases_method_for_the_whole_session(tmp_path: Path) -> None:
    """One timing truth: the baseline's per-case method (decided from the initial kernel) is recorded and reused;
    an unseen case gets its own, chosen the same way, and never overwrites a seen case's."""
    s = Session(DATA / "softmax", None, kb=FakeKB(LADDER_CARDS), settings=LadderSettings(), backend="cuda",
                proposer=OfflineProposer(), out_dir=tmp_path)
    traj = Trajectory(id="t-1", problem={"name": "softmax"}, backend="cuda")
    base = _ev([{**_case("small", {"candidate": [0.01] * 8, "aa": [0.01] * 8}), "decided_ms": 0.0101},
                {**_case("big", {"candidate": [0.4] * 8, "aa": [0.4] * 8}), "method": "do_bench", "decided_ms": 0.41}])
    s.setup.fix_methods(traj, base, unseen=False)
    assert s.setup.methods == {"small": "cudagraph", "big": "do_bench"}
    assert traj.timing_methods["small"].decided_ms == 0.0101 and not traj.timing_methods["big"].unseen
    later = _ev([{**_case("small", {"candidate": [0.5] * 8}), "method": "do_bench"},
                 {**_case("odd", {"candidate": [0.02] * 8, "initial": [0.02] * 8}), "decided_ms": 0.02}])
    s.setup.fix_methods(traj, later, unseen=True)
    assert s.setup.methods == {"small": "cudagraph", "big": "do_bench", "odd": "cudagraph"} and traj.timing_methods["odd"].unseen


def test_to_timing_reports_host_time_and_flags_a_host_regression() -> None:
    problem = load_problem(DATA / "softmax")
    label = f"M={problem.cases[0]['M']},N={problem.cases[0]['N']}"
    case = {**_case(label, {"candidate": blocks(0.5, 0.01), "initial": blocks(1.0, 0.01, seed=3)}),
            "host": {"candidate": {"wall_ms": 0.9, "launch_ms": 0.9}, "initial": {"wall_ms": 1.0, "launch_ms": 0.02}}}
    t = to_timing(_ev([case]), None, backend="cuda", problem=problem)
    assert t.cases[0].host_ms == 0.9 and t.cases[0].baseline_host_ms == 1.0 and t.host_regressed == []
    case["host"]["candidate"]["wall_ms"] = 1.3  # faster on the device, slower per call from Python
    t = to_timing(_ev([case]), None, backend="cuda", problem=problem)
    assert t.geomean_speedup > 1.5 and t.host_regressed == [label]
