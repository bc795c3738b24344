"""The round's set-up: opened once (problem, default candidate, input dtypes), it makes every harness call with its
problem, backend and settings; ``ladder diagnose`` opens the same set-up."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/optimizer: timing_fakes

from timing_fakes import timed_case, timed_eval  # noqa: E402

from kb.errors import InvalidArgument  # noqa: E402
from kb.models import Trajectory, Validation  # noqa: E402
from optimizer.harness.outcome import Evaluation  # noqa: E402
from optimizer.ladder import keys  # noqa: E402
from optimizer.phases import PhaseClock  # noqa: E402
from optimizer.round.context import RoundSetup, default_candidate  # noqa: E402
from optimizer.settings import LadderSettings  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "softmax"


def _setup(tmp_path: Path, backend: str = "cuda") -> RoundSetup:
    return RoundSetup.open(DATA, None, backend=backend, settings=LadderSettings(), kb=object(), workdir=tmp_path)


def test_open_loads_the_problem_and_defaults_the_candidate(tmp_path: Path) -> None:
    s = _setup(tmp_path)
    assert s.problem.name and s.candidate == (DATA / "initial.py").resolve() and s.workdir == tmp_path
    assert s.cache[keys.INPUT_DTYPES] == ["float32"]
    assert s.floor is None and s.initial is None and s.methods == {} and s.exhausted == set()
    with pytest.raises(InvalidArgument, match="no initial.py next to"):
        default_candidate(tmp_path)


def test_harness_calls_carry_the_setups_problem_backend_and_settings(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    s = _setup(tmp_path)
    s.methods = {"c": "cudagraph"}
    calls: list[tuple[str, object, str, LadderSettings, dict]] = []

    def fake(name: str):
        def call(problem, candidate, *args, backend, settings, **kw):
            calls.append((name, problem, backend, settings, kw))
            return Evaluation(candidate=Path(candidate), backend=backend, status="ok", reason="",
                              validation=Validation(passed=True))
        return call

    monkeypatch.setattr("optimizer.round.context.evaluate", fake("evaluate"))
    monkeypatch.setattr("optimizer.round.context.retime", fake("retime"))
    screen = s.settings.model_copy(update={"validation_seeds": [0]})
    s.evaluate(tmp_path / "a.py", aa=True)
    s.evaluate(tmp_path / "b.py", settings=screen, timing=False)
    s.retime(tmp_path / "a.py", {"initial": tmp_path / "b.py"}, blocks=16)
    names = ("evaluate", "evaluate", "retime")
    assert [(n, p, b) for n, p, b, _, _ in calls] == [(n, s.problem, "cuda") for n in names]
    assert [c[3] for c in calls] == [s.settings, screen, s.settings]  # a stage may override the settings
    assert calls[0][4] == {"aa": True} and calls[2][4] == {"blocks": 16, "methods": {"c": "cudagraph"}}


def test_the_ladder_context_shares_the_setups_cache_and_workdir(tmp_path: Path) -> None:
    s = _setup(tmp_path, backend="interpreter")
    ev = Evaluation(candidate=s.candidate, backend="interpreter", status="ok", reason="",
                    validation=Validation(passed=True))
    clock = PhaseClock()
    ctx = s.ladder_context(s.candidate, ev, clock, exclude_cards={"x"})
    assert ctx.problem is s.problem and ctx.cache is s.cache and ctx.workdir == tmp_path and ctx.phases is clock
    assert ctx.backend == "interpreter" and ctx.settings is s.settings and ctx.exclude_cards == {"x"}


def test_the_baseline_fixes_each_cases_method_for_the_whole_session(tmp_path: Path) -> None:
    """One timing truth: the baseline's per-case method (decided from the initial kernel) is recorded and reused;
    an unseen case gets its own, chosen the same way, and never overwrites a seen case's."""
    s = _setup(tmp_path)
    traj = Trajectory(id="t-1", problem={"name": "softmax"}, backend="cuda")
    small = timed_case("small", {"candidate": [0.01] * 8, "aa": [0.01] * 8})
    big = timed_case("big", {"candidate": [0.4] * 8, "aa": [0.4] * 8})
    base = timed_eval([{**small, "decided_ms": 0.0101}, {**big, "method": "do_bench", "decided_ms": 0.41}])
    s.fix_methods(traj, base, unseen=False)
    assert s.methods == {"small": "cudagraph", "big": "do_bench"}
    assert traj.timing_methods["small"].decided_ms == 0.0101 and not traj.timing_methods["big"].unseen
    odd = timed_case("odd", {"candidate": [0.02] * 8, "initial": [0.02] * 8})
    later = timed_eval([{**timed_case("small", {"candidate": [0.5] * 8}), "method": "do_bench"},
                        {**odd, "decided_ms": 0.02}])
    s.fix_methods(traj, later, unseen=True)
    assert s.methods == {"small": "cudagraph", "big": "do_bench", "odd": "cudagraph"}
    assert traj.timing_methods["odd"].unseen
