"""Golden kernels lowered TTIR -> ttadapter by triton-ascend in its own environment (`make ascend-env`).

Only the CPU-side lowering runs here: no NPU, no CANN bishengir-compile, so no npubin and no HIVM IR.
"""

from __future__ import annotations

import pytest

from optimizer.ir import FRONTEND

pytestmark = pytest.mark.ascend_env


def _sig(report, name):
    s = report.signature(name)
    assert s is not None, f"{name} missing; found {sorted(report.names())}"
    return s


def test_argmax_lowers_to_max_with_index(ascend_golden):
    cap, report = ascend_golden("top2_argmax")
    assert cap.compiler == "triton-ascend" and list(cap.stages)[-1] == "ttadapter"
    assert any("bishengir-compile" in w for w in cap.warnings)  # npubin honestly reported as not built
    stages = {s.stage for s in cap.snapshots}
    assert {"ttir", "ttadapter"} <= stages  # in-process TTIR passes and the adapter tool's own passes
    mwi = _sig(report, "ascend_max_with_index")
    assert mwi.count == 2 and mwi.pass_introduced == "TritonToLinalg" and mwi.source_lines == [12, 14]
    multi = _sig(report, "multi_operand_reduction")
    assert multi.pass_introduced == FRONTEND and multi.count == 2
    assert "ascend_min_with_index" not in report.names()
    assert _sig(report, "ascend_mix_mode").detail.startswith("mix_mode = aiv")


def test_gather_is_scalarized_as_discrete_memory_access(ascend_golden):
    _, report = ascend_golden("gather")
    dma = _sig(report, "ascend_discrete_mem_access")
    assert dma.pass_introduced == "TritonToUnstructure" and dma.count >= 1 and dma.source_lines == [11]
    assert "scalar loop" in dma.detail


def test_masked_load_pads_with_a_fill(ascend_golden):
    _, report = ascend_golden("masked")
    fill = _sig(report, "ascend_padding_fill")
    assert fill.count == 1 and fill.source_lines == [11]
    assert "ascend_discrete_mem_access" not in report.names()
