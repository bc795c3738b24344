"""Onboarding a kernel (``ladder problem new|check``): turn a kernel file and a torch reference into a problem
folder, then check it.

``scaffold`` writes ``problem.py`` (the reference, with ``Model`` aliased and the onboarding declarations listed),
``initial.py`` (the kernel file as it is, plus a ``ModelNew`` that calls the launcher) and a ``SOURCE.md``
template; ``check_problem`` validates ``initial.py`` on the CPU interpreter and reports each failed rule with the
declaration that states the exception when it is by design (README "Onboarding a kernel").
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from kb.errors import InvalidArgument

__all__ = ["RULE_HINTS", "check_problem", "scaffold"]

#: failure kind -> (the rule, how to declare the exception when the behaviour is by design)
RULE_HINTS: dict[str, tuple[str, str]] = {
    "input_mutation": ("inputs must not change", "the reference mutates that input too: INPLACE_OUTPUTS = [i]"),
    "wrong_dtype": ("outputs have the reference's dtype", 'the kernel returns another dtype by design: OUTPUT_DTYPES = {i: "float32"}'),
    "mismatch": ("every element within tolerance", ("integer results that may differ by rounding: INT_ATOL = n; "
                                                     'floating: TOLERANCES = {"float32": {"atol": .., "rtol": ..}}')),
    "reference_op_call": ("the kernel, not torch, does the reference's work",
                          'a cheap torch epilogue after the kernel: ALLOWED_TORCH_OPS = ["sum", ...]'),
    "precision_downgrade": ("no half-precision casts in an fp32 problem",
                            "judged from every dtype the reference touches; if the reference really is fp32, keep fp32"),
    "precision_flags": ("no half-precision casts in an fp32 problem",
                        "judged from every dtype the reference touches; if the reference really is fp32, keep fp32"),
    "compile_error": ("the kernel compiles for sm_90", ("fix the kernel; block pointers need Triton 3.6: make "
                                                        "triton36-env and --triton 3.6")),
    "no_kernel_launch": ("the forward launches a Triton kernel", "call the launcher from ModelNew.forward"),
    "import_error": ("initial.py imports on its own", ("inline helpers from the kernel's package into initial.py "
                                                       "and list that change in SOURCE.md")),
    "kernel_error": ("the kernel runs on the interpreter", ('a libdevice call or block pointer the interpreter cannot '
                                                            'run: CPU_VALIDATION = "compile_only" (checked on the GPU)')),
}

_SOURCE_MD = """# {name}

- Repository: TODO (URL)
- Path: TODO (file in that repository)
- Commit: TODO (40 hex digits)
- License: TODO (SPDX id; keep the upstream notice in initial.py)

## Changes
- `initial.py`: the kernel file as it is{launcher_note}.
- `problem.py`: the torch reference from `{ref}`{alias_note}.
- TODO: every other change, one line each.
"""

_DECLARATIONS = '''

# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
'''


def _split(spec: str, default: str | None) -> tuple[Path, str | None]:
    path, sep, name = spec.rpartition("::")
    if not sep:
        path, name = spec, default
    p = Path(path).expanduser()
    if not p.is_file():
        raise InvalidArgument(f"no such file: {p}", field="path")
    if name is not None and not name.isidentifier():
        raise InvalidArgument(f"{spec!r}: expected FILE.py::NAME with NAME a Python identifier", field="path")
    return p.resolve(), name


def _top_level(source: str) -> dict[str, ast.AST]:
    tree = ast.parse(source)
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _positional_params(node: ast.AST) -> list[str]:
    assert isinstance(node, ast.FunctionDef)
    return [a.arg for a in node.args.args]


def scaffold(kernel: str, reference: str, out: Path, *, force: bool = False) -> dict[str, Path]:
    """Write problem.py, initial.py and SOURCE.md into ``out``; returns their paths. Raises on bad input."""
    kfile, launcher = _split(kernel, None)
    rfile, model = _split(reference, "Model")
    ksrc, rsrc = kfile.read_text(), rfile.read_text()
    kdefs, rdefs = _top_level(ksrc), _top_level(rsrc)
    for required in (model, "get_inputs", "get_init_inputs"):
        if required not in rdefs:
            raise InvalidArgument(f"{rfile} defines no {required}; a reference needs a torch nn.Module class (name it "
                                  "with REF.py::ClassName), get_inputs() and get_init_inputs()", field="reference")
    if launcher is None and "ModelNew" not in kdefs:
        raise InvalidArgument(f"{kfile} defines no ModelNew: name the launcher to call, e.g. {kfile.name}::my_launcher",
                              field="kernel")
    if launcher is not None and launcher not in kdefs:
        raise InvalidArgument(f"{kfile} defines no top-level function {launcher!r}", field="kernel")
    out.mkdir(parents=True, exist_ok=True)
    files = {"problem": out / "problem.py", "initial": out / "initial.py", "source": out / "SOURCE.md"}
    existing = [str(p) for p in files.values() if p.exists()]
    if existing and not force:
        raise InvalidArgument(f"{', '.join(existing)} already exist; pass --force to overwrite", field="out")
    problem = rsrc.rstrip() + "\n"
    if model != "Model":
        problem += f"\n\nModel = {model}  # the problem format's name for the reference\n"
    files["problem"].write_text(problem + _DECLARATIONS)
    initial = ksrc.rstrip() + "\n"
    if launcher is not None:
        params = ", ".join(_positional_params(kdefs[launcher]))
        initial += (
            "\n\n# ---- added by `ladder problem new`: the problem format's entry point ----\n"
            "import torch.nn as _nn  # noqa: E402\n\n\n"
            "class ModelNew(_nn.Module):\n"
            f'    """Calls `{launcher}` as the reference forward is called."""\n\n'
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__()\n\n"
            f"    def forward(self, {params}):\n"
            f"        return {launcher}({params})\n"
        )
    files["initial"].write_text(initial)
    files["source"].write_text(_SOURCE_MD.format(
        name=out.name, ref=rfile.name,
        launcher_note=f", plus `ModelNew` calling `{launcher}`" if launcher else "",
        alias_note=f", with `Model = {model}`" if model != "Model" else ""))
    return files


def check_problem(folder: Path, *, timeout_s: float | None = None) -> dict[str, Any]:
    """Load the problem, validate initial.py on the CPU interpreter; per failed rule, how to declare it."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    problem = load_problem(folder)
    settings = LadderSettings()
    if timeout_s:
        settings.sandbox_timeout_s = timeout_s
    ev = evaluate(problem, folder / "initial.py", backend="interpreter", settings=settings, timing=False)
    kinds = [ev.failure_kind] if not ev.passed else []
    kinds += [f.code for f in ev.findings if f.severity == "reject" and f.code not in kinds]
    failed = [{"kind": k, "rule": RULE_HINTS.get(k, (k, ""))[0], "declare": RULE_HINTS.get(k, ("", ""))[1]} for k in kinds]
    return {
        "problem": str(problem.path), "passed": ev.passed, "static_only": ev.static_only, "reason": ev.reason,
        "triton": ev.versions.get("triton", ""), "fp32_reference": problem.fp32_reference(),
        "cases": [c.model_dump() for c in ev.validation.cases], "failed_rules": failed,
        "declared": {"INPLACE_OUTPUTS": list(problem.inplace_outputs), "INT_ATOL": problem.int_atol,
                     "ALLOWED_TORCH_OPS": sorted(problem.allowed_torch_ops), "OUTPUT_DTYPES": problem.output_dtypes,
                     "CPU_VALIDATION": problem.cpu_validation},
    }
