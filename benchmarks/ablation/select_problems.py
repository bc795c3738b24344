"""Choose the ablation's problem list (issue 34) from committed measurements only, before any GPU run.

    python benchmarks/ablation/select_problems.py            # writes benchmarks/ablation/problems.json
    python benchmarks/ablation/select_problems.py --check    # exit 1 when the committed list differs from what this selects

Sources (every figure is a committed H200 measurement; nothing is estimated here):

- real kernels (``benchmarks/realistic/*``): ``benchmarks/results/realistic/realistic_check_h200.json``, per case
  ``initial_ms`` and ``roofline_ms``; headroom = geomean over the cases of initial / roofline (an upper bound of what
  a rewrite can gain). Cause: the cause decided statically (L1 + L3 + L4 on the CPU) in
  ``benchmarks/results/coverage/coverage_naive_realistic.json``; ``undecided`` where the ladder decided none.
- labelled diagnosis kernels (``benchmarks/diagnosis/*``): ``benchmarks/results/diagnosis/gpu/diagnosis_gpu_times.json``,
  ``fix_speedup`` = initial / the item's reference fix, timed in one worker (a demonstrated headroom, a lower bound).
  Cause: the item's label (``label.yaml``).
- naive first translations (``benchmarks/suite/*/naive.py``): ``benchmarks/results/naive/<op>/result.json``, per
  case the initial time and the fastest measured alternative (the session's best, eager PyTorch, torch.compile);
  headroom = geomean of initial / that (demonstrated). Cause: the cause the GPU session decided in its first round
  that decided one (``trajectory.json.gz``, measured), else the static one of the coverage run.

Selection: every kernel with headroom >= 1.5 and a validated initial kernel qualifies; real kernels are taken first
(all that qualify), then labelled kernels round-robin over their causes (at most ``PER_CAUSE_LABELLED`` per cause),
then naive kernels round-robin over causes that still have fewer than ``MIN_PER_CAUSE`` kernels, then more naive
kernels round-robin until ``TARGET`` is reached. Ties go to the larger headroom, then the name. Deterministic.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _data import exists, glob, read_text  # noqa: E402  (committed results, packed or not)

MIN_HEADROOM = 1.5
TARGET = 36
MIN_PER_CAUSE = 2
PER_CAUSE_LABELLED = 3
MIN_REAL = 10

REALISTIC_CHECK = RESULTS / "realistic" / "realistic_check_h200.json"
COVERAGE = RESULTS / "coverage" / "coverage_naive_realistic.json"
DIAG_TIMES = RESULTS / "diagnosis" / "gpu" / "diagnosis_gpu_times.json"
NAIVE = RESULTS / "naive"
OUT = HERE / "problems.json"


def _rel(p: Path) -> str:
    return str(p.resolve().relative_to(REPO))


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _static_causes(set_name: str) -> dict[str, str]:
    rows = json.loads(read_text(COVERAGE))["rows"]
    return {r["kernel"]: r["cause"] for r in rows if r["set"] == set_name}


def realistic() -> list[dict[str, Any]]:
    data = json.loads(read_text(REALISTIC_CHECK))["problems"]
    causes = _static_causes("realistic")
    out = []
    for name, rec in sorted(data.items()):
        cases = [c for c in rec.get("cases", []) if c.get("ok") and c.get("initial_ms") and c.get("roofline_ms")]
        if not rec.get("ok") or not cases or len(cases) != len(rec.get("cases", [])):
            continue
        h = _geomean([c["initial_ms"] / c["roofline_ms"] for c in cases])
        out.append({"id": f"realistic/{name}", "set": "realistic", "folder": f"benchmarks/realistic/{name}",
                    "cause": causes.get(name, "undecided"), "cause_source": "decided (static, CPU coverage run)",
                    "cause_file": _rel(COVERAGE), "headroom": round(h, 3), "headroom_raw": h, "headroom_kind": "initial/roofline",
                    "headroom_file": _rel(REALISTIC_CHECK), "real": True})
    return out


def diagnosis() -> list[dict[str, Any]]:
    items = json.loads(read_text(DIAG_TIMES))["summary"]["items"]
    out = []
    for name, rec in sorted(items.items()):
        label = BENCH / "diagnosis" / name / "label.yaml"
        if not label.exists() or rec.get("fix_speedup") is None:
            continue
        import yaml

        lab = yaml.safe_load(label.read_text())
        out.append({"id": f"diagnosis/{name}", "set": "diagnosis", "folder": f"benchmarks/diagnosis/{name}",
                    "cause": lab["cause"], "cause_source": "label", "cause_file": _rel(label),
                    "families": list(lab.get("families") or []), "split": lab.get("split"),
                    "headroom": round(float(rec["fix_speedup"]), 3), "headroom_raw": float(rec["fix_speedup"]),
                    "headroom_kind": "initial/fix",
                    "headroom_file": _rel(DIAG_TIMES), "real": False})
    return out


def _session_cause(op_dir: Path) -> str | None:
    if not exists(op_dir / "session" / "trajectory.json"):
        return None
    traj = json.loads(read_text(op_dir / "session" / "trajectory.json"))
    for r in traj.get("rounds", [])[1:]:
        cause = (r.get("stop") or {}).get("cause")
        if cause and cause != "unknown":
            return cause
    return None


def naive() -> list[dict[str, Any]]:
    causes = _static_causes("naive")
    out = []
    for rj in glob(NAIVE, "*/result.json"):  # packed campaign (benchmarks/_data.py)
        op = rj.parent.name
        if not (REPO / "benchmarks" / "suite" / op / "naive.py").exists():
            continue
        r = json.loads(read_text(rj))
        if r.get("status") != "done" or r.get("initial") != "naive":
            continue
        ratios = []
        for c in r.get("cases") or []:
            alts = [c.get(k) for k in ("best_ms", "eager_ms", "compile_ms") if c.get(k) and c.get(f"{k[:-3]}_status", "ok") == "ok"]
            if c.get("initial_ms") and alts:
                ratios.append(c["initial_ms"] / min(alts))
        if not ratios or len(ratios) != len(r.get("cases") or []):
            continue
        measured = _session_cause(rj.parent)
        cause = measured or causes.get(op, "undecided")
        src, cfile = (("decided (GPU session, first round that decided one)", rj.parent / "session" / "trajectory.json.gz")
                      if measured else ("decided (static, CPU coverage run)", COVERAGE))
        out.append({"id": f"naive/{op}", "set": "naive", "folder": f"benchmarks/suite/{op}", "initial": "naive.py",
                    "cause": cause, "cause_source": src, "cause_file": _rel(cfile),
                    "headroom": round(_geomean(ratios) or 0.0, 3), "headroom_raw": _geomean(ratios) or 0.0,
                    "headroom_kind": "initial/fastest measured (session best, eager, torch.compile)",
                    "headroom_file": _rel(rj), "real": False})
    return out


def _round_robin(pool: list[dict[str, Any]], take: int, *, cap: int | None = None,
                 counts: dict[str, int] | None = None, only: set[str] | None = None) -> list[dict[str, Any]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in sorted(pool, key=lambda p: (-p["headroom"], p["id"])):
        if only is None or p["cause"] in only:
            by[p["cause"]].append(p)
    counts = counts if counts is not None else defaultdict(int)
    out: list[dict[str, Any]] = []
    while len(out) < take:
        progressed = False
        for cause in sorted(by, key=lambda c: (counts[c], c)):
            if len(out) >= take:
                break
            if by[cause] and (cap is None or counts[cause] < cap) and (only is None or counts[cause] < MIN_PER_CAUSE or cap is None):
                out.append(by[cause].pop(0))
                counts[cause] += 1
                progressed = True
        if not progressed:
            break
    return out


def select() -> dict[str, Any]:
    cands = realistic() + diagnosis() + naive()
    ok = [c for c in cands if c.pop("headroom_raw") >= MIN_HEADROOM and c["cause"] != "at_roofline"]
    counts: dict[str, int] = defaultdict(int)
    chosen = sorted([c for c in ok if c["set"] == "realistic"], key=lambda c: c["id"])
    for c in chosen:
        counts[c["cause"]] += 1
    chosen += _round_robin([c for c in ok if c["set"] == "diagnosis"], TARGET, cap=PER_CAUSE_LABELLED, counts=counts)
    naive_pool = [c for c in ok if c["set"] == "naive"]
    short = {c for c in {p["cause"] for p in naive_pool} if counts[c] < MIN_PER_CAUSE}
    add = _round_robin(naive_pool, max(0, TARGET - len(chosen)), counts=counts, only=short, cap=MIN_PER_CAUSE)
    chosen += add
    rest = [c for c in naive_pool if c not in add]
    chosen += _round_robin(rest, max(0, TARGET - len(chosen)), counts=counts)
    chosen.sort(key=lambda c: (c["set"], c["id"]))
    per_cause: dict[str, int] = defaultdict(int)
    for c in chosen:
        per_cause[c["cause"]] += 1
    from kb.vocab import CAUSE_FAMILIES

    named = [c for c in CAUSE_FAMILIES if c not in ("unknown", "at_roofline")]
    missing = {c: 2 - per_cause.get(c, 0) for c in named if per_cause.get(c, 0) < MIN_PER_CAUSE}
    available = defaultdict(int)
    for c in ok:
        available[c["cause"]] += 1
    return {
        "rule": {"min_headroom": MIN_HEADROOM, "target": TARGET, "min_per_cause": MIN_PER_CAUSE,
                 "per_cause_labelled": PER_CAUSE_LABELLED, "min_real": MIN_REAL,
                 "excluded": "cause at_roofline (nothing to gain by definition); a kernel whose initial version "
                             "did not validate on every measured case"},
        "sources": sorted({_rel(REALISTIC_CHECK), _rel(COVERAGE), _rel(DIAG_TIMES), "benchmarks/results/naive/*/result.json",
                           "benchmarks/diagnosis/*/label.yaml"}),
        "counts": {"problems": len(chosen), "real": sum(c["real"] for c in chosen),
                   "by_set": {s: sum(c["set"] == s for c in chosen) for s in ("realistic", "diagnosis", "naive")},
                   "by_cause": dict(sorted(per_cause.items())), "labelled": sum(c["cause_source"] == "label" for c in chosen),
                   "qualifying": len(ok), "measured": len(cands), "qualifying_by_cause": dict(sorted(available.items()))},
        "short_of_two": {c: {"missing": n, "qualifying_anywhere": available.get(c, 0)} for c, n in sorted(missing.items())},
        "problems": chosen,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--check", action="store_true", help="compare with the committed list instead of writing it")
    a = p.parse_args(argv)
    doc = select()
    text = json.dumps(doc, indent=1, sort_keys=False) + "\n"
    if a.check:
        same = Path(a.out).exists() and Path(a.out).read_text() == text
        print("problems.json is " + ("up to date" if same else "STALE: run benchmarks/ablation/select_problems.py"))
        return 0 if same else 1
    Path(a.out).write_text(text)
    c = doc["counts"]
    print(f"{c['problems']} problems ({c['real']} real; {c['by_set']}); by cause {c['by_cause']}")
    if doc["short_of_two"]:
        print(f"causes with fewer than {MIN_PER_CAUSE}: {doc['short_of_two']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
