"""Recorded GPU timings beyond the realistic check: a session's baseline round and a timing-agreement re-time.

The realistic check (``benchmarks/realistic/_check.py --time``) records one flushed ``do_bench`` figure per case:
for a launcher whose host work outlasts its kernel that figure is the host's, and the kernel's own time is unknown.
Two other committed records separate them, per case:

- a session's ``trajectory.json``: round 0 is the initial candidate, timed with its case's method (CUDA graph replay
  for short kernels and host-bound launchers, else flushed do_bench: a device time either way) and ``host_ms``, the
  eager loop's wall time per call (``optimizer.harness.timing.host_wall_ms``);
- a timing-agreement file (``benchmarks/timing_agreement.py``): per problem the initial's ``initial_cudagraph_ms``
  (device time), ``initial_do_bench_ms`` and ``initial_host.wall_ms``.

``read(doc, source)`` turns either into ``kernel -> {"device"?, "case_ms", "device_ms", "host_ms", "source"}`` for the
ladder's ``keys.RECORDED_TIMING``. A record is only the kernel's when the source it timed is the problem's
``initial.py`` today: the session's ``round_00.py`` beside the trajectory must equal it, else the record is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["read", "same_source"]


def same_source(session_dir: str | Path | None, kernel: str) -> bool:
    """The session's initial (``round_00.py``, as committed: ``round_00.py.txt``) is the problem's ``initial.py``."""
    from benchmarks._data import read_text

    if not session_dir:
        return False
    initial = ROOT / "benchmarks" / "realistic" / kernel / "initial.py"
    if not initial.is_file():
        return False
    d = Path(session_dir)
    # a device call names its own working folder (/tmp/realistic/NAME/session); its files are committed under the
    # campaign folder
    dirs = [d if d.is_absolute() else ROOT / d, ROOT / "benchmarks" / "results" / "realistic" / "campaign" / kernel / "session"]
    for folder in dirs:
        for name in ("round_00.py.txt", "round_00.py"):
            try:
                return read_text(folder / name).strip() == initial.read_text().strip()
            except (OSError, KeyError):
                continue
    return False


def _trajectory(doc: dict[str, Any], source: str, path: Path | None) -> dict[str, dict[str, Any]]:
    name = (doc.get("problem") or {}).get("name")
    rounds = doc.get("rounds") or []
    cases = ((rounds[0].get("timing") or {}).get("cases") or []) if rounds else []
    if not name or not cases or path is None or not same_source(path.parent, name):
        return {}
    if not all(isinstance(c.get("ms"), (int, float)) for c in cases):
        return {}
    rec: dict[str, Any] = {"case_ms": {c["case"]: c["ms"] for c in cases}, "device_ms": {c["case"]: c["ms"] for c in cases},
                           "source": source}
    if all(isinstance(c.get("host_ms"), (int, float)) for c in cases):
        rec["host_ms"] = {c["case"]: c["host_ms"] for c in cases}
    if doc.get("device"):
        rec["device"] = doc["device"]
    return {name: rec}


def _agreement(doc: dict[str, Any], source: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in doc.get("rows") or []:
        name, cases = row.get("problem"), row.get("independent_cases") or {}
        if not name or not cases or not same_source((row.get("session") or {}).get("dir"), name):
            continue
        dev = {k: c.get("initial_cudagraph_ms") for k, c in cases.items()}
        host = {k: (c.get("initial_host") or {}).get("wall_ms") for k, c in cases.items()}
        flushed = {k: c.get("initial_do_bench_ms") for k, c in cases.items()}
        if not all(isinstance(v, (int, float)) for v in dev.values()):
            continue
        rec: dict[str, Any] = {"device_ms": dev, "source": source,
                               "case_ms": flushed if all(isinstance(v, (int, float)) for v in flushed.values()) else dict(dev)}
        if all(isinstance(v, (int, float)) for v in host.values()):
            rec["host_ms"] = host
        out[name] = rec
    return out


def read(doc: dict[str, Any], source: str, path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per kernel, what ``doc`` records (see the module doc); ``path`` is the file's logical path (a trajectory's
    session folder holds the source it timed). Empty for a document of neither form."""
    if isinstance(doc.get("rounds"), list) and isinstance(doc.get("problem"), dict):
        return _trajectory(doc, source, path)
    if isinstance(doc.get("rows"), list) and any(isinstance(r, dict) and "independent_cases" in r for r in doc["rows"]):
        return _agreement(doc, source)
    return {}
