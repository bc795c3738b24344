"""Per-pass dumps: split the worker's stderr into snapshots, count ops, diff adjacent passes.

The worker's stderr interleaves our stage markers, MLIR's "IR Dump Before <Pass>" snapshots and remarks.
Pass names come from the dump headers (never from a hard-coded list), so any Triton version works: 3.5
prints ``Inliner (inline)``, 3.9 ``InlinerPass: inline{...}``, an opt tool ``Inliner (inline)`` without scope.
Only "Before" snapshots are printed, so the IR after pass k is the snapshot before pass k+1 of the same
stage, and after the stage's last pass it is the stage output itself.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from optimizer.ir import patterns as P
from optimizer.ir.types import PassChange, PassSnapshot, Remark

__all__ = ["SnapStats", "classify", "count_ops", "features", "label_stages", "pass_changes", "parse_remarks",
           "snapshot_stats", "split_dump", "strip_remarks"]

#: Stages whose output is MLIR text comparable to the pass snapshots of the same pipeline.
MLIR_STAGES = frozenset({"source", "ttir", "ttgir", "ttadapter"})


def split_dump(text: str) -> tuple[list[PassSnapshot], list[Remark]]:
    """Snapshots (with stage, pass name, scope, internal step) and remarks (with the pass that emitted them)."""
    snaps: list[PassSnapshot] = []
    remarks: list[Remark] = []
    stage = ""
    bounds = list(P.BOUNDARY.finditer(text))
    current_pass: PassSnapshot | None = None

    def body_of(k: int) -> str:
        end = bounds[k + 1].start() if k + 1 < len(bounds) else len(text)
        return text[bounds[k].end() : end]

    if bounds:
        remarks += parse_remarks(text[: bounds[0].start()], stage="")
    for k, b in enumerate(bounds):
        line = b.group(0)
        body = body_of(k)
        if m := P.MARKER.match(line):
            stage = m["stage"] if m["what"] == "begin" else ""
            remarks += parse_remarks(body, stage=stage, pass_name=current_pass.pass_name if current_pass else None)
            current_pass = None if m["what"] == "end" else current_pass
            continue
        h = P.HEADER.match(line)
        if not h:
            continue
        if h["owner"]:  # "<Owner> internal IR Dump After: <Step>" -> a sub-step of the running pass
            owner = current_pass.pass_name if current_pass else h["owner"]
            snap = PassSnapshot(index=len(snaps), stage=stage or "unknown", pass_name=owner,
                                pass_argument=current_pass.pass_argument if current_pass else "",
                                scope="builtin.module", step=h["rest"].strip())
        else:
            r = P.HEADER_REST.match(h["rest"])
            name = r["name"] if r else h["rest"].split()[0]
            scope = "builtin.module"
            if r and r["op"] and r["op"] != "builtin.module":
                scope = f"{r['op']} @{r['sym']}" if r["sym"] else r["op"]
            snap = PassSnapshot(index=len(snaps), stage=stage or "unknown", pass_name=name,
                                pass_argument=(r["arg"] or r["arg2"] or "") if r else "", scope=scope)
            current_pass = snap
        clean, found = strip_remarks(body, stage=snap.stage, pass_name=snap.pass_name)
        remarks += found
        snaps.append(snap.model_copy(update={"text": clean}))
    return snaps, remarks


def label_stages(snaps: list[PassSnapshot], pipelines: list[dict]) -> list[PassSnapshot]:
    """Give each snapshot the stage of the pipeline (pass-manager run) that printed it.

    ``pipelines`` are the worker's records ``{"stage", "pipeline"}`` in run order. Their top-level pass
    arguments, concatenated, are aligned with the module-level snapshots (longest common subsequence: passes
    that run nested pipelines of their own print extra snapshots, e.g. a canonicalize inside
    OptimizeDotOperands). A stage starts at the first snapshot aligned to one of its pipeline's passes.
    Without that information (old Triton, no ``get_pipeline_str``) the stage is read from the IR (:func:`classify`).
    """
    top = [s for s in snaps if s.is_module and not s.step]
    expected = [(a, k) for k, p in enumerate(pipelines) for a in top_level_passes(p.get("pipeline", ""))]
    match = _align([s.pass_argument for s in top], [a for a, _ in expected])
    starts: dict[int, int] = {}
    for ti, ei in match:
        starts.setdefault(expected[ei][1], top[ti].index)
    if not pipelines or len(starts) != len(pipelines) or len(match) < 0.8 * len(expected):
        return [s.model_copy(update={"stage": classify(s.text)}) for s in snaps]
    bounds = sorted((idx, pipelines[k]["stage"]) for k, idx in starts.items())
    return [s.model_copy(update={"stage": next((st for b, st in reversed(bounds) if b <= s.index), bounds[0][1])})
            for s in snaps]


def _align(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of ``a`` and ``b`` (in order)."""
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if a[i] == b[j] else max(dp[i + 1][j], dp[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j] and dp[i][j] == dp[i + 1][j + 1] + 1:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def top_level_passes(pipeline: str) -> list[str]:
    """``builtin.module(inline{...}, tt.func(canonicalize), cse)`` -> ``["inline", "cse"]`` (module-level only)."""
    body = pipeline.strip()
    if not body.endswith(")") or "(" not in body:
        return []
    body = body[body.index("(") + 1 : -1]
    items, depth, cur = [], 0, ""
    for c in body:
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        if c == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        items.append(cur.strip())
    out = []
    for item in items:
        name = item.split("{", 1)[0]
        if "(" in name:  # an op-anchored nested pipeline, printed with a function scope
            continue
        out.append(name.strip())
    return out


def classify(text: str) -> str:
    """IR level of an MLIR text: ``llir`` (LLVM dialect), ``ttgir``, ``ttir`` or ``ttadapter`` (Ascend Linalg)."""
    if "llvm.func" in text:
        return "llir"
    if "ttg.num-warps" in text:
        return "ttgir"
    if "tt.func" in text:
        return "ttir"
    return "ttadapter" if "func.func" in text else "unknown"


def strip_remarks(body: str, *, stage: str, pass_name: str | None) -> tuple[str, list[Remark]]:
    """Remove remark blocks (message, echoed source line, caret) from a snapshot body."""
    if ": remark: " not in body and ": note: " not in body and ": warning: " not in body and ": error: " not in body:
        return body, []
    lines = body.split("\n")
    keep, found, i = [], [], 0
    while i < len(lines):
        m = P.REMARK.match(lines[i])
        if m:
            found.append(_remark(m, stage, pass_name))
            i += 3 if i + 2 < len(lines) and P.CARET.match(lines[i + 2]) else 1
            continue
        keep.append(lines[i])
        i += 1
    return "\n".join(keep), found


def parse_remarks(text: str, *, stage: str = "", pass_name: str | None = None) -> list[Remark]:
    return [_remark(m, stage, pass_name) for m in P.REMARK.finditer(text)]


def _remark(m, stage: str, pass_name: str | None) -> Remark:
    msg = m["msg"].strip()
    kind = next((k for k, rx in P.REMARK_KINDS.items() if rx.search(msg)), "other")
    return Remark(file=m["file"], line=int(m["line"]), column=int(m["col"]), severity=m["sev"], kind=kind,
                  message=msg, pass_name=pass_name, stage=stage)


def count_ops(text: str) -> Counter[str]:
    """MLIR op name -> occurrences (``tt.load``, ``ttg.convert_layout``, ``llvm.inline_asm`` ...)."""
    return Counter(P.MLIR_OP.findall(text))


def features(text: str, ops: Counter[str] | None = None) -> dict[str, int]:
    """Structural feature counts (``patterns.FEATURE_RULES``) plus the ``ttg.shared`` module attribute."""
    ops = count_ops(text) if ops is None else ops
    out: dict[str, int] = {}
    for name, (exact, prefixes, literals) in P.FEATURE_RULES.items():
        n = sum(ops.get(k, 0) for k in exact) + sum(text.count(lit) for lit in literals)
        if prefixes:
            n += sum(v for k, v in ops.items() if k.startswith(prefixes) and k not in exact)
        if n:
            out[name] = n
    if "ptr<3>" in text or "ttg.local_store" in text:
        if n := len(P.SHARED_STORE.findall(text)):
            out["shared_store"] = n
    if m := P.SHARED_ATTR.search(text):
        out["shared_bytes"] = int(m.group(1))
    return out


@dataclass(frozen=True)
class SnapStats:
    """Op histogram, features and a location-free fingerprint of one snapshot (computed once, shared)."""

    ops: Counter[str]
    features: dict[str, int]
    fingerprint: str


def snapshot_stats(text: str) -> SnapStats:
    ops = count_ops(text)
    return SnapStats(ops, features(text, ops), _fingerprint(text))


def _fingerprint(text: str) -> str:
    """Hash of the IR without location definitions (their numbering churns from pass to pass)."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#loc"))
    return hashlib.blake2b(body.encode(), digest_size=12).hexdigest()


def module_chain(snaps: Iterable[PassSnapshot]) -> list[PassSnapshot]:
    """The module-scoped snapshots (function-scoped ones show only one function)."""
    return [s for s in snaps if s.is_module]


def pass_changes(snaps: list[PassSnapshot], stages: dict[str, str],
                 stats: dict[int, SnapStats] | None = None) -> list[PassChange]:
    """One change per module-level pass (and internal step), diffing it against the next module snapshot.

    The chain runs across pipelines (the output of one stage is the input of the next), so the last pass of
    the TTIR pipeline is compared with the first snapshot of the TTGIR pipeline; the very last MLIR pass is
    compared with its stage output only when that is MLIR. Function-scoped passes between two module
    snapshots are folded into the change of the module-level pass before them. ``stats`` caches
    :func:`snapshot_stats` by snapshot index.
    """
    stats = {} if stats is None else stats

    def get(s: PassSnapshot) -> SnapStats:
        if s.index not in stats:
            stats[s.index] = snapshot_stats(s.text)
        return stats[s.index]

    chain = module_chain(snaps)
    out: list[PassChange] = []
    for pos, snap in enumerate(chain):
        nxt_index = chain[pos + 1].index if pos + 1 < len(chain) else None
        nested = [g.pass_name for g in snaps
                  if not g.is_module and snap.index < g.index and (nxt_index is None or g.index < nxt_index)]
        if nxt_index is not None:
            nxt = chain[pos + 1]
            after = get(nxt)
            step = nxt.step or (f"after {snap.step}" if snap.step else "")
        elif snap.stage in MLIR_STAGES and stages.get(snap.stage):
            after = snapshot_stats(stages[snap.stage])
            step = f"after {snap.step}" if snap.step else ""
        else:
            continue
        out.append(_change(snap, snap.stage, get(snap), after, step, nested))
    return out


def _change(snap: PassSnapshot, stage: str, before: SnapStats, after: SnapStats, step: str,
            nested: list[str]) -> PassChange:
    keys = set(before.features) | set(after.features)
    delta = {k: after.features.get(k, 0) - before.features.get(k, 0) for k in keys}
    return PassChange(
        index=snap.index,
        pass_name=snap.pass_name,
        pass_argument=snap.pass_argument,
        step=step,
        stage=stage,
        changed=before.fingerprint != after.fingerprint,
        added=dict((after.ops - before.ops).most_common()),
        removed=dict((before.ops - after.ops).most_common()),
        features_delta={k: v for k, v in sorted(delta.items()) if v},
        nested=nested,
    )
