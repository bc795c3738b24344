"""The keys of ``LadderContext.cache``, in one place. The cache lives for a session (``optimizer.session``), so
per-candidate entries carry the candidate's ``source_sha``; the others are session-wide.

Session-wide:
- ``INPUT_DTYPES`` (list[str]): dtypes of the problem's inputs, set by the session / ``ladder diagnose``.
- ``LAUNCH_CASE`` (dict): the full-size case whose launches were dry-recorded (``evaluation.record_launches``).
- ``FEATURES`` (``optimizer.kernel.features.CodeFeatures``): L1's code features of the current candidate.
- ``HOT_KERNEL`` (str): the kernel ncu or torch.profiler put on top (L2); L1/L3 compile and judge that one.
- ``IR_CACHE_HITS`` (int): IR reports read back from the disk cache (``optimizer.ir.capture_report``).
- ``RECORDED_TIMING`` (dict): ``{"device", "case_ms": {case label: ms}, "source"}``, GPU times recorded earlier for
  this exact candidate source at the problem's full-size cases; a static diagnosis (no timing of its own) reads its
  roofline fractions from them (``ladder diagnose`` / the dry round, given a realistic-check record).
- ``LOST_CASE`` (str): the label of the timed case that loses the most time to its roofline (ms x (1 - fraction)),
  set by L1 from the round's timing; L3 compiles the launch record that case made (``optimizer.ir.hot_launch``).
- ``LOST_ROOF`` (dict): ``{"case", "fraction", "bound"}``: that case's roofline fraction and which roof (``memory``
  or ``compute``) it is measured against; L3's residual (``optimizer.ladder.residual``) reads the gap from it.

Per candidate (``key(sha)``):
- ``profile(sha)``: ``{"cases": [CudaProfileCase as JSON]}`` or ``{"error": reason}`` (L2, torch.profiler).
- ``ncu(sha)``: ``summarize_ncu`` figures, ``{"error": reason}``, or ``{}`` without ncu (L2).
- ``ascend(sha)``: case label -> msprof classification (L2 on Ascend).
- ``l2rows(sha)``: L2's per-case classifier rows that ``ladder.causes.profile_findings`` reads.
- ``account(sha)``: L2's measured account of the gap (``MeasuredAccount`` as JSON; GPU with ncu and
  ``settings.ncu_account``), which ``decide`` ranks causes by (``ladder.causes.account``).
- ``ir(sha)``: the hot kernel's ``optimizer.ir.IRReport`` (L3, L4).
- ``ir_prefetch(sha)``: the ``threading.Thread`` capturing that report in the background while L2 profiles
  (``LadderContext.prefetch_ir``); L3 joins it before reading the report.
"""

from __future__ import annotations

from optimizer.ir.cached import IR_CACHE_HITS

__all__ = ["FEATURES", "HOT_KERNEL", "INPUT_DTYPES", "IR_CACHE_HITS", "LAUNCH_CASE", "LOST_CASE", "LOST_ROOF",
           "RECORDED_TIMING",
           "account", "ascend", "ir", "ir_prefetch", "l2rows", "ncu", "profile"]

INPUT_DTYPES = "input_dtypes"
LAUNCH_CASE = "launch_case"
FEATURES = "features"
HOT_KERNEL = "hot_kernel"
RECORDED_TIMING = "recorded_timing"
LOST_CASE = "lost_case"
LOST_ROOF = "lost_roof"


def profile(sha: str) -> str:
    return f"profile:{sha}"


def ncu(sha: str) -> str:
    return f"ncu:{sha}"


def ascend(sha: str) -> str:
    return f"ascend:{sha}"


def account(sha: str) -> str:
    return f"account:{sha}"


def l2rows(sha: str) -> str:
    return f"l2rows:{sha}"


def ir(sha: str) -> str:
    return f"ir:{sha}"


def ir_prefetch(sha: str) -> str:
    return f"ir_prefetch:{sha}"
