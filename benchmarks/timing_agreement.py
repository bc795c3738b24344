"""Do a session's numbers match what a user measures? Re-time finished sessions independently (GPU; issue 31).

For each finished session (a folder holding ``trajectory.json``, ``round_00.py`` and ``best.py``; committed copies
end in ``.py.txt``), this process - a fresh one, nothing of the session's workers, caches or timing code paths -
re-times the initial kernel and the session's best on every case the session saw, the way an engineer would:
plain ``triton.testing.do_bench`` (warm-up 25 ms, ``--rep-ms`` of reps, L2 flushed before each rep, median), and
``do_bench_cudagraph`` for the cases whose initial kernel takes under 50 us of device time (its graph time) there, or
whose flushed do_bench takes over twice its graph time (a host-bound launcher: do_bench would time the host). It prints, per session and per case, the session's speedup over the independent one:

- session speedup: the selection re-time's confirmed geomean for the best round (the figure the session reports),
  else the best round's geomean; 1.0 when the initial kernel stayed best;
- per case: the best round's interleaved speedup vs the initial kernel, and its device times beside the independent
  ones; the runner's report pass (``result.json`` next to the session) is compared too when present;
- the host's steady-state wall time per call (``optimizer.harness.timing.host_wall_ms``) of both kernels, which the
  device figures leave out.

Target: every session's speedup within +-5% of the independent one, and the per-case times within +-5%.

Run (GPU): ``python benchmarks/timing_agreement.py OUTDIR SESSION_OR_RESULT_DIR [...] [--rep-ms 100]``; a result
dir of the suite runner (``OP/session/trajectory.json`` under it) contributes every session it holds.
Writes ``OUTDIR/timing_agreement.json`` with provenance.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import exists, find, read_bytes, read_text  # noqa: E402
from _provenance import provenance  # noqa: E402

GRAPH_BELOW_US = 50.0
TOLERANCE = 0.05
SETS = ("suite", "realistic", "diagnosis")


def find_sessions(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if exists(p / "trajectory.json"):
            out.append(p)
        else:
            out += sorted({t.parent for t in find(p) if t.parent.name == "session" and t.parent.parent.parent == p})
    return out


def _source(folder: Path, name: str, tmp: Path) -> Path | None:
    """``name`` (e.g. best.py) from the session folder; a committed ``.py.txt`` copy (on disk or packed) is turned
    back into a module."""
    for cand in (folder / name, folder / f"{name}.txt"):
        if exists(cand):
            dst = tmp / f"{folder.parent.name}_{name}"
            dst.write_bytes(read_bytes(cand))
            return dst
    return None


def problem_path(traj: dict[str, Any]) -> Path | None:
    """The session's problem: its recorded path when it exists here, else the folder of that name in a known set."""
    ref = traj.get("problem") or {}
    recorded = Path(ref.get("path") or "")
    if recorded.is_file():
        return recorded
    for s in SETS:
        p = ROOT / "benchmarks" / s / ref.get("name", "") / "problem.py"
        if p.is_file():
            return p
    return None


def session_figures(traj: dict[str, Any]) -> dict[str, Any]:
    best = traj.get("best_round")
    rounds = {r["index"]: r for r in traj.get("rounds", [])}
    confirmed = (traj.get("selection") or {}).get("confirmed") or {}
    if not best:
        return {"best_round": best or 0, "speedup": 1.0, "source": "initial stayed best", "cases": {}}
    r = rounds.get(best) or {}
    timing = r.get("timing") or {}
    cases = {}
    for c in timing.get("cases", []):
        ci = c.get("speedup_ci") or {}
        sp = ci.get("point") or ((c["baseline_ms"] / c["ms"]) if c.get("baseline_ms") and c.get("ms") else None)
        cases[c["case"]] = {"speedup": sp, "best_ms": c.get("ms"), "initial_ms": c.get("baseline_ms"),
                            "method": c.get("method"), "host_ms": c.get("host_ms")}
    conf = confirmed.get(str(best)) or confirmed.get(best)
    if conf:
        return {"best_round": best, "speedup": conf["point"], "source": "selection re-time", "cases": cases}
    return {"best_round": best, "speedup": timing.get("geomean_speedup"), "source": "best round", "cases": cases}


def report_figures(session_dir: Path) -> dict[str, dict[str, float]]:
    """Per case, the runner's report pass (initial_ms, best_ms) when the session sits in a runner result dir."""
    res = session_dir.parent / "result.json"
    try:
        doc = json.loads(read_text(res))
    except (OSError, ValueError):
        return {}
    return {c["label"]: {"initial_ms": c.get("initial_ms"), "best_ms": c.get("best_ms")}
            for c in doc.get("cases", []) if c.get("label")}


def retime(problem: Any, initial_cls: type, best_cls: type, cases: list[dict[str, Any]], rep_ms: float) -> dict[str, Any]:
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    from optimizer.harness.problem import case_label
    from optimizer.harness.timing import host_wall_ms

    out: dict[str, Any] = {}
    for case in cases:
        label = case_label(case)
        inputs = problem.make_inputs(case, 0, device="cuda")
        fns = {}
        for role, cls in (("initial", initial_cls), ("best", best_cls)):
            m = problem.instantiate(cls, case, seed=0, device="cuda")
            fns[role] = (lambda m=m, xs=inputs: m(*xs))
        row: dict[str, Any] = {}
        with torch.no_grad():
            for role, fn in fns.items():
                fn()
                torch.cuda.synchronize()
                row[f"{role}_do_bench_ms"] = float(do_bench(fn, warmup=25, rep=rep_ms, return_mode="median"))
            row["method"] = "do_bench"
            try:
                for role, fn in fns.items():
                    row[f"{role}_cudagraph_ms"] = float(do_bench_cudagraph(fn, rep=rep_ms, return_mode="median"))
                g, d = row["initial_cudagraph_ms"], row["initial_do_bench_ms"]
                if g * 1e3 < GRAPH_BELOW_US or d > 2 * g:  # short on the device, or do_bench timing the host
                    row["method"] = "cudagraph"
            except Exception as exc:  # noqa: BLE001  not capturable: the do_bench figures stand, said so
                torch.cuda.synchronize()
                row["method_note"] = f"cudagraph capture failed: {type(exc).__name__}: {str(exc)[:200]}"
            for role, fn in fns.items():
                row[f"{role}_host"] = host_wall_ms(fn, torch.cuda.synchronize)
        key = row["method"]
        row["initial_ms"], row["best_ms"] = row[f"initial_{key}_ms"], row[f"best_{key}_ms"]
        row["speedup"] = row["initial_ms"] / row["best_ms"]
        out[label] = row
        del fns, inputs
        torch.cuda.empty_cache()
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def agree_one(folder: Path, rep_ms: float, tmp: Path) -> dict[str, Any]:
    from optimizer.harness.problem import load_candidate, load_problem

    traj = json.loads(read_text(folder / "trajectory.json"))
    name = (traj.get("problem") or {}).get("name", folder.parent.name)
    row: dict[str, Any] = {"session": str(folder), "problem": name}
    sess = session_figures(traj)
    row["session"] = {**sess, "dir": str(folder)}
    ppath = problem_path(traj)
    initial, best = _source(folder, "round_00.py", tmp), _source(folder, "best.py", tmp)
    if ppath is None or initial is None or best is None:
        row["error"] = f"missing: {'problem ' if ppath is None else ''}{'round_00.py ' if initial is None else ''}" \
                       f"{'best.py' if best is None else ''}".strip()
        return row
    problem = load_problem(ppath)
    cases = (traj.get("problem") or {}).get("cases") or problem.cases
    t0 = time.time()
    ind = retime(problem, load_candidate(initial), load_candidate(best), cases, rep_ms)
    row["retime_s"] = round(time.time() - t0, 1)
    row["independent_cases"] = ind
    sp = [c["speedup"] for c in ind.values()]
    row["independent_speedup"] = math.exp(sum(math.log(x) for x in sp) / len(sp)) if sp else None
    row["session_over_independent"] = _ratio(sess["speedup"], row["independent_speedup"])
    report = report_figures(folder)
    per_case = []
    for label, c in ind.items():
        s = sess["cases"].get(label, {})
        rep = report.get(label, {})
        per_case.append({
            "case": label, "method": c["method"], "independent_speedup": c["speedup"],
            "session_speedup": s.get("speedup"), "speedup_ratio": _ratio(s.get("speedup"), c["speedup"]),
            "session_best_ms": s.get("best_ms"), "independent_best_ms": c["best_ms"],
            "best_ms_ratio": _ratio(s.get("best_ms"), c["best_ms"]),
            "session_initial_ms": s.get("initial_ms"), "independent_initial_ms": c["initial_ms"],
            "initial_ms_ratio": _ratio(s.get("initial_ms"), c["initial_ms"]),
            "report_speedup": _ratio(rep.get("initial_ms"), rep.get("best_ms")),
            "report_ratio": _ratio(_ratio(rep.get("initial_ms"), rep.get("best_ms")), c["speedup"]),
            "initial_host_ms": c["initial_host"]["wall_ms"], "best_host_ms": c["best_host"]["wall_ms"],
        })
    row["cases"] = per_case
    row["band"] = band(min((c["initial_ms"] for c in ind.values()), default=None))
    return judge_row(row)


def judge_row(row: dict[str, Any]) -> dict[str, Any]:
    """``within_5pct`` (the session's speedup) and ``cases_within_5pct`` (every per-case figure the session has: its
    round timings where the best is a later round, and its final report pass, which times initial and best per case
    even when the initial kernel stayed best) against the independent re-time."""
    ratios = [x for x in [row.get("session_over_independent")] if x]
    case_ratios = [x for c in row.get("cases", [])
                   for x in (c["speedup_ratio"], c["best_ms_ratio"], c["initial_ms_ratio"], c.get("report_ratio")) if x]
    row["within_5pct"] = bool(ratios) and all(abs(x - 1) <= TOLERANCE for x in ratios)
    row["cases_within_5pct"] = bool(case_ratios) and all(abs(x - 1) <= TOLERANCE for x in case_ratios)
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    return {"sessions": len(rows), "compared": len(ok), "within_5pct": sum(bool(r["within_5pct"]) for r in ok),
            "cases_within_5pct": sum(bool(r["cases_within_5pct"]) for r in ok),
            "bands": {b: sum(r.get("band") == b for r in ok) for b in sorted({r.get("band", "?") for r in ok})}}


def combine(files: list[Path], out: Path) -> int:
    """Re-judge saved ``timing_agreement.json`` files with today's rule and print one table over all of them."""
    rows = []
    for f in files:
        for r in json.loads(read_text(f))["rows"]:
            if "error" not in r:
                rows.append({**judge_row(r), "from": str(f)})
    for r in rows:
        print(f"{Path(r['from']).stem[:28]:28s} {r['problem'][:32]:32s} {r['band']:18s} session/independent "
              f"{_fmt(r['session_over_independent'])} {'OK' if r['within_5pct'] else 'OFF'}; cases "
              f"{'OK' if r['cases_within_5pct'] else 'OFF'}")
    summary = summarize(rows)
    print(json.dumps(summary))
    out.write_text(json.dumps({"provenance": provenance(), "files": [str(f) for f in files], "summary": summary,
                               "rows": rows}, indent=1, default=str))
    return 0


def band(ms: float | None) -> str:
    if ms is None:
        return "?"
    us = ms * 1e3
    return "us (<20 us)" if us < 20 else "short (20-50 us)" if us < 50 else "mid (50-500 us)" if us < 500 else "ms (>=500 us)"


def _fmt(x: float | None, f: str = ".3f") -> str:
    return "-" if x is None else format(x, f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("dirs", nargs="+", type=Path, help="session folders or runner result dirs")
    ap.add_argument("--rep-ms", type=float, default=100.0)
    ap.add_argument("--budget-s", type=float, default=0.0, help="stop starting sessions after this many seconds")
    ap.add_argument("--ops", nargs="*", default=[], help="only the sessions of these problems (result-dir folder names)")
    ap.add_argument("--combine", action="store_true",
                    help="CPU: DIRS are saved timing_agreement.json files; re-judge them and write one table to OUT")
    a = ap.parse_args(argv)
    if a.combine:
        return combine(a.dirs, a.out)
    a.out.mkdir(parents=True, exist_ok=True)
    sessions = [s for s in find_sessions(a.dirs) if not a.ops or s.parent.name in a.ops or s.name in a.ops]
    print(f"{len(sessions)} sessions", flush=True)
    t0, rows = time.time(), []
    with tempfile.TemporaryDirectory() as td:
        for folder in sessions:
            if a.budget_s and time.time() - t0 > a.budget_s:
                rows.append({"session": str(folder), "error": "budget spent before this session"})
                continue
            try:
                row = agree_one(folder, a.rep_ms, Path(td))
            except Exception as exc:  # noqa: BLE001  one broken session never stops the others
                row = {"session": str(folder), "error": f"{type(exc).__name__}: {exc}",
                       "traceback": traceback.format_exc()[-1500:]}
            rows.append(row)
            s = row.get("session") if isinstance(row.get("session"), dict) else {}
            print(f"{row.get('problem', folder.parent.name):34s} {row.get('band', '?'):18s} session "
                  f"{_fmt(s.get('speedup') if s else None)}x ({(s or {}).get('source', '-')}) independent "
                  f"{_fmt(row.get('independent_speedup'))}x ratio {_fmt(row.get('session_over_independent'))} "
                  f"{'OK' if row.get('within_5pct') else 'OFF' if 'error' not in row else row['error'][:80]}", flush=True)
            for c in row.get("cases", []):
                print(f"    {c['case'][:40]:40s} {c['method']:9s} session {_fmt(c['session_speedup'])}x indep "
                      f"{_fmt(c['independent_speedup'])}x report {_fmt(c['report_speedup'])}x | best ms session "
                      f"{_fmt(c['session_best_ms'], '.4g')} indep {_fmt(c['independent_best_ms'], '.4g')} | host ms "
                      f"{_fmt(c['initial_host_ms'], '.4g')} -> {_fmt(c['best_host_ms'], '.4g')}", flush=True)
    summary = summarize(rows)
    print(json.dumps(summary))
    (a.out / "timing_agreement.json").write_text(json.dumps({"provenance": provenance(), "rep_ms": a.rep_ms,
                                                             "summary": summary, "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
