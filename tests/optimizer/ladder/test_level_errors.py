"""L3 and L4 catch what the IR capture and the KB raise (the exception tree), and nothing else: a candidate with no
recorded launch is an inconclusive level that names the reason; a bug reaches the engine, which records it under an
error id instead of ending the session."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kb.errors import InvalidArgument
from optimizer.ir import capture_report
from optimizer.ladder.l3_ir import IRLevel
from optimizer.ladder.l4_compiler import CompilerLevel


def _raising(exc: Exception) -> Any:
    def ir_report() -> Any:
        raise exc

    return SimpleNamespace(ir_report=ir_report)


def test_no_recorded_launch_is_an_invalid_argument_that_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument) as e:
        capture_report([], target="cuda:90", cache_dir=tmp_path, memo={}, memo_key="k")
    assert e.value.field == "launches" and "validate the candidate first" in e.value.message


@pytest.mark.parametrize("level", [IRLevel(), CompilerLevel()])
def test_a_capture_error_makes_the_level_inconclusive_with_its_reason(level: Any, tmp_path: Path) -> None:
    try:
        capture_report([], target="cuda:90", cache_dir=tmp_path, memo={}, memo_key="k")
    except InvalidArgument as exc:
        res = level.run(_raising(exc))
    assert res.inconclusive and "InvalidArgument" in res.rationale and "no recorded kernel launch" in res.rationale


@pytest.mark.parametrize("level", [IRLevel(), CompilerLevel()])
def test_a_bug_is_not_swallowed_by_the_level(level: Any) -> None:
    with pytest.raises(ZeroDivisionError):
        level.run(_raising(ZeroDivisionError("a bug")))


def test_the_engine_records_a_level_bug_under_an_error_id(caplog: pytest.LogCaptureFixture) -> None:
    from optimizer.ladder.engine import run_ladder

    class Broken:
        level = "L1"

        def run(self, ctx: Any) -> Any:
            raise ZeroDivisionError("a bug")

    ctx = SimpleNamespace(settings=SimpleNamespace(), backend="interpreter", results=[])
    with caplog.at_level("INFO", logger="optimizer.ladder.engine"):
        out = run_ladder(ctx, max_level="L1", levels={"L1": Broken()})
    res = out.results[0]
    assert res.inconclusive and "ZeroDivisionError: a bug" in res.rationale
    error_id = res.rationale.split("(error ")[1][:12]
    assert error_id in caplog.text and "Traceback" in caplog.text
