"""Golden kernels compiled for CUDA targets without a GPU: signatures AND the passes that introduced them.

Expectations are structural (which constructs, where they come from), with counts where the lowering makes
them exact (e.g. shuffles of a warp-local reduction: operands x log2(32) butterfly steps per reduction).
"""

from __future__ import annotations

import math

from optimizer.ir import FRONTEND


def _sig(report, name):
    s = report.signature(name)
    assert s is not None, f"{name} missing; found {sorted(report.names())}"
    return s


def test_argmax_top2_multi_operand_reduction_from_frontend(golden):
    cap, report = golden("top2_argmax")
    multi = _sig(report, "multi_operand_reduction")
    assert (multi.count, multi.stage, multi.pass_introduced) == (2, "ttir", FRONTEND)
    assert multi.source_lines == [12, 14]  # the two tl.max(..., return_indices=True) lines
    shfl = _sig(report, "warp_shuffle")
    assert shfl.count == 2 * 2 * int(math.log2(32))  # 2 reductions x (value, index) x 5 butterfly steps
    assert "TritonGPUToLLVM" in shfl.pass_introduced and shfl.source_lines == [12, 14]
    assert "cross_warp_reduction" not in report.names()  # one warp: warp-synchronous
    # stages and per-pass snapshots of every MLIR pipeline, pass names read from the dump
    assert {"ttir", "ttgir", "llir", "ptx", "cubin"} <= {s.stage for s in report.stages}
    per_stage = {s.stage: s.passes for s in report.stages}
    assert per_stage["ttir"] > 3 and per_stage["ttgir"] > 10 and per_stage["llir"] > 3
    lowering = next(c for c in report.pass_changes if "TritonGPUToLLVM" in c.pass_name and not c.step)
    assert lowering.features_delta.get("shuffle") == 20 and lowering.features_delta.get("reduce") == -2


def test_value_only_top2_has_no_multi_operand_reduction(golden):
    _, report = golden("top2_values")
    assert "multi_operand_reduction" not in report.names()
    assert _sig(report, "warp_shuffle").count == 2 * 1 * int(math.log2(32))


def test_masked_load_without_divisibility_is_scalar_with_a_remark(golden):
    cap, report = golden("masked_nodiv")
    n = next(a for a in cap.args if a.name == "n")
    assert n.divisibility is None and n.value == 1000
    scalar = _sig(report, "scalar_global_load")
    assert scalar.source_lines == [11] and "TritonGPUToLLVM" in scalar.pass_introduced
    masked = _sig(report, "masked_load_not_vectorized")
    assert masked.source_lines == [11] and "vec 1 instead of 4" in masked.detail and "n" in masked.detail
    assert any(r.kind == "vectorization" and r.line == 11 for r in report.remarks)
    assert "vector_global_load" not in report.names()


def test_masked_load_with_divisibility_vectorizes(golden):
    cap, report = golden("masked_div")
    assert next(a for a in cap.args if a.name == "n").divisibility == 16
    vec = _sig(report, "vector_global_load")
    assert "v4" in vec.detail and vec.source_lines == [11]
    assert not {"scalar_global_load", "masked_load_not_vectorized"} & report.names()
    assert "tt.divisibility = 16" in cap.stages["ttir"].split("tt.func public @masked_copy", 1)[1].split("\n", 1)[0]


def test_fp32_dot_ieee_stays_on_fma_at_sm90(golden):
    _, report = golden("dot_ieee_90")
    fma = _sig(report, "fma_dot")
    assert fma.pass_introduced == "TritonGPUAccelerateMatmul" and fma.source_lines == [17]
    assert "ieee" in fma.detail and "fma_f32" in fma.detail
    assert not {"wgmma_dot", "mma_dot"} & report.names()


def test_fp32_dot_tf32_uses_wgmma_at_sm90_and_mma_at_sm80(golden):
    _, r90 = golden("dot_tf32_90")
    wgmma = _sig(r90, "wgmma_dot")
    assert wgmma.pass_introduced == "TritonGPUAccelerateMatmul" and "wgmma" in wgmma.detail
    assert "fma_dot" not in r90.names()
    _, r80 = golden("dot_tf32_80")
    mma = _sig(r80, "mma_dot")
    assert mma.pass_introduced == "TritonGPUAccelerateMatmul" and "mma_sync" in mma.detail
    assert not {"fma_dot", "wgmma_dot"} & r80.names()


def test_dot_loop_without_stages_is_not_pipelined(golden):
    _, pipelined = golden("dot_ieee_90")
    assert "no_software_pipelining" not in pipelined.names()  # num_stages=3: async copies into shared memory
    _, report = golden("dot_tf32_90_s1")
    nsp = _sig(report, "no_software_pipelining")
    assert "Pipeline" in nsp.pass_introduced and "num_stages=1" in nsp.detail and {15, 16} <= set(nsp.source_lines)


def test_cross_warp_reduction_uses_barriers_and_shared_memory(golden):
    _, report = golden("row_sum")
    cross = _sig(report, "cross_warp_reduction")
    assert cross.pass_introduced == "ConvertTritonToTritonGPU" and cross.source_lines == [12]
    assert "4 warps" in cross.detail
    assert _sig(report, "barrier").count >= 1 and _sig(report, "shared_memory_roundtrip").count >= 1
    assert report.resources.barriers >= 1 and report.resources.shared_bytes > 0


def test_transposed_store_keeps_a_layout_conversion_from_coalesce(golden):
    _, report = golden("transpose")
    cvt = _sig(report, "surviving_convert_layout")
    assert (cvt.count, cvt.pass_introduced, cvt.source_lines) == (1, "TritonGPUCoalesce", [12])
    assert "RemoveLayoutConversions" in cvt.detail and cvt.facts["block_shape"] == "64x64"
    assert _sig(report, "shared_memory_roundtrip").source_lines == [12]
    deltas = [c.features_delta.get("convert_layout", 0) for c in report.pass_changes]
    assert any(d > 0 for d in deltas) and any(d < 0 for d in deltas)  # inserted, then mostly removed


def test_spilling_tile_reports_ptxas_spills(golden):
    _, report = golden("spill")
    spill = _sig(report, "register_spill")
    assert spill.pass_introduced == "ptxas" and spill.stage == "cubin" and spill.count > 0
    assert report.resources.spill_stores_bytes == spill.count and report.resources.registers <= 32
    assert "maxnreg=32" in spill.detail


def test_gather_loads_are_not_vectorized_on_cuda(golden):
    _, report = golden("gather")
    assert _sig(report, "scalar_global_load").count > 0
    assert "masked_load_not_vectorized" not in report.names()  # origin vec is 1: nothing was lost to a mask


def test_report_is_json_serializable(golden):
    from optimizer.ir import IRReport

    _, report = golden("top2_argmax")
    again = IRReport.model_validate_json(report.model_dump_json())
    assert again.signature("multi_operand_reduction").pass_introduced == FRONTEND
