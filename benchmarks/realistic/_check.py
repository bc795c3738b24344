"""Validate the real-kernel problems of benchmarks/realistic against their references; print one JSON object.

    python benchmarks/realistic/_check.py                       # every problem, SMOKE_CASES, interpreter
    python benchmarks/realistic/_check.py liger_rmsnorm         # some problems
    python benchmarks/realistic/_check.py --list                # problem names
    python benchmarks/realistic/_check.py --features            # per problem: repository, category, launch features
    python benchmarks/realistic/_check.py --compile             # compile_only problems: compile for sm_90 on CPU
    python benchmarks/realistic/_check.py --no-interpret --device cuda --full --time --out DIR   # on a GPU

This is the suite's validation path (``benchmarks/suite/_harness``: the same problem loader, seeding and
element-by-element comparison) plus the problem-format extensions real kernels declare:

- ``INPLACE_OUTPUTS``: indices of inputs the reference mutates as its result. Reference and candidate each get
  their own fresh copy of the inputs; the listed inputs are compared after the call like outputs.
- ``INT_ATOL``: integer outputs may differ from the reference by at most this much (default 0, exact).
- ``CPU_VALIDATION = "compile_only"``: the interpreter cannot run the kernel (libdevice calls, block pointers
  under Triton >= 3.7). In interpreter mode such a problem is reported as ``skipped`` with the reason, never
  as passed; only its reference is run, to show the problem itself loads and works. It is validated on a GPU.
  ``--compile`` compiles such kernels for sm_90 instead (``benchmarks/suite/_compile_check.py``'s recorder,
  SMOKE_CASES' launch configs, model and inputs on the ``meta`` device). Kernels built on ``tl.make_block_ptr``
  cannot even be compiled by Triton >= 3.7 and are reported ``skipped`` there, with the reason.

Autotuned kernels (``@triton.autotune``) cannot benchmark in the interpreter (no GPU driver); there every config
runs once, untimed, the first is kept, and its result is compared. With ``--compile`` every config is compiled, untimed.
On a GPU the autotuner works as published.

With ``--out DIR`` the report is also written to ``DIR/realistic_check.json`` with provenance (machine,
versions, date, command). Exit status 0 only if nothing failed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "suite"))


def list_problems() -> list[str]:
    """Every problem folder (one holding problem.py and initial.py), sorted by name."""
    return sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
                  and (p / "problem.py").is_file() and (p / "initial.py").is_file())


def _decorator_names(fn: ast.FunctionDef) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        names.add(ast.unparse(target).split(".")[-1])
    return names


def launch_features(source: str) -> dict[str, bool]:
    """What ``ModelNew.forward`` reaches in an initial.py, read from the AST (nothing runs): whether a launched
    kernel (``kernel[grid](...)``) is ``@triton.autotune``d or has ``@triton.heuristics``, whether a launch's grid is
    a one-argument lambda (inline or bound to a name in that function), and whether the path goes through an
    ``autograd.Function``'s ``apply``. Calls are followed through module-level functions, ``X.apply`` of classes
    defined in the file and module aliases (``cross_entropy = _cross_entropy.apply``); kernels of the file that the
    forward never launches do not count."""
    tree = ast.parse(source)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    aliases = {}
    for n in tree.body:  # `cross_entropy = _cross_entropy.apply`, `l2_norm = l2norm`
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            aliases[n.targets[0].id] = ast.unparse(n.value)
    kernels = {name: fn for name, fn in funcs.items() if "jit" in _decorator_names(fn)}

    def method(cls: str, name: str):
        for item in classes[cls].body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return item
        return None

    autograd = {c for c, n in classes.items() if any(ast.unparse(b).endswith("autograd.Function") for b in n.bases)}
    start = method("ModelNew", "forward") if "ModelNew" in classes else None
    todo, seen = [start] if start else [], set()
    out = dict.fromkeys(("autotune", "heuristics", "lambda_grid", "autograd"), False)
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        lambdas = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
                   for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in kernels:
                decos = _decorator_names(kernels[f.value.id])
                out["autotune"] |= "autotune" in decos
                out["heuristics"] |= "heuristics" in decos
                grid = f.slice
                out["lambda_grid"] |= (isinstance(grid, ast.Lambda) and len(grid.args.args) == 1) or (
                    isinstance(grid, ast.Name) and grid.id in lambdas)
                continue
            name = ast.unparse(f)
            name = aliases.get(name, name)
            if name.endswith(".apply") and name[:-6] in classes:
                out["autograd"] |= name[:-6] in autograd
                todo.append(method(name[:-6], "forward"))
            elif name in funcs and name not in kernels:
                todo.append(funcs[name])
            elif name in classes and method(name, "forward"):
                todo.append(method(name, "forward"))
    return out


def set_entry(name: str) -> dict[str, Any]:
    """One problem's row of the README table, from its files: repository, category, CPU validation, features."""
    import re

    folder = HERE / name
    problem_src, source_md = (folder / "problem.py").read_text(), (folder / "SOURCE.md").read_text()
    repo = re.search(r"Repository:\s*https://github\.com/([\w.-]+/[\w.-]+)", source_md)
    category = re.search(r'^CATEGORY = "(\w+)"', problem_src, flags=re.MULTILINE)
    compile_only = re.search(r'^CPU_VALIDATION = "compile_only"', problem_src, flags=re.MULTILINE)
    return {"repository": repo.group(1) if repo else None, "category": category.group(1) if category else None,
            "cpu_validation": "compile_only" if compile_only else "interpreter",
            **launch_features((folder / "initial.py").read_text())}


def compare(problem: Any, ref: Any, out: Any) -> Any:
    """``_harness.compare_problem``: the tolerances, with integer outputs allowed to differ by ``INT_ATOL``."""
    from _harness import compare_problem

    return compare_problem(problem, ref, out)


def check_case(problem: Any, new_cls: type, case: dict[str, Any], seed: int, device: str,
               time_it: bool = False) -> dict[str, Any]:
    """Run Model and ModelNew on one case, each on its own copy of the inputs, and compare results.

    With ``time_it`` (GPU), also time both with ``triton.testing.do_bench`` after a correct result; in-place
    problems then keep updating their inputs between repetitions (the values stay finite for this set).
    """
    import torch
    from _harness import build_case, case_label, roofline_seconds

    inplace = list(getattr(problem.module, "INPLACE_OUTPUTS", []) or [])
    model, new, inputs = build_case(problem, new_cls, case, seed, device)
    ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    new_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        ref = model(*ref_in)
        out = new(*new_in)
    if inplace:
        ref = (ref, *[ref_in[i] for i in inplace]) if ref is not None else tuple(ref_in[i] for i in inplace)
        out = (out, *[new_in[i] for i in inplace]) if out is not None else tuple(new_in[i] for i in inplace)
    record = {"case": case, "label": case_label(case), **compare(problem, ref, out).as_dict()}
    if time_it and record["ok"]:
        from triton.testing import do_bench

        with torch.no_grad():
            record["initial_ms"] = do_bench(lambda: new(*new_in), warmup=10, rep=40)
            record["eager_ms"] = do_bench(lambda: model(*ref_in), warmup=10, rep=40)
        roofline = roofline_seconds(problem, case)
        record["roofline_ms"] = roofline * 1e3 if roofline is not None else None
    return record


def _untimed_autotuning() -> None:
    """Let ``triton.autotune`` run in the interpreter: every config runs once and all tie, so the first is kept."""
    from triton.runtime.autotuner import Autotuner

    def run_once(fn: Any, quantiles: Any = None, **_: Any) -> list[float]:
        fn()
        return [1.0, 1.0, 1.0] if quantiles else 1.0

    Autotuner.do_bench = property(lambda self: run_once)


def _write(out: str, argv: list[str] | None, report: dict[str, dict], *, complete: bool) -> None:
    Path(out).mkdir(parents=True, exist_ok=True)
    doc = {"provenance": _provenance(argv), "complete": complete, "problems": report,
           "ok": all(e["ok"] for e in report.values())}
    tmp = Path(out) / "realistic_check.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(Path(out) / "realistic_check.json")


def check_problem(name: str, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from _harness import load_candidate, load_problem

    entry: dict[str, Any] = {"ok": False, "status": "error", "error": None, "cases": []}
    problem = load_problem(HERE / name)
    cases = problem.cases if args.full else problem.smoke_cases
    mode = getattr(problem.module, "CPU_VALIDATION", "interpret")
    if args.interpret and mode == "compile_only":
        for case in cases:  # the reference must still run: the problem itself is sound
            model, inputs = problem.make_model(case, seed=args.seed), problem.make_inputs(case, seed=args.seed + 1)
            with torch.no_grad():
                model(*inputs)
        entry.update(ok=True, status="skipped",
                     error="compile_only: the interpreter cannot run this kernel; validated on the GPU only")
        return entry
    new_cls = load_candidate(args.candidate or HERE / name / "initial.py")
    for case in cases:
        try:
            entry["cases"].append(check_case(problem, new_cls, case, seed=args.seed, device=args.device,
                                             time_it=args.time))
        except Exception as exc:  # noqa: BLE001 (one case failing must not hide the others)
            entry["cases"].append({"case": case, "ok": False, "message": _short(exc)})
    entry["ok"] = bool(entry["cases"]) and all(c["ok"] for c in entry["cases"])
    entry["status"] = "ok" if entry["ok"] else "failed"
    return entry


def compile_problem(name: str) -> dict[str, Any]:
    """Compile a compile_only problem's kernels for sm_90 at its SMOKE_CASES' launch configs; nothing runs."""
    import torch
    import triton
    from _compile_check import Recorder
    from _harness import build_case, load_candidate, load_problem
    from triton.runtime.jit import JITFunction

    problem = load_problem(HERE / name)
    source = (HERE / name / "initial.py").read_text()
    if getattr(problem.module, "CPU_VALIDATION", "interpret") != "compile_only":
        return {"ok": True, "status": "skipped", "error": "not compile_only: validated in the interpreter", "cases": []}
    major_minor = tuple(int(x) for x in triton.__version__.split(".")[:2])
    if "make_block_ptr" in source and major_minor >= (3, 7):
        return {"ok": True, "status": "skipped", "cases": [],
                "error": f"uses tl.make_block_ptr, removed in Triton 3.7 (this is {triton.__version__}); "
                         "compiled and validated on the GPU image (Triton 3.6)"}
    recorder = Recorder(90)
    saved = JITFunction.run
    JITFunction.run = lambda self, *a, **kw: recorder(self, *a, **kw)  # no kernel launches in this process
    try:
        new_cls = load_candidate(HERE / name / "initial.py")
        entry: dict[str, Any] = {"cases": [], "error": None}
        for case in problem.smoke_cases:
            recorder.current = []
            _, new, inputs = build_case(problem, new_cls, case, seed=0, device="meta")
            with torch.no_grad():
                new(*inputs)
            launches = list(recorder.current)
            entry["cases"].append({"case": case, "ok": bool(launches) and all(r["ok"] for r in launches),
                                   "launches": launches,
                                   "message": "" if launches else "forward launched no Triton kernel"})
    finally:
        JITFunction.run = saved
    entry["ok"] = all(c["ok"] for c in entry["cases"])
    entry["status"] = "compiled" if entry["ok"] else "failed"
    return entry


def _provenance(argv: list[str]) -> dict[str, Any]:
    import platform

    import torch
    import triton

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"machine": platform.node(), "gpu": gpu, "python": platform.python_version(), "torch": torch.__version__,
            "triton": triton.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join([sys.executable, __file__, *argv])}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", help="problem folder names (default: all)")
    parser.add_argument("--list", action="store_true", help="print problem names and exit")
    parser.add_argument("--features", action="store_true",
                        help="print each problem's repository, category, CPU validation and launch features (JSON)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-interpret", dest="interpret", action="store_false",
                        help="leave TRITON_INTERPRET alone (for a GPU run)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--full", action="store_true", help="run CASES instead of SMOKE_CASES (GPU only)")
    parser.add_argument("--time", action="store_true",
                        help="GPU: also time initial and eager torch per case (do_bench, ms) next to the roofline")
    parser.add_argument("--candidate", help="a file defining ModelNew to check instead of initial.py (one problem)")
    parser.add_argument("--compile", action="store_true",
                        help="compile the compile_only problems for sm_90 (no interpreter, no GPU)")
    parser.add_argument("--out", help="also write realistic_check.json with provenance into this directory")
    args = parser.parse_args(argv)
    if args.time and args.device == "cpu":
        parser.error("--time needs --device cuda (and --no-interpret)")
    if args.compile:
        args.interpret = False
        _untimed_autotuning()  # an autotuned kernel compiles every config; nothing is timed (there is no driver)
    if args.interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton
        _untimed_autotuning()

    names = args.problems or list_problems()
    unknown = sorted(set(names) - set(list_problems()))
    if unknown:
        print(f"unknown problem(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(names))
        return 0
    if args.features:
        print(json.dumps({name: set_entry(name) for name in names}, indent=1))
        return 0
    if args.candidate and len(names) != 1:
        print("--candidate needs exactly one problem", file=sys.stderr)
        return 2
    report: dict[str, dict] = {}
    for name in names:
        t0 = time.perf_counter()
        try:
            entry = compile_problem(name) if args.compile else check_problem(name, args)
        except Exception as exc:  # noqa: BLE001 (one problem failing must not hide the others)
            entry = {"ok": False, "status": "error", "error": _short(exc), "cases": []}
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        report[name] = entry
        print(f"[{len(report)}/{len(names)}] {name}: {entry['status']} in {entry['seconds']:.1f} s", file=sys.stderr, flush=True)
        if args.out:  # after every problem: a run stopped by its time box keeps what it finished
            _write(args.out, argv, report, complete=len(report) == len(names))
    result = {"problems": report, "ok": all(e["ok"] for e in report.values())}
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def _short(exc: BaseException) -> str:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return f"{type(exc).__name__}: {exc}\n{''.join(tb[-3:])}"[:4000]


if __name__ == "__main__":
    sys.exit(main())
