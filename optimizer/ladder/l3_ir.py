"""L3 IR attribution through the IR engine (``optimizer.ir``): stages, pass changes, structural signatures.

The hot kernel (from L2, else the most launched one) is compiled with the exact specialization the
validation worker recorded (argument types, divisibility, constexprs, num_warps ...), for ``cuda:90`` (works
on a CPU-only machine) or Ascend. The analysed report is cached on disk by kernel source + specialization +
target + options, so an unchanged kernel is never recompiled for L3/L4 (also across sessions). Signatures that
indicate a problem are mapped to bottleneck classes and tied to kernel source lines.

Tests: (1) problem signatures exist in the hot kernel and map to a class (agreeing with L2's class when one
was measured); (2) ``choose_family`` over IR-signature tokens; (3) the chosen card cites a detected signature
that maps to source lines of the kernel.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

from kb.errors import LadderError, log_error
from kb.models import EscalationTests, EvidenceItem, Symptoms
from kb.vocab import BottleneckClass, Level
from optimizer.ir import SIGNATURE_CLASS
from optimizer.ladder import keys
from optimizer.ladder.cases import config_label, launch_configs
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.causes import ir_findings
from optimizer.ladder.residual import residual_evidence
from optimizer.ladder.select import choose_family, match_cards
from optimizer.ladder.types import LadderContext, LevelResult

log = logging.getLogger(__name__)

__all__ = ["IRLevel"]

#: launch configurations of one kernel compiled besides the diagnosed one (an autotuned kernel's config list)
MAX_CONFIGS = 8
#: compile workers started at once for them (each is one process, mostly single-threaded; leave a core for the rest)
CAPTURE_WORKERS = max(1, (os.cpu_count() or 2) - 1)

#: When several classes are present, the more specific one wins.
_PRIORITY: list[BottleneckClass] = [
    "occupancy_limited", "scalar_bound", "compute_bound", "memory_bound", "sync_bound", "latency_bound",
]


class IRLevel:
    level: Level = "L3"

    def run(self, ctx: LadderContext) -> LevelResult:
        try:
            report = ctx.ir_report()
        except (LadderError, OSError) as exc:  # toolchain missing, compile failure (ToolchainError / InvalidArgument
            # from the capture worker): the level yields nothing actionable; a bug is left to the engine's boundary
            reason = f"IR capture failed: {type(exc).__name__}: {exc}"[:600]
            tests = EscalationTests(localized=False, single_family=False, justified=False, notes=f"(1) {reason}")
            evidence = [EvidenceItem(level="L3", kind="ir_capture", summary=reason),
                        *residual_evidence(ctx, [], decided=False, unavailable=reason)]
            return LevelResult(level="L3", tests=tests, inconclusive=True, rationale=reason, evidence=evidence)
        problems = [s for s in report.signatures if s.name in SIGNATURE_CLASS]
        evidence = [
            EvidenceItem(
                level="L3",
                kind="ir_stages",
                reference=f"{report.kernel}@{report.target}",
                summary=f"{report.compiler} {report.compiler_version}: "
                + ", ".join(f"{s.stage} {s.lines} lines" for s in report.stages)
                + f"; {report.passes_total} pass snapshots"
                + (
                    f"; registers {report.resources.registers}, spills {report.resources.spill_stores_bytes or 0} B"
                    if report.resources
                    else ""
                ),
                data={"workdir": report.workdir, "options": report.options},
            )
        ]
        for s in report.signatures:
            evidence.append(
                EvidenceItem(
                    level="L3",
                    kind="ir_signature",
                    reference=s.name,
                    summary=f"{s.name} x{s.count} at {s.stage}"
                    + (f", introduced by {s.pass_introduced}" if s.pass_introduced else "")
                    + (f"; source lines {s.source_lines}" if s.source_lines else "")
                    + (f"; {s.detail}" if s.detail else ""),
                    data={
                        "count": s.count,
                        "stage": s.stage,
                        "pass": s.pass_introduced,
                        "lines": s.source_lines,
                        "class": SIGNATURE_CLASS.get(s.name),
                    },
                )
            )
        evidence += _config_evidence(ctx, report)
        measured, _ = ctx.known_bottleneck()
        classes = [SIGNATURE_CLASS[s.name] for s in problems]
        cls: BottleneckClass
        if measured != "unknown" and measured in classes:
            cls = measured
        else:
            cls = next((c for c in _PRIORITY if c in classes), "unknown")
        tied = [s for s in problems if s.source_lines]
        localized = (
            bool(problems) and cls != "unknown" and (measured == "unknown" or measured in classes or measured == cls)
        )
        feats = ctx.cache.get(keys.FEATURES)
        sig_names = [s.name for s in problems]
        symptoms = Symptoms(ir_signatures=sig_names, bottleneck_classes=[cls] if cls != "unknown" else [],
                            code_features=feats.tokens if feats else [])
        refs = match_cards(ctx, symptoms, " ".join(sig_names) + f" {cls}", bottleneck=cls) if problems else []
        chosen, single, note = (
            choose_family(ctx, refs, ("ir:",), bottleneck=cls, support=("bottleneck:", "code:"))
            if refs
            else (None, False, "no problem signature to match")
        )
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
        loop_loads = set(st.lines([a.node for a in st.accesses if a.op == "tl.load" and a.in_loop])) if st else None
        findings = ir_findings(report, block_range=st.block_range if st else True, loop_load_lines=loop_loads)
        accounts: tuple | BaseException | None = None
        if ctx.ir_target.startswith("cuda"):  # the static account of the gap (issue 30), every recorded configuration
            from optimizer.ladder.gap_account import account_findings, level_accounts, with_account

            try:
                accounts = level_accounts(ctx, report)
                loads = sorted({n for s in report.signatures if s.name.endswith("global_load") for n in s.source_lines})
                extra = account_findings(accounts[0], block_range=st.block_range if st else True, load_lines=loads)
                findings = with_account(findings, extra)
            except Exception as exc:  # noqa: BLE001 -- additive-evidence boundary: reported as account evidence below,
                # never the level's decision
                log_error(log, exc, "the L3 gap account", level=logging.INFO)
                accounts = exc
        step = causal_step(ctx, "L3", findings)
        if isinstance(accounts, tuple):
            from optimizer.ladder.gap_account import idle_sm_notes

            step.notes = idle_sm_notes(accounts[0])
        evidence.append(step.evidence("L3"))
        if accounts is not None:
            from optimizer.ladder.gap_account import account_evidence

            evidence += account_evidence(ctx, report, findings, step.decision, accounts=accounts)
        evidence += residual_evidence(
            ctx, accounts[0] if isinstance(accounts, tuple) else [], decided=step.decision.decided,
            unavailable="" if isinstance(accounts, tuple) else (
                f"the account failed: {type(accounts).__name__}" if accounts is not None
                else f"no static account for {ctx.ir_target}"))
        located = None
        if not problems and step.tests is None and isinstance(accounts, tuple):
            # no problem signature and no cause decided: an inefficiency the account proves may still localize
            from optimizer.ladder.gap_account import account_localization

            located = account_localization(ctx, accounts[0], findings, match_cards, choose_family)
            if located is not None:
                cls, refs, tests = located.cls, located.refs, located.tests()
                chosen, single, justified = located.chosen, located.single, located.justified
                evidence.append(EvidenceItem(level="L3", kind="bottleneck", reference=cls, summary=tests.notes[:800],
                                             data={"class": cls, "localized": True, "source": "gap_account",
                                                   "signals": located.signals}))
        tests, chosen_final, best = merge_tests(step, tests, chosen if single else None, chosen if justified else None)
        refs_out = ([step.family] if step.family else []) + [
            r for r in refs if not step.family or r.id != step.family.id
        ]
        return LevelResult(
            level="L3",
            evidence=evidence,
            bottleneck=cls,
            matched_cards=refs_out[:2],
            tests=tests,
            chosen=chosen_final,
            best=best,
            inconclusive=not problems and not step.decision.decided and located is None,
            rationale=tests.notes,
            findings=findings,
            decision=step.decision,
            data={
                "signatures": sig_names,
                "kernel": report.kernel,
                "target": report.target,
                # a class from the account alone is this level's, not a measured or IR class later levels read
                "bottleneck_source": "gap_account" if located is not None else "ir",
            },
        )


def _config_evidence(ctx: LadderContext, report: object) -> list[EvidenceItem]:
    """Every other recorded launch configuration of the diagnosed kernel (an autotuned kernel's configs, a kernel
    launched with several constexpr sets) compiled too: one evidence item naming the diagnosed configuration and
    the problem signatures of each, so a spill or an FMA dot that only some configs have is reported, not hidden
    behind the config that happened to be recorded first."""
    from optimizer.ir import capture_report
    from optimizer.ir.cached import hot_launch

    kernel = getattr(report, "kernel", "")
    launches = ctx.evaluation.launches if ctx.evaluation else []
    cfgs = launch_configs(launches, kernel)
    if len(cfgs) < 2:
        return []
    args = ctx._capture_args()
    diagnosed = hot_launch(launches, ctx.cache.get(keys.HOT_KERNEL), ctx.cache.get(keys.LOST_CASE),
                           prefer_budget=bool(args.get("prefer_budget")))
    label = config_label(diagnosed) if diagnosed else config_label(cfgs[0])
    rows = {label: sorted({s.name for s in getattr(report, "signatures", []) if s.name in SIGNATURE_CLASS})}
    from optimizer.ir.compile_cost import budget_note, per_thread

    # deterministic: the configurations within the compile budget, fewest values per thread first, up to MAX_CONFIGS;
    # the rest are named with why they were not compiled (never a timeout that depends on the machine's load)
    rest = sorted((r for r in cfgs if config_label(r) != label), key=lambda r: (per_thread(r) or 0.0, config_label(r)))
    skipped = {config_label(r): why for r in rest if (why := budget_note(r))}
    fit = [r for r in rest if config_label(r) not in skipped]
    others = fit[:MAX_CONFIGS]
    skipped |= {config_label(r): f"not compiled: over the {MAX_CONFIGS} configurations compiled per kernel"
                for r in fit[MAX_CONFIGS:]}

    def signatures(rec: dict) -> list[str]:
        key = f"{args['memo_key']}:config:{config_label(rec)}"
        rep = capture_report([rec], memo=ctx.cache, **{**args, "memo_key": key})
        return sorted({s.name for s in rep.signatures if s.name in SIGNATURE_CLASS})

    # each uncached configuration is one compile worker process: run them side by side (an autotuned matmul's eight
    # configs took 45-51 s of an H200/H100 round one after another); the phase clock times the whole block once
    workers = max(1, min(len(others), CAPTURE_WORKERS))
    with ctx.phases.time("ir_capture"), ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(signatures, rec) for rec in others]
    for rec, fut in zip(others, futures, strict=True):
        try:
            rows[config_label(rec)] = fut.result()
        except Exception as exc:  # noqa: BLE001 -- per-configuration boundary: one that does not compile is reported
            log_error(log, exc, f"the IR capture of {config_label(rec)}", level=logging.INFO)
            rows[config_label(rec)] = [f"compile failed: {type(exc).__name__}"]
    every = set.intersection(*(set(v) for v in rows.values())) if rows else set()
    some = sorted({x for v in rows.values() for x in v} - every)
    lost = ctx.cache.get(keys.LOST_CASE)
    why = (f" (the launch of case {lost}, which loses the most time to its roofline)"
           if diagnosed and lost and lost in (diagnosed.get("cases") or []) else "")
    summary = (f"{kernel}: {len(cfgs)} launch configurations, diagnosed {label}{why}; "
               + "; ".join(f"[{k}] {', '.join(v) or 'no problem signature'}" for k, v in rows.items()))
    if some:
        summary += f"; only in some configurations: {', '.join(some)}"
    if skipped:
        summary = (f"{len(skipped)} configuration(s) not compiled ("
                   + "; ".join(f"[{k}] {v}" for k, v in list(skipped.items())[:2]) + "); " + summary)
    return [EvidenceItem(level="L3", kind="ir_configs", reference=kernel, summary=summary[:1500],
                         data={"diagnosed": label, "configs": rows, "in_every": sorted(every), "in_some": some,
                               "not_compiled": skipped})]
