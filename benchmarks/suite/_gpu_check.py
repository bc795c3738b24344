"""Validate and time every suite operator on a CUDA GPU: ModelNew vs Model on every CASE, eager vs initial.

    python benchmarks/suite/_gpu_check.py --out /tmp/suite                       # everything
    python benchmarks/suite/_gpu_check.py --out /tmp/suite --ops softmax matmul  # some operators
    python benchmarks/suite/_gpu_check.py --out /tmp/suite --category matmul --budget-s 300
    python benchmarks/suite/_gpu_check.py --out /tmp/suite --no-timing           # validation only
    python benchmarks/suite/_gpu_check.py --out /tmp/naive --initial naive       # naive.py instead of initial.py

For each case: build Model and ModelNew (same seed) and the inputs directly on the GPU, run both under
``torch.no_grad()``, compare every element (NaN fails), then time both with ``triton.testing.do_bench``
(median; do_bench flushes L2 before each run). Writes ``suite_gpu.jsonl`` (one line per case, as it goes),
``suite_gpu.json`` (everything plus a summary) and ``suite_gpu.txt`` (the table) under --out.

Robustness: the work runs in a worker subprocess driven by this process. A failing case (compile error,
wrong result, out of memory) is recorded and the worker goes on. An error that poisons the CUDA context
(illegal address, launch failure) ends the worker; the driver records it against that operator and starts a
new worker for the operators left. --budget-s bounds the whole run: cases not started in time are recorded as
skipped.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

EAGER_FLOOR_US = 50.0
_POISON = ("illegal memory access", "illegal address", "unspecified launch failure", "misaligned address",
           "device-side assert", "an illegal instruction", "CUDA error: unknown error")


# ---------------------------------------------------------------------------------------------- worker ---
def _env_info() -> dict[str, Any]:
    import torch
    import triton

    return {"torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def _run_case(problem: Any, new_cls: type, case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from _harness import build_case, compare_outputs, roofline_seconds
    from triton.testing import do_bench

    rec: dict[str, Any] = {"status": "error"}
    roof = roofline_seconds(problem, case)
    rec["roofline_us"] = None if roof is None else round(roof * 1e6, 2)
    model = new = inputs = ref = out = None
    try:
        model, new, inputs = build_case(problem, new_cls, case, seed=args.seed, device=args.device)
        with torch.no_grad():
            ref = model(*inputs)
            _sync(args.device)
            out = new(*inputs)
            _sync(args.device)
        cmp = compare_outputs(ref, out, problem.tolerance)
        rec.update(cmp.as_dict())
        rec["status"] = "ok" if cmp.ok else "mismatch"
        ref = out = None
        if not args.no_timing and args.device == "cuda":
            with torch.no_grad():
                bench = {"warmup": args.warmup_ms, "rep": args.rep_ms, "return_mode": "median"}
                eager_ms = do_bench(lambda: model(*inputs), **bench)
                initial_ms = do_bench(lambda: new(*inputs), **bench)
            rec["eager_us"] = round(eager_ms * 1e3, 2)
            rec["initial_us"] = round(initial_ms * 1e3, 2)
            rec["eager_over_initial"] = round(eager_ms / initial_ms, 3) if initial_ms > 0 else None
            rec["eager_ge_50us"] = rec["eager_us"] >= EAGER_FLOOR_US
            if roof:
                rec["eager_frac_roofline"] = round(roof * 1e6 / rec["eager_us"], 3)
                rec["initial_frac_roofline"] = round(roof * 1e6 / rec["initial_us"], 3)
    except torch.cuda.OutOfMemoryError as exc:
        rec.update(status="oom", ok=False, message=str(exc).splitlines()[0][:500])
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        rec.update(status="poisoned" if any(p in text for p in _POISON) else "error", ok=False, message=text[-2000:])
    finally:
        model = new = inputs = ref = out = None
        gc.collect()
        try:
            torch.cuda.empty_cache()
        except Exception:  # a poisoned context refuses even this; the driver restarts the worker
            pass
    return rec


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def worker(args: argparse.Namespace) -> int:
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before triton loads: lets the driver logic run in CI
    import torch
    from _harness import case_label, list_ops, load_op

    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: _gpu_check.py needs a GPU (use _check.py on CPU)", file=sys.stderr)
        return 2
    deadline = args.deadline or float("inf")
    known = set(list_ops())
    with open(args.jsonl, "a") as sink:
        def emit(rec: dict[str, Any]) -> None:
            sink.write(json.dumps(rec, default=str) + "\n")
            sink.flush()

        for op in args.ops:
            if op not in known:
                emit({"op": op, "kind": "op", "status": "error", "message": "unknown operator"})
                continue
            try:
                problem, new_cls = load_op(op, args.initial)
            except Exception as exc:
                emit({"op": op, "kind": "op", "status": "error", "message": f"{type(exc).__name__}: {exc}"[-2000:]})
                continue
            category = getattr(problem.module, "CATEGORY", None)
            cases = problem.smoke_cases if args.smoke else problem.cases
            cases = cases[: args.max_cases] if args.max_cases else cases
            for i, case in enumerate(cases):
                base = {"op": op, "kind": "case", "category": category, "index": i, "case": case,
                        "label": case_label(case)}
                if time.time() > deadline:
                    emit({**base, "status": "skipped", "ok": False, "message": "time budget spent"})
                    continue
                t0 = time.perf_counter()
                rec = _run_case(problem, new_cls, case, args)
                emit({**base, **rec, "seconds": round(time.perf_counter() - t0, 2)})
                print(_row({**base, **rec}), flush=True)
                if rec["status"] == "poisoned":
                    return 3  # the CUDA context is unusable; the driver starts a fresh worker
            emit({"op": op, "kind": "op_done"})
    return 0


# ---------------------------------------------------------------------------------------------- driver ---
def _row(r: dict[str, Any]) -> str:
    def f(x: Any, w: int) -> str:
        return ("-" if x is None else f"{x:.1f}" if isinstance(x, float) else str(x)).rjust(w)

    flag = "" if r.get("eager_ge_50us", True) else "  eager<50us"
    return (f"{r['op']:<24}{r.get('label', ''):<40}{r.get('status', ''):>9}{f(r.get('eager_us'), 10)}"
            f"{f(r.get('initial_us'), 11)}{f(r.get('eager_over_initial'), 8)}{f(r.get('roofline_us'), 10)}{flag}")


HEADER = (f"{'op':<24}{'case':<40}{'status':>9}{'eager_us':>10}{'initial_us':>11}{'e/i':>8}{'roof_us':>10}")


def driver(args: argparse.Namespace) -> int:
    from _harness import SUITE_DIR, list_ops, load_problem

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jsonl = out / "suite_gpu.jsonl"
    jsonl.write_text("")
    ops = args.ops or list_ops()
    if args.category:
        ops = [op for op in ops if getattr(load_problem(SUITE_DIR / op).module, "CATEGORY", None) in args.category]
    start = time.time()
    deadline = start + args.budget_s if args.budget_s else 0.0
    remaining = list(ops)
    restarts = 0
    print(HEADER, flush=True)
    while remaining:
        cmd = [sys.executable, __file__, "--worker", "--jsonl", str(jsonl), "--seed", str(args.seed),
               "--warmup-ms", str(args.warmup_ms), "--rep-ms", str(args.rep_ms), "--deadline", str(deadline),
               "--max-cases", str(args.max_cases), "--device", args.device, "--initial", args.initial,
               *(["--no-timing"] if args.no_timing else []), *(["--smoke"] if args.smoke else []),
               "--ops", *remaining]
        timeout = (deadline - time.time() + 120) if deadline else None
        try:
            rc = subprocess.run(cmd, timeout=timeout, env=os.environ.copy()).returncode
        except subprocess.TimeoutExpired:
            rc = -9
        done = {r["op"] for r in _read(jsonl) if r.get("kind") in ("op_done", "op")}
        started = [r["op"] for r in _read(jsonl) if r.get("kind") == "case"]
        remaining = [op for op in remaining if op not in done]
        if not remaining:
            break
        if rc == 2:
            return 2
        current = remaining[0]
        if rc == -9:
            _append(jsonl, {"op": current, "kind": "op", "status": "timeout",
                            "message": "worker killed at the time budget"})
            for op in remaining[1:]:
                _append(jsonl, {"op": op, "kind": "op", "status": "skipped", "message": "time budget spent"})
            break
        reason = "CUDA context poisoned" if rc == 3 else f"worker exited with status {rc}"
        _append(jsonl, {"op": current, "kind": "op", "status": "crashed",
                        "message": f"{reason}; {sum(1 for s in started if s == current)} case(s) recorded before"})
        remaining = remaining[1:]
        restarts += 1
    records = _read(jsonl)
    summary = _summary(records, ops, time.time() - start, restarts)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _provenance import provenance

    (out / "suite_gpu.json").write_text(json.dumps({"env": _env_info(), "initial": args.initial, "provenance": provenance(),
                                                    "summary": summary, "records": records},
                                                   indent=1, default=str))
    table = [HEADER] + [_row(r) for r in records if r.get("kind") == "case"]
    table += [f"{r['op']:<24}{'(operator)':<40}{r['status']:>9}  {r.get('message', '')}" for r in records
              if r.get("kind") == "op"]
    table.append("")
    table.append(json.dumps(summary, indent=1))
    (out / "suite_gpu.txt").write_text("\n".join(table) + "\n")
    print("\n".join(table[-1:]))
    return 0 if summary["all_valid"] else 1


def _summary(records: list[dict[str, Any]], ops: list[str], wall: float, restarts: int) -> dict[str, Any]:
    cases = [r for r in records if r.get("kind") == "case"]
    op_errors = {r["op"]: r.get("status") for r in records if r.get("kind") == "op"}
    bad_ops = sorted({r["op"] for r in cases if r.get("status") != "ok"} | set(op_errors))
    timed = [r for r in cases if r.get("eager_us") is not None]
    return {
        "ops": len(ops),
        "ops_all_valid": len([op for op in ops if op not in bad_ops]),
        "cases": len(cases),
        "cases_valid": sum(1 for r in cases if r.get("status") == "ok"),
        "failures": [f"{r['op']} [{r.get('label', '')}]: {r.get('status')}: {str(r.get('message', ''))[:200]}"
                     for r in cases if r.get("status") not in ("ok",)]
        + [f"{op}: {st}" for op, st in op_errors.items()],
        "eager_under_50us": [f"{r['op']} [{r['label']}]: {r['eager_us']} us" for r in timed
                             if r["eager_us"] < EAGER_FLOOR_US],
        "all_valid": not bad_ops,
        "wall_s": round(wall, 1),
        "worker_restarts": restarts,
    }


def _read(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a worker killed mid-line
            continue
    return out


def _append(path: Path, rec: dict[str, Any]) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="directory for suite_gpu.{json,jsonl,txt} (driver)")
    parser.add_argument("--ops", nargs="*", default=[], help="operator names (default: all)")
    parser.add_argument("--category", nargs="*", help="only these CATEGORY values")
    parser.add_argument("--budget-s", type=float, default=540.0,
                        help="wall-clock budget of the whole run in seconds (default 540; 0: none)")
    parser.add_argument("--max-cases", type=int, default=0, help="only the first N cases of each operator (0: all)")
    parser.add_argument("--warmup-ms", type=int, default=10)
    parser.add_argument("--rep-ms", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-timing", action="store_true", help="validate only")
    parser.add_argument("--smoke", action="store_true", help="run SMOKE_CASES instead of CASES")
    parser.add_argument("--initial", choices=["initial", "naive"], default="initial",
                        help="which starting point to check and time: initial.py (default) or naive.py")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                        help="cpu runs the Triton interpreter without timing (to test this script)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jsonl", help=argparse.SUPPRESS)
    parser.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    if not args.out:
        parser.error("--out DIR is required")
    return driver(args)


if __name__ == "__main__":
    sys.exit(main())
