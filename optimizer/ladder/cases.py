"""Which case a static diagnosis reads: a rule over the problem's cases, never their order in ``CASES``.

Static L1 and L3 read the launches of ONE full-size case recorded without executing a kernel (grids, constexprs,
divisibility; ``evaluation.record_launches``). Reading ``CASES[0]`` made the verdict depend on how the problem
lists its cases (putting a 128k-column case first turned "undecided" into ``register_spills``). The rule here:
the case moving the most bytes (``bytes_moved``, else ``flops``, else the product of its integer sizes) among
those the dry record can allocate (``DRY_RECORD_MAX_BYTES``; none fits: the smallest), ties broken by the case's
sorted items -- the case the GPU's time is spent on, whatever the list order.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from kb.errors import log_error

log = logging.getLogger(__name__)

__all__ = ["HEADROOM_RULE", "RULE", "autotuned_note", "config_label", "headroom_case", "launch_configs",
           "representative_case"]

RULE = "the largest case by bytes moved that a dry record can hold (order of CASES ignored)"
HEADROOM_RULE = ("the case furthest from its roofline in the recorded GPU times that a dry record can hold "
                 "(order of CASES ignored)")


def _size(problem: Any, case: dict[str, Any]) -> float:
    for fn in ("bytes_moved", "flops"):
        try:
            v = getattr(problem, fn)(case)
        except Exception as exc:  # noqa: BLE001 -- user-code boundary: a problem's size hook that fails on a case
            # gives no size
            log_error(log, exc, f"the problem's {fn} hook", level=logging.DEBUG)
            v = None
        if v:
            return float(v)
    ints = [v for v in case.values() if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return float(math.prod(ints)) if ints else 0.0


def _canon(case: dict[str, Any]) -> str:
    return repr(sorted((str(k), repr(v)) for k, v in case.items()))


def representative_case(problem: Any, cases: list[dict[str, Any]] | None = None,
                        cap_bytes: float | None = None) -> dict[str, Any] | None:
    """The case a static diagnosis records (see the module docstring) among ``cases`` (default: the problem's
    full-size cases, else its smoke cases); None when there is none."""
    if cap_bytes is None:
        from optimizer.harness.evaluation import DRY_RECORD_MAX_BYTES

        cap_bytes = DRY_RECORD_MAX_BYTES
    cases = list(
        cases if cases is not None else getattr(problem, "cases", None) or getattr(problem, "smoke_cases", None) or []
    )
    if not cases:
        return None
    sized = [(c, _size(problem, c)) for c in cases]

    def bytes_of(c: dict[str, Any]) -> float:
        try:
            return float(problem.bytes_moved(c) or 0)
        except Exception as exc:  # noqa: BLE001 -- user-code boundary: the problem's bytes_moved hook
            log_error(log, exc, "the problem's bytes_moved hook", level=logging.DEBUG)
            return 0.0

    fits = [(c, s) for c, s in sized if bytes_of(c) <= cap_bytes]
    if fits:
        return max(fits, key=lambda cs: (cs[1], _canon(cs[0])))[0]
    return min(sized, key=lambda cs: (bytes_of(cs[0]), _canon(cs[0])))[0]


def headroom_case(problem: Any, case_ms: dict[str, float], device: str,
                  cap_bytes: float | None = None) -> tuple[dict[str, Any], float] | None:
    """With GPU times recorded for this exact source (case label -> ms on ``device``): the case with the lowest
    roofline fraction among those a dry record can hold, and that fraction -- a static diagnosis then reads the
    launches where the time is lost, not the biggest case (a row kernel at 85% of its roofline on a 14k-wide row and
    52% on an 11k-wide one, whose block wastes a third of its lanes, is diagnosed at the 11k row). None when a case
    has no time, the device's peaks are unknown, or no recorded case fits (the caller falls back to
    ``representative_case``)."""
    from optimizer.harness.problem import case_label
    from optimizer.profile.roofline import peaks_for, roofline_fraction

    if cap_bytes is None:
        from optimizer.harness.evaluation import DRY_RECORD_MAX_BYTES

        cap_bytes = DRY_RECORD_MAX_BYTES
    peaks = peaks_for(device)
    if peaks is None:
        return None
    scored = []
    for c in getattr(problem, "cases", None) or []:
        ms = case_ms.get(case_label(c))
        try:
            flops, moved = problem.flops(c), problem.bytes_moved(c)
        except Exception as exc:  # noqa: BLE001 -- user-code boundary: a problem's size hook that fails gives this
            # case no fraction
            log_error(log, exc, "the problem's size hooks", level=logging.DEBUG)
            continue
        frac = roofline_fraction(flops, moved, ms, peaks, compute="tensor") if ms else None
        if frac is not None and float(moved or 0) <= cap_bytes:
            scored.append((frac, _canon(c), c))
    if not scored:
        return None
    frac, _, case = min(scored, key=lambda t: (t[0], t[1]))
    return case, frac


def config_label(rec: dict[str, Any]) -> str:
    """``BLOCK_M=64, num_warps=4, ...`` of one recorded launch configuration."""
    consts = {k: v for k, v in (rec.get("constexprs") or {}).items() if not isinstance(v, bool)}
    opts = {
        k: v for k, v in (rec.get("options") or {}).items() if k in ("num_warps", "num_stages", "num_ctas", "maxnreg")
    }
    return ", ".join(f"{k}={v}" for k, v in [*sorted(consts.items()), *sorted(opts.items())])


def launch_configs(launches: list[dict[str, Any]], kernel: str) -> list[dict[str, Any]]:
    """The distinct recorded launch configurations (constexprs + options) of ``kernel``, most launched first: an
    autotuned kernel's dry record holds every config the autotuner tried, the kept one launched again."""
    seen: dict[str, dict[str, Any]] = {}
    for r in launches:
        if r.get("kernel") == kernel and "error" not in r:
            seen.setdefault(config_label(r), r)
    return sorted(seen.values(), key=lambda r: -int(r.get("launches", 1)))


def autotuned_note(launches: list[dict[str, Any]]) -> str:
    """Which configuration a static diagnosis reads when a kernel was recorded in several (autotuned or launched
    with several constexpr sets); empty when every kernel has one."""
    out = []
    for name in dict.fromkeys(str(r.get("kernel")) for r in launches if r.get("kernel")):
        cfgs = launch_configs(launches, name)
        if len(cfgs) > 1:
            out.append(
                f"{name}: {len(cfgs)} launch configurations recorded; L1/L3 diagnose the one launched most "
                f"({config_label(cfgs[0])}; with @triton.autotune on the CPU, the config the dry autotuner keeps, "
                f"its first), L3 compiles every configuration and reports their signatures"
            )
    return "; ".join(out)
