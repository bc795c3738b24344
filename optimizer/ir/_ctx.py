"""Shared machinery of the signature detectors: the analysis context, op/loc helpers, pass attribution.

:meth:`Ctx.attribute` answers "which pass introduced this construct": the pass right before the start of the
last run of snapshots in which it is present (a convert inserted by Coalesce, removed by RemoveLayoutConversions
and re-inserted later is attributed to the later pass).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from optimizer.ir.locs import LocResolver, PtxLines
from optimizer.ir.passes import SnapStats, snapshot_stats
from optimizer.ir.types import FRONTEND, Capture, PassSnapshot, Signature

__all__ = ["DECIDED_BY", "RELATED", "Ctx", "closing_line", "make_signature", "op_lines", "region_follows"]

RELATED: dict[str, re.Pattern[str]] = {
    "multi_operand_reduction": re.compile(r"TritonGPUToLLVM|TritonToLinalg"),
    "cross_warp_reduction": re.compile(r"ConvertTritonToTritonGPU|TritonGPUToLLVM|OptimizeThreadLocality"),
    "warp_shuffle": re.compile(r"TritonGPUToLLVM"),
    "barrier": re.compile(r"Membar|TritonGPUToLLVM"),
    "surviving_convert_layout": re.compile(r"RemoveLayoutConversions|Coalesce|ReduceDataDuplication"),
    "shared_memory_roundtrip": re.compile(r"AllocateSharedMemory|TritonGPUToLLVM|ReduceDataDuplication"),
    "scalar_global_load": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "vector_global_load": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "masked_load_not_vectorized": re.compile(r"Coalesce|TritonGPUToLLVM"),
    "fma_dot": re.compile(r"AccelerateMatmul|F32DotTC"),
    "mma_dot": re.compile(r"AccelerateMatmul|F32DotTC|MMALowering"),
    "wgmma_dot": re.compile(r"AccelerateMatmul|F32DotTC|MMALowering|FenceInsertion"),
    "no_software_pipelining": re.compile(r"AssignLatencies|ScheduleLoops|TritonGPUPipeline$|Pipeline\b"),
    "ascend_max_with_index": re.compile(r"TritonToLinalg"),
    "ascend_min_with_index": re.compile(r"TritonToLinalg"),
    "ascend_discrete_mem_access": re.compile(r"TritonToUnstructure|DiscreteMaskAccess"),
    "ascend_padding_fill": re.compile(r"TritonToLinalg"),
    "ascend_mix_mode": re.compile(r"TritonToLinalg|TritonToHIVM"),
}
#: The pass that *decides* an absence-type signature (kept on FMA, not pipelined), by name.
DECIDED_BY: dict[str, re.Pattern[str]] = {
    "fma_dot": re.compile(r"AccelerateMatmul"),
    "no_software_pipelining": re.compile(r"TritonGPUPipeline|SoftwarePipeliner|Pipeline$"),
}


@dataclass
class Ctx:
    """What detectors share: the capture, the module-level snapshot chain and cached resolvers."""

    capture: Capture
    stats: dict[int, SnapStats] = field(default_factory=dict)
    chain: list[PassSnapshot] = field(default_factory=list)
    _resolvers: dict[str, LocResolver] = field(default_factory=dict)
    _ptx: PtxLines | None = None

    def __post_init__(self) -> None:
        self.chain = [s for s in self.capture.snapshots if s.is_module]

    @property
    def src(self) -> str:
        return str(self.capture.source_file)

    def final(self, stage: str) -> str:
        return self.capture.stages.get(stage, "")

    def resolver(self, stage: str) -> LocResolver:
        if stage not in self._resolvers:
            self._resolvers[stage] = LocResolver(self.final(stage), self.src)
        return self._resolvers[stage]

    @property
    def ptx(self) -> PtxLines | None:
        if self._ptx is None and self.final("ptx"):
            self._ptx = PtxLines(self.final("ptx"), self.src)
        return self._ptx

    def related(self, name: str) -> list[str]:
        rx = RELATED.get(name)
        return list(dict.fromkeys(s.pass_name for s in self.capture.snapshots if rx and rx.search(s.pass_name)))

    def feature(self, name: str) -> Callable[[PassSnapshot], int]:
        """A counter reading the cached feature ``name`` of a snapshot (see ``patterns.FEATURE_RULES``)."""

        def count(s: PassSnapshot) -> int:
            if s.index not in self.stats:
                self.stats[s.index] = snapshot_stats(s.text)
            return self.stats[s.index].features.get(name, 0)

        return count

    def attribute(self, count: Callable[[str], int] | str) -> tuple[str | None, int | None, str]:
        """(pass, snapshot index, stage) that introduced the last persistent run of ``count > 0``; ``count`` is
        a function of the IR text or the name of a cached feature."""
        if isinstance(count, str):
            feat = self.feature(count)
            counts = [feat(s) for s in self.chain]
        else:
            counts = [count(s.text) for s in self.chain]
        last = max((i for i, c in enumerate(counts) if c > 0), default=None)
        if last is None:
            return None, None, ""
        start = last
        while start > 0 and counts[start - 1] > 0:
            start -= 1
        if start == 0:
            return FRONTEND, None, self.chain[0].stage
        prev = self.chain[start - 1]
        return prev.pass_name, prev.index, prev.stage

    def decided_by(self, name: str) -> tuple[str | None, int | None, str]:
        rx = DECIDED_BY[name]
        hit = next((s for s in self.chain if not s.step and rx.search(s.pass_name)), None)
        return (hit.pass_name, hit.index, hit.stage) if hit else (None, None, "")

    def op_lines(self, stage: str, rx: re.Pattern[str]) -> tuple[list[int], list[str]]:
        """(source lines, op lines) of ops matching ``rx`` in a final MLIR stage; region ops take the loc
        printed on their closing line."""
        return op_lines(self.final(stage), rx, self.resolver(stage))


def op_lines(text: str, rx: re.Pattern[str], resolver: LocResolver) -> tuple[list[int], list[str]]:
    lines = text.split("\n")
    src, hits = [], []
    for i, line in enumerate(lines):
        if not rx.search(line) or line.startswith("#"):
            continue
        hits.append(line.strip()[:240])
        loc_line = closing_line(lines, i) if line.rstrip().endswith(("({", "{")) or region_follows(lines, i) else line
        if (n := resolver.line_of(loc_line)) is not None:
            src.append(n)
    return src, hits


def region_follows(lines: list[str], i: int) -> bool:
    """linalg-style region ops print their region on the next, deeper-indented line: ``(%in: f32, ...) {``."""
    return i + 1 < len(lines) and lines[i + 1].lstrip().startswith("(%") and lines[i + 1].rstrip().endswith("{")


def closing_line(lines: list[str], i: int) -> str:
    indent = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i + 1, min(len(lines), i + 5000)):
        s = lines[j]
        if s.strip().startswith("}") and len(s) - len(s.lstrip()) <= indent + (2 if region_follows(lines, i) else 0):
            if len(s) - len(s.lstrip()) == indent or "loc(" in s:
                return s
    return lines[i]


def make_signature(ctx: Ctx, name: str, count: int, stage: str, src: list[int], evidence: list[str], detail: str,
         attribution: tuple[str | None, int | None, str]) -> Signature:
    pass_name, index, _ = attribution
    # ``name`` is checked against kb.vocab.IRSignature here (detectors build some names, ``ascend_{mode}``)
    return Signature.model_validate({
        "name": name, "count": count, "stage": stage, "pass_introduced": pass_name, "pass_index": index,
        "related_passes": ctx.related(name), "source_lines": sorted(set(src)), "detail": detail,
        "evidence": list(dict.fromkeys(evidence))[:3]})


def _count(rx: re.Pattern[str]) -> Callable[[str], int]:
    return lambda text: len(rx.findall(text))
