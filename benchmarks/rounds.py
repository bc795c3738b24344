"""Where a round's time goes: per-phase median / p90 and round wall time over trajectories (``ladder bench rounds``).

Reads every ``trajectory.json`` under the given paths (files or folders; default the committed suite runs in
``benchmarks/results/suite``) and summarises the optimization rounds (index >= 1; the baseline round 0 is
reported apart): round wall time (``Round.duration_s``), seconds per phase (``Round.phase_s``, recorded by
sessions since issue 19: older trajectories have none and count as ``unrecorded``), the parent's wall-clock
stages (``Round.stages``, since issue 31: top-level stages and ``other`` sum to the round's wall time, nested
ones such as ``evaluate/candidate/judge`` break their parent down; p50/p90 over the rounds that recorded them,
a round without a stage counting 0 s), session wall time (sum of its rounds) and the rounds one GPU-hour
affords at the mean round time. The summary is stored under
``--label`` in ``benchmarks/results/rounds.json`` (other labels in that file are kept, so a "before" and an
"after" figure sit side by side).

Run: ``ladder bench rounds [PATHS...] [--label after]`` or ``python benchmarks/rounds.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import exists, find, is_dir, read_text
from _provenance import RESULTS, provenance

DEFAULT = RESULTS / "suite"


def _q(xs: list[float], p: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _stats(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "median_s": round(_q(xs, 0.5), 3), "p90_s": round(_q(xs, 0.9), 3), "max_s": round(max(xs), 3),
            "mean_s": round(statistics.fmean(xs), 3), "total_s": round(sum(xs), 3)}


def trajectories(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for p in paths:
        if exists(p):
            found.append(p)
        elif is_dir(p):
            found += find(p)  # on disk, as trajectory.json.gz, or inside a campaign archive (benchmarks/_data.py)
        else:
            raise SystemExit(f"error: {p} is neither a trajectory.json nor a folder holding some")
    return found


def summarise(files: list[Path]) -> dict[str, Any]:
    rounds: list[dict[str, Any]] = []
    baselines: list[float] = []
    sessions: list[float] = []
    for f in files:
        t = json.loads(read_text(f))
        rs = t.get("rounds", [])
        baselines += [float(r.get("duration_s") or 0.0) for r in rs if r.get("index") == 0]
        opt = [r for r in rs if r.get("index", 0) > 0]
        rounds += opt
        sessions.append(sum(float(r.get("duration_s") or 0.0) for r in rs))
    walls = [float(r.get("duration_s") or 0.0) for r in rounds]
    with_phases = [r for r in rounds if r.get("phase_s")]
    names = sorted({k for r in with_phases for k in r["phase_s"]})
    phases = {k: _stats([float(r["phase_s"].get(k, 0.0)) for r in with_phases]) for k in names}
    with_stages = [r for r in rounds if r.get("stages")]
    snames = sorted({k for r in with_stages for k in r["stages"]})
    stages = {k: _stats([float(r["stages"].get(k, 0.0)) for r in with_stages]) for k in snames}
    stotal = sum(float(r.get("duration_s") or 0.0) for r in with_stages) or 1.0
    for k in snames:
        stages[k]["share"] = round(sum(float(r["stages"].get(k, 0.0)) for r in with_stages) / stotal, 3)
    total = sum(walls_p := [float(r.get("duration_s") or 0.0) for r in with_phases]) or 1.0
    for k in names:
        phases[k]["share"] = round(sum(float(r["phase_s"].get(k, 0.0)) for r in with_phases) / total, 3)
    mean = statistics.fmean(walls) if walls else None
    return {
        "trajectories": len(files), "rounds": len(rounds), "rounds_with_phases": len(with_phases),
        "round_wall": _stats(walls), "baseline_round_wall": _stats(baselines), "session_wall": _stats(sessions),
        "phases": phases, "phases_wall": _stats(walls_p),
        "rounds_with_stages": len(with_stages), "stages": stages,
        "rounds_per_gpu_hour": round(3600.0 / mean, 1) if mean else None,
        "outcomes": {o: sum(r.get("outcome") == o for r in rounds) for o in sorted({r.get("outcome") for r in rounds})},
        "files": [str(f) for f in files],
    }


def render(label: str, s: dict[str, Any]) -> str:
    w = s["round_wall"]
    lines = [f"[{label}] {s['trajectories']} trajectories, {s['rounds']} rounds ({s['rounds_with_phases']} with a phase breakdown)"]
    if w.get("n"):
        lines.append(f"round wall: median {w['median_s']:.1f} s, p90 {w['p90_s']:.1f} s, max {w['max_s']:.1f} s; "
                     f"{s['rounds_per_gpu_hour']} rounds per GPU-hour at the mean {w['mean_s']:.1f} s")
    sw = s["session_wall"]
    if sw.get("n"):
        lines.append(f"session wall: median {sw['median_s']:.1f} s, p90 {sw['p90_s']:.1f} s")
    if s["phases"]:
        lines.append(f"{'phase':<14}{'median s':>10}{'p90 s':>10}{'share':>8}")
        for k, v in sorted(s["phases"].items(), key=lambda kv: -kv[1].get("share", 0)):
            lines.append(f"{k:<14}{v['median_s']:>10.2f}{v['p90_s']:>10.2f}{v['share']:>8.0%}")
    if s.get("stages"):
        lines.append(f"stages ({s['rounds_with_stages']} rounds; share of their wall time; nested stages indented)")
        lines.append(f"{'stage':<44}{'p50 s':>9}{'p90 s':>9}{'share':>8}")
        for k in _stage_order(s["stages"]):
            v = s["stages"][k]
            name = "  " * k.count("/") + k.rsplit("/", 1)[-1]
            lines.append(f"{name:<44}{v['median_s']:>9.3f}{v['p90_s']:>9.3f}{v['share']:>8.1%}")
    return "\n".join(lines)


def _stage_order(stages: dict[str, dict[str, Any]]) -> list[str]:
    """Stage paths as a tree: siblings by share (largest first), each followed by its children; ``other`` last."""
    def key(k: str) -> tuple[Any, ...]:
        parts = k.split("/")
        return tuple(x for i in range(1, len(parts) + 1)
                     for x in ("/".join(parts[:i]) == "other", -stages.get("/".join(parts[:i]), {}).get("share", 0.0),
                               parts[i - 1]))
    return sorted(stages, key=key)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench rounds", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help=f"trajectory.json files or folders (default {DEFAULT})")
    ap.add_argument("--label", default="current", help="name of this summary in rounds.json (e.g. before, after)")
    ap.add_argument("--out", type=Path, default=RESULTS / "rounds.json", help="results file (other labels are kept)")
    ap.add_argument("--no-save", action="store_true", help="print only")
    args = ap.parse_args(argv)
    files = trajectories(args.paths or [DEFAULT])
    if not files:
        raise SystemExit("error: no trajectory.json found under " + ", ".join(map(str, args.paths or [DEFAULT])))
    summary = summarise(files)
    root = Path(__file__).resolve().parents[1]
    summary["files"] = [str(Path(f).resolve().relative_to(root)) if Path(f).resolve().is_relative_to(root) else str(f) for f in files]
    print(render(args.label, summary))
    if not args.no_save:
        old = json.loads(args.out.read_text()) if args.out.exists() else {}
        runs = old.get("runs", {})
        runs[args.label] = {"provenance": provenance(), **summary}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"runs": runs}, indent=2) + "\n")
        print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
