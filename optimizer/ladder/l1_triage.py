"""L1 pattern triage: quick-match the KB with what is already known, open only the 1-2 best cards.

What is known at L1: the candidate's code features (source + recorded launches + problem cases) and earlier
rounds (a bottleneck class measured at L2 or attributed at L3/L4, IR signatures seen before, families that
already failed). L1 may stop when a low-risk rewrite is justified:

1. localized: a bottleneck class is known from earlier evidence (code features alone never localize one, so
   the first round always escalates to measurement);
2. single family: ``choose_family`` over code / bottleneck / IR tokens, ranked by quick-match score with a bonus
   for naming the known class (not a filter); families that did not improve on this base are tried last and
   set aside after two tries (or one with no untried recipe point);
3. justified: the chosen card names the known class, its pattern is present in the code (a specific code
   feature matches) and its recipe applies to this source.

On a GPU/NPU, L1 also reads the round's timing against the roofline (the problem's bytes/flops over the measured
time, dtype-aware peaks) and, on the first round as on later ones, may stop before any profiler runs when
``decide.early_stop`` allows it: every case at the roofline, or a clear structural cause with headroom left. The
profilers (15-50 s a round on the H200) then run only where their counters can still change the decision.
"""

from __future__ import annotations

from typing import Any

from kb.models import EscalationTests, EvidenceItem, Symptoms
from kb.vocab import CAUSE_CLASS, Level
from optimizer.harness.problem import case_label
from optimizer.kernel.features import extract_features
from optimizer.ladder import keys
from optimizer.ladder.cases import representative_case
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.causes import code_findings, pointer_elem_bytes, roofline_finding
from optimizer.ladder.causes.profile import effective_ms, host_finding
from optimizer.ladder.decide import early_stop
from optimizer.ladder.findings import Finding
from optimizer.ladder.select import (
    GENERIC_TOKENS,
    choose_family,
    match_cards,
    nonimproving_tries,
    relevant,
)
from optimizer.ladder.types import LadderContext, LevelResult

__all__ = ["TriageLevel"]

#: What a quick-match evidence item keeps of each card: the match and its applicability, not the card's text (the KB
#: holds it; a copy per round was a sixth of every committed trajectory)
_MATCH_FIELDS = {"id", "kind", "score", "matched_symptoms", "recipe", "applicable", "applicability_note"}


def _specific(codes: list[str]) -> list[str]:
    return [c for c in codes if c not in GENERIC_TOKENS]


def _row_bytes(ev: object) -> float | None:
    """Bytes of one row of a row-per-program launch: its BLOCK constexpr x the first pointer's element size."""
    for rec in getattr(ev, "launches", None) or []:
        blocks = [v for k, v in (rec.get("constexprs") or {}).items() if "BLOCK" in k.upper() and isinstance(v, int)]
        if blocks and any(str(t).startswith("*") for t in (rec.get("signature") or {}).values()):
            return float(max(blocks) * pointer_elem_bytes(rec))
    return None


def _case_host_ms(ctx: LadderContext, recorded: dict | None, from_record: bool) -> dict[str, float]:
    """The host's steady-state wall time per call, per case: the round's timing (the candidate's role) or the record's
    ``host_ms``; empty when not measured."""
    if from_record:
        return {k: float(v) for k, v in ((recorded or {}).get("host_ms") or {}).items() if isinstance(v, (int, float))}
    out = {}
    for c in ctx.evaluation.timing_cases if ctx.evaluation is not None else []:
        wall = (c.host.get("candidate") or c.host.get("initial") or {}).get("wall_ms")
        if isinstance(wall, (int, float)):
            out[c.case] = float(wall)
    return out


def lost_case(rows: list[dict[str, Any]], case_ms: dict[str, float], host: dict[str, float]) -> str | None:
    """The case that loses the most time to its roofline: ms x (1 - roofline fraction), per call (the slower of device
    and host). ``rows``: ``{"case", "signals"}`` with ``mem_fraction`` / ``compute_fraction``; None without fractions.
    A 12%-of-roofline case taking 1.06 ms loses more than a 60% case taking 0.46 ms, so it is the one to diagnose."""
    lost: dict[str, float] = {}
    for r in rows:
        fr = [v for v in (r["signals"].get("mem_fraction"), r["signals"].get("compute_fraction"))
              if isinstance(v, (int, float))]
        if fr and r["case"] in case_ms:
            lost[r["case"]] = effective_ms(case_ms[r["case"]], host.get(r["case"])) * (1.0 - min(1.0, max(fr)))
    return max(lost, key=lambda k: (lost[k], k)) if lost else None


def lost_roof(rows: list[dict[str, Any]], lost: str) -> dict[str, Any]:
    """``{"case", "fraction", "bound", "best_case", "best_fraction", "fractions", "bounds"}`` (``keys.LOST_ROOF``): the
    lost case's roofline fraction and the roof (``memory`` or ``compute``) it is nearest to, the timed case nearest its
    roofline, and every timed case's fraction and roof."""
    sig: dict[str, Any] = next(r["signals"] for r in rows if r["case"] == lost)
    fr = {k: float(v) for k, v in (("memory", sig.get("mem_fraction")), ("compute", sig.get("compute_fraction")))
          if isinstance(v, (int, float))}
    bound = max(fr, key=lambda k: (fr[k], k))
    best = {r["case"]: max([float(v) for v in (r["signals"].get("mem_fraction"), r["signals"].get("compute_fraction"))
                            if isinstance(v, (int, float))], default=0.0) for r in rows}
    top = max(best, key=lambda k: (best[k], k))
    bounds = {r["case"]: "compute" if (r["signals"].get("compute_fraction") or 0.0) > (r["signals"].get("mem_fraction")
                                                                                    or 0.0) else "memory" for r in rows}
    return {"case": lost, "fraction": min(1.0, fr[bound]), "bound": bound, "best_case": top,
            "best_fraction": min(1.0, best[top]), "fractions": {k: min(1.0, v) for k, v in best.items()},
            "bounds": bounds}


def _timing_findings(ctx: LadderContext, tokens: list[str]) -> list[Finding]:
    """From the round's timing (or a recorded one) and the problem's bytes/flops: the roofline fraction of every timed
    case, read from max(device, host) per call, and whether the launcher's host work sets the time
    (``causes.profile.host_finding``). Empty on the interpreter or a device without known peaks."""
    ev = ctx.evaluation
    recorded: dict[str, Any] = ctx.cache.get(keys.RECORDED_TIMING) or {}
    from_record = False
    if ctx.backend != "interpreter" and ev is not None and ev.timing_cases:
        device, case_ms, full_cases = ev.device, ev.case_ms(), ctx.problem.cases_for(ctx.backend)
    elif recorded:
        from_record = True  # a static diagnosis given this exact source's recorded GPU times (keys.RECORDED_TIMING)
        device, case_ms, full_cases = recorded["device"], recorded["case_ms"], ctx.problem.cases
        # a record that also holds the device time alone (CUDA graph replay) reads the roofline from it and the host
        case_ms = {**case_ms, **{k: v for k, v in (recorded.get("device_ms") or {}).items() if k in case_ms}}
    else:
        return []
    from optimizer.profile.cuda import case_signals
    from optimizer.profile.roofline import compute_kind, peaks_for

    host = _case_host_ms(ctx, recorded, from_record)
    out: list[Finding] = []
    hf = host_finding([{"case": k, "device_ms": v, "host_ms": host.get(k)} for k, v in case_ms.items()], level="L1")
    if hf is not None:
        hf.summary += f" (recorded on {device}: {recorded.get('source', '?')})" if from_record else ""
        out.append(hf)
    peaks = peaks_for(device)
    if peaks is None:
        return out
    kind = compute_kind(tokens, ev.launches if ev else [])
    cases = {case_label(c): c for c in full_cases}
    rows = [
        {
            "case": label,
            "signals": case_signals(
                effective_ms(ms, host.get(label)),
                ctx.problem.flops(cases.get(label, {})),
                ctx.problem.bytes_moved(cases.get(label, {})),
                peaks,
                None,
                None,
                compute=kind,
            ),
        }
        for label, ms in case_ms.items()
        if label in cases
    ]
    if (lost := lost_case(rows, case_ms, host)) is not None:
        ctx.cache[keys.LOST_CASE] = lost
        ctx.cache[keys.LOST_ROOF] = lost_roof(rows, lost)
    found = roofline_finding(rows, level="L1") if len(rows) == len(case_ms) else None
    if found is not None:
        if any(host.get(k, 0.0) > v for k, v in case_ms.items()):
            alone = [
                case_signals(
                    ms,
                    ctx.problem.flops(cases[label]),
                    ctx.problem.bytes_moved(cases[label]),
                    peaks,
                    None,
                    None,
                    compute=kind,
                )
                for label, ms in case_ms.items()
                if label in cases
            ]
            fr = [
                max(v for v in (a.get("mem_fraction"), a.get("compute_fraction")) if isinstance(v, (int, float)))
                for a in alone
                if isinstance(a.get("mem_fraction"), (int, float))
                or isinstance(a.get("compute_fraction"), (int, float))
            ]
            found.summary += " (per call: the slower of device and host" + (
                f"; the kernel alone reaches {min(fr):.0%}-{max(fr):.0%} on the device)" if fr else ")")
        if from_record:
            found.summary += f" (recorded on {device}: {recorded.get('source', '?')})"
        out.append(found)
    return out


class TriageLevel:
    level: Level = "L1"

    def run(self, ctx: LadderContext) -> LevelResult:
        ev = ctx.evaluation
        cases = ctx.problem.cases_for(ctx.backend)
        feats = extract_features(
            ctx.source,
            launches=ev.launches if ev else [],
            cases=cases,
            input_dtypes=ctx.cache.get(keys.INPUT_DTYPES),
            torch_ops=ev.torch_compute_ops if ev else None,
        )
        ctx.cache[keys.FEATURES] = feats
        known, known_from = ctx.known_bottleneck()
        sigs = ctx.known_signatures()
        # the IR signatures are names L3 recorded, plain strings: pydantic checks them against the vocabulary
        symptoms = Symptoms.model_validate({"code_features": feats.tokens,
                                            "bottleneck_classes": [known] if known != "unknown" else [],
                                            "ir_signatures": sigs})
        text = f"{ctx.problem.name} kernels {' '.join(feats.kernels)}: {feats.text()}"
        refs = match_cards(ctx, symptoms, text, bottleneck=known)
        failures = {k: v for k, v in nonimproving_tries(ctx).items() if v}
        evidence = [
            EvidenceItem(
                level="L1",
                kind="code_features",
                reference=ctx.candidate.name,
                summary=f"{len(feats.tokens)} code features: {', '.join(feats.tokens)}",
                data={"features": feats.tokens},
            ),
            EvidenceItem(
                level="L1",
                kind="quick_match",
                reference=",".join(r.id for r in refs[:2]),
                summary="; ".join(
                    f"{r.id} ({r.score:.3f}, {len(r.matched_symptoms)} symptoms"
                    + (
                        ", recipe applies"
                        if r.applicable
                        else f", {r.applicability_note}"
                        if r.applicability_note
                        else ""
                    )
                    + ")"
                    for r in refs[:3]
                )
                or "no pattern card matched",
                data={"cards": [r.model_dump(include=_MATCH_FIELDS) for r in refs[:3]]},
            ),
        ]
        if known != "unknown":
            evidence.append(EvidenceItem(level="L1", kind="history", reference=known_from,
                                         summary=f"bottleneck {known} measured in {known_from}"))
        if failures:
            evidence.append(
                EvidenceItem(
                    level="L1",
                    kind="history",
                    reference=",".join(sorted(failures)),
                    summary="families that did not improve on this base: "
                    + ", ".join(f"{k} x{v}" for k, v in sorted(failures.items())),
                    data={"not_improved": failures},
                )
            )
        chosen, single, note = choose_family(
            ctx, refs, ("code:", "bottleneck:", "ir:"), bottleneck=known, by_score=True
        )
        code_hits = _specific(relevant(chosen, ("code:",))) if chosen else []
        localized = known != "unknown"
        why_loc = (f"bottleneck {known} known from {known_from}" if localized
                   else "no bottleneck known yet from measurement or IR (code features alone do not localize one)")
        agrees = chosen is not None and localized and f"bottleneck:{known}" in chosen.matched_symptoms
        justified = agrees and len(code_hits) >= 1
        if justified and chosen:
            why_just = (
                f"{chosen.id} addresses {known} and its pattern is in the code ({', '.join(code_hits)}); "
                f"{chosen.applicability_note}"
            )
        elif chosen and not localized:
            why_just = f"{chosen.id} ranks first, but no bottleneck is known to justify it"
        elif chosen:
            why_just = (f"{chosen.id} does not name the known bottleneck {known}" if not agrees
                        else f"{chosen.id} names {known} but no specific code feature of it is in the code")
        else:
            why_just = "no eligible card both addresses a known bottleneck and matches the code"
        tests = EscalationTests(localized=localized, single_family=single, justified=justified,
                                notes=f"(1) {why_loc}; (2) {note}; (3) {why_just}")
        evidence.append(EvidenceItem(level="L1", kind="bottleneck", reference=known, summary=why_loc,
                                     data={"class": known, "localized": localized, "source": "history"}))
        case = ctx.cache.get(keys.LAUNCH_CASE) or representative_case(ctx.problem, list(cases)) or {}
        findings = code_findings(
            feats,
            ev.launches if ev else [],
            hot_kernel=ctx.cache.get(keys.HOT_KERNEL),
            row_bytes=_row_bytes(ev),
            case_bytes=ctx.problem.bytes_moved(case) if case else None,
        )
        timed = _timing_findings(ctx, feats.tokens)
        roof = next((f for f in timed if f.cause == "at_roofline"), None)
        for f in timed:
            findings.append(f)
            evidence.append(EvidenceItem(level="L1", kind="roofline" if f is roof else "timing", reference="timing",
                                         summary=f"{f.summary} (the round's timing: "
                                         f"{f.refuting[0].detail if f.refuting else f.supporting[0].detail})"))
        # L1 stops on a cause when an earlier round measured this kernel, or (``early_stop``) when the cause is
        # structural and clear and the round's timing roofline shows headroom: the profilers could not change that
        # decision
        from_round = localized and known_from.startswith("round")
        step = causal_step(ctx, "L1", findings, may_stop=from_round or roof is not None,
                           measured=(known if from_round else "unknown", True) if roof is not None else None)
        if not from_round and step.tests is not None:
            ok, why = early_stop(step.decision, headroom_measured=roof is not None)
            step.tests = (
                step.tests.model_copy(update={"notes": f"{step.tests.notes}; stopped before profiling: {why}"})
                if ok
                else None
            )
            evidence.append(
                EvidenceItem(
                    level="L1",
                    kind="history",
                    reference="early_stop",
                    summary=("stop before profiling: " if ok else "escalate to profiling: ") + why,
                )
            )
        evidence.append(step.evidence("L1"))
        tests, chosen_final, best = merge_tests(step, tests, chosen if single else None, chosen if justified else None)
        cls = (
            known if known != "unknown" else CAUSE_CLASS.get(step.decision.cause, "unknown") if tests.passed else known
        )
        refs_out = ([step.family] if step.family else []) + [
            r for r in refs if not step.family or r.id != step.family.id
        ]
        return LevelResult(level="L1", evidence=evidence, bottleneck=cls, matched_cards=refs_out[:2],
                           tests=tests, chosen=chosen_final, best=best, inconclusive=not refs and not findings,
                           rationale=tests.notes, data={"bottleneck_source": "history", "features": feats.tokens},
                           findings=findings, decision=step.decision)

