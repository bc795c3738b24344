"""The on-disk IR cache: an unchanged kernel is never recompiled for L3/L4, a changed one always is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from kb.models import Validation
from optimizer.harness.evaluation import Evaluation
from optimizer.ir import IRReport, Signature
from optimizer.ladder.types import LadderContext
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"


def _ctx(cand: Path, settings: LadderSettings, options: dict) -> LadderContext:
    launch = {"kernel": "softmax_kernel", "file": str(cand), "launches": 1, "options": options,
              "ir_args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": 8, "n_cols": 32, "stride": 32, "BLOCK_N": 32}}
    ev = Evaluation(candidate=cand, backend="interpreter", status="ok", reason="", validation=Validation(passed=True),
                    launches=[launch])
    return LadderContext(problem=load_problem(DATA / "softmax"), candidate=cand, backend="interpreter", kb=FakeKB(LADDER_CARDS),
                         settings=settings, evaluation=ev)


def test_unchanged_kernel_hits_the_disk_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[tuple[str, dict]] = []

    def fake_capture(spec, target, args, *, options, workdir, timeout_s):
        compiled.append((spec, dict(options)))
        return spec

    def fake_analyze(spec):
        return IRReport(kernel="softmax_kernel", source_file=spec, target="cuda:90", backend="cuda", compiler="triton",
                        compiler_version="x", mode="compile", source_excerpt={12: "x = x - tl.max(x, axis=0)"},
                        signatures=[Signature(name="cross_warp_reduction", stage="ttgir", count=1, source_lines=[12])])

    monkeypatch.setattr("optimizer.ir.capture.capture_kernel", fake_capture)
    monkeypatch.setattr("optimizer.ir.analysis.analyze", fake_analyze)
    settings = LadderSettings(cache_dir=str(tmp_path / "cache"))
    cand = tmp_path / "round_00.py"
    shutil.copyfile(DATA / "softmax" / "initial.py", cand)

    first = _ctx(cand, settings, {"num_warps": 4}).ir_report()
    again_ctx = _ctx(tmp_path / "round_00.py", settings, {"num_warps": 4})  # a new session: empty in-memory cache
    again = again_ctx.ir_report()
    assert len(compiled) == 1 and again == first and again_ctx.cache["ir_cache_hits"] == 1
    assert again.source_excerpt == {12: "x = x - tl.max(x, axis=0)"} and again.signature("cross_warp_reduction")
    assert list((tmp_path / "cache" / "ir").glob("*.json"))

    _ctx(cand, settings, {"num_warps": 8}).ir_report()  # other options: compiled again
    edited = tmp_path / "round_01.py"
    edited.write_text(cand.read_text().replace("num_warps=4", "num_warps=2"))
    _ctx(edited, settings, {"num_warps": 4}).ir_report()  # other source: compiled again
    assert [o["num_warps"] for _, o in compiled] == [4, 8, 4] and compiled[-1][0].startswith(str(edited))


def test_ir_prefetch_overlaps_and_l3_joins_it(monkeypatch, tmp_path) -> None:
    """A CUDA ladder starts the hot kernel's capture in the background; ir_report waits for it and reads it back."""
    import threading
    import time as _time

    import optimizer.ir as ir_pkg
    from optimizer.ladder import keys
    from optimizer.settings import LadderSettings

    softmax = Path(__file__).resolve().parents[2] / "benchmarks" / "suite" / "softmax"
    calls: list[tuple[str, bool]] = []
    started = threading.Event()

    def fake_capture(launches, *, memo, memo_key, **kw):
        calls.append((threading.current_thread().name, memo_key in memo))
        if threading.current_thread().name.startswith("ir-prefetch"):
            started.set()
            _time.sleep(0.2)
        memo[memo_key] = f"report of {launches[0]['kernel']}"
        return memo[memo_key]

    monkeypatch.setattr(ir_pkg, "capture_report", fake_capture)

    def ctx(kernels: list[str]) -> LadderContext:
        ev = Evaluation(candidate=softmax / "initial.py", backend="cuda", status="ok", reason="",
                        validation=Validation(passed=True), device="NVIDIA H200",
                        launches=[{"kernel": k, "file": str(softmax / "initial.py")} for k in kernels])
        return LadderContext(problem=load_problem(softmax), candidate=softmax / "initial.py", backend="cuda", kb=None,
                             settings=LadderSettings(cache_dir=str(tmp_path)), evaluation=ev)  # type: ignore[arg-type]

    one = ctx(["softmax_kernel"])
    assert one.prefetch_ir() is True and one.prefetch_ir() is False  # started once per candidate
    assert started.wait(5)
    assert one.ir_report() == "report of softmax_kernel"
    assert not one.cache[keys.ir_prefetch(one.source_sha)].is_alive()  # joined before the report was read
    assert [name.startswith("ir-prefetch") for name, _ in calls] == [True, False]
    assert "ir_capture" in one.phases.seconds  # the wait is accounted to the IR capture phase
    assert ctx(["max_kernel", "sum_kernel"]).prefetch_ir() is False  # which kernel is hot is L2's call
