"""Validate suite operators on the CPU with the Triton interpreter and print one JSON object.

    python benchmarks/suite/_check.py                  # every operator, SMOKE_CASES, interpreter
    python benchmarks/suite/_check.py relu softmax     # some operators
    python benchmarks/suite/_check.py --list           # operator names, one a line
    python benchmarks/suite/_check.py relu --candidate my_relu.py   # another ModelNew for one operator
    python benchmarks/suite/_check.py --initial naive  # every operator's naive.py instead of initial.py

The interpreter has to be switched on before any ``@triton.jit`` function is defined, so this script sets
``TRITON_INTERPRET=1`` before it imports torch, triton or any ``initial.py``. Each operator's failure is
recorded and the others still run. Output: ``{"ops": {op: {"ok", "seconds", "error", "cases": [...]}},
"ok": bool}``; the exit status is 0 only if every operator passed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", help="operator folder names (default: all)")
    parser.add_argument("--list", action="store_true", help="print operator names and exit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-interpret", action="store_true", help="leave TRITON_INTERPRET alone (for a GPU run)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--full", action="store_true", help="run CASES instead of SMOKE_CASES (GPU only)")
    parser.add_argument("--candidate", help="a file defining ModelNew to check instead of initial.py (one operator)")
    parser.add_argument("--initial", choices=["initial", "naive"], default="initial",
                        help="which starting point to check: initial.py (default) or naive.py")
    args = parser.parse_args(argv)

    if not args.no_interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

    from _harness import check_case, list_ops, load_candidate, load_op  # noqa: PLC0415 (after the switch)

    ops = args.ops or list_ops()
    if args.list:
        print("\n".join(ops))
        return 0
    unknown = sorted(set(ops) - set(list_ops()))
    if unknown:
        print(f"unknown operator(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    if args.candidate and len(ops) != 1:
        print("--candidate needs exactly one operator", file=sys.stderr)
        return 2

    report: dict[str, dict] = {}
    for op in ops:
        t0 = time.perf_counter()
        entry: dict = {"ok": False, "error": None, "cases": []}
        try:
            problem, new_cls = load_op(op, args.initial)
            if args.candidate:
                new_cls = load_candidate(args.candidate)
            cases = problem.cases if args.full else problem.smoke_cases
            for case in cases:
                try:
                    entry["cases"].append(check_case(problem, new_cls, case, seed=args.seed, device=args.device))
                except Exception as exc:  # one case failing must not hide the others
                    entry["cases"].append({"case": case, "ok": False, "message": _short(exc)})
            entry["ok"] = bool(entry["cases"]) and all(c["ok"] for c in entry["cases"])
        except Exception as exc:
            entry["error"] = _short(exc)
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        report[op] = entry
    print(json.dumps({"ops": report, "ok": all(e["ok"] for e in report.values())}))
    return 0 if all(e["ok"] for e in report.values()) else 1


def run_parallel(ops: list[str], *, initial: str = "initial", workers: int = 2, timeout: float = 900) -> dict[str, dict]:
    """This script over ``ops`` in ``workers`` interpreter subprocesses at once (each sets ``TRITON_INTERPRET=1``
    before triton loads); the merged ``ops`` entries. A worker that prints nothing raises with its stderr."""
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve()
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    procs = [
        subprocess.Popen([sys.executable, str(here), "--initial", initial, *ops[i::workers]], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=here.parents[2])
        for i in range(workers) if ops[i::workers]
    ]
    results: dict[str, dict] = {}
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if not out.strip():
            raise RuntimeError(f"_check.py printed nothing (exit {proc.returncode}):\n{err[-3000:]}")
        results.update(json.loads(out)["ops"])
    return results


def _short(exc: BaseException) -> str:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return f"{type(exc).__name__}: {exc}\n{''.join(tb[-3:])}"[:4000]


if __name__ == "__main__":
    sys.exit(main())
