"""Time every diagnosis item on a CUDA GPU: initial kernel, reference fix and torch eager, per case.

    PYTHONPATH=. python benchmarks/diagnosis/gpu_time.py OUTDIR                      # every item, every CASE
    PYTHONPATH=. python benchmarks/diagnosis/gpu_time.py OUTDIR --items sum_all,matmul_fp32
    PYTHONPATH=. python benchmarks/diagnosis/gpu_time.py OUTDIR --split eval --budget-s 200

For each item and case: build Model and both ModelNew classes under the same seed, draw the inputs on the GPU,
check the initial kernel and the fix against the reference (every element, the problem's tolerance), then
time all three with ``triton.testing.do_bench`` (median of the repetitions; do_bench clears L2 between them).
An ``at_roofline`` item has no fix.py: its initial kernel is its reference, timed once. Results go to
``OUTDIR/diagnosis_gpu_times.json`` (rewritten after every item, so a run cut short keeps what it measured)
with provenance (host, GPU, torch/triton/CUDA versions, date, command); a table goes to stdout and
``OUTDIR/diagnosis_gpu_times.txt``. Needs only torch and triton: labels are read without PyYAML, problems
through the suite harness that loads without pydantic. ``--device cpu --no-timing --smoke`` runs the same
path in the Triton interpreter (for tests).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT_NAME = "diagnosis_gpu_times"
WEAK_SPEEDUP = 1.15


# ------------------------------------------------------------------------------------------- items ---
def list_items(root: Path = HERE) -> list[str]:
    """Item folder names (folders holding problem.py, initial.py and label.yaml), sorted."""
    return sorted(p.name for p in root.iterdir() if p.is_dir()
                  and all((p / f).is_file() for f in ("problem.py", "initial.py", "label.yaml")))


def _scalar_or_list(text: str) -> Any:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return [x.strip().strip("'\"") for x in text[1:-1].split(",") if x.strip()]
    return text.strip("'\"")


def label_fields(path: Path) -> dict[str, Any]:
    """The top-level ``cause``, ``secondary``, ``class`` and ``split`` of a label.yaml, without PyYAML."""
    out: dict[str, Any] = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("cause", "secondary", "class", "split") and not line.startswith(" "):
            out[key] = _scalar_or_list(value)
    missing = {"cause", "class", "split"} - set(out)
    if missing:
        raise ValueError(f"{path}: no top-level {', '.join(sorted(missing))}")
    return out


def select(requested: str | None, split: str | None, available: list[str], root: Path = HERE) -> list[str]:
    """The items to run: ``--items a,b`` (in that order) or all, then only one half if ``--split``."""
    names = [n.strip() for n in requested.split(",") if n.strip()] if requested else list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise SystemExit(f"unknown item(s): {', '.join(unknown)}; items are the folders of {root}")
    if split:
        names = [n for n in names if label_fields(root / n / "label.yaml")["split"] == split]
    return names


# ----------------------------------------------------------------------------------------- summary ---
def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per item: geomean over cases of initial/fix (the fix's speedup) and torch/fix; failures listed."""
    items: dict[str, dict[str, Any]] = {}
    failures = []
    for r in records:
        it = items.setdefault(r["item"], {"cause": r["cause"], "split": r["split"], "fix_speedup": [],
                                          "fix_vs_torch": [], "initial_vs_torch": []})
        ms = r.get("ms") or {}
        if ms.get("initial") and ms.get("fix"):
            it["fix_speedup"].append(ms["initial"] / ms["fix"])
        if ms.get("torch") and ms.get("fix"):
            it["fix_vs_torch"].append(ms["torch"] / ms["fix"])
        if ms.get("torch") and ms.get("initial"):
            it["initial_vs_torch"].append(ms["torch"] / ms["initial"])
        failures += [f"{r['item']} [{r['case']}] {k}: {v['message']}" for k, v in r.get("checks", {}).items()
                     if not v["ok"]]
        if r.get("error"):
            failures.append(f"{r['item']} [{r['case']}]: {r['error'][:300]}")
    for it in items.values():
        for key in ("fix_speedup", "fix_vs_torch", "initial_vs_torch"):
            g = geomean(it[key])
            it[key] = None if g is None else round(g, 3)
    #: items whose planted cause costs less than WEAK_SPEEDUP on this machine: their label deserves a second look
    weak = sorted(n for n, it in items.items() if it["fix_speedup"] is not None and it["fix_speedup"] < WEAK_SPEEDUP)
    return {"items": items, "failures": failures, "weak_items": weak, "n_records": len(records)}


def render_table(records: list[dict[str, Any]]) -> str:
    """One line per (item, case): times in ms and the fix's speedup over the initial kernel."""
    head = f"{'item':24s} {'cause':22s} {'split':5s} {'case':34s} {'initial':>9s} {'fix':>9s} {'torch':>9s} {'x fix':>6s} ok"
    lines = [head, "-" * len(head)]
    def cell(ms: dict[str, float], k: str) -> str:
        return f"{ms[k]:9.4f}" if ms.get(k) else f"{'-':>9s}"

    for r in records:
        ms = r.get("ms") or {}
        speed = f"{ms['initial'] / ms['fix']:6.2f}" if ms.get("initial") and ms.get("fix") else f"{'-':>6s}"
        ok = "ok" if not r.get("error") and all(c["ok"] for c in r.get("checks", {}).values()) else "FAIL"
        lines.append(f"{r['item'][:24]:24s} {r['cause'][:22]:22s} {r['split']:5s} {r['case'][:34]:34s} "
                     f"{cell(ms, 'initial')} {cell(ms, 'fix')} {cell(ms, 'torch')} {speed} {ok}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- running ---
def _provenance(argv: list[str], device: str) -> dict[str, Any]:
    import torch
    import triton

    gpu = torch.cuda.get_device_name(0) if device.startswith("cuda") and torch.cuda.is_available() else None
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/diagnosis/gpu_time.py", *argv]),
        "hostname": platform.node(), "gpu": gpu, "device": device, "python": platform.python_version(),
        "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
    }


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_item(name: str, args: argparse.Namespace, deadline: float) -> list[dict[str, Any]]:
    """Every case of one item: validation of initial and fix, then do_bench of initial, fix and torch."""
    import torch
    from _harness import case_label, compare_outputs, load_candidate, load_problem

    folder = HERE / name
    label = label_fields(folder / "label.yaml")
    problem = load_problem(folder)
    kernels = {"initial": load_candidate(folder / "initial.py")}
    if (folder / "fix.py").is_file():
        kernels["fix"] = load_candidate(folder / "fix.py")
    records = []
    for case in problem.smoke_cases if args.smoke else problem.cases:
        rec: dict[str, Any] = {"item": name, "cause": label["cause"], "split": label["split"],
                               "case": case_label(case), "checks": {}, "ms": {}}
        records.append(rec)
        if time.monotonic() > deadline:
            rec["error"] = "skipped: --budget-s reached"
            continue
        try:
            with torch.device(args.device):
                model = problem.make_model(case, seed=args.seed, device=args.device)
                news = {k: problem.instantiate(c, case, seed=args.seed, device=args.device) for k, c in kernels.items()}
                inputs = problem.make_inputs(case, seed=args.seed + 1, device=args.device)
            with torch.no_grad():
                ref = model(*inputs)
                for kind, new in news.items():
                    out = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                    _sync(args.device)
                    rec["checks"][kind] = compare_outputs(ref, out, problem.tolerance).as_dict()
                    del out
                if not args.no_timing:
                    from triton.testing import do_bench

                    for kind, fn in [*news.items(), ("torch", model)]:
                        rec["ms"][kind] = round(float(do_bench(lambda fn=fn, xs=inputs: fn(*xs), warmup=args.warmup_ms,
                                                               rep=args.rep_ms, return_mode="median")), 5)
            del model, news, inputs, ref
        except Exception as exc:  # noqa: BLE001 - one failing case must not stop the run
            rec["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        finally:
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
    return records


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--items", help="comma-separated item names (default: all)")
    parser.add_argument("--split", choices=("tune", "eval"))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--warmup-ms", type=float, default=10.0)
    parser.add_argument("--rep-ms", type=float, default=40.0)
    parser.add_argument("--budget-s", type=float, default=330.0, help="cases not started by then are skipped")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="SMOKE_CASES instead of CASES")
    parser.add_argument("--no-timing", action="store_true", help="validate only")
    args = parser.parse_args(argv)
    names = select(args.items, args.split, list_items())
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
    sys.path.insert(0, str(ROOT / "benchmarks" / "suite"))
    sys.path.insert(0, str(ROOT))
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU here; pass --device cpu --no-timing --smoke to check the items on the CPU")
    args.outdir.mkdir(parents=True, exist_ok=True)
    prov = _provenance(argv, args.device)
    deadline = time.monotonic() + args.budget_s
    records: list[dict[str, Any]] = []
    t0 = time.monotonic()
    for name in names:
        records += run_item(name, args, deadline)
        payload = {"provenance": {**prov, "wall_s": round(time.monotonic() - t0, 1)},
                   "settings": {"warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms, "seed": args.seed,
                                "smoke": args.smoke, "timing": not args.no_timing, "return_mode": "median"},
                   "records": records, "summary": summarize(records)}
        (args.outdir / f"{OUT_NAME}.json").write_text(json.dumps(payload, indent=1) + "\n")
    table = render_table(records)
    (args.outdir / f"{OUT_NAME}.txt").write_text(table + "\n")
    print(table)
    failures = summarize(records)["failures"]
    print(f"\n{len(records)} cases, {len(failures)} failures, {time.monotonic() - t0:.0f} s; "
          f"results in {args.outdir / (OUT_NAME + '.json')}")
    for f in failures:
        print("  " + f)
    weak = summarize(records)["weak_items"]
    if weak:
        print(f"fix less than {WEAK_SPEEDUP}x faster than initial (check these labels): {', '.join(weak)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
