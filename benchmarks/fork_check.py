"""GPU check of forked CUDA workers (issue "Fast, honest rounds"): the same evaluations spawned and forked.

    python benchmarks/fork_check.py OUT_DIR [--reps 2] [--ops softmax,layernorm]

A round runs several sandboxed workers one after another (validation and timing, the screen's points, the
torch.profiler pass), and each spawned worker imports torch and triton again. With ``sandbox_fork_server`` on,
CUDA workers fork from a pre-imported zygote instead (``optimizer.harness.zygote``). For each suite operator's
initial kernel this evaluates (validation + timing) ``--reps`` times spawned, then forked, interleaved (spawn,
fork, spawn, fork ...), and records each evaluation's wall time, its phases and whether it validated; a forked
worker that failed where the spawned one passed is a failure of the fork path (exit status 1).
Writes ``OUT_DIR/fork_check.json`` with provenance. Needs a GPU; nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from _provenance import write_result  # noqa: E402  (after the path setup)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--ops", default="softmax,layernorm")
    args = ap.parse_args(argv)

    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    base = LadderSettings()
    modes = {"spawn": base.model_copy(update={"sandbox_fork_server": False}),
             "fork": base.model_copy(update={"sandbox_fork_server": True})}
    rows, ok = [], True
    for op in args.ops.split(","):
        d = ROOT / "benchmarks" / "suite" / op
        problem = load_problem(d / "problem.py")
        passed: dict[str, list[bool]] = {m: [] for m in modes}
        for rep in range(args.reps):
            for mode, settings in modes.items():
                t0 = time.monotonic()
                ev = evaluate(problem, d / "initial.py", backend="cuda", settings=settings)
                wall = time.monotonic() - t0
                passed[mode].append(ev.passed)
                rows.append({"op": op, "mode": mode, "rep": rep, "wall_s": round(wall, 3), "passed": ev.passed,
                             "reason": ev.reason[:300], "phase_s": {k: round(v, 3) for k, v in ev.phase_s.items()}})
                print(f"{op:12s} {mode:5s} rep {rep}: {wall:6.2f} s passed={ev.passed} "
                      f"process_start={ev.phase_s.get('process_start', 0):.2f} {ev.reason[:120]}", flush=True)
        if any(passed["spawn"]) and not all(passed["fork"]):
            ok = False
    summary = {}
    for mode in modes:
        walls = [r["wall_s"] for r in rows if r["mode"] == mode and r["rep"] > 0] or \
                [r["wall_s"] for r in rows if r["mode"] == mode]
        starts = [r["phase_s"].get("process_start", 0.0) for r in rows if r["mode"] == mode]
        summary[mode] = {"median_wall_s": round(statistics.median(walls), 3),
                         "median_process_start_s": round(statistics.median(starts), 3)}
    print("summary (reps after the first):", summary, "fork path ok" if ok else "FORK PATH FAILED", flush=True)
    write_result("fork_check", {"ok": ok, "summary": summary, "rows": rows}, args.out_dir)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
