"""Synthetic timing: noisy blocks, a timed case with per-role blocks, and an Evaluation holding such cases."""

from __future__ import annotations

import random
from pathlib import Path

from kb.models import TimingProtocol, Validation
from optimizer.harness.outcome import Evaluation


def blocks(ms: float, noise: float, n: int = 8, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [ms * (1 + rng.gauss(0, noise)) for _ in range(n)]


def timed_case(label: str, roles: dict[str, list[float]]) -> dict:
    stats = {r: {"median_ms": sorted(b)[len(b) // 2]} for r, b in roles.items()}
    return {"case": label, "stats": stats["candidate"], "reference_stats": None, "method": "cudagraph",
            "method_note": "", "blocks": roles, "role_stats": stats}


def timed_eval(cases: list[dict]) -> Evaluation:
    return Evaluation(candidate=Path("c.py"), backend="cuda", status="ok", reason="",
                      validation=Validation(passed=True), timing_cases=cases,
                      protocol=TimingProtocol(method="interleaved-blocks", blocks=8), device="NVIDIA H200")
