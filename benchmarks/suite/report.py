"""``ladder bench report``: tables, targets and figures from a suite result directory.

    python benchmarks/suite/report.py [--out benchmarks/results/suite]
    python benchmarks/suite/report.py --out benchmarks/results/naive     # the campaign started from naive.py

Reads ``<out>/<op>/result.json`` (written by ``runner.py``) and writes ``report.md``, ``report.json`` and the
figures ``fig_speedup.png`` (speedup distribution), ``fig_times.png`` (before/after times) and
``fig_process.png`` (process accounting) into the same directory.

Figures per operator are geometric means over its cases of the re-measured medians (``_measure.py``: eager, the
initial and the best candidate back to back in one process, then torch.compile). Suite figures are geometric
means and medians over operators. Roofline fractions use the H200 datasheet peaks (``_results.H200_DATASHEET``);
the fraction against the ceilings the run measured itself is shown beside them. Where no GPU timing exists
(an interpreter run, or nothing measured yet) the report says so and draws no timing figure.

A result dir holds one starting-point set (``runner.py --initial``: ``initial.py`` or ``naive.py``); the report
names it, reads "initial" as that set's starting kernel, and refuses a dir where the two are mixed.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SUITE = Path(__file__).resolve().parent
REPO = SUITE.parents[1]
for _p in (SUITE, SUITE.parent):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import _data  # noqa: E402  (benchmarks/_data.py: the result dir packed or not)
from _results import (
    H200_DATASHEET,
    H200_MEASURED_HERE,
    LEVELS,
    geomean,
    load_results,
    median,
    peaks_from_ceilings,
    read_jsonl,
    roofline,
    write_json,
)

DEFAULT_OUT = SUITE.parents[1] / "benchmarks" / "results" / "suite"
TARGETS = {"speedup": 3.0, "speedup_realistic": 1.5, "vs_eager": 1.5, "vs_compile": 1.0, "roofline_memory_bound": 0.60}


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den and den > 0 else None


_ABS_PATH = re.compile(r"(?<![\w.])/[^\s`'\"]+")


def portable_path(path: str | Path) -> str:
    """A path as a report may show it: relative to the repository, else ``.../<last part>`` (no machine paths)."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return f".../{p.name}"


def portable_command(command: str | None) -> str | None:
    """``command`` with every absolute path in it made portable (``portable_path``)."""
    return None if command is None else _ABS_PATH.sub(lambda m: portable_path(m.group(0)), command)


def _run_info(out: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The runs of a result dir and the ceilings of the latest run that measured them (each run's own ceilings are
    in its entry: ``run_ceilings`` picks them per operator)."""
    runs, ceilings = [], None
    for r in read_jsonl(out / "runs.jsonl"):
        if r.get("event") != "start":
            continue
        prov = r.get("provenance") or {}
        c = r.get("ceilings") or {}
        runs.append({"run": r.get("run"), "date": prov.get("date"), "command": portable_command(prov.get("command")),
                     "node": (prov.get("machine") or {}).get("node"), "device": c.get("device"),
                     "versions": {k: v for k, v in (prov.get("versions") or {}).items() if v}, "ceilings": c})
        if c.get("copy_gbps") and c.get("bf16_tflops"):
            ceilings = c  # the latest run that measured them
    return runs, ceilings


def run_ceilings(runs: list[dict[str, Any]], r: dict[str, Any], latest: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ceilings measured by the run that produced result ``r`` (a campaign folds runs on several GPUs: an H100
    session is held to the H100's copy bandwidth, not the H200's), else the latest run's."""
    own = next((x["ceilings"] for x in runs if x["run"] == r.get("run")), None)
    return own if own and own.get("copy_gbps") and own.get("bf16_tflops") else latest


def per_case_rows(op: str, r: dict[str, Any], peaks_measured: Any) -> list[dict[str, Any]]:
    rows = []
    for c in r.get("cases") or []:
        best, init = c.get("best_ms"), c.get("initial_ms")
        roof = roofline(op, c["case"], c.get("flops"), c.get("bytes"), best, H200_DATASHEET)
        # the floor a kernel can actually reach: the run's measured copy bandwidth and matmul rate, else datasheet
        attainable = roofline(op, c["case"], c.get("flops"), c.get("bytes"), best, peaks_measured or H200_DATASHEET)["floor_ms"]
        rows.append({
            "op": op, "label": c["label"], "dtype": c.get("dtype"), "eager_ms": c.get("eager_ms"),
            "compile_ms": c.get("compile_ms"), "initial_ms": init, "best_ms": best, "floor_ms": roof["floor_ms"],
            "memory_bound": roof["memory_bound"], "frac_best": roof["fraction"],
            "frac_initial": roofline(op, c["case"], c.get("flops"), c.get("bytes"), init, H200_DATASHEET)["fraction"],
            "frac_best_measured_ceiling": roofline(op, c["case"], c.get("flops"), c.get("bytes"), best,
                                                   peaks_measured)["fraction"] if peaks_measured else None,
            "headroom_initial": _ratio(init, attainable), "headroom_best": _ratio(best, attainable),
            "speedup": _ratio(init, best), "vs_eager": _ratio(c.get("eager_ms"), best),
            "vs_compile": _ratio(c.get("compile_ms"), best),
        })
    return rows


def per_op_row(op: str, r: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    s = r.get("session") or {}
    timed = [c for c in cases if c["speedup"] is not None]
    return {
        "op": op, "category": r.get("category"), "status": r.get("status"), "backend": r.get("backend"),
        "rounds_run": s.get("rounds_run"), "truncated": bool(s.get("truncated")), "best_round": s.get("best_round"),
        "best_level": s.get("best_level"), "best_family": s.get("best_family"), "max_level": s.get("max_level"),
        "cases": len(cases), "cases_timed": len(timed),
        "initial_ms": geomean(c["initial_ms"] for c in timed), "best_ms": geomean(c["best_ms"] for c in timed),
        "eager_ms": geomean(c["eager_ms"] for c in timed),
        "speedup": geomean(c["speedup"] for c in timed), "vs_eager": geomean(c["vs_eager"] for c in timed),
        "vs_compile": geomean(c["vs_compile"] for c in timed), "compile_cases": sum(c["vs_compile"] is not None for c in timed),
        "compile_status": (r.get("compile") or {}).get("status"),
        "memory_bound": bool(cases) and all(c["memory_bound"] for c in cases),
        "roofline_median": median(c["frac_best"] for c in timed),
        "headroom_initial": geomean(c["headroom_initial"] for c in timed),
        "headroom_best": geomean(c["headroom_best"] for c in timed),
        "session_speedup": s.get("session_speedup"), "error": r.get("error"),
    }


def accounting(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Process accounting: level of each selected best round, levels each trajectory reached, best-round indices."""
    sessions = [r["session"] for r in results.values() if r.get("session")]
    best_level = Counter(s["best_level"] for s in sessions if s.get("best_level"))
    max_level = Counter(s["max_level"] or "none" for s in sessions)
    reached = {lv: sum(any(lv in x["levels"] for x in s["rounds"]) for s in sessions) for lv in LEVELS}
    rounds = [x for s in sessions for x in s["rounds"] if x["index"] > 0]
    stop = Counter(x["stop_level"] or "inconclusive" for x in rounds)
    return {
        "trajectories": len(sessions), "rounds": len(rounds),
        "max_rounds_run": max((s.get("rounds_run") or 0 for s in sessions), default=0),
        "best_level": {k: best_level.get(k, 0) for k in ("baseline", *LEVELS)},
        "max_level": {k: max_level.get(k, 0) for k in ("none", *LEVELS)},
        "trajectories_reaching_level": reached,
        "best_round_index": dict(sorted(Counter(s["best_round"] for s in sessions if s.get("best_round") is not None).items())),
        "round_stop_level": {k: stop.get(k, 0) for k in (*LEVELS, "inconclusive")},
        "outcomes": dict(Counter(x["outcome"] for x in rounds).most_common()),
        "improving_families": dict(Counter(x["family"] for s in sessions for x in s["rounds"]
                                           if x["outcome"] == "improved" and x["family"]).most_common()),
    }


#: an initial kernel within this factor of its attainable floor leaves little for any rewrite to win
NEAR_CEILING = 1.25


def headroom(timed: list[dict[str, Any]]) -> dict[str, Any]:
    """How much speedup was available at all: each operator's geomean over cases of initial_ms / attainable floor
    (the floor at the run's measured peaks) bounds what any rewrite could reach; its geomean over operators bounds
    the initial -> best geomean. ``headroom_captured`` is log(achieved) / log(available)."""
    avail = [o["headroom_initial"] for o in timed if o["headroom_initial"]]
    with_both = [o for o in timed if o["headroom_initial"] and o["speedup"]]
    g_avail = geomean(avail)
    g_got = geomean(o["speedup"] for o in with_both)
    captured = (math.log(g_got) / math.log(g_avail)) if g_avail and g_got and g_avail > 1.0 else None
    left = sorted((o for o in timed if o["headroom_best"]), key=lambda o: -o["headroom_best"])
    return {
        "headroom_geomean": g_avail, "headroom_captured": captured,
        "ops_initial_near_ceiling": sum(h <= NEAR_CEILING for h in avail), "ops_with_headroom": len(avail),
        "most_headroom_left": [(o["op"], o["headroom_best"]) for o in left[:6]],
        "ops_below_eager": sorted(o["op"] for o in timed if o["vs_eager"] is not None and o["vs_eager"] < 1.0),
        "ops_below_compile": sorted(o["op"] for o in timed if o["vs_compile"] is not None and o["vs_compile"] < 1.0),
    }


def _shortfall(a: dict[str, Any], targets: list[dict[str, Any]]) -> list[str]:
    """The report's 'where it falls short' section, from the figures alone."""
    L = ["## Where the targets fall short, and why", ""]
    missed = [t for t in targets if t["status"] == "missed"]
    if not missed:
        L += ["Every evaluated target is met.", ""]
    if a.get("headroom_geomean"):
        L += [f"- Available speedup: a kernel at the attainable floor on every case (the run's measured copy bandwidth "
              f"and matmul rate) would make the initial -> best geomean **{a['headroom_geomean']:.2f}x** at most. "
              f"{a['ops_initial_near_ceiling']} of {a['ops_with_headroom']} initial kernels are already within "
              f"{NEAR_CEILING:.2f}x of their floor, so no rewrite can speed them up much."]
        if a.get("headroom_captured") is not None:
            L.append(f"- Captured: the achieved {_f(a['speedup_geomean'])}x is {a['headroom_captured']:.0%} of the "
                     "available headroom (on a log scale).")
        if a["most_headroom_left"]:
            L.append("- Most headroom left (best time / attainable floor): " + ", ".join(
                f"`{op}` {h:.2f}x" for op, h in a["most_headroom_left"]))
    if a.get("ops_below_eager"):
        L.append(f"- Slower than torch eager ({len(a['ops_below_eager'])}): " + ", ".join(f"`{o}`" for o in a["ops_below_eager"]))
    if a.get("ops_below_compile"):
        L.append(f"- Slower than torch.compile ({len(a['ops_below_compile'])}): " + ", ".join(f"`{o}`" for o in a["ops_below_compile"]))
    return L + [""]


def _target(name: str, text: str, value: float | None, goal: float, n: int, total: int, basis: str) -> dict[str, Any]:
    if value is None or n == 0:
        return {"name": name, "target": text, "value": None, "status": "not evaluated", "n": 0, "of": total,
                "basis": basis + "; no GPU timing for it in these results"}
    return {"name": name, "target": text, "value": value, "status": "met" if value >= goal else "missed", "n": n,
            "of": total, "basis": basis}


def _problem(o: dict[str, Any], r: dict[str, Any]) -> dict[str, Any] | None:
    """Why an operator's figures are incomplete, or None."""
    why = []
    if o["status"] != "done":
        why.append(f"{o['status']}: {str(o['error'] or '')[:300]}")
    if o["truncated"]:
        why.append(f"session cut by the budget after {o['rounds_run']} of {r.get('rounds_requested')} rounds")
    if o["status"] == "done" and o["compile_status"] not in (None, "ok", "disabled"):
        why.append(f"torch.compile {o['compile_status']}: {str((r.get('compile') or {}).get('message', ''))[:200]}")
    return {"op": o["op"], "status": o["status"], "why": "; ".join(why)} if why else None


def initial_set(results: dict[str, dict[str, Any]]) -> str:
    """The starting-point set of a result dir (``initial`` where a result predates the field); a ValueError naming
    the operators of each set where they are mixed."""
    sets: dict[str, list[str]] = {}
    for op, r in sorted(results.items()):
        sets.setdefault(r.get("initial", "initial"), []).append(op)
    if len(sets) > 1:
        detail = "; ".join(f"{name}.py: {', '.join(ops[:4])}{' ...' if len(ops) > 4 else ''}" for name, ops in sets.items())
        raise ValueError(f"results started from different initial sets are mixed here ({detail}); "
                         "rerun the odd ones with runner.py --initial NAME --out DIR into a dir of their own")
    return next(iter(sets), "initial")


def build(out: Path) -> dict[str, Any]:
    out = Path(out)
    results = load_results(out)
    start_set = initial_set(results)
    runs, ceilings = _run_info(out)
    peaks_measured = peaks_from_ceilings(ceilings)
    cases = {op: per_case_rows(op, r, peaks_from_ceilings(run_ceilings(runs, r, ceilings)))
             for op, r in results.items()}
    ops = [per_op_row(op, r, cases[op]) for op, r in results.items()]
    timed = [o for o in ops if o["speedup"] is not None]
    speed = [o["speedup"] for o in timed]
    comp = [o for o in timed if o["vs_compile"] is not None]
    mb = [o for o in timed if o["memory_bound"] and o["roofline_median"] is not None]
    mb_cases = [c for o in mb for c in cases[o["op"]] if c["frac_best"] is not None]
    agg = {
        "ops": len(ops), "ops_timed": len(timed),
        "speedup_geomean": geomean(speed), "speedup_median": median(speed),
        "ops_over_2x": sum(s > 2 for s in speed), "ops_over_5x": sum(s > 5 for s in speed),
        "vs_eager_geomean": geomean(o["vs_eager"] for o in timed), "vs_eager_median": median(o["vs_eager"] for o in timed),
        "vs_compile_geomean": geomean(o["vs_compile"] for o in comp), "vs_compile_median": median(o["vs_compile"] for o in comp),
        "ops_with_compile": len(comp),
        "initial_vs_eager_geomean": geomean(_ratio(o["eager_ms"], o["initial_ms"]) for o in timed),
        "memory_bound_ops": len(mb), "roofline_median_memory_bound_ops": median(o["roofline_median"] for o in mb),
        "roofline_median_memory_bound_cases": median(c["frac_best"] for c in mb_cases),
        "roofline_median_memory_bound_cases_measured_ceiling": median(c["frac_best_measured_ceiling"] for c in mb_cases),
        "session_speedup_geomean": geomean(o["session_speedup"] for o in ops),
        **headroom(timed),
    }
    n_all = len(ops)
    from _harness import PROBLEM_ROOTS

    problem_set = next((r.get("set") for r in results.values() if r.get("set")), "suite")
    want = TARGETS["speedup_realistic"] if problem_set == "realistic" else TARGETS["speedup"]
    targets = [
        _target("speedup", f"optimized / initial geomean >= {want:g}x", agg["speedup_geomean"], want, len(timed), n_all,
                "geomean over operators of each operator's geomean over cases of initial_ms / best_ms"),
        _target("vs_eager", ">= 1.5x vs torch eager", agg["vs_eager_geomean"], TARGETS["vs_eager"], len(timed), n_all,
                "geomean over operators of eager_ms / best_ms"),
        _target("vs_compile", ">= 1.0x vs torch.compile", agg["vs_compile_geomean"], TARGETS["vs_compile"], len(comp), n_all,
                "geomean over operators (the cases torch.compile was timed on) of compile_ms / best_ms"),
        _target("roofline", "median >= 60% of roofline on memory-bound operators", agg["roofline_median_memory_bound_ops"],
                TARGETS["roofline_memory_bound"], len(mb), n_all,
                "median over memory-bound operators of each operator's median case fraction, H200 datasheet peaks"),
    ]
    status = Counter(r.get("status") for r in results.values())
    suite_ops = sorted(d.name for d in PROBLEM_ROOTS[problem_set].iterdir() if (d / "problem.py").is_file())
    agg["ops_in_suite"] = len(suite_ops)
    return {
        "not_run": [op for op in suite_ops if op not in results],
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"), "out": portable_path(out), "initial_set": start_set, "problem_set": problem_set,
        "has_timing": bool(timed), "runs": runs, "status": dict(status),
        "problems": [p for o in ops if (p := _problem(o, results[o["op"]]))],
        "peaks": {"datasheet": vars(H200_DATASHEET), "measured_in_run": vars(peaks_measured) if peaks_measured else None,
                  "measured_here_kinds_md": vars(H200_MEASURED_HERE)},
        "aggregate": agg, "targets": targets, "accounting": accounting(results), "per_op": ops,
        "per_case": [c for op in sorted(cases) for c in cases[op]],
    }


# ------------------------------------------------------------------------------------------- markdown ---
def _f(x: Any, fmt: str = "{:.2f}", none: str = "-") -> str:
    return none if x is None else fmt.format(x)


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def render_md(rep: dict[str, Any], figures: list[str]) -> str:
    a, acc = rep["aggregate"], rep["accounting"]
    start = rep.get("initial_set", "initial")
    L = ["# Operator suite report" + (" (naive first translations)" if start == "naive" else ""), "",
         f"Generated {rep['generated']} from `{rep['out']}` by `benchmarks/suite/report.py`.", "",
         f"Starting point of every session: each operator's `{start}.py`; \"initial\" below means that kernel.", ""]
    L += ["## Targets", ""]
    if not rep["has_timing"]:
        L += ["**No GPU timing in these results** (an interpreter run checks correctness only, or nothing has been "
              "measured yet): speedups, torch comparisons and roofline fractions are not computed, and no timing "
              "figure is drawn.", ""]
    L += ["| target | value | status | operators | basis |", "|---|---|---|---|---|"]
    for t in rep["targets"]:
        v = t["value"]
        val = "-" if v is None else (f"{v:.0%}" if t["name"] == "roofline" else f"{v:.2f}x")
        L.append(f"| {t['target']} | {val} | **{t['status']}** | {t['n']} of {t['of']} | {t['basis']} |")
    L += ["", "## Summary", ""]
    if rep["has_timing"]:
        L += [f"- operators timed: {a['ops_timed']} of {a['ops']} with results; the suite holds {a['ops_in_suite']}",
              f"- initial -> best speedup: geomean **{_f(a['speedup_geomean'])}x**, median {_f(a['speedup_median'])}x; "
              f"{a['ops_over_2x']} operator(s) above 2x, {a['ops_over_5x']} above 5x",
              f"- best vs torch eager: geomean **{_f(a['vs_eager_geomean'])}x**, median {_f(a['vs_eager_median'])}x "
              f"(the initial kernels: {_f(a['initial_vs_eager_geomean'])}x)",
              f"- best vs torch.compile: geomean **{_f(a['vs_compile_geomean'])}x**, median {_f(a['vs_compile_median'])}x "
              f"over {a['ops_with_compile']} operator(s)",
              f"- roofline on {a['memory_bound_ops']} memory-bound operator(s): median of operator medians "
              f"**{_f(a['roofline_median_memory_bound_ops'], '{:.0%}')}**, median over their cases "
              f"{_f(a['roofline_median_memory_bound_cases'], '{:.0%}')} (against the ceilings measured in the run: "
              f"{_f(a['roofline_median_memory_bound_cases_measured_ceiling'], '{:.0%}')})",
              f"- the sessions' own authority metric (geomean speedup of the selected round, timed in the session): "
              f"geomean {_f(a['session_speedup_geomean'])}x", ""]
    if rep["has_timing"]:
        L += _shortfall(a, rep["targets"])
    L += ["- result status: " + ", ".join(f"{k}: {v}" for k, v in sorted(rep["status"].items(), key=lambda kv: str(kv[0]))), ""]
    if rep["not_run"]:
        L += [f"Suite operators with no results here yet ({len(rep['not_run'])}; the campaign is resumable, run "
              "the runner again to add them): " + ", ".join(f"`{op}`" for op in rep["not_run"]), ""]
    if rep["problems"]:
        L += ["Operators not complete, truncated by the budget, or without full torch.compile timing:", ""]
        L += [f"- `{p['op']}`: {p['why']}" for p in rep["problems"]]
        L.append("")
    L += ["## Per operator", "", "Times are geomeans over the operator's cases (ms); ratios are geomeans of per-case ratios.", "",
          "`left`: best time / attainable floor (the run's measured peaks), the speedup still available.", "",
          "| operator | category | rounds | best round (level) | max level | initial ms | best ms | speedup | vs eager | vs compile | roofline (median) | left | mem-bound |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in sorted(rep["per_op"], key=lambda o: (str(o["category"]), o["op"])):
        rounds = f"{o['rounds_run']}" + (" (cut)" if o["truncated"] else "") if o["rounds_run"] is not None else "-"
        best = f"{o['best_round']} ({o['best_level']})" if o["best_round"] is not None else o["status"]
        comp = _f(o["vs_compile"]) + ("" if o["compile_cases"] in (0, o["cases_timed"]) else f" ({o['compile_cases']}/{o['cases_timed']})")
        L.append(f"| `{o['op']}` | {o['category']} | {rounds} | {best} | {o['max_level'] or '-'} | {_ms(o['initial_ms'])} | "
                 f"{_ms(o['best_ms'])} | {_f(o['speedup'])} | {_f(o['vs_eager'])} | {comp} | {_f(o['roofline_median'], '{:.0%}')} | "
                 f"{_f(o['headroom_best'], '{:.2f}x')} | "
                 f"{'yes' if o['memory_bound'] else 'no'} |")
    L += ["", "## Process accounting", "", f"{acc['trajectories']} trajectories, {acc['rounds']} rounds after the baselines.", "",
          "Level of the selected best round (`baseline`: no round beat the initial candidate):", "",
          "| baseline | L1 | L2 | L3 | L4 |", "|---|---|---|---|---|",
          "| " + " | ".join(str(acc["best_level"][k]) for k in ("baseline", *LEVELS)) + " |", "",
          "Levels the trajectories reached:", "",
          "| | none | L1 | L2 | L3 | L4 |", "|---|---|---|---|---|---|",
          "| highest level reached | " + " | ".join(str(acc["max_level"][k]) for k in ("none", *LEVELS)) + " |",
          "| reached in at least one round | - | " + " | ".join(str(acc["trajectories_reaching_level"][k]) for k in LEVELS) + " |",
          "| rounds that stopped at the level | " + str(acc["round_stop_level"]["inconclusive"]) + " inconclusive | "
          + " | ".join(str(acc["round_stop_level"][k]) for k in LEVELS) + " |", "",
          "Index of the best round: " + (", ".join(f"round {k}: {v}" for k, v in acc["best_round_index"].items()) or "-"), "",
          "Round outcomes: " + (", ".join(f"{k} {v}" for k, v in acc["outcomes"].items()) or "-"), "",
          "Families of improving rounds: " + (", ".join(f"`{k}` {v}" for k, v in acc["improving_families"].items()) or "-"), ""]
    if rep["has_timing"]:
        L += ["## Per case", "", "Roofline floor = max(flops / peak, bytes / HBM bandwidth) with the datasheet peaks below; "
              "fraction = floor / best time.", "",
              "| operator | case | eager ms | compile ms | initial ms | best ms | floor ms | bound | roofline (initial -> best) |",
              "|---|---|---|---|---|---|---|---|---|"]
        for c in (c for c in rep["per_case"] if c["best_ms"] or c["initial_ms"] or c["eager_ms"]):
            L.append(f"| `{c['op']}` | {c['label']} | {_ms(c['eager_ms'])} | {_ms(c['compile_ms'])} | {_ms(c['initial_ms'])} | "
                     f"{_ms(c['best_ms'])} | {_ms(c['floor_ms'])} | {'memory' if c['memory_bound'] else 'compute'} | "
                     f"{_f(c['frac_initial'], '{:.0%}')} -> {_f(c['frac_best'], '{:.0%}')} |")
        L.append("")
    p = rep["peaks"]
    L += ["## Method and provenance", "",
          f"- Peaks for roofline fractions: {p['datasheet']['source']}. Matmul operators use the tensor-core rate of their "
          "dtype (tf32 for fp32); other operators the fp32 CUDA-core rate; a case is memory-bound when its memory floor is the larger.",
          "- Ceilings measured in the run: " + (p["measured_in_run"]["source"] if p["measured_in_run"] else "none recorded")
          + " (the latest run's; each operator's attainable floor and headroom use the ceilings of the run, and so the "
          "GPU, that produced its result)"
          + f"; figures measured on this workplace's H200s before: {p['measured_here_kinds_md']['source']}.",
          "- Timing: `optimizer.harness.timing.bench_cuda` (median of event-timed reps after warm-up, a 256 MB buffer zeroed "
          "before every rep to flush L2), eager / initial / best back to back in one process per operator; torch.compile "
          "(`dynamic=False`) in its own time-boxed process, its compile time excluded.", ""]
    for r in rep["runs"]:
        v = r["versions"]
        L.append(f"- run {r['run']} on {r['node']} ({r['device'] or 'no GPU'}), {r['date']}: torch {v.get('torch')}, "
                 f"triton {v.get('triton')}; `{r['command']}`")
    if figures:
        L += ["", "## Figures", ""] + [f"![{f}]({f})" for f in figures]
    return "\n".join(L) + "\n"


def write_report(out: Path, to: Path | None = None) -> dict[str, Any]:
    """The report of the result dir ``out`` (packed or not), written into ``to`` (default: ``out`` itself)."""
    from _figures import write_figures

    out = Path(out)
    to = Path(to) if to else out
    to.mkdir(parents=True, exist_ok=True)
    rep = build(out)
    rep["figures"] = write_figures(rep, to)
    write_json(to / "report.json", rep)
    (to / "report.md").write_text(render_md(rep, rep["figures"]))
    return rep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ladder bench report", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(DEFAULT_OUT), help="suite result dir (default benchmarks/results/suite)")
    p.add_argument("--to", help="write the report files here instead of into --out")
    args = p.parse_args(argv)
    out = Path(args.out)
    if not _data.is_dir(out):
        print(f"no result dir at {out}: run `ladder bench suite --out {out}` first", file=sys.stderr)
        return 2
    try:
        rep = write_report(out, args.to)
    except ValueError as exc:
        print(f"{out}: {exc}", file=sys.stderr)
        return 2
    for t in rep["targets"]:
        v = t["value"]
        print(f"{t['status']:>13}: {t['target']}" + ("" if v is None else f" ({v:.3g}, {t['n']} of {t['of']} operators)"))
    print(f"wrote {Path(args.to or out) / 'report.md'}, report.json and {len(rep['figures'])} figure(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
