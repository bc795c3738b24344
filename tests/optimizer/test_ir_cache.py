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

    monkeypatch.setattr("optimizer.ir.capture_kernel", fake_capture)
    monkeypatch.setattr("optimizer.ir.analyze", fake_analyze)
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
