"""Dump splitting, stage labelling, pass diffs and location mapping on small synthetic dumps."""

from __future__ import annotations

from optimizer.ir.locs import LocResolver, PtxLines
from optimizer.ir.passes import features, label_stages, pass_changes, split_dump, top_level_passes

MOD = "module attributes {{{attrs}}} {{\n  tt.func public @k(%X: !tt.ptr<f32>) {{\n{body}    tt.return loc(#loc)\n  }} loc(#loc)\n}} loc(#loc)\n#loc = loc(\"/k.py\":3:1)\n"
TTIR = MOD.format(attrs="", body="    %0 = tt.load %X : !tt.ptr<f32> loc(#loc)\n")
TTGIR_CVT = MOD.format(attrs='"ttg.num-warps" = 4 : i32', body=(
    "    %0 = tt.load %X : !tt.ptr<f32> loc(#loc)\n    %1 = ttg.convert_layout %0 : f32 -> f32 loc(#loc)\n"))
TTGIR = MOD.format(attrs='"ttg.num-warps" = 4 : i32', body="    %0 = tt.load %X : !tt.ptr<f32> loc(#loc)\n")

DUMP_39 = f"""// -----// LADDER stage ttir begin //----- //
// -----// IR Dump Before InlinerPass: inline{{default-pipeline=canonicalize }} ('builtin.module' operation) //----- //
{TTIR}
// -----// IR Dump Before CanonicalizerPass: canonicalize{{max-iterations=10}} ('tt.func' operation: @k) //----- //
{TTIR}
// -----// IR Dump Before CSEPass: cse ('builtin.module' operation) //----- //
{TTIR}
// -----// LADDER stage ttir end //----- //
// -----// LADDER stage ttgir begin //----- //
// -----// IR Dump Before ConvertTritonToTritonGPU: convert-triton-to-tritongpu{{num-warps=4}} ('builtin.module' operation) //----- //
{TTIR}
// -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //
{TTGIR}
// -----// IR Dump Before TritonGPUPipeline: tritongpu-pipeline{{num-stages=3}} ('builtin.module' operation) //----- //
{TTGIR_CVT}
// -----// SoftwarePipeliner internal IR Dump After: LowerLoops
{TTGIR_CVT}
/k.py:3:9: remark: Warning: vectorization fails vec = 1 origin vec = 4 numElems = 8 mask is 1
    x = tl.load(X + offs, mask=mask)
        ^
// -----// IR Dump Before TritonGPURemoveLayoutConversions: tritongpu-remove-layout-conversions ('builtin.module' operation) //----- //
{TTGIR_CVT}
// -----// LADDER stage ttgir end //----- //
"""


def test_split_dump_39_headers_markers_and_remarks():
    snaps, remarks = split_dump(DUMP_39)
    assert [s.pass_name for s in snaps] == ["InlinerPass", "CanonicalizerPass", "CSEPass", "ConvertTritonToTritonGPU",
                                           "TritonGPUCoalesce", "TritonGPUPipeline", "TritonGPUPipeline",
                                           "TritonGPURemoveLayoutConversions"]
    assert [s.stage for s in snaps] == ["ttir"] * 3 + ["ttgir"] * 5
    assert snaps[1].scope == "tt.func @k" and not snaps[1].is_module
    assert snaps[6].step == "LowerLoops" and snaps[3].pass_argument == "convert-triton-to-tritongpu"
    (r,) = remarks
    assert (r.line, r.kind, r.pass_name, r.stage) == (3, "vectorization", "TritonGPUPipeline", "ttgir")
    assert "remark" not in snaps[6].text  # remark block stripped from the snapshot body


def test_split_dump_35_and_opt_tool_headers():
    text = ("// -----// IR Dump Before Inliner (inline) ('builtin.module' operation) //----- //\n" + TTIR
            + "// -----// IR Dump Before TritonToLinalg (triton-to-linalg) //----- //\n" + TTIR)
    snaps, _ = split_dump(text)
    assert [(s.pass_name, s.pass_argument, s.scope) for s in snaps] == [
        ("Inliner", "inline", "builtin.module"), ("TritonToLinalg", "triton-to-linalg", "builtin.module")]


def test_label_stages_aligns_pipelines_despite_nested_dynamic_passes():
    snaps, _ = split_dump(DUMP_39.replace("LADDER stage", "OTHER"))  # no markers: stages must come from pipelines
    pipelines = [{"stage": "ttir", "pipeline": "builtin.module(inline{x=1}, tt.func(canonicalize), cse)"},
                 {"stage": "ttgir", "pipeline": "any(convert-triton-to-tritongpu{num-warps=4},tritongpu-coalesce,"
                                                "tritongpu-pipeline{num-stages=3},tritongpu-remove-layout-conversions)"}]
    assert top_level_passes(pipelines[0]["pipeline"]) == ["inline", "cse"]
    labelled = label_stages(snaps, pipelines)
    assert [s.stage for s in labelled] == ["ttir"] * 3 + ["ttgir"] * 5
    # without pipeline information the IR level is read from the text itself
    fallback = label_stages(snaps, [])
    assert fallback[3].stage == "ttir" and fallback[4].stage == "ttgir"


def test_pass_changes_attribute_ops_and_features():
    snaps, _ = split_dump(DUMP_39)
    changes = {(c.pass_name, c.step): c for c in pass_changes(snaps, {"ttgir": TTGIR})}
    coalesce = changes[("TritonGPUCoalesce", "")]
    assert coalesce.added == {"ttg.convert_layout": 1} and coalesce.features_delta == {"convert_layout": 1}
    assert changes[("TritonGPUPipeline", "LowerLoops")].changed is False
    last = changes[("TritonGPURemoveLayoutConversions", "")]  # compared with the ttgir stage output
    assert last.removed == {"ttg.convert_layout": 1}
    assert changes[("InlinerPass", "")].nested == ["CanonicalizerPass"]


def test_features_count_ops_and_literals():
    text = ('  %1 = nvvm.shfl.sync bfly %a : i32\n  nvvm.barrier0\n  llvm.store %v, %p : f32, !llvm.ptr<3>\n'
            '  %2 = llvm.inline_asm "bar.sync 0;" : () -> ()\n  %3 = llvm.inline_asm "ld.global.v4.b32 {$0}" : i32\n'
            'module attributes {ttg.shared = 48 : i32} {\n')
    f = features(text)
    assert f == {"shuffle": 1, "barrier": 2, "shared_store": 1, "global_load": 1, "shared_bytes": 48}


def test_mlir_locations_follow_callsites_to_the_kernel_file():
    text = ('#loc1 = loc("/k.py":12:20)\n#loc2 = loc("/lib/standard.py":206:20)\n'
            '#loc3 = loc(callsite(#loc2 at #loc1))\n#loc4 = loc("x"(#loc3))\n'
            '#loc5 = loc(fused[#loc2, "/k.py":14:3])\n')
    r = LocResolver(text, "/k.py")
    assert r.line_of("    %1 = tt.reduce ... loc(#loc4)") == 12
    assert r.line_of("    %2 = arith.addf ... loc(#loc5)") == 14
    assert r.line_of('    %3 = arith.addf ... loc("/k.py":7:1)') == 7
    assert r.line_of("    %4 = arith.addf ... loc(#loc2)") is None  # only library frames


def test_ptx_lines_follow_inlined_at_chains():
    ptx = """\t.file\t1 "/k.py"
\t.file\t2 "/lib/standard.py"
\t.loc\t1 8 25
\tmov.b32 %r1, 0;
\t.loc\t2 223 16, function_name $L__info_string0, inlined_at 1 8 25
\t.loc\t2 206 20, function_name $L__info_string0, inlined_at 2 223 16
\tshfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;
"""
    import re

    lines, hits = PtxLines(ptx, "/k.py").lines_matching(re.compile(r"shfl\.sync"))
    assert lines == [8] and len(hits) == 1
