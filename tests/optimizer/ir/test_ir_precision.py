"""Input precision of fp32 dots: read from the named (tt.dot) and numbered (ttng.warp_group_dot) attribute forms."""

from __future__ import annotations

import pytest

from optimizer.ir.detect_cuda import INPUT_PRECISION, dot_precisions, input_precision

WGMMA = ("%acc = ttng.warp_group_dot %a, %b, %c {inputPrecision = {n} : i32, isAsync = true} : "
         "!ttg.memdesc<64x16xf32, #shared, #smem, mutable> * !ttg.memdesc<16x32xf32, #shared1, #smem, mutable> -> "
         "tensor<64x32xf32, #mma> loc(#loc9)")


def test_numbered_attribute_maps_to_triton_enum():
    # triton._C.libtriton.ir.INPUT_PRECISION: TF32=0, TF32x3=1, IEEE=2, BF16x3=3, BF16x6=4
    assert [input_precision(WGMMA.replace("{n}", str(i))) for i in range(5)] == list(INPUT_PRECISION)
    assert INPUT_PRECISION[:3] == ("tf32", "tf32x3", "ieee")
    assert input_precision(WGMMA.replace("{n}", "7")) == "unknown(7)"


def test_named_attribute_and_default():
    line = "%d = tt.dot %a, %b, %c, inputPrecision = tf32x3 : tensor<64x16xf32> * tensor<16x32xf32> -> tensor<64x32xf32>"
    assert input_precision(line) == "tf32x3"
    assert input_precision(line.replace(", inputPrecision = tf32x3", "")) == "ieee"


def test_only_fp32_operand_dots_report_a_precision():
    fp16 = "%d = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x16xf16> * tensor<16x32xf16> -> tensor<64x32xf32>"
    assert dot_precisions(fp16) == []
    assert dot_precisions(WGMMA.replace("{n}", "0") + "\n" + fp16) == ["tf32"]


@pytest.mark.parametrize(("name", "asked", "lowered_as"), [
    ("dot_default_90", "tf32", "wgmma_dot"),     # the default: inputPrecision = 0 : i32 on the warp-group dot
    ("dot_default_80", "tf32", "mma_dot"),       # inputPrecision = tf32 on tt.dot with an #mma layout
    ("dot_ieee_90", "ieee", "fma_dot"),          # no attribute; no tensor cores
    ("dot_tf32x3_90", "tf32x3", "wgmma_dot"),    # decomposed into three tf32 warp-group dots
])
def test_compiled_fp32_dot_reports_its_precision(golden, name, asked, lowered_as):
    _, report = golden(name)
    sig = report.signature(lowered_as)
    assert sig is not None, [s.name for s in report.signatures]
    assert sig.facts["input_precision"] == asked
    assert f"(input precision: {asked}" in sig.detail
    if name == "dot_tf32x3_90":
        assert "run as tf32 dots" in sig.detail and sig.count == 3
    else:
        assert "run as" not in sig.detail
