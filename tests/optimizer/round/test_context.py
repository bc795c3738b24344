"""The round's set-up: opened once (problem, default candidate, input dtypes), it makes every harness call with its
problem, backend and settings; ``ladder diagnose`` opens the same set-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import InvalidArgument
from kb.models import Validation
from optimizer.harness.outcome import Evaluation
from optimizer.ladder import keys
from optimizer.phases import PhaseClock
from optimizer.round.context import RoundSetup, default_candidate
from optimizer.settings import LadderSettings

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
