"""The round's wall-clock stages (``optimizer.harness.stages``): nested spans on a fake clock, the remainder
``other``, no recording outside a round or in a thread the round started, and the field on ``Round``."""

from __future__ import annotations

import threading

import pytest

from kb.models import Round, Trajectory
from optimizer.harness import stages
from optimizer.phases import PhaseClock


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def tick(self, s: float) -> None:
        self.t += s


def fake_round(clk: FakeClock) -> stages.StageClock:
    """A round as a session runs one: ladder (a KB call and an IR capture inside), an evaluation with the judge
    split, a persistence write, and unattributed gaps between them."""
    sc = stages.StageClock(clock=clk)
    with stages.recording(sc):
        clk.tick(0.5)  # progress callback, bookkeeping: other
        with stages.span("ladder"):
            clk.tick(1.0)
            with stages.span("kb"):
                clk.tick(0.25)
            phases = PhaseClock()
            with phases.time("ir_capture"):  # PhaseClock spans are stages too
                clk.tick(2.0)
        with stages.span("evaluate"):
            with stages.span("reference"):
                clk.tick(0.125)
            with stages.span("candidate"):
                clk.tick(3.0)
                for _ in range(2):  # one judge per case: the stages add up
                    with stages.span("judge"):
                        stages.add("spawn", 0.25)
                        clk.tick(0.5)
        clk.tick(0.75)  # verdict, other
        with stages.span("persist"):
            clk.tick(0.0625)
    return sc


def test_top_level_stages_and_other_sum_to_the_wall_time() -> None:
    clk = FakeClock()
    sc = fake_round(clk)
    out = sc.finish()
    assert sc.elapsed() == pytest.approx(8.6875)
    assert out["ladder"] == pytest.approx(3.25) and out["ladder/kb"] == 0.25 and out["ladder/ir_capture"] == 2.0
    assert out["evaluate"] == pytest.approx(4.125) and out["evaluate/candidate"] == 4.0
    assert out["evaluate/candidate/judge"] == 1.0 and out["evaluate/candidate/judge/spawn"] == 0.5
    assert out["persist"] == 0.062  # rounded to the millisecond
    assert out["other"] == pytest.approx(1.25, abs=1e-3)
    assert set(stages.top_level(out)) == {"ladder", "evaluate", "persist", "other"}
    assert sum(stages.top_level(out).values()) == pytest.approx(sc.elapsed(), abs=0.005)
    # a larger wall time (the round's duration measured by the session) leaves more to "other"
    assert sc.finish(10.0)["other"] == pytest.approx(1.25 + 10.0 - 8.6875, abs=1e-3)


def test_spans_with_real_sleeps_account_for_the_wall_time() -> None:
    import time

    with stages.recording() as sc:
        with stages.span("a"):
            time.sleep(0.02)
            with stages.span("b"):
                time.sleep(0.01)
        time.sleep(0.01)
    out = sc.finish()
    assert out["a/b"] <= out["a"]
    assert sum(stages.top_level(out).values()) == pytest.approx(sc.elapsed(), abs=0.002)


def test_no_clock_no_record_and_threads_do_not_inherit_the_round() -> None:
    with stages.span("nowhere"):  # outside a round: a no-op
        stages.add("x", 1.0)
    assert stages.current() is None
    clk = FakeClock()
    with stages.recording(stages.StageClock(clock=clk)) as sc:
        with stages.span("screen"):
            def worker() -> None:
                with stages.span("parallel"):
                    clk.tick(5.0)

            t = threading.Thread(target=worker)
            t.start()
            t.join()
        assert stages.current() is sc
    assert stages.current() is None
    assert sc.finish() == {"screen": 5.0, "other": 0.0}  # the pool's span covers the thread once


def test_an_exception_still_closes_the_span() -> None:
    clk = FakeClock()
    with stages.recording(stages.StageClock(clock=clk)) as sc:
        with pytest.raises(ValueError):
            with stages.span("evaluate"):
                clk.tick(1.5)
                raise ValueError("candidate fault")
        with stages.span("persist"):
            clk.tick(0.5)
    assert sc.finish() == {"evaluate": 1.5, "persist": 0.5, "other": 0.0}


def test_round_carries_stages_through_json_and_out_of_the_content_hash() -> None:
    sc = fake_round(FakeClock())
    r = Round(index=1, outcome="neutral", duration_s=8.6875, stages=sc.finish())
    back = Round.model_validate_json(r.model_dump_json())
    assert back.stages == r.stages and back.stages["evaluate/candidate/judge/spawn"] == 0.5
    assert Round.model_validate({"index": 1, "outcome": "neutral"}).stages == {}  # older trajectories read
    t1 = Trajectory(id="t-1", problem={"name": "p"}, backend="cuda", rounds=[r])
    t2 = Trajectory(id="t-2", problem={"name": "p"}, backend="cuda", rounds=[r.model_copy(update={"stages": {}})])
    assert t1.content_hash() == t2.content_hash()  # wall-clock accounting, like duration_s, is not evidence
