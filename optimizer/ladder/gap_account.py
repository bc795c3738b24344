"""L3 evidence from the static account of the gap (``optimizer.ir.gap_account``): one ``gap_account`` item per
recorded launch configuration (up to ``MAX_ACCOUNTS``, the hot kernel's first) and one ``unexplained`` item per
significant finding that no decided or supported listed cause explains.

The account decides where a listed cause explains what it found (``ACCOUNT_CAUSES``: unvectorized loads or spills
at any accounted configuration become L3 findings for their cause); every other kind is reported, never forced
onto the nearest listed cause. Each configuration is compiled
once (``per_pass=False``) and the facts the account reads are cached on disk next to the IR reports
(``<cache_dir>/account/<ir_cache_key>.json``), so a re-run reads them back; the L3 report's own work directory is
reused when it still holds the stages.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from kb.errors import LadderError, log_error
from kb.models import EvidenceItem
from kb.vocab import BottleneckClass
from optimizer.ir.gap_account import GapAccount, GapFinding, account_launch, unexplained_findings
from optimizer.ladder.findings import EvidenceRef, Finding

log = logging.getLogger(__name__)

__all__ = [
    "ACCOUNT_CAUSES",
    "LOCALIZING_KINDS",
    "MAX_ACCOUNTS",
    "AccountLocalization",
    "account_localization",
    "MIN_TRAFFIC_SHARE",
    "account_evidence",
    "account_findings",
    "case_accounts",
    "idle_sm_notes",
    "launch_accounts",
    "level_accounts",
    "static_accounts",
    "with_account",
]

#: Account kinds whose significant finding at ANY accounted launch configuration supports a listed cause at L3
#: (first cause for a kernel with a block range, second for one element per program). The IR report compiles one
#: configuration; a defect that only another case's sizes expose (Liger's layer norm: 128-bit loads at N=4096,
#: 48 scalar 32-bit loads at N=3000, where the row stride is not a multiple of 16) must decide, not stay a footnote.
ACCOUNT_CAUSES: dict[str, tuple[str, ...]] = {
    "vector_width": ("unvectorized_access", "per_element_grid"),
    "register_spills": ("register_spills",),
}
#: confidence of an account-backed finding (the value is proven by the compile; its cost needs a GPU)
ACCOUNT_CONFIDENCE = 0.7

#: recorded launch configurations accounted per diagnosis (each is one compile when not cached)
MAX_ACCOUNTS = 4
#: a launch moving less than this share of the recorded launches' tensor bytes reports figures, not inefficiencies
MIN_TRAFFIC_SHARE = 0.25
_ELT = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "i1": 1}


def _bytes(rec: dict[str, Any]) -> float:
    """Tensor bytes one recorded launch configuration can touch (numel x element size, times its launches)."""
    sig = rec.get("signature") or {}
    per = sum(n * _ELT.get(str(sig.get(k, "*fp32"))[1:], 4) for k, n in (rec.get("numel") or {}).items())
    return float(per) * int(rec.get("launches", 1) or 1)
_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _compiled(
    rec: dict[str, Any], target: str, cache_dir: str | Path, workdir: str | None, timeout_s: float
) -> dict[str, Any]:
    """PTX, TTGIR and ptxas figures of one recorded launch: from the disk cache, the L3 work directory, or a compile."""
    from optimizer.ir.cached import ir_cache_key
    from optimizer.ir.capture import capture_kernel, load_capture

    options = {k: v for k, v in (rec.get("options") or {}).items() if k in _OPTIONS}
    key = ir_cache_key(rec, target, options)
    disk = Path(cache_dir) / "account" / f"{key}.json"
    if disk.is_file():
        try:
            return json.loads(disk.read_text())
        except ValueError:
            pass
    cap = None
    if workdir and (Path(workdir) / "result.json").is_file():
        try:
            cap = load_capture(workdir)
        except (LadderError, OSError, KeyError, ValueError):  # a stale or torn work directory: compile again
            cap = None
    if cap is None:
        cap = capture_kernel(f"{rec['file']}::{rec['kernel']}", target, rec.get("ir_args") or {}, options=options,
                             per_pass=False, timeout_s=timeout_s)
    r = cap.resources
    out = {"ptx": cap.stages.get("ptx", ""), "ttgir": cap.stages.get("ttgir", ""),
           "registers": r.registers if r else None,
           "shared": (r.shared_bytes if r and r.shared_bytes is not None else cap.metadata.get("shared")),
           "spills": r.spill_stores_bytes if r else None, "num_warps": cap.metadata.get("num_warps")}
    disk.parent.mkdir(parents=True, exist_ok=True)
    tmp = disk.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # configurations compile in threads
    tmp.write_text(json.dumps(out))
    os.replace(tmp, disk)
    return out


def launch_accounts(
    launches: list[dict[str, Any]],
    *,
    target: str,
    cache_dir: str | Path,
    hot: dict[str, Any] | None = None,
    hot_workdir: str | None = None,
    timeout_s: float = 300.0,
) -> tuple[list[GapAccount], list[str]]:
    """Accounts of the distinct recorded launch configurations (hot launch first), and notes on what failed."""
    from optimizer.ir.compile_cost import budget_note
    from optimizer.ladder.cases import config_label

    recs, seen, notes = [], set(), []
    for r in ([hot] if hot else []) + [r for r in launches if r.get("kernel") and "error" not in r]:
        lab = (r["kernel"], config_label(r), json.dumps(r.get("grid"), default=str))
        if lab in seen:
            continue
        seen.add(lab)
        if r is not hot and (why := budget_note(r)):  # deterministic: never a compile whose time is unbounded
            notes.append(f"{r['kernel']} [{config_label(r)}] {why}"[:300])
            continue
        recs.append(r)
    accounts = []
    traffic = {id(r): _bytes(r) for r in recs}
    total = sum(traffic.values()) or 1.0
    # each uncached configuration is one compile worker process: start them together (they ran one after another,
    # ~4 s each, inside an L3 round of a real kernel with four cases)
    from concurrent.futures import ThreadPoolExecutor

    todo = recs[:MAX_ACCOUNTS]
    with ThreadPoolExecutor(max_workers=max(1, min(len(todo), os.cpu_count() or 1))) as pool:
        futures = [
            pool.submit(_compiled, r, target, cache_dir, hot_workdir if r is hot else None, timeout_s) for r in todo
        ]
    for r, fut in zip(todo, futures, strict=True):
        try:
            c = fut.result()
            rec = {**r, "options": {"num_warps": c.get("num_warps") or 4, **(r.get("options") or {})}}
            acc = account_launch(rec, ptx=c["ptx"], ttgir=c["ttgir"], registers=c["registers"],
                                 shared=c["shared"], spill_bytes=c["spills"], config=config_label(r))
            share = traffic[id(r)] / total
            if share < MIN_TRAFFIC_SHARE:  # a small launch beside the hot one: its figures are not the gap
                for f in acc.findings:
                    f.significant = False
                acc.notes.append(f"{share:.0%} of the recorded launches' tensor bytes: figures only, no inefficiency")
            accounts.append(acc)
        except Exception as exc:  # noqa: BLE001 -- per-configuration boundary: one that fails is reported, not fatal
            error_id = log_error(log, exc, f"the gap account of {r.get('kernel')}", level=logging.INFO)
            notes.append(f"{r.get('kernel')}: account failed (error {error_id}): {type(exc).__name__}: {exc}"[:300])
    if len(recs) > MAX_ACCOUNTS:
        notes.append(f"{len(recs) - MAX_ACCOUNTS} further launch configuration(s) not accounted")
    return accounts, notes


def level_accounts(ctx: Any, report: Any) -> tuple[list[GapAccount], list[str]]:
    """The accounts of a ladder context's recorded launches (hot launch first); raises when recording fails."""
    from optimizer.ir.cached import hot_launch
    from optimizer.ladder import keys

    launches = ctx.evaluation.launches if ctx.evaluation else []
    hot = hot_launch(launches, ctx.cache.get(keys.HOT_KERNEL), ctx.cache.get(keys.LOST_CASE),
                     prefer_budget=ctx.backend == "interpreter")
    return launch_accounts(launches, target=ctx.ir_target, cache_dir=ctx.settings.cache_dir, hot=hot,
                           hot_workdir=getattr(report, "workdir", None))


def account_findings(accounts: list[GapAccount], *, block_range: bool = True,
                     load_lines: list[int] | None = None) -> list[Finding]:
    """L3 cause findings from the accounts (``ACCOUNT_CAUSES``): one per cause, citing every configuration that
    shows it. ``load_lines``: the kernel's global load lines (the IR's load signatures), which the finding ties to."""
    by: dict[str, list[tuple[GapAccount, GapFinding]]] = {}
    for a in accounts:
        for f in a.significant:
            causes = ACCOUNT_CAUSES.get(f.kind)
            if causes:
                by.setdefault(causes[0] if block_range or len(causes) == 1 else causes[1], []).append((a, f))
    out = []
    for cause, hits in by.items():
        refs = [
            EvidenceRef(
                level="L3",
                kind="gap_account",
                reference=f"{a.kernel} [{a.config}]",
                detail=f"grid {a.grid}: {f.line()}"[:400],
                source_lines=f.source_lines or list(load_lines or []),
            )
            for a, f in hits[:4]
        ]
        a0, f0 = hits[0]
        out.append(
            Finding(
                cause=cause,
                level="L3",
                confidence=ACCOUNT_CONFIDENCE,
                structural=True,
                supporting=refs,
                summary=f"{f0.kind} at {len(hits)} accounted configuration(s), e.g. {a0.kernel} [{a0.config}] "
                f"grid {a0.grid}: {f0.summary[:200]}",
            )
        )
    return out


def idle_sm_notes(accounts: list[GapAccount]) -> list[str]:
    """One line per accounted configuration whose largest estimated share is idle SMs (a significant
    ``wave_quantization``: a grid smaller than the GPU, or a last wave mostly empty): what the decided cause's family
    must not worsen. The rewrite engine's grid-fill guard (``optimizer.rewrite.grid_fill``) refuses a point that
    launches fewer programs there; the line says so beside the decision."""
    out = []
    for a in accounts:
        priced = [f for f in a.significant if f.share is not None]
        top = max(priced, key=lambda f: f.share or 0.0, default=None)
        if top is None or top.kind != "wave_quantization":
            continue
        out.append(f"{a.kernel} [{a.config}] grid {a.grid}: idle SMs are the largest static share (~{top.share:.0%}: "
                   f"{top.summary}); a rewrite that launches fewer programs there is refused (grid-fill guard)")
    return out


def with_account(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """``findings`` plus the account's, without the IR report's zero-confidence refutations of the same causes: "loads
    are vectorized" is one compiled configuration's fact, and scalar loads the account found at another case are not
    refuted by it."""
    seen = {f.cause for f in extra}
    return [f for f in findings if not (f.cause in seen and f.confidence == 0.0)] + extra


def account_evidence(ctx: Any, report: Any, findings: list[Any], decision: Any = None,
                     accounts: tuple[list[GapAccount], list[str]] | BaseException | None = None) -> list[EvidenceItem]:
    """The L3 ``gap_account`` and ``unexplained`` evidence of a ladder context (never raises). A significant finding
    is unexplained when no cause among ``decision``'s and those with confidence >= 0.45 in ``findings`` or the earlier
    levels' findings accounts for it. ``accounts``: what ``level_accounts`` returned (or raised) already."""
    try:
        if isinstance(accounts, BaseException):
            raise accounts
        got, notes = accounts if accounts is not None else level_accounts(ctx, report)
    except Exception as exc:  # noqa: BLE001 -- additive-evidence boundary: its failure is reported, never fatal
        if not isinstance(accounts, BaseException):  # one raised before was logged where it was caught
            log_error(log, exc, "the L3 gap account", level=logging.INFO)
        return [
            EvidenceItem(level="L3", kind="gap_account", summary=f"account failed: {type(exc).__name__}: {exc}"[:400])
        ]
    out = []
    for a in got:
        sig = a.significant
        head = f"{a.kernel} [{a.config}] grid {a.grid} on {a.device}: " + (
            f"{len(sig)} inefficienc{'y' if len(sig) == 1 else 'ies'}" if sig else "no inefficiency found statically"
        )
        out.append(EvidenceItem(level="L3", kind="gap_account", reference=a.kernel,
                                summary=(head + "; " + " | ".join(f.line() for f in sig or a.findings[:3]))[:1500],
                                data=a.model_dump(mode="json")))
    earlier = [f for r in getattr(ctx, "results", []) for f in r.findings]
    causes = {f.cause for f in [*earlier, *findings] if f.confidence >= 0.45}
    if decision is not None and getattr(decision, "decided", False):
        causes.add(decision.cause)
    for f in unexplained_findings(got, causes):
        out.append(EvidenceItem(level="L3", kind="unexplained", reference=f.kind,
                                summary=(f"{f.kernel}: {f.line()}; no listed cause explains it"
                                         + (f" (it would be {', '.join(f.explained_by)}, not supported here)"
                                            if f.explained_by else ""))[:800],
                                data=f.model_dump(mode="json")))
    if notes:
        out.append(EvidenceItem(level="L3", kind="gap_account", reference="notes", summary="; ".join(notes)[:800]))
    return out


def static_accounts(
    problem_path: str | Path, candidate: str | Path, *, settings: Any = None
) -> tuple[list[GapAccount], dict[str, Any]]:
    """The accounts of a candidate without the ladder: its launches at the representative case, recorded without
    executing a kernel (as ``ladder diagnose --backend interpreter`` records them), each compiled for cuda:90."""
    from optimizer.harness.evaluation import record_launches
    from optimizer.harness.problem import load_problem
    from optimizer.ladder.cases import representative_case
    from optimizer.settings import LadderSettings

    settings = settings or LadderSettings()
    prob = load_problem(problem_path)
    launches, note, case = record_launches(prob, candidate, settings, case=representative_case(prob))
    if not launches:
        raise RuntimeError(f"no launch recorded: {note}")
    from optimizer.ir.cached import hot_launch

    accounts, notes = launch_accounts(launches, target=settings.ir_target or "cuda:90", cache_dir=settings.cache_dir,
                                      hot=hot_launch(launches, prefer_budget=True))
    return accounts, {"case": case, "notes": notes + ([note] if note else [])}


def case_accounts(
    problem_path: str | Path, candidate: str | Path, *, settings: Any = None
) -> dict[str, list[GapAccount]]:
    """The accounts of a candidate at EVERY full-size case of its problem (case label -> accounts): programs vs SMs,
    predicated lanes and masks change with the sizes, and a case whose block constexprs differ compiles anew (the
    facts are cached per compile). One dry launch record per case, no kernel runs."""
    from optimizer.harness.evaluation import record_launches
    from optimizer.harness.problem import case_label, load_problem
    from optimizer.ir.cached import hot_launch
    from optimizer.settings import LadderSettings

    settings = settings or LadderSettings()
    prob = load_problem(problem_path)
    out: dict[str, list[GapAccount]] = {}
    for case in prob.cases or prob.smoke_cases:
        launches, note, _ = record_launches(prob, candidate, settings, case=case)
        if not launches:
            continue
        out[case_label(case)], _ = launch_accounts(launches, target=settings.ir_target or "cuda:90",
                                                   cache_dir=settings.cache_dir,
                                                   hot=hot_launch(launches, prefer_budget=True))
    return out


#: Account kinds that no listed cause explains but that still localize L3 when the IR shows no problem signature and
#: no cause is decided: the compile proves the inefficiency (instruction issue against the memory floor, masked-off
#: lanes), so a card whose symptoms cite it (profile signal ``account_<kind>``) and whose recipe applies may be chosen
#: for it. Value: the bottleneck class the inefficiency shows as.
LOCALIZING_KINDS: dict[str, BottleneckClass] = {"issue_bound": "compute_bound", "predicated_lanes": "latency_bound"}


class AccountLocalization:
    """L3's class-based tests from the static account (``account_localization``)."""

    def __init__(self, cls: BottleneckClass, signals: list[str], findings: list[GapFinding], refs: list[Any],
                 chosen: Any, single: bool, note: str) -> None:
        self.cls, self.signals, self.findings, self.refs = cls, signals, findings, refs
        self.chosen, self.single, self.note = chosen, single, note

    @property
    def justified(self) -> bool:
        return bool(self.chosen) and any(f"profile:{s}" in self.chosen.matched_symptoms for s in self.signals)

    def tests(self) -> Any:
        from kb.models import EscalationTests

        kinds = ", ".join(f"{f.kind} ({f.kernel}: {f.summary[:120]})" for f in self.findings[:2])
        why_just = (
            f"{self.chosen.id} cites "
            f"{', '.join(s for s in self.signals if f'profile:{s}' in self.chosen.matched_symptoms)}"
            if self.justified
            else "no card cites the account's inefficiency"
        )
        return EscalationTests(localized=True, single_family=self.single, justified=self.justified,
                               notes=f"(1) no problem signature, but the static account finds {kinds}, which no listed "
                                     f"cause explains -> {self.cls}; (2) {self.note}; (3) {why_just}")


def account_localization(ctx: Any, accounts: list[GapAccount], findings: list[Finding],
                         match: Any, choose: Any) -> AccountLocalization | None:
    """The account's unexplained ``LOCALIZING_KINDS`` findings as L3 symptoms (profile signals ``account_<kind>``),
    the cards matched on them and the family chosen among those citing them (``match``/``choose``: the level's
    ``match_cards``/``choose_family``); None when the account names no such inefficiency."""
    from kb.models import Symptoms

    earlier = [f for r in getattr(ctx, "results", []) for f in r.findings]
    causes = {f.cause for f in [*earlier, *findings] if f.confidence >= 0.45}
    hits = [f for f in unexplained_findings(accounts, causes) if f.kind in LOCALIZING_KINDS]
    if not hits:
        return None
    signals = list(dict.fromkeys(f"account_{f.kind}" for f in hits))
    cls = LOCALIZING_KINDS[hits[0].kind]
    from optimizer.ladder import keys

    feats = ctx.cache.get(keys.FEATURES)
    symptoms = Symptoms(profile_signals=signals, bottleneck_classes=[cls],
                        code_features=feats.tokens if feats else [])
    refs = match(ctx, symptoms, " ".join(signals) + f" {cls}", bottleneck=cls)
    chosen, single, note = (choose(ctx, refs, ("profile:",), bottleneck=cls, support=("code:",)) if refs
                            else (None, False, "no card matches the account's inefficiency"))
    return AccountLocalization(cls, signals, hits, refs, chosen, single, note)
