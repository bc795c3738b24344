"""Onboarding a kernel (``ladder problem new|check``): turn a kernel file and a torch reference into a problem
folder, then check it.

``scaffold`` writes ``problem.py`` (the reference, with ``Model`` aliased and the onboarding declarations listed),
``initial.py`` (the kernel file as it is, plus a ``ModelNew`` that takes the reference's forward arguments and calls
the launcher: a function, a name bound to ``functools.partial``/``Fn.apply``, ``Fn.apply`` or ``Class.method``) and a
``SOURCE.md`` template; ``check_problem`` validates ``initial.py`` on the CPU interpreter, with the reference in its
own jailed process, and reports every failed rule at once, each with the declaration that states the exception
when it is by design or the change that fixes it (README "Onboarding a kernel").
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, overload

from kb.errors import InvalidArgument

__all__ = ["RULE_FIXES", "RULE_HINTS", "check_problem", "failed_rules", "scaffold"]

#: failure kind -> (the rule, how to declare the exception when the behaviour is by design)
RULE_HINTS: dict[str, tuple[str, str]] = {
    "input_mutation": ("inputs must not change", "the reference mutates that input too: INPLACE_OUTPUTS = [i]"),
    "wrong_dtype": (
        "outputs have the reference's dtype",
        'the kernel returns another dtype by design: OUTPUT_DTYPES = {i: "float32"}',
    ),
    "mismatch": (
        "every element within tolerance",
        (
            "integer results that may differ by rounding: INT_ATOL = n; "
            'floating: TOLERANCES = {"float32": {"atol": .., "rtol": ..}}'
        ),
    ),
    "reference_op_call": (
        "the kernel, not torch, does the reference's work",
        'a cheap torch epilogue after the kernel: ALLOWED_TORCH_OPS = ["sum", ...]',
    ),
    "precision_downgrade": (
        "no half-precision casts in an fp32 problem",
        "judged from every dtype the reference touches; if the reference really is fp32, keep fp32",
    ),
    "precision_flags": (
        "no half-precision casts in an fp32 problem",
        "judged from every dtype the reference touches; if the reference really is fp32, keep fp32",
    ),
    "compile_error": (
        "the kernel compiles for sm_90",
        ("fix the kernel; block pointers need Triton 3.6: make triton36-env and --triton 3.6"),
    ),
    "no_kernel_launch": ("the forward launches a Triton kernel", "call the launcher from ModelNew.forward"),
    "import_error": (
        "initial.py imports on its own",
        ("inline helpers from the kernel's package into initial.py and list that change in SOURCE.md"),
    ),
    "kernel_error": (
        "the kernel runs on the interpreter",
        (
            "a libdevice call or block pointer the interpreter cannot "
            'run: CPU_VALIDATION = "compile_only" (checked on the GPU)'
        ),
    ),
}

#: failure kind -> (the rule, the change that fixes it) for rules no declaration relaxes
RULE_FIXES: dict[str, tuple[str, str]] = {
    "wrong_shape": (
        "outputs have the reference's shape",
        "return the kernel's output shaped as the reference's (reshape/view in the launcher or ModelNew.forward)",
    ),
    "wrong_structure": (
        "as many outputs as the reference",
        "return what the reference returns (a tensor, or a "
        "tuple in the same order); drop extra outputs in ModelNew.forward",
    ),
    "wrong_type": ("outputs are plain torch.Tensors", "return torch.Tensor objects, not subclasses or other types"),
    "nan": ("no NaN in the outputs", "fix the kernel: masked loads need other=, every output element must be written"),
    "inf_mismatch": ("infinities where the reference has them", "fix the kernel's overflow/underflow handling"),
    "wrong_device": ("outputs on the inputs' device", "allocate outputs like the inputs (torch.empty_like)"),
    "no_result": ("the forward returns on every case", "make ModelNew.forward return the output for every case"),
    "runtime_error": (
        "ModelNew runs with the reference's inputs",
        "ModelNew.forward takes the reference's forward "
        "arguments in order; map them to the launcher's parameters there",
    ),
    "timeout": ("the check finishes in time", "make SMOKE_CASES small enough for the CPU interpreter"),
    "oom": ("the check fits in memory", "make SMOKE_CASES smaller"),
    "crashed": ("the worker does not crash", "see the reason; a crash in the interpreter is a kernel bug"),
    "result_caching": ("outputs follow new inputs", "do not cache results across calls"),
    "output_buffer_reuse": ("each call returns fresh outputs", "allocate the output inside forward"),
    "lazy_output": ("outputs are materialised tensors", "return plain torch.Tensor objects"),
    "no_triton_kernel": ("the file defines a @triton.jit kernel", "point at the kernel file itself"),
    "reference_error": ("the reference runs", "fix problem.py: Model, get_inputs() and get_init_inputs() must run"),
    "judge_error": ("the outputs can be read back", "return tensors (or tuples/lists of tensors and numbers)"),
    "bad_output": ("the outputs can be read back", "return tensors (or tuples/lists of tensors and numbers)"),
    "sandbox_error": (
        "the sandbox starts",
        "see the reason (jail setup); LADDER_SANDBOX_ISOLATE=0 is the weaker level",
    ),
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


@overload
def _split(spec: str, default: str) -> tuple[Path, str]: ...
@overload
def _split(spec: str, default: None) -> tuple[Path, str | None]: ...
def _split(spec: str, default: str | None) -> tuple[Path, str | None]:
    path, sep, tail = spec.rpartition("::")
    name = tail if sep else default
    if not sep:
        path = spec
    p = Path(path).expanduser()
    if not p.is_file():
        raise InvalidArgument(f"no such file: {p}", field="path")
    if name is not None and not all(part.isidentifier() for part in name.split(".")):
        raise InvalidArgument(f"{spec!r}: expected FILE.py::NAME with NAME a Python identifier (or Class.method, "
                              "Function.apply)", field="path")
    return p.resolve(), name


def _top_level(source: str) -> dict[str, ast.AST]:
    """Top-level functions and classes, and names assigned at top level (``fn = functools.partial(...)``,
    ``fn = MyFunction.apply``)."""
    tree = ast.parse(source)
    out: dict[str, ast.AST] = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[n.name] = n
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    out[t.id] = n
    return out


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == name), None)


def _required(fn: ast.AST, params: list[str]) -> list[str]:
    """Those of ``params`` (a tail of ``fn``'s positional parameters) that have no default."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return params
    return params[: max(0, len(params) - len(fn.args.defaults))]


def _is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


def _launcher(kdefs: dict[str, ast.AST], launcher: str, kfile: Path) -> tuple[str, str, list[str]]:
    """How ``ModelNew`` reaches ``launcher``: (setup line for ``__init__`` or "", the callable expression, the
    launcher's own positional parameters without a default, when they can be read). Accepts a top-level function, a
    top-level name bound to anything callable (``functools.partial``, ``Fn.apply``), ``Fn.apply`` of an
    ``autograd.Function``, and ``Class.method`` (static, class or instance method: an instance is built from
    ModelNew's constructor arguments)."""
    head, _, attr = launcher.partition(".")
    node = kdefs.get(head)
    if node is None:
        raise InvalidArgument(f"{kfile} defines no top-level function {head!r} (nor a class or a name bound at top "
                              "level)", field="kernel")
    if not attr:
        if isinstance(node, ast.ClassDef):
            raise InvalidArgument(f"{launcher!r} in {kfile} is a class: name its launcher, e.g. {launcher}.apply "
                                  f"(an autograd.Function) or {launcher}.forward", field="kernel")
        params = [a.arg for a in node.args.args] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        return "", launcher, _required(node, params)
    if not isinstance(node, ast.ClassDef) or "." in attr:
        raise InvalidArgument(f"{launcher!r}: {head} is not a class of {kfile}; name a function, a top-level name, "
                              "Class.method or Function.apply", field="kernel")
    if attr == "apply":
        fwd = _method(node, "forward")
        params = [a.arg for a in fwd.args.args][1:] if fwd else []  # forward(ctx, ...)
        return "", launcher, _required(fwd, params) if fwd else []
    fn = _method(node, attr)
    if fn is None:
        raise InvalidArgument(f"class {head} in {kfile} has no method {attr!r}", field="kernel")
    params = [a.arg for a in fn.args.args]
    if _is_static(fn):
        return "", launcher, _required(fn, params[1:] if any(isinstance(d, ast.Name) and d.id == "classmethod"
                                                             for d in fn.decorator_list) else params)
    return f"self._launcher_owner = {head}(*args, **kwargs)", f"self._launcher_owner.{attr}", _required(fn, params[1:])


def _forward_args(rdefs: dict[str, ast.AST], model: str) -> ast.arguments | None:
    """The reference's ``forward`` arguments (read from its source, never imported), or None."""
    cls = rdefs.get(model)
    if not isinstance(cls, ast.ClassDef):
        return None
    fwd = _method(cls, "forward")
    if fwd is None:
        return None
    a = fwd.args
    positional = [*a.posonlyargs, *a.args][1:]  # without self
    return ast.arguments(posonlyargs=[], args=positional, vararg=a.vararg, kwonlyargs=a.kwonlyargs,
                         kw_defaults=a.kw_defaults, kwarg=a.kwarg, defaults=a.defaults)


def _call_args(args: ast.arguments) -> str:
    parts = [a.arg for a in args.args]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def scaffold(kernel: str, reference: str, out: Path, *, force: bool = False) -> dict[str, Path]:
    """Write problem.py, initial.py and SOURCE.md into ``out``; returns their paths. Raises on bad input.

    The generated ``ModelNew.forward`` takes the reference's forward arguments (read from the reference's source)
    and passes them, in order, to the launcher; a launcher that needs more (weights the reference keeps as
    parameters, flags) is marked in a comment for the user to map."""
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
    setup, call, launcher_params = _launcher(kdefs, launcher, kfile) if launcher is not None else ("", "", [])
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
        fargs = _forward_args(rdefs, model)
        sig = ast.unparse(fargs) if fargs is not None else ", ".join(launcher_params)
        passed = _call_args(fargs) if fargs is not None else ", ".join(launcher_params)
        n_ref = len(fargs.args) if fargs is not None else len(launcher_params)
        note = ""
        if fargs is not None and len(launcher_params) > n_ref:
            extra = ", ".join(launcher_params[n_ref:])
            note = (f"        # TODO: {call} also needs {extra}: pass them here (e.g. the reference's parameters, "
                    "built in __init__ from the constructor arguments)\n")
        init = "        super().__init__()\n" + (f"        {setup}\n" if setup else "")
        initial += (
            "\n\n# ---- added by `ladder problem new`: the problem format's entry point ----\n"
            "import torch.nn as _nn  # noqa: E402\n\n\n"
            "class ModelNew(_nn.Module):\n"
            f'    """Calls `{launcher}` with the reference forward\'s arguments, in order."""\n\n'
            "    def __init__(self, *args, **kwargs):\n"
            f"{init}\n"
            f"    def forward(self{', ' if sig else ''}{sig}):\n"
            f"{note}"
            f"        return {call}({passed})\n"
        )
    files["initial"].write_text(initial)
    files["source"].write_text(_SOURCE_MD.format(
        name=out.name, ref=rfile.name,
        launcher_note=f", plus `ModelNew` calling `{launcher}`" if launcher else "",
        alias_note=f", with `Model = {model}`" if model != "Model" else ""))
    return files


def failed_rules(ev: Any) -> list[dict[str, str]]:
    """Every rule the evaluation failed, once each, with the declaration that states it (when the behaviour is by
    design) or the change that fixes it: the case failure first, then every reject-severity finding, static
    ones included."""
    kinds = [ev.failure_kind] if not ev.passed and ev.failure_kind else []
    kinds += [f.code for f in ev.findings if f.severity == "reject"]
    out = []
    for k in dict.fromkeys(kinds):
        rule, declare = RULE_HINTS.get(k, ("", ""))
        fix_rule, fix = RULE_FIXES.get(k, ("", ""))
        message = next((f.render() for f in ev.findings if f.code == k), "") or (
            ev.reason if k == ev.failure_kind else ""
        )
        out.append({"kind": k, "rule": rule or fix_rule or k, "declare": declare, "fix": fix,
                    "message": message[:600]})
    return out


def check_problem(folder: Path, *, timeout_s: float | None = None) -> dict[str, Any]:
    """Validate initial.py against problem.py on the CPU interpreter and report EVERY failed rule with its fix.

    The reference is loaded in a jailed worker with a deadline (``judge.describe_problem``), never in this
    process: a reference that hangs at import, or reads secrets, does so there."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.judge import describe_problem
    from optimizer.settings import LadderSettings

    settings = LadderSettings()
    if timeout_s:
        settings.sandbox_timeout_s = timeout_s
    problem = describe_problem(folder, timeout_s=settings.sandbox_timeout_s, memory_mb=settings.sandbox_memory_mb,
                               python=settings.triton_python or None)
    ev = evaluate(problem, Path(folder) / "initial.py", backend="interpreter", settings=settings,
                  timing=False, static_gate=False)
    return {
        "problem": str(problem.path), "passed": ev.passed, "static_only": ev.static_only, "reason": ev.reason,
        "triton": ev.versions.get("triton", ""), "fp32_reference": problem.fp32_reference(),
        "cases": [c.model_dump() for c in ev.validation.cases], "failed_rules": failed_rules(ev),
        "declared": {"INPLACE_OUTPUTS": list(problem.inplace_outputs), "INT_ATOL": problem.int_atol,
                     "ALLOWED_TORCH_OPS": sorted(problem.allowed_torch_ops), "OUTPUT_DTYPES": problem.output_dtypes,
                     "CPU_VALIDATION": problem.cpu_validation},
    }
