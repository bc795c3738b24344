"""When a round counts as improved: speedup intervals from interleaved timing blocks, an A/A noise floor, the rule.

Measurement (``optimizer.harness.timing.time_interleaved``, GPU): per case, every kernel being compared (the
candidate, the initial candidate, the round's base) is timed in ``B`` blocks, interleaved ABAB... (the order
alternates per block), each block one ``triton.testing.do_bench`` (or ``do_bench_cudagraph``) call whose
samples give one block median. Adjacent blocks share the GPU's state (clocks, temperature, neighbours), so
the per-block ratio ``ref_median / cand_median`` cancels drift that separate measurements would not.

Intervals (this module, pure Python): a case's speedup is ``exp(median_b log(ref_b / cand_b))``; the geomean
speedup is ``exp(mean_cases of that)``. Its 95% interval is a percentile bootstrap (2000 resamples, fixed
seed, so a verdict is reproducible) that resamples blocks within each case independently.

Noise floor: at the start of a session the baseline is timed against itself (A/A, same protocol). Its
geomean interval ``[lo, hi]`` gives ``floor = exp(max(|log lo|, |log hi|)) - 1``: the relative difference that
two identical kernels can show.

The rule: with ``m = max(floor, improvement_threshold)`` and ``[lo, hi]`` the interval of the candidate's
geomean speedup over the round's base, a round is ``improved`` iff ``lo > 1 + m``, ``regressed`` iff
``hi < 1 / (1 + m)``, and ``neutral`` otherwise (also when no interval could be measured).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Literal

from kb.models import NoiseFloor, RatioCI

__all__ = ["BOOTSTRAP", "CONFIDENCE", "case_ratio", "geomean_ratio", "judge", "noise_floor", "rule_text"]

BOOTSTRAP = 2000
CONFIDENCE = 0.95
_SEED = 19


def _log_ratios(ref: Sequence[float], cand: Sequence[float]) -> list[float]:
    if len(ref) != len(cand) or not ref:
        raise ValueError(f"interleaved blocks must pair up: {len(ref)} reference vs {len(cand)} candidate medians")
    if any(not (x > 0) for x in [*ref, *cand]):
        raise ValueError("block medians must be positive milliseconds")
    return [math.log(r / c) for r, c in zip(ref, cand, strict=True)]


def _interval(samples: list[float]) -> tuple[float, float]:
    xs = sorted(samples)
    a = (1 - CONFIDENCE) / 2
    k_lo, k_hi = math.floor(a * (len(xs) - 1)), math.ceil((1 - a) * (len(xs) - 1))
    return xs[k_lo], xs[k_hi]


def case_ratio(ref: Sequence[float], cand: Sequence[float]) -> RatioCI:
    """Speedup of ``cand`` over ``ref`` (block medians, paired by block) with its bootstrap interval."""
    return geomean_ratio({"case": (ref, cand)})


def geomean_ratio(cases: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> RatioCI:
    """Geomean over cases of the per-case speedup ``(ref blocks, cand blocks)``, with a joint bootstrap interval."""
    if not cases:
        raise ValueError("no cases to compare")
    logs = [_log_ratios(ref, cand) for ref, cand in cases.values()]
    point = statistics.fmean(statistics.median(x) for x in logs)
    rng = random.Random(_SEED)
    boots = []
    for _ in range(BOOTSTRAP):
        boots.append(statistics.fmean(statistics.median(rng.choices(x, k=len(x))) for x in logs))
    lo, hi = _interval(boots)
    return RatioCI(point=math.exp(point), lo=math.exp(lo), hi=math.exp(hi), blocks=min(len(x) for x in logs))


def noise_floor(cases: Mapping[str, tuple[Sequence[float], Sequence[float]]], method: str = "") -> NoiseFloor:
    """The A/A floor from the baseline timed twice, interleaved (``(first run blocks, second run blocks)`` per case)."""
    aa = geomean_ratio(cases)
    floor = math.exp(max(abs(math.log(aa.lo)), abs(math.log(aa.hi)))) - 1
    return NoiseFloor(floor=floor, aa=aa, cases={k: case_ratio(*v) for k, v in cases.items()}, method=method)


def rule_text(floor: float | None, threshold: float) -> str:
    m = max(floor or 0.0, threshold)
    return (f"improved iff the 95% interval of the geomean speedup over the base is above {1 + m:.3f}, regressed iff "
            f"below {1 / (1 + m):.3f}, else neutral (margin = max(A/A noise floor "
            f"{'unmeasured' if floor is None else f'{floor:.2%}'}, threshold {threshold:.0%}))")


Verdict = Literal["improved", "regressed", "neutral"]
_BY_SIGN: dict[int, Verdict] = {1: "improved", -1: "regressed", 0: "neutral"}


def judge(vs_base: RatioCI | None, floor: float | None, threshold: float) -> Verdict:
    """``improved`` / ``regressed`` / ``neutral`` by the rule in the module docstring."""
    if vs_base is None or floor is None:
        return "neutral"
    return _BY_SIGN[vs_base.clears(max(floor, threshold))]
