"""Builders for synthesis tests (imported by the test modules): a deterministic hashing embedder, cards and trajectories."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from typing import Any

import numpy as np

from kb.models import (
    EscalationTests,
    EvidenceItem,
    PatternCard,
    ProblemRef,
    Round,
    RoundRewrite,
    StopDecision,
    Timing,
    TimingProtocol,
    Trajectory,
    Validation,
)

NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)
_STOP = {"the", "a", "an", "of", "to", "and", "in", "on", "per", "with", "by", "for", "is", "so", "it", "that"}


def fake_embed(texts: list[str]) -> np.ndarray:
    """Bag of hashed words, unit norm: similar wording -> high cosine. Deterministic across processes."""
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in re.findall(r"[a-z0-9]+", t.lower()):
            if w in _STOP:
                continue
            h = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "little")
            out[i, h % 256] += 1.0 if (h >> 8) & 1 else -1.0
    n = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(n, 1e-12)


def card(cid: str, title: str, summary: str, rewrite: str, **kw: Any) -> PatternCard:
    data: dict[str, Any] = {
        "id": cid, "title": title, "summary": summary, "backends": ["cuda"], "levels": ["L1", "L2"],
        "rewrite": {"description": rewrite},
    }
    data.update(kw)
    return PatternCard.model_validate(data)


def rnd(
    index: int,
    hypothesis: str,
    rewrite: str,
    *,
    family: str = "",
    speedup: float | None = 1.5,
    passed: bool | None = True,
    hack: list[str] | None = None,
    outcome: str | None = None,
    cited: list[str] | None = None,
    evidence: list[tuple[str, str, str]] | None = None,
    bottleneck: str = "unknown",
    diff: str = "",
) -> Round:
    validation = None if passed is None else Validation(passed=passed, hack_flags=hack or [])
    timing = None
    if speedup is not None:
        timing = Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=speedup)
    if outcome is None:
        outcome = "failed" if not passed or hack else ("improved" if (speedup or 1) > 1.03 else "regressed")
    return Round(
        index=index,
        levels_reached=["L1", "L2"],
        hypothesis=hypothesis,
        evidence=[EvidenceItem(level=lv, kind=k, summary=s) for lv, k, s in (evidence or [])],
        cards_cited=cited or [],
        rewrite=RoundRewrite(family=family or "unnamed", description=rewrite, diff=diff),
        comparison_target="previous",
        validation=validation,
        timing=timing,
        outcome=outcome,
        stop=StopDecision(level="L2", bottleneck=bottleneck, rationale="evidence localizes the hotspot",
                          tests=EscalationTests(localized=True, single_family=True, justified=True)),
    )


def traj(tid: str, rounds: list[Round], backend: str = "cuda", problem: str = "softmax") -> Trajectory:
    return Trajectory(id=tid, problem=ProblemRef(name=problem), backend=backend, rounds=rounds, created_at=NOW)


def make_families() -> list[PatternCard]:
    """Three small pattern families used across the synthesis tests."""
    return [
        card("rows-per-program", "Process several rows per program",
             "Give each program a block of rows so small rows do not leave the grid launch bound.",
             "Loop over ROWS rows inside one program; grid shrinks by ROWS.",
             symptoms={"bottleneck_classes": ["launch_bound", "latency_bound"]}),
        card("autotune-num-warps", "Autotune num_warps and block size",
             "Search num_warps, num_stages and BLOCK sizes with triton.autotune keyed on the problem shape.",
             "Wrap the kernel in triton.autotune over num_warps and BLOCK configs.",
             symptoms={"bottleneck_classes": ["occupancy_limited"]}),
        card("top2-pairwise-max", "Top-2 via pairwise max without argmax",
             "Replace argmax plus masked max by value-only max reductions counting ties.",
             "Compute m1 = tl.max, count maxima, second max by masking; no tl.argmax.",
             symptoms={"ir_signatures": ["multi_operand_reduction"], "code_features": ["tl.argmax"]},
             levels=["L1", "L3"]),
    ]
