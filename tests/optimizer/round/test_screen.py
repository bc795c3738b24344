"""The in-round screen: every point validated on the largest case (one seed, a shorter sandbox), the valid ones timed
together in one worker, the fastest valid one goes on and the losers count as tried."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.models import AppliedRecipe, Validation
from optimizer.harness.outcome import Evaluation
from optimizer.harness.problem import load_problem
from optimizer.phases import PhaseClock
from optimizer.proposers.base import Proposal
from optimizer.round.context import RoundSetup
from optimizer.round.screen import screen_points
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_points_are_screened_on_the_largest_case_and_the_fastest_valid_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
        first = {"case": "c", "stats": {"median_ms": speed[Path(candidate).read_text()]}, "role_stats": stats}
        return Evaluation(candidate=Path(candidate), backend="cuda", status="ok", reason="",
                          validation=Validation(passed=True), timing_cases=[first], device="NVIDIA H200")

    monkeypatch.setattr("optimizer.round.context.evaluate", fake_evaluate)
    monkeypatch.setattr("optimizer.round.context.retime", fake_retime)
    setup = RoundSetup.open(DATA / "softmax", None, backend="cuda", settings=LadderSettings(), kb=object(),
                            workdir=tmp_path)
    setup.methods = {"c": "cudagraph"}
    props = [Proposal(source=f"v{j}", diff="", family="block-scale", recipe=AppliedRecipe(applied={"BLOCK": 512 << j}),
                      description="", hypothesis="") for j in range(3)]
    clock = PhaseClock()
    chosen, ev = screen_points(setup, 3, props, clock)
    largest = max(problem.cases, key=lambda c: problem.bytes_moved(c) or 0)
    # every point validated on the largest case only, untimed; the valid ones timed together in one worker
    assert sorted(t for t, _, _ in seen) == ["v0", "v1", "v2"] and all(c == [largest] and not t for _, c, t in seen)
    assert timed == [("v0", {"v1": "v1"}, [largest])]
    assert seeds == [[0]] * 3  # one seed in the screen; the winner is validated with every seed afterwards
    # a slow point leaves the screen early
    assert boxes == [LadderSettings().screen_timeout_s] * 3 < [LadderSettings().sandbox_timeout_s] * 3
    assert chosen.source == "v1" and ev.kind == "variant_screen" and ev.data["chosen"] == 1
    assert chosen.recipe.screened == [{"BLOCK": 512}, {"BLOCK": 1024}, {"BLOCK": 2048}]  # the losers count as tried
    assert "v2 failed" in ev.summary and {"screen_validate", "screen_time"} <= set(clock.seconds)
