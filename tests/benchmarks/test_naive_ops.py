"""The naive first translations (``benchmarks/suite/<op>/naive.py``): one per operator, each correct on every
SMOKE_CASE in the Triton interpreter (the same ``_check.py`` path that checks ``initial.py``), and each still naive.

"Naive" is checked statically, so the test fails if someone tunes a naive kernel: no autotune, heuristics or
``triton.Config``; a default launch (no ``num_warps`` / ``num_stages`` / ``num_ctas`` / ``maxnreg``); fixed small
block sizes (integer literals of at most ``MAX_BLOCK``); no compiler hints (``multiple_of``, ``max_contiguous``,
``assume``, cache or eviction modifiers); ``input_precision="ieee"`` on every ``tl.dot`` of an operator with
fp32 cases; and a forward that only allocates, views and launches (no torch compute op).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "suite"
sys.path.insert(0, str(SUITE))

import _harness  # noqa: E402

from optimizer.harness.hacks import static_scan  # noqa: E402
from optimizer.harness.problem import load_problem  # noqa: E402

OPS = _harness.list_ops()
WORKERS = 2
MAX_BLOCK = 512

#: Launch keywords that tune a kernel; a naive translation leaves them at Triton's defaults.
TUNING_KEYWORDS = {"num_warps", "num_stages", "num_ctas", "maxnreg"}
#: Compiler hints and memory modifiers a first translation does not write.
HINTS = {"multiple_of", "max_contiguous", "max_constancy", "assume", "debug_barrier"}
HINT_KEYWORDS = {"eviction_policy", "cache_modifier", "volatile"}
#: What a naive forward may call besides its kernels: allocation, views and launch-geometry helpers.
FORWARD_TORCH_CALLS = {"empty", "empty_like", "zeros", "zeros_like"}
FORWARD_METHODS = {"contiguous", "stride", "size", "numel", "view", "reshape", "dim"}
FORWARD_TRITON_CALLS = {"cdiv", "next_power_of_2"}
#: Block sizes that are not a fixed literal, with the reason: each must name the operator and the argument.
COMPUTED_BLOCKS = {
    ("moe_group_top2", "BLOCK"): "the whole expert group (32 scores on every case) is the short row of one program",
}


def _jit_kernels(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)
            and any("jit" in ast.unparse(d) for d in f.decorator_list)}


def _has_fp32_cases(op: str) -> bool:
    p = load_problem(SUITE / op)
    return any(c.get("dtype", "float32") == "float32" for c in p.cases + p.smoke_cases)


def naivety_findings(op: str, source: str, *, fp32_cases: bool) -> list[str]:
    """What makes ``source`` more than a naive first translation; empty when it is naive."""
    tree = ast.parse(source)
    found: list[str] = []
    kernels = _jit_kernels(tree)
    if not kernels:
        found.append("defines no @triton.jit kernel")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            for d in node.decorator_list:
                text = ast.unparse(d)
                if "autotune" in text or "heuristics" in text:
                    found.append(f"{node.name}: decorated with {text}")
        if isinstance(node, ast.Attribute) and node.attr in ("Config", "autotune", "heuristics"):
            found.append(f"uses triton.{node.attr} (line {node.lineno})")
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in HINTS:
                found.append(f"compiler hint {name} (line {node.lineno})")
            for kw in node.keywords:
                if kw.arg in HINT_KEYWORDS:
                    found.append(f"{kw.arg}= on line {node.lineno}")
            if name == "dot" and fp32_cases:
                prec = next((kw.value for kw in node.keywords if kw.arg == "input_precision"), None)
                if not (isinstance(prec, ast.Constant) and prec.value == "ieee"):
                    found.append(f"tl.dot on line {node.lineno} of an fp32 problem without input_precision=\"ieee\"")
    launches = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
                and isinstance(n.func.value, ast.Name) and n.func.value.id in kernels]
    if kernels and not launches:
        found.append("forward launches no kernel")
    for call in launches:
        kernel = call.func.value.id
        for kw in call.keywords:
            if kw.arg in TUNING_KEYWORDS:
                found.append(f"{kernel}: {kw.arg}= at launch (a naive translation takes the default)")
            elif isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int):
                if kw.value.value > MAX_BLOCK:
                    found.append(f"{kernel}: {kw.arg}={kw.value.value} is above the naive limit {MAX_BLOCK}")
            elif (op, kw.arg) not in COMPUTED_BLOCKS:
                found.append(f"{kernel}: {kw.arg}={ast.unparse(kw.value)} is not a fixed block size")
    found += _forward_compute_calls(tree, set(kernels))
    return found


def _forward_compute_calls(tree: ast.Module, kernels: set[str]) -> list[str]:
    """Calls in ``ModelNew.forward`` beyond allocation, views, launch geometry and the kernels themselves."""
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)
    fwd = next((n for n in (cls.body if cls else []) if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if fwd is None:
        return ["no ModelNew.forward"]
    found = []
    for node in ast.walk(fwd):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in kernels:
            continue
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "torch":
            ok = f.attr in FORWARD_TORCH_CALLS
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "triton":
            ok = f.attr in FORWARD_TRITON_CALLS
        elif isinstance(f, ast.Attribute):
            ok = f.attr in FORWARD_METHODS
        else:
            ok = isinstance(f, ast.Name) and f.id in ("len", "range", "int", "min", "max", "tuple")
        if not ok:
            found.append(f"forward calls {ast.unparse(f)} (line {node.lineno}): only allocation, views and launches")
    return found


@pytest.fixture(scope="module")
def interpreter_results() -> dict[str, dict]:
    import _check

    return _check.run_parallel(OPS, initial="naive", workers=WORKERS)


# ------------------------------------------------------------------------------------------------ tests ---
def test_every_operator_has_a_naive_translation():
    missing = [op for op in OPS if not (SUITE / op / "naive.py").is_file()]
    assert len(OPS) >= 42 and not missing, f"no naive.py for: {missing}"


@pytest.mark.parametrize("op", OPS)
def test_naive_is_naive(op: str):
    src = (SUITE / op / "naive.py").read_text()
    findings = naivety_findings(op, src, fp32_cases=_has_fp32_cases(op))
    assert not findings, findings
    rejects = [f.render() for f in static_scan(src, fp32_reference=True) if f.severity == "reject"]
    assert not rejects, rejects
    tree, problem_tree = ast.parse(src), ast.parse((SUITE / op / "problem.py").read_text())
    for method in ("__init__", "forward"):
        assert _args(tree, "ModelNew", method) == _args(problem_tree, "Model", method), f"{method} signature differs"


def _args(tree: ast.Module, cls: str, method: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    return [ast.unparse(a) for a in item.args.args] + [ast.unparse(d) for d in item.args.defaults]
    raise AssertionError(f"{cls}.{method} not found")


def test_the_naivety_check_catches_a_tuned_kernel():
    """The static check must fail on what tuning looks like, or the test above could not fail."""
    src = (SUITE / "matmul" / "naive.py").read_text()
    assert not naivety_findings("matmul", src, fp32_cases=False)
    tuned = {
        "num_warps": src.replace("K, BLOCK=32)", "K, BLOCK=32, num_warps=8)"),
        "autotune": src.replace("@triton.jit", "@triton.autotune(configs=[], key=[])\n@triton.jit"),
        "large block": src.replace("K, BLOCK=32)", "K, BLOCK=1024)"),
        "computed block": src.replace("K, BLOCK=32)", "K, BLOCK=triton.next_power_of_2(K))"),
        "hint": src.replace("    acc = tl.zeros", "    tl.multiple_of(rows, 16)\n    acc = tl.zeros"),
        "torch compute": src.replace("        return C", "        return C + 0 * torch.matmul(A, B)"),
    }
    for what, variant in tuned.items():
        assert variant != src, f"the {what} edit did not apply"
        assert naivety_findings("matmul", variant, fp32_cases=False), f"{what} passed as naive"
    assert naivety_findings("matmul", src, fp32_cases=True), "an fp32 dot without input_precision='ieee' passed"


@pytest.mark.parametrize("op", OPS)
def test_naive_matches_reference_in_interpreter(op: str, interpreter_results: dict[str, dict]):
    entry = interpreter_results[op]
    assert entry["error"] is None, entry["error"]
    assert len(entry["cases"]) == 2
    for case in entry["cases"]:
        assert case["ok"], f"{case.get('label', case['case'])}: {case['message']}"
