"""L3 IR attribution through the IR engine (``optimizer.ir``): stages, pass changes, structural signatures.

The hot kernel (from L2, else the most launched one) is compiled with the exact specialization the
validation worker recorded (argument types, divisibility, constexprs, num_warps ...), for ``cuda:90`` (works
on a CPU-only machine) or Ascend. The analysed report is cached on disk by kernel source + specialization +
target + options, so an unchanged kernel is never recompiled for L3/L4 (also across sessions). Signatures that indicate a problem are mapped to bottleneck classes and
tied to kernel source lines.

Tests: (1) problem signatures exist in the hot kernel and map to a class (agreeing with L2's class when one
was measured); (2) ``choose_family`` over IR-signature tokens; (3) the chosen card cites a detected signature
that maps to source lines of the kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from kb.models import EscalationTests, EvidenceItem, Symptoms
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.causes import ir_findings
from optimizer.ladder.select import choose_family, match_cards
from optimizer.ladder.types import LadderContext, LevelResult

__all__ = ["SIGNATURE_CLASS", "IRLevel", "capture_report", "ir_cache_key"]

#: Problem signatures and the bottleneck class each indicates (healthy ones such as mma_dot are absent).
SIGNATURE_CLASS: dict[str, str] = {
    "register_spill": "occupancy_limited",
    "ascend_max_with_index": "scalar_bound",
    "ascend_min_with_index": "scalar_bound",
    "ascend_discrete_mem_access": "scalar_bound",
    "scalar_global_load": "memory_bound",
    "masked_load_not_vectorized": "memory_bound",
    "ascend_padding_fill": "memory_bound",
    "multi_operand_reduction": "sync_bound",
    "cross_warp_reduction": "sync_bound",
    "warp_shuffle": "sync_bound",
    "barrier": "sync_bound",
    "shared_memory_roundtrip": "sync_bound",
    "surviving_convert_layout": "sync_bound",
    "fma_dot": "compute_bound",
    "no_software_pipelining": "latency_bound",
}
#: When several classes are present, the more specific one wins.
_PRIORITY = ["occupancy_limited", "scalar_bound", "compute_bound", "memory_bound", "sync_bound", "latency_bound"]


def _hot_launch(ctx: LadderContext) -> dict[str, Any] | None:
    ev = ctx.evaluation
    recs = [r for r in (ev.launches if ev else []) if r.get("kernel") and "error" not in r]
    if not recs:
        return None
    hot = ctx.cache.get("hot_kernel")
    by_name = [r for r in recs if hot and r["kernel"] in str(hot)]
    pool = by_name or recs
    return max(pool, key=lambda r: (r.get("launches", 1), len(str(r.get("grid")))))


def ir_cache_key(rec: dict[str, Any], target: str, options: dict[str, Any]) -> str:
    """sha256 of what decides the compiled IR: kernel source file, kernel name, specialization, target, options, Triton."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        triton_version = version("triton")
    except PackageNotFoundError:
        triton_version = "?"
    h = hashlib.sha256(Path(rec["file"]).read_bytes())
    h.update(json.dumps([rec["kernel"], rec.get("ir_args") or {}, target, options, triton_version], sort_keys=True, default=str).encode())
    return h.hexdigest()


def capture_report(ctx: LadderContext) -> Any:
    """The IRReport of the hot kernel: from this session's memory, else the on-disk cache under ``settings.cache_dir``
    (``ir/<key>.json``, keyed by ``ir_cache_key``), else captured now (and cached); raises on toolchain errors."""
    key = f"ir:{ctx.source_sha}"
    if key in ctx.cache:
        return ctx.cache[key]
    from optimizer.ir import IRReport, analyze, capture_kernel

    rec = _hot_launch(ctx)
    if rec is None:
        raise RuntimeError("no recorded kernel launch to compile (validate the candidate first)")
    target = ctx.settings.ir_target or ("ascend" if ctx.backend == "ascend" else "cuda:90")
    options = {k: v for k, v in (rec.get("options") or {}).items() if k in ("num_warps", "num_stages", "num_ctas", "maxnreg")}
    disk = Path(ctx.settings.cache_dir) / "ir" / f"{ir_cache_key(rec, target, options)}.json"
    if disk.is_file():
        try:
            ctx.cache[key] = IRReport.model_validate_json(disk.read_text())
            ctx.cache["ir_cache_hits"] = ctx.cache.get("ir_cache_hits", 0) + 1
            return ctx.cache[key]
        except ValueError:  # a stale or torn entry: capture again and overwrite it
            pass
    workdir = (ctx.workdir / "ir" / f"{rec['kernel']}-{ctx.source_sha[:8]}") if ctx.workdir else None
    with ctx.phases.time("ir_capture"):
        capture = capture_kernel(f"{rec['file']}::{rec['kernel']}", target, rec.get("ir_args") or {}, options=options,
                                 workdir=workdir, timeout_s=min(600.0, ctx.settings.sandbox_timeout_s * 2))
        report = analyze(capture)
    ctx.cache[key] = report
    disk.parent.mkdir(parents=True, exist_ok=True)
    tmp = disk.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(report.model_dump_json())
    os.replace(tmp, disk)
    return report


class IRLevel:
    level = "L3"

    def run(self, ctx: LadderContext) -> LevelResult:
        try:
            report = capture_report(ctx)
        except Exception as exc:  # toolchain missing, compile failure: the level yields nothing actionable
            reason = f"IR capture failed: {type(exc).__name__}: {exc}"[:600]
            tests = EscalationTests(localized=False, single_family=False, justified=False, notes=f"(1) {reason}")
            return LevelResult(level="L3", tests=tests, inconclusive=True, rationale=reason,
                               evidence=[EvidenceItem(level="L3", kind="ir_capture", summary=reason)])
        problems = [s for s in report.signatures if s.name in SIGNATURE_CLASS]
        evidence = [EvidenceItem(
            level="L3", kind="ir_stages", reference=f"{report.kernel}@{report.target}",
            summary=f"{report.compiler} {report.compiler_version}: " + ", ".join(f"{s.stage} {s.lines} lines" for s in report.stages)
            + f"; {report.passes_total} pass snapshots" + (f"; registers {report.resources.registers}, spills "
                                                           f"{report.resources.spill_stores_bytes or 0} B" if report.resources else ""),
            data={"workdir": report.workdir, "options": report.options},
        )]
        for s in report.signatures:
            evidence.append(EvidenceItem(
                level="L3", kind="ir_signature", reference=s.name,
                summary=f"{s.name} x{s.count} at {s.stage}" + (f", introduced by {s.pass_introduced}" if s.pass_introduced else "")
                + (f"; source lines {s.source_lines}" if s.source_lines else "") + (f"; {s.detail}" if s.detail else ""),
                data={"count": s.count, "stage": s.stage, "pass": s.pass_introduced, "lines": s.source_lines,
                      "class": SIGNATURE_CLASS.get(s.name)},
            ))
        measured, _ = ctx.known_bottleneck()
        classes = [SIGNATURE_CLASS[s.name] for s in problems]
        if measured != "unknown" and measured in classes:
            cls = measured
        else:
            cls = next((c for c in _PRIORITY if c in classes), "unknown")
        tied = [s for s in problems if s.source_lines]
        localized = bool(problems) and cls != "unknown" and (measured == "unknown" or measured in classes or measured == cls)
        feats = ctx.cache.get("features")
        sig_names = [s.name for s in problems]
        symptoms = Symptoms(ir_signatures=sig_names, bottleneck_classes=[cls] if cls != "unknown" else [],  # type: ignore[arg-type]
                            code_features=feats.tokens if feats else [])
        refs = match_cards(ctx, symptoms, " ".join(sig_names) + f" {cls}", bottleneck=cls) if problems else []
        chosen, single, note = (choose_family(ctx, refs, ("ir:",), bottleneck=cls, support=("bottleneck:", "code:")) if refs
                                else (None, False, "no problem signature to match"))
        cited = [s for s in tied if chosen and f"ir:{s.name}" in chosen.matched_symptoms]
        justified = bool(cited)
        why_loc = (f"{', '.join(sig_names)} in {report.kernel} -> {cls}" if localized
                   else "no problem signature in the hot kernel" if not problems
                   else f"signatures point to {classes} but L2 measured {measured}")
        why_just = (f"{chosen.id} cites {', '.join(s.name for s in cited)} at lines "
                    f"{sorted({n for s in cited for n in s.source_lines})}" if justified and chosen
                    else "no card cites a detected signature tied to source lines")
        tests = EscalationTests(localized=localized, single_family=single, justified=justified,
                                notes=f"(1) {why_loc}; (2) {note}; (3) {why_just}")
        evidence.append(EvidenceItem(level="L3", kind="bottleneck", reference=cls, summary=why_loc,
                                     data={"class": cls, "localized": localized, "source": "ir"}))
        st = feats.structures.get(report.kernel) if feats else None
        findings = ir_findings(report, block_range=st.block_range if st else True)
        step = causal_step(ctx, "L3", findings)
        evidence.append(step.evidence("L3"))
        tests, chosen_final, best = merge_tests(step, tests, chosen if single else None, chosen if justified else None)
        refs_out = ([step.family] if step.family else []) + [r for r in refs if not step.family or r.id != step.family.id]
        return LevelResult(level="L3", evidence=evidence, bottleneck=cls, matched_cards=refs_out[:2], tests=tests,  # type: ignore[arg-type]
                           chosen=chosen_final, best=best, inconclusive=not problems and not step.decision.decided,
                           rationale=tests.notes, findings=findings, decision=step.decision,
                           data={"signatures": sig_names, "kernel": report.kernel, "target": report.target,
                                 "bottleneck_source": "ir"})
