"""L2 profiling diagnosis: standardized timing, roofline, profiler breakdown, counters -> a bottleneck class.

CUDA: the validated evaluation's do_bench medians per case, roofline fractions from the problem's
flops/bytes, a torch.profiler kernel breakdown (host wall vs device time, launches per call) and, when
``ncu`` is on PATH, Nsight Compute counters. Ascend: torch-npu execution and the msprof op-summary ratios
(untested on hardware). The CPU interpreter measures nothing: L2 says so and escalates.

Tests: (1) one class covers >= 75% of the candidate's time over the cases; (2) ``choose_family`` over
bottleneck / profile tokens; (3) the chosen card names the measured class or a measured profile signal.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from kb.models import EscalationTests, EvidenceItem, Symptoms
from kb.vocab import BottleneckClass, Level, is_bottleneck_class
from optimizer.harness import measure
from optimizer.harness.problem import case_label
from optimizer.ladder import keys
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.causes import profile_findings
from optimizer.ladder.select import choose_family, match_cards
from optimizer.ladder.types import LadderContext, LevelResult
from optimizer.profile.classify import Classification, classify_cuda, dominant_class
from optimizer.profile.roofline import RESIDENT_PROGRAMS_PER_SM, DevicePeaks, compute_kind, peaks_for

__all__ = ["CaseClass", "ProfileData", "ProfileLevel", "case_shape", "launch_shape"]


class CaseClass(BaseModel):
    """One case's measured time and bottleneck class (``LevelResult.data["per_case"]`` as JSON, key ``class``)."""

    model_config = ConfigDict(extra="forbid")

    case: str
    ms: float
    bottleneck: BottleneckClass = Field(
        validation_alias=AliasChoices("class", "bottleneck"), serialization_alias="class"
    )


class ProfileData(BaseModel):
    """L2's ``LevelResult.data``: per-case classes and the profile signal tokens over all cases."""

    model_config = ConfigDict(extra="forbid")

    per_case: list[CaseClass]
    signals: list[str] = Field(default_factory=list)


def _fail(reason: str, evidence: list[EvidenceItem]) -> LevelResult:
    tests = EscalationTests(localized=False, single_family=False, justified=False, notes=f"(1) {reason}")
    evidence.append(EvidenceItem(level="L2", kind="bottleneck", reference="unknown", summary=reason,
                                 data={"class": "unknown", "localized": False, "source": "measured"}))
    return LevelResult(level="L2", evidence=evidence, tests=tests, inconclusive=True, rationale=reason)


def launch_shape(
    ctx: LadderContext, prof: dict[str, Any], peaks: DevicePeaks | None, first_case: dict[str, Any]
) -> dict[str, float]:
    """Work per program of the hot kernel: its recorded grid (the first launch, i.e. the first case) and that case's
    bytes/flops. Empty without a recorded integer grid, the device's SM count or the problem's bytes_moved."""
    ev = ctx.evaluation
    recs = [r for r in (ev.launches if ev else []) if r.get("kernel") and isinstance(r.get("grid"), (list, tuple))
            and r["grid"] and all(isinstance(g, int) for g in r["grid"])]
    nbytes = ctx.problem.bytes_moved(first_case)
    if not recs or peaks is None or not peaks.sms or not nbytes:
        return {}
    hot = ctx.cache.get(keys.HOT_KERNEL) or next(
        (c["kernels"][0]["name"] for c in prof.get("cases", []) if c.get("kernels")), None
    )
    rec = max([r for r in recs if hot and r["kernel"] in str(hot)] or recs, key=lambda r: r.get("launches", 1))
    programs = float(math.prod(rec["grid"]))
    flops = ctx.problem.flops(first_case)
    out = {"bytes_per_program": nbytes / programs, "resident_programs": float(peaks.sms * RESIDENT_PROGRAMS_PER_SM),
           "recorded_programs": programs}
    return out | ({"flops_per_program": flops / programs} if flops else {})


def case_shape(shape: dict[str, float], nbytes: float | None) -> dict[str, float]:
    """Per-case launch figures, assuming the grid scales with the work (a fixed grid gives large bytes/program)."""
    if not shape or not nbytes:
        return {}
    out = {k: shape[k] for k in ("bytes_per_program", "resident_programs", "flops_per_program") if k in shape}
    return out | {"programs": nbytes / shape["bytes_per_program"]}


def _hot_kernel_name(ctx: LadderContext) -> str | None:
    """The recorded kernel (a Triton function name) that the torch.profiler breakdown puts on top, if any."""
    prof = ctx.cache.get(keys.profile(ctx.source_sha)) or {}
    top = next((c["kernels"][0]["name"] for c in prof.get("cases", []) if c.get("kernels")), None)
    recorded = {r["kernel"] for r in (ctx.evaluation.launches if ctx.evaluation else []) if r.get("kernel")}
    return next((k for k in sorted(recorded, key=len, reverse=True) if top and k in str(top)), None)


class ProfileLevel:
    level: Level = "L2"

    def run(self, ctx: LadderContext) -> LevelResult:
        ev = ctx.evaluation
        if ctx.backend == "interpreter":
            return _fail(
                "timing unavailable: the CPU interpreter checks correctness only, so L2 has no measurement "
                "(run with --backend cuda on a GPU)",
                [
                    EvidenceItem(
                        level="L2",
                        kind="timing",
                        reference="interpreter",
                        summary="unavailable on the interpreter backend",
                    )
                ],
            )
        if ev is None or not ev.timing_cases:
            return _fail(f"no timing for this candidate ({ev.timing_error if ev else 'not evaluated'})", [])
        per_case, evidence, signals_all = self._classify_cases(ctx)
        found, share = dominant_class([(c, ms, k) for c, ms, k in per_case])
        cls: BottleneckClass = found if is_bottleneck_class(found) else "unknown"  # the classifier's classes are these
        localized = cls != "unknown"
        signal_tokens = sorted({t for s in signals_all for t in s})
        feats = ctx.cache.get(keys.FEATURES)
        symptoms = Symptoms(bottleneck_classes=[cls] if localized else [], profile_signals=signal_tokens,
                            code_features=feats.tokens if feats else [])
        refs = match_cards(ctx, symptoms, f"{cls} {' '.join(signal_tokens)}", bottleneck=cls) if localized else []
        chosen, single, note = (
            choose_family(ctx, refs, ("bottleneck:", "profile:"), bottleneck=cls, support=("code:",))
            if refs
            else (None, False, "not localized: no family chosen")
        )
        justified = chosen is not None and (f"bottleneck:{cls}" in chosen.matched_symptoms
                                            or any(s.startswith("profile:") for s in chosen.matched_symptoms))
        why_loc = (
            f"{cls} covers {share:.0%} of the candidate's time over {len(per_case)} case(s)"
            if localized
            else f"no class covers 75% of the time (best {share:.0%}): " + ", ".join(f"{c}:{k}" for c, _, k in per_case)
        )
        tests = EscalationTests(
            localized=localized,
            single_family=single,
            justified=justified,
            notes=f"(1) {why_loc}; (2) {note}; (3) "
            + (f"{chosen.id} names {cls}" if justified and chosen else "no card ties the measured class to a rewrite"),
        )
        evidence.append(EvidenceItem(level="L2", kind="bottleneck", reference=cls, summary=why_loc,
                                     data={"class": cls, "localized": localized, "source": "measured", "share": share}))
        classes = [CaseClass.model_validate({"case": c, "ms": ms, "class": k}) for c, ms, k in per_case]
        data = ProfileData(per_case=classes, signals=signal_tokens).model_dump(by_alias=True)
        findings = profile_findings(ctx.cache.get(keys.l2rows(ctx.source_sha), []), cls, share,
                                    dots="tl.dot" in (feats.tokens if feats else []))
        if any(f.cause == "at_roofline" and f.level == "L1" for r in ctx.results for f in r.findings):
            findings = [
                f for f in findings if f.cause != "at_roofline"
            ]  # L1 read the same timing figure: count it once
        step = causal_step(ctx, "L2", findings, measured=(cls if localized else "unknown", True))
        evidence.append(step.evidence("L2"))
        tests, chosen_final, best = merge_tests(step, tests, chosen if single else None, chosen if justified else None)
        refs_out = ([step.family] if step.family else []) + [
            r for r in refs if not step.family or r.id != step.family.id
        ]
        return LevelResult(level="L2", evidence=evidence, bottleneck=cls, matched_cards=refs_out[:2], tests=tests,
                           chosen=chosen_final, best=best, rationale=tests.notes, data=data,
                           findings=findings, decision=step.decision)

    # ------------------------------------------------------------------------------------------------------
    def _classify_cases(
        self, ctx: LadderContext
    ) -> tuple[list[tuple[str, float, str]], list[EvidenceItem], list[list[str]]]:
        ev = ctx.evaluation
        assert ev is not None
        peaks = peaks_for(ev.device)
        cases = {case_label(c): c for c in ctx.problem.cases_for(ctx.backend)}
        ms, ref = ev.case_ms(), ev.reference_ms()
        evidence = [
            EvidenceItem(
                level="L2",
                kind="timing",
                reference=ev.protocol.method if ev.protocol else "",
                summary="; ".join(
                    f"{c}: {m:.4g} ms" + (f" (torch {ref[c]:.4g} ms)" if c in ref else "") for c, m in ms.items()
                ),
                data={"ms": ms, "reference_ms": ref, "protocol": ev.protocol.model_dump() if ev.protocol else {}},
            )
        ]
        prof = self._profile(ctx) if ctx.backend == "cuda" else {}
        ncu = self._ncu(ctx) if ctx.backend == "cuda" else {}
        ascend = self._ascend(ctx) if ctx.backend == "ascend" else {}
        if prof.get("error"):
            evidence.append(
                EvidenceItem(
                    level="L2", kind="profiler", reference="torch.profiler", summary=f"profiler failed: {prof['error']}"
                )
            )
        if ncu:
            evidence.append(
                EvidenceItem(
                    level="L2",
                    kind="ncu",
                    reference=ncu.get("hot_kernel", ""),
                    summary=", ".join(f"{k} {v:.3g}" for k, v in ncu.items() if isinstance(v, (int, float))),
                    data=ncu,
                )
            )
            ctx.cache.setdefault(keys.HOT_KERNEL, ncu.get("hot_kernel"))
        if ctx.backend == "cuda" and ctx.settings.ncu_account and (item := self._account(ctx)) is not None:
            evidence.append(item)
        per_case, signals_all = [], []
        from optimizer.profile.cuda import case_signals

        first = next(iter(cases.values()), None)
        shape = launch_shape(ctx, prof, peaks, first) if ctx.backend == "cuda" and first is not None else {}
        feats = ctx.cache.get(keys.FEATURES)
        kind = compute_kind(feats.tokens if feats else [], ev.launches)
        rows: list[dict[str, Any]] = ctx.cache.setdefault(keys.l2rows(ctx.source_sha), [])
        rows.clear()
        for label, m in ms.items():
            case = cases.get(label, {})
            flops, nbytes = ctx.problem.flops(case), ctx.problem.bytes_moved(case)
            if ctx.backend == "ascend" and label in ascend:
                c = Classification(**ascend[label]) if isinstance(ascend[label], dict) else Classification()
            else:
                p = next((x for x in prof.get("cases", []) if x.get("case") == label), None)
                sig = case_signals(m, flops, nbytes, peaks, p, ncu, compute=kind) | case_shape(shape, nbytes)
                c = classify_cuda(sig)
                rows.append(
                    {
                        "case": label,
                        "ms": m,
                        "class": c.bottleneck,
                        "figures": c.figures,
                        "signals": {
                            **{k: v for k, v in sig.items() if isinstance(v, (int, float))},
                            "tokens": c.signals,
                        },
                    }
                )
                if p:
                    top = p.get("kernels", [])[:3]
                    evidence.append(
                        EvidenceItem(
                            level="L2",
                            kind="profiler",
                            reference=label,
                            summary=f"[{label}] wall {p['wall_ms']:.4g} ms/call, device {p['device_ms']:.4g} ms, "
                            f"{p['launches_per_call']:.0f} launches; top: "
                            + ", ".join(f"{k['name'][:40]} {k['us_per_call']:.1f} us" for k in top),
                            data=p,
                        )
                    )
                    if top:
                        ctx.cache.setdefault(keys.HOT_KERNEL, top[0]["name"])
                if sig.get("mem_fraction") is not None or sig.get("compute_fraction") is not None:
                    evidence.append(
                        EvidenceItem(
                            level="L2",
                            kind="roofline",
                            reference=label,
                            summary=f"[{label}] memory {sig.get('mem_fraction', 0):.0%}, "
                            f"compute {sig.get('compute_fraction', 0):.0%} of {peaks.name if peaks else '?'} "
                            f"roofline ({kind} compute peak)",
                            data={k: sig.get(k) for k in ("mem_fraction", "compute_fraction")},
                        )
                    )
            evidence.append(
                EvidenceItem(
                    level="L2",
                    kind="classification",
                    reference=label,
                    summary=f"[{label}] {c.bottleneck}: " + "; ".join(c.reasons),
                    data=c.as_dict(),
                )
            )
            per_case.append((label, m, c.bottleneck))
            signals_all.append(c.signals)
        return per_case, evidence, signals_all

    def _profile(self, ctx: LadderContext) -> dict[str, Any]:
        key = keys.profile(ctx.source_sha)
        if key not in ctx.cache:
            with ctx.phases.time("profiler"):
                run = measure.profile(ctx.problem, ctx.candidate, settings=ctx.settings, iters=20)
            ctx.cache[key] = {"error": run.error} if run.error else {"cases": [c.model_dump() for c in run.cases]}
        return ctx.cache[key]

    def _ncu(self, ctx: LadderContext) -> dict[str, Any]:
        """Nsight Compute counters for one forward per case (GPU with ncu only; untested in CI)."""
        from optimizer.profile.cuda import ncu_available

        key = keys.ncu(ctx.source_sha)
        if key in ctx.cache:
            return ctx.cache[key]
        if not ncu_available():
            ctx.cache[key] = {}
            return {}
        hot = _hot_kernel_name(ctx)
        recorded = sorted(
            {r.get("kernel", "") for r in (ctx.evaluation.launches if ctx.evaluation else []) if r.get("kernel")}
        )
        kernels = re.escape(hot) if hot else "|".join(map(re.escape, recorded))
        with ctx.phases.time("ncu"):
            run = measure.ncu(ctx.problem, ctx.candidate, settings=ctx.settings, kernels=kernels or None)
        ctx.cache[key] = run.summary or ({"error": run.error} if run.error else {})
        return ctx.cache[key]

    def _account(self, ctx: LadderContext) -> EvidenceItem | None:
        """The measured account of the gap of the largest case (``ladder.measured_account``) as evidence: its parts
        with their shares and the listed causes each can come from; parts no listed cause explains are named as
        such. Stored for ``decide`` (``keys.account``). GPU with ncu only (``settings.ncu_account``); untested in CI."""
        from optimizer.ladder.measured_account import case_account
        from optimizer.profile.cuda import ncu_available

        if not ncu_available() or ctx.evaluation is None:
            return None
        acc, error = case_account(ctx, ctx.candidate)
        if acc is None:
            return EvidenceItem(level="L2", kind="gap_account", reference="ncu",
                                summary=f"no measured account: {error}")
        data = acc.model_dump(mode="json")
        ctx.cache[keys.account(ctx.source_sha)] = data  # decide ranks causes by it
        cov = acc.coverage
        unexplained = [f.kind for f in acc.top(5) if not f.explained_by and (f.share or 0) >= 0.1]
        summary = (f"[{acc.case}] {acc.measured_ms:.4g} ms, roofline {acc.roofline_ms or 0:.4g} ms, gap "
                   f"{acc.gap_ms:.4g} ms ({'-' if cov is None else f'{cov:.0%}'} accounted): "
                   + "; ".join(f.line() for f in acc.top(3))
                   + (f"; not explained by a listed cause: {', '.join(unexplained)}" if unexplained else ""))
        return EvidenceItem(level="L2", kind="gap_account", reference=acc.case, summary=summary,
                            data=data | {"unexplained": unexplained})

    def _ascend(self, ctx: LadderContext) -> dict[str, Any]:
        """torch-npu profiler + op-summary parse per case. UNTESTED: no NPU was available."""
        key = keys.ascend(ctx.source_sha)
        if key not in ctx.cache:
            run = measure.ascend_profile(ctx.problem, ctx.candidate, settings=ctx.settings)
            ctx.cache[key] = {c.case: c.classification or {} for c in run.cases}
        return ctx.cache[key]
