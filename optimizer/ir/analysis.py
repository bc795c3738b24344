"""L3 analysis: from a :class:`Capture` to an :class:`IRReport` (stage summaries, pass changes, signatures)."""

from __future__ import annotations

import re
import time
from collections import Counter

from optimizer.ir import patterns as P
from optimizer.ir.passes import MLIR_STAGES, count_ops, features, pass_changes
from optimizer.ir.signatures import detect_all
from optimizer.ir.types import Capture, IRReport, StageSummary

__all__ = ["analyze", "stage_summaries"]

# %5 = load float, ptr addrspace(1) %4      call void @llvm.nvvm.barrier0()      br label %7
_LLVM_INSTR = re.compile(r"^\s+(?:%[\w.\"-]+ = )?(?:tail |musttail |notail )?([a-z][a-z0-9_.]*)\b", re.M)
# 	@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];     shfl.sync.bfly.b32 	%r39, ...
_PTX_INSTR = re.compile(r"^\s+(?:@!?%p\d+\s+)?([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)", re.M)
_LLVM_FEATURES = {
    "barrier": re.compile(r"@llvm\.nvvm\.barrier|bar\.sync|barrier\.sync"),
    "shuffle": re.compile(r"@llvm\.nvvm\.shfl"),
    "shared_access": re.compile(r"addrspace\(3\)"),
    "global_load_asm": re.compile(r"ld\.global"),
}

#: compile metadata keys kept in the report (what L4 templates and readers need of the effective options)
_COMPILED_WITH = ("num_warps", "num_stages", "num_ctas", "maxnreg", "shared", "default_dot_input_precision")


def analyze(capture: Capture, *, top_ops: int = 12) -> IRReport:
    """Summarize every stage, diff adjacent passes and detect (and attribute) the structural signatures."""
    t0 = time.perf_counter()
    stats: dict = {}
    signatures = detect_all(capture, stats)
    cited = sorted({n for s in signatures for n in s.source_lines})
    excerpt = _excerpt(capture, cited)
    report = IRReport(
        kernel=capture.kernel,
        source_file=str(capture.source_file),
        target=str(capture.target),
        backend=capture.target.backend,
        compiler=capture.compiler,
        compiler_version=capture.compiler_version,
        mode=capture.mode,
        args=capture.args,
        options=capture.options,
        compiled_with={k: capture.metadata[k] for k in _COMPILED_WITH if capture.metadata.get(k) is not None},
        stages=stage_summaries(capture, top_ops=top_ops),
        pass_changes=pass_changes(capture.snapshots, capture.stages, stats),
        passes_total=len(capture.snapshots),
        signatures=signatures,
        remarks=capture.remarks,
        resources=capture.resources,
        source_excerpt=excerpt,
        workdir=str(capture.workdir),
        warnings=list(capture.warnings),
    )
    report.timings = {**capture.timings, "analysis_s": time.perf_counter() - t0}
    return report


def stage_summaries(capture: Capture, *, top_ops: int = 12) -> list[StageSummary]:
    per_stage = Counter(s.stage for s in capture.snapshots)
    out = []
    for stage, text in capture.stages.items():
        if stage in MLIR_STAGES:
            ops, feats = count_ops(text), features(text)
        elif stage == "llir":
            ops = Counter(_LLVM_INSTR.findall(text))
            feats = {k: len(rx.findall(text)) for k, rx in _LLVM_FEATURES.items()}
        elif stage in ("ptx", "amdgcn"):
            ops = Counter(_PTX_INSTR.findall(text))
            feats = {k: len(rx.findall(text)) for k, rx in P.PTX_INSTR.items()}
        else:
            ops, feats = count_ops(text), features(text)
        out.append(StageSummary(stage=stage, lines=text.count("\n") + 1, ops=dict(ops.most_common(top_ops)),
                                features={k: v for k, v in feats.items() if v}, passes=per_stage.get(stage, 0)))
    for stage, path in capture.binaries.items():
        feats = {"bytes": path.stat().st_size if path.exists() else 0}
        r = capture.resources
        if r is not None and stage == "cubin":
            feats |= {k: v for k, v in (("registers", r.registers), ("spill_stores_bytes", r.spill_stores_bytes),
                                        ("spill_loads_bytes", r.spill_loads_bytes), ("barriers", r.barriers),
                                        ("stack_bytes", r.stack_bytes), ("shared_bytes", r.shared_bytes)) if v}
        out.append(StageSummary(stage=stage, lines=0, features=feats, passes=per_stage.get(stage, 0)))
    return out


def _excerpt(capture: Capture, lines: list[int]) -> dict[int, str]:
    try:
        src = capture.source_file.read_text().splitlines()
    except OSError:
        return {}
    return {n: src[n - 1].strip() for n in lines if 0 < n <= len(src)}
