"""The suite result directory's format and the pure functions the runner and the report share.

Layout of a result directory (``runner.py --out DIR``)::

    DIR/runs.jsonl                  one line per runner invocation: provenance, arguments, device ceilings
    DIR/<op>/result.json            the operator's state and results (written atomically after each phase)
    DIR/<op>/session/               the optimizer session: round_NN.py.txt, best.py.txt, trajectory.json
    DIR/<op>/measure_times.jsonl    raw measurements (eager, initial, best per case) from _measure.py
    DIR/<op>/measure_compile.jsonl  raw torch.compile measurements
    DIR/report.md, report.json, fig_*.png   written by report.py

``result.json`` holds ``status`` (running | done | failed | error), ``backend``, ``attempts``, ``session`` (a
compact summary of the trajectory: rounds, levels, outcomes, best round), ``cases`` (per case: flops, bytes,
dtype and the eager / torch.compile / initial / best medians in ms), ``measure`` and ``compile`` (phase status),
and ``provenance``. Nothing here imports torch or pydantic: the report runs on plain JSON.

Candidate sources are results, not code: at rest (after ``unpack`` and after a run) a session's ``*.py`` files
are stored as ``*.py.txt`` (``sources_as_data``), so neither linters, test collection nor line counts take them
for the project's code; the runner turns them back into ``.py`` (``sources_as_code``) before it resumes.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _data  # noqa: E402  (benchmarks/_data.py: results read the same way packed or unpacked)

LEVELS = ("L1", "L2", "L3", "L4")


@dataclass(frozen=True)
class Peaks:
    """Ceilings for roofline figures: bytes/s of HBM, dense FLOP/s by kind of arithmetic."""

    name: str
    hbm_bytes_per_s: float
    fp32_flops: float  # CUDA-core fp32 (non-matmul arithmetic)
    tf32_flops: float  # tensor-core tf32 (fp32 matmuls as Triton's tl.dot runs them by default)
    half_flops: float  # tensor-core bf16 / fp16
    source: str


#: NVIDIA H200 SXM datasheet figures (dense, no sparsity), the same numbers /work/.library/device/H200.md cites:
#: 4.8 TB/s HBM3e; bf16/fp16 tensor ~989 TFLOP/s; tf32 ~494; fp32 ~67. optimizer/profile/roofline.py uses them too.
H200_DATASHEET = Peaks("H200 datasheet", 4.8e12, 67e12, 494e12, 989e12,
                       "NVIDIA H200 SXM datasheet: 4.8 TB/s HBM3e, dense bf16/fp16 989, tf32 494, fp32 67 TFLOP/s")

#: Measured on this workplace's H200s (KINDS.md, 2026-10-28 and 2026-11-04): a device-to-device copy moved ~4.3 TB/s
#: (read + written); an 8192^3 bf16 matmul ran at 769-798 TFLOP/s on random data. Used only when a run did not
#: measure its own ceilings (runner.py measures them at the start of every CUDA invocation).
H200_MEASURED_HERE = Peaks("H200 measured here (KINDS.md)", 4.3e12, 67e12, 0.8 * 494e12, 790e12,
                           "KINDS.md: D2D copy ~4.3 TB/s; 8192^3 bf16 matmul 769-798 TFLOP/s on random data "
                           "(tf32 scaled by the same 0.8; fp32 left at the datasheet figure)")


def peaks_from_ceilings(ceilings: dict[str, Any] | None) -> Peaks | None:
    """Peaks built from a run's measured ceilings (copy GB/s, bf16 TFLOP/s); None if the run measured none."""
    if not ceilings or not ceilings.get("copy_gbps") or not ceilings.get("bf16_tflops"):
        return None
    bw, half = float(ceilings["copy_gbps"]) * 1e9, float(ceilings["bf16_tflops"]) * 1e12
    scale = half / H200_DATASHEET.half_flops
    return Peaks("measured in this run", bw, H200_DATASHEET.fp32_flops, H200_DATASHEET.tf32_flops * scale, half,
                 f"device-to-device copy {ceilings['copy_gbps']} GB/s; 8192^3 bf16 matmul {ceilings['bf16_tflops']} TFLOP/s")


#: name parts of problems whose flops are matrix products (suite: ``*matmul*``; real kernels: gemm, split-k,
#: attention)
TENSOR_CORE_WORDS = ("matmul", "gemm", "splitk", "attention")


def uses_tensor_cores(op: str) -> bool:
    """Operators whose work is a matrix product (their flops run on tensor cores)."""
    return any(w in op for w in TENSOR_CORE_WORDS)


def floors_ms(op: str, case: dict[str, Any], flops: float | None, nbytes: float | None, peaks: Peaks) -> tuple[float | None, float | None]:
    """(compute floor ms, memory floor ms) of one case under ``peaks``."""
    if uses_tensor_cores(op):
        rate = peaks.half_flops if str(case.get("dtype", "float32")) in ("bfloat16", "float16") else peaks.tf32_flops
    else:
        rate = peaks.fp32_flops
    c = flops / rate * 1e3 if flops else None
    m = nbytes / peaks.hbm_bytes_per_s * 1e3 if nbytes else None
    return c, m


def roofline(op: str, case: dict[str, Any], flops: float | None, nbytes: float | None, ms: float | None,
             peaks: Peaks) -> dict[str, Any]:
    """Floor ms, whether the case is memory-bound, and the fraction of the floor that ``ms`` reaches."""
    c, m = floors_ms(op, case, flops, nbytes, peaks)
    vals = [v for v in (c, m) if v is not None]
    floor = max(vals) if vals else None
    return {"floor_ms": floor, "memory_bound": (m is not None and (c is None or m >= c)),
            "fraction": (floor / ms) if (floor and ms and ms > 0) else None}


def geomean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in vals) / len(vals)) if vals else None


def median(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.median(vals) if vals else None


# ------------------------------------------------------------------------------------------------- io ---
def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (a killed runner never leaves half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object at the logical ``path`` (on disk or in a campaign archive, ``benchmarks/_data.py``)."""
    try:
        return json.loads(_data.read_text(path))
    except (OSError, json.JSONDecodeError):
        return None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        lines = _data.read_text(path).splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a killed process
            continue
    return out


def append_jsonl(path: Path, rec: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() and _data.exists(path):  # a packed log: written out first, so the append keeps its lines
        path.write_bytes(_data.read_bytes(path))
    with open(path, "a") as f:
        f.write(json.dumps(rec, default=str) + "\n")


def load_results(out: Path) -> dict[str, dict[str, Any]]:
    """Every ``<op>/result.json`` under ``out`` (packed or not), by operator."""
    res = {}
    for p in _data.glob(Path(out), "*/result.json"):
        r = read_json(p)
        if r and r.get("op"):
            res[r["op"]] = r
    return res


# ---------------------------------------------------------------------------------------- trajectory ---
def round_level(r: dict[str, Any]) -> str | None:
    """The level a round acted on: where the ladder stopped, else the highest level it reached."""
    if r.get("stop"):
        return r["stop"].get("level")
    lv = r.get("levels_reached") or []
    return lv[-1] if lv else None


def summarize_trajectory(t: dict[str, Any]) -> dict[str, Any]:
    """A compact, JSON-only summary of a ``kb.models.Trajectory`` dump (what the report's accounting needs)."""
    rounds = []
    for r in t.get("rounds", []):
        timing = r.get("timing") or {}
        rounds.append({
            "index": r["index"], "outcome": r["outcome"], "levels": r.get("levels_reached") or [],
            "stop_level": (r.get("stop") or {}).get("level"), "bottleneck": (r.get("stop") or {}).get("bottleneck"),
            "family": (r.get("rewrite") or {}).get("family"), "speedup": timing.get("geomean_speedup"),
            "passed": (r.get("validation") or {}).get("passed"), "duration_s": round(float(r.get("duration_s") or 0), 2),
            "failure": ((r.get("validation") or {}).get("failure_reason") or "")[:300],
            "case_ms": {c["case"]: c.get("ms") for c in timing.get("cases", [])},
            "phase_s": r.get("phase_s") or {}, "vs_base": timing.get("vs_base"),
        })
    best = t.get("best_round")
    raw = {r["index"]: r for r in t.get("rounds", [])}
    best_r = next((r for r in rounds if r["index"] == best), None) if best is not None else None
    reached = [lv for r in rounds for lv in r["levels"]]
    return {
        "id": t.get("id"), "device": t.get("device", ""), "finished": bool(t.get("finished")),
        "rounds_run": max(0, len(rounds) - 1), "rounds": rounds, "best_round": best,
        "best_level": ("baseline" if best == 0 else round_level(raw[best])) if best_r else None,
        "best_family": best_r["family"] if best_r else None,
        "max_level": max(reached, key=LEVELS.index) if reached else None,
        "session_speedup": best_r["speedup"] if best_r else None,
        "initial_ms": t.get("initial_ms"), "best_ms": t.get("best_ms"),
        "baseline_passed": bool(rounds and rounds[0]["passed"]),
        "noise_floor": (t.get("noise_floor") or {}).get("floor"),
        "selection": t.get("selection"),
        "unseen": {k: (t.get("unseen") or {}).get(k) for k in ("passed", "seen_speedup", "unseen_speedup", "kept_fraction", "flags")}
        if t.get("unseen") else None,
        "shared_gpu": bool((t.get("timing_env") or {}).get("shared_gpu")),
    }


# ------------------------------------------------------------------------------------------ pack/unpack ---
def _keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(info.name).parts
    if ("ir" in parts or "__pycache__" in parts or info.name.endswith((".tmp", ".request.json"))
            or parts[-1] == _data.ARCHIVE):  # a packed campaign's archive stays where it is: the pack carries what is new
        return None
    return info


def pack(out: Path, dest: Path) -> Path:
    """The result dir (without IR dumps) as one tar.gz, written atomically."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for p in sorted(out.iterdir()):
            if p.resolve() not in (dest.resolve(), tmp.resolve()):
                tar.add(p, arcname=p.name, filter=_keep)
    os.replace(tmp, dest)
    return dest


SOURCE_DATA_SUFFIX = ".txt"  # round_03.py <-> round_03.py.txt


def _session_dirs(out: Path) -> Iterable[Path]:
    return (d for d in out.rglob("*") if d.is_dir() and d.name in ("session", "sessions"))


def sources_as_data(out: Path) -> int:
    """Rename every candidate source ``*.py`` under a session folder of ``out`` to ``*.py.txt``; returns the count."""
    moved = [p for d in _session_dirs(out) for p in d.rglob("*.py")]
    for p in moved:
        os.replace(p, p.with_name(p.name + SOURCE_DATA_SUFFIX))
    return len(moved)


def sources_as_code(out: Path) -> int:
    """The inverse of ``sources_as_data``: ``*.py.txt`` back to ``*.py`` so a resumed session can import them."""
    moved = [p for d in _session_dirs(out) for p in d.rglob("*.py" + SOURCE_DATA_SUFFIX)]
    for p in moved:
        os.replace(p, p.with_name(p.name.removesuffix(SOURCE_DATA_SUFFIX)))
    return len(moved)


def unpack(src: Path, out: Path) -> int:
    """Restore a packed result dir into ``out`` (members may not leave it); returns the number of files.

    Operator folders and reports are replaced by the packed ones; the append-only logs at the top
    (``runs.jsonl``, ``ceilings.jsonl``) are merged line by line, so packs from runs made in parallel (one per
    GPU) can be unpacked one after another without losing either run's provenance. Candidate sources land as
    data (``sources_as_data``), whether the pack holds them as ``.py`` or ``.py.txt``.
    """
    out.mkdir(parents=True, exist_ok=True)
    logs = {p.name: _data.read_text(p).splitlines() for p in _data.glob(out, "*.jsonl")}  # packed ones too
    with tarfile.open(src, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        tar.extractall(out, members=members, filter="data")
    for name, before in logs.items():
        if not any(m.isfile() and m.name == name for m in members):
            continue  # not in this pack: the log stays as it was
        after = (out / name).read_text().splitlines()
        merged = before + [ln for ln in after if ln not in set(before)]
        tmp = out / (name + ".tmp")
        tmp.write_text("".join(ln + "\n" for ln in merged if ln.strip()))
        os.replace(tmp, out / name)
    sources_as_data(out)
    return sum(1 for m in members if m.isfile())
