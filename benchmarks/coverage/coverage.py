"""Coverage accounting of the rewrite engine: per kernel, what round 1 would do and, when it does nothing, why.

    ladder bench coverage [--set realistic|naive|suite|diagnosis ...] [--only NAME,...] [--from DRY_ROUND.json ...]
        [--out DIR] [--name STEM]

Per kernel: the decided cause, the family acted on, whether a rewrite was made (structural transform or launch
knob) or refused, and the refusal's category; per family: how often it applied and how often it refused (a
decided cause's families that refused the kernel count as refusals too); across the set: the most frequent
refusal reasons. This is the engine's to-do list: each category names what a transform does not read yet.

The rows come from the static round 1 of ``benchmarks/rewrite/dry_round.py`` (the ladder's L1/L3 on a dry launch
record, L4, the offline proposer's first point; no interpreter validation here): run it now (``--set``), or read
rows a dry round already wrote (``--from benchmarks/results/rewrite/dry_round_cpu.json``, whose validation verdicts
are then reported too). Writes ``coverage_<sets>.json`` and ``.md`` under ``benchmarks/results/coverage/``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._data import read_text  # noqa: E402  (committed results, packed or not)
from benchmarks._provenance import RESULTS, provenance  # noqa: E402

#: refusal categories, first match wins: (category, pattern over the refusal text)
CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    ("no-op: knob overridden by a decorator", re.compile(r"overridden by its @triton")),
    ("no-op: same compiled kernel", re.compile(r"no-op: the candidate compiles to the same|no-op: the rewrite changes no")),
    ("no family chosen: no level passed the escalation tests", re.compile(r"chose no family")),
    ("no machine-applicable recipe", re.compile(r"no machine-applicable recipe|no offline applier")),
    ("domain: evidence the recipe requires is absent", re.compile(r"domain: the recipe requires")),
    ("domain: contraindicated", re.compile(r"domain: |contraindicated")),
    ("grid form not read", re.compile(r"grid .*(not a tuple|lambda|META)|META grid|three axes")),
    ("autotuned / heuristics kernel", re.compile(r"autotune|heuristic")),
    ("launch form (sites, *args, positional defaults)", re.compile(r"launched from \d+ places|\*args|by position|"
                                                                   r"launch without arguments")),
    ("launch value not a literal (shape-derived)", re.compile(r"not (an integer )?(a )?literal|derived from shapes|"
                                                              r"host variable assigned one")),
    ("dot operands / tiles not recognised", re.compile(r"tiles are not three distinct|dot operand|program axes")),
    ("loop / pass structure not matched", re.compile(r"loop|pass |chunk|running max|welford", re.I)),
    ("no target in the kernel (nothing to rewrite)", re.compile(r"^.*(no |none of |nothing ).*(in|of) [\w_]+", re.I)),
    ("already tried on this base", re.compile(r"already tried")),
]


def category(text: str) -> str:
    for name, rx in CATEGORIES:
        if rx.search(text):
            return name
    return "other"


def _family_refusals(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(family, reason) of every family the decision passed over (``family: reason`` strings)."""
    out = []
    for text in row.get("family_refusals") or []:
        fam, _, why = str(text).partition(": ")
        out.append((fam, why or fam))
    return out


def coverage_row(row: dict[str, Any]) -> dict[str, Any]:
    made = row.get("verdict") not in ("no_rewrite", "error") and bool(row.get("kind"))
    status = "error" if row.get("verdict") == "error" else ("structural" if made and row.get("structural")
                                                           else "launch knob" if made else "refused")
    reason = row.get("failure") or row.get("refused") or ""
    return {"set": row["set"], "kernel": row["kernel"], "cause": row.get("cause", "undecided"),
            "family": row.get("family") or "", "kind": row.get("kind") or "", "status": status,
            "category": "" if made else category(reason), "reason": "" if made else reason[:400],
            "verdict": row.get("verdict", ""), "passed_over": _family_refusals(row)}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    per_set: dict[str, Any] = {}
    for s in sorted({r["set"] for r in rows}):
        rs = [r for r in rows if r["set"] == s]
        per_set[s] = {"kernels": len(rs), "cause_decided": sum(r["cause"] != "undecided" for r in rs),
                      "structural": sum(r["status"] == "structural" for r in rs),
                      "launch_knob": sum(r["status"] == "launch knob" for r in rs),
                      "refused": sum(r["status"] == "refused" for r in rs),
                      "errors": sum(r["status"] == "error" for r in rs),
                      "refusal_categories": dict(Counter(r["category"] for r in rs if r["category"]).most_common())}
    fam: dict[str, dict[str, int]] = {}
    reasons: Counter[str] = Counter()
    for r in rows:
        if r["family"]:
            f = fam.setdefault(r["family"], {"applied": 0, "refused": 0})
            f["applied" if r["status"] in ("structural", "launch knob") else "refused"] += 1
        for name, why in r["passed_over"]:
            fam.setdefault(name, {"applied": 0, "refused": 0})["refused"] += 1
            reasons[f"{category(why)}: {_short(why)}"] += 1
        if r["category"]:
            reasons[f"{r['category']}: {_short(r['reason'])}"] += 1
    families = dict(sorted(fam.items(), key=lambda kv: (-kv[1]["refused"] - kv[1]["applied"], kv[0])))
    return {"per_set": per_set, "families": families, "top_refusals": reasons.most_common(15)}


def _short(text: str) -> str:
    """A refusal without the kernel's own names, so the same reason on two kernels counts once."""
    t = re.sub(r"\([^()]{0,200}\)", "(...)", str(text))
    t = re.sub(r"(?<![:\w])\w*_kernel\w*\b|(?<![:\w])_\w+\b", "K", t)
    return t[:140]


def markdown(payload: dict[str, Any]) -> str:
    p, s = payload["provenance"], payload["summary"]
    lines = ["# Rewrite coverage: what round 1 does per kernel, and why not", "",
             f"`{payload['command']}` on {p['machine']['node']} ({p['machine']['cpus']} CPUs), {p['date']}, Triton "
             f"{p['versions'].get('triton')}, kernel-ladder {p['versions'].get('kernel-ladder')}. Static round 1 (L1+L3 on "
             "a dry launch record, L4, the offline proposer's first point; no GPU). `structural`: a transform of the "
             "rewrite engine; `launch knob`: a launch/compiler option; `refused`: no rewrite, with the category of "
             "why.", "",
             "| set | kernels | cause decided | structural | launch knob | refused | errors |", "|---|---|---|---|---|---|---|"]
    for name, v in s["per_set"].items():
        lines.append(f"| {name} | {v['kernels']} | {v['cause_decided']} | {v['structural']} | {v['launch_knob']} | "
                     f"{v['refused']} | {v['errors']} |")
    lines += ["", "## Refusal categories", "", "| set | category | kernels |", "|---|---|---|"]
    for name, v in s["per_set"].items():
        lines += [f"| {name} | {c} | {n} |" for c, n in v["refusal_categories"].items()]
    lines += ["", "## Families: applied vs refused (refused includes a decided cause's families passed over)", "",
              "| family | applied | refused |", "|---|---|---|"]
    lines += [f"| {f} | {v['applied']} | {v['refused']} |" for f, v in s["families"].items()]
    lines += ["", "## Top refusal reasons across the sets", "", "| count | category: reason |", "|---|---|"]
    lines += [f"| {n} | {why.replace('|', '/')} |" for why, n in s["top_refusals"]]
    lines += ["", "## Per kernel", "", "| set | kernel | cause | family (kind) | status | category | reason / note |",
              "|---|---|---|---|---|---|---|"]
    for r in payload["rows"]:
        fam = f"{r['family']} ({r['kind']})" if r["family"] else "-"
        note = r["reason"] or (f"validation: {r['verdict']}" if r["verdict"] else "")
        lines.append(f"| {r['set']} | `{r['kernel']}` | {r['cause']} | {fam} | {r['status']} | {r['category'] or '-'} | "
                     f"{note[:150].replace('|', '/').replace(chr(10), ' ')} |")
    return "\n".join(lines) + "\n"


def _dry_round() -> Any:
    path = ROOT / "benchmarks" / "rewrite" / "dry_round.py"
    spec = importlib.util.spec_from_file_location("ladder_dry_round", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", choices=["naive", "realistic", "suite", "diagnosis"],
                    help="kernel set to run now (repeatable; default realistic and naive, unless --from is given)")
    ap.add_argument("--only", default="", help="comma-separated problem folder names")
    ap.add_argument("--from", dest="from_", action="append", type=Path, default=[],
                    help="read the rows of a dry round's JSON instead of running (repeatable)")
    ap.add_argument("--out", type=Path, default=RESULTS / "coverage", help="output folder")
    ap.add_argument("--name", default="", help="output file stem (default coverage_<sets>)")
    args = ap.parse_args(argv)
    raw: list[dict[str, Any]] = []
    for f in args.from_:
        raw += json.loads(read_text(f))["rows"]
    if args.set or not args.from_:
        dr = _dry_round()
        from benchmarks.suite.runner import connect_kb

        todo = dr.kernels(args.set or ["realistic", "naive"], {x for x in args.only.split(",") if x})
        kb = connect_kb(None, None)
        for i, (s, folder, cand) in enumerate(todo, 1):
            try:
                row = dr.one(kb, s, folder, cand, validate=False)
            except Exception as exc:  # a crash is a finding of the benchmark, not an abort
                row = {"set": s, "kernel": folder.name, "verdict": "error", "cause": "undecided", "structural": False,
                       "failure": f"{type(exc).__name__}: {exc}"[:500]}
            raw.append(row)
            print(f"[{i}/{len(todo)}] {s}/{folder.name}: {row['cause']} -> {row.get('family') or '-'}", flush=True)
    only = {x for x in args.only.split(",") if x}
    rows = [coverage_row(r) for r in raw if not only or r["kernel"] in only]
    sets = sorted({r["set"] for r in rows})
    cmd = "ladder bench coverage " + " ".join(argv if argv is not None else sys.argv[1:])
    payload = {"provenance": provenance(), "command": cmd.strip(), "summary": summarize(rows), "rows": rows}
    name = args.name or "coverage_" + "_".join(sets)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(payload, indent=1, default=str) + "\n")
    (args.out / f"{name}.md").write_text(markdown(payload))
    print(json.dumps(payload["summary"]["per_set"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
