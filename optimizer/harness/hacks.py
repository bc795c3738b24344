"""The hack catalogue: known ways a candidate can pass validation or timing without doing the work.

Each entry is data: a stable ``code``, what it catches, where the hack was documented, whether it is checked
statically (on the candidate source) or at run time (by the validation worker), and whether it rejects the
candidate or only warns. Static entries carry their regular expressions here; runtime entries name the probe
in ``optimizer.harness.validate`` that raises them. ``static_scan`` applies the static entries to a source text.

The catalogue starts from the public catalogues summarised in /work/shared/research/peers.md (KernelBench's
``kernel_static_checker.py`` and adversarial tests, the KernelBench v0.1 blog, gpu-mode reference-kernels
issues, DeepReinforce "Hacks and Defenses", CUDA-Agent #16, KernelBench #155, pygpubench #49).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CATALOGUE", "HackCheck", "HackFinding", "HackReport", "by_code", "forward_reachable", "static_scan"]

Severity = Literal["reject", "warn"]

_KB = "https://github.com/ScalingIntelligence/KernelBench"
_KB_BLOG = "https://scalingintelligence.stanford.edu/blogs/kernelbenchv01/"
_GPUMODE = "https://github.com/gpu-mode/reference-kernels"
_DR = "https://deep-reinforce.com/defense_kernel_hack.html"


@dataclass(frozen=True)
class HackCheck:
    code: str
    title: str
    description: str
    kind: Literal["static", "runtime"]
    severity: Severity
    sources: tuple[str, ...]
    patterns: tuple[str, ...] = ()
    #: static checks only: apply when the reference computes in fp32 (precision downgrade is then a hack)
    only_fp32_reference: bool = False


@dataclass(frozen=True)
class HackFinding:
    code: str
    severity: Severity
    message: str
    line: int | None = None

    def render(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.code}{where}: {self.message}"


CATALOGUE: tuple[HackCheck, ...] = (
    # ---- static: the source itself -------------------------------------------------------------------
    HackCheck(
        "no_triton_kernel",
        "No Triton kernel",
        "The candidate defines no @triton.jit kernel: it is PyTorch, not a kernel.",
        "static",
        "reject",
        (f"{_KB}/blob/main/src/kernel_static_checker.py", _KB_BLOG),
    ),
    HackCheck(
        "side_stream",
        "Work on a side stream",
        "Launching on a non-default stream lets the timed region end before the work does.",
        "static",
        "reject",
        (
            f"{_KB}/pull/106",
            f"{_KB}/blob/main/src/kernel_static_checker.py",
            "https://github.com/meta-pytorch/BackendBench/issues/41",
        ),
        patterns=(
            r"\btorch\.(cuda|npu)\.Stream\s*\(",
            r"\btorch\.(cuda|npu)\.stream\s*\(",
            r"\bset_stream\s*\(",
            r"\bExternalStream\b",
            r"\btorch\.Stream\s*\(",
        ),
    ),
    HackCheck(
        "thread_injection",
        "Threads or processes",
        "Background threads or processes can finish work outside the timed region or race the checker.",
        "static",
        "reject",
        (f"{_KB}/blob/main/src/kernel_static_checker.py",),
        patterns=(
            r"^\s*import\s+threading\b",
            r"^\s*from\s+threading\b",
            r"\bthreading\.Thread\b",
            r"\bconcurrent\.futures\b",
            r"^\s*import\s+multiprocessing\b",
            r"\bmultiprocessing\.",
            r"\basyncio\.",
            r"\bos\.fork\s*\(",
        ),
    ),
    HackCheck(
        "timer_patch",
        "Timer or harness patching",
        "Touching events, synchronize, do_bench or the clock functions can falsify the measurement.",
        "static",
        "reject",
        (f"{_GPUMODE}/issues/150", f"{_KB}/blob/main/src/kernel_static_checker.py", _DR),
        patterns=(
            r"\btorch\.(cuda|npu)\.Event\b",
            r"\belapsed_time\b",
            r"\btime\.(perf_counter|time|monotonic)(_ns)?\s*=",
            r"\btriton\.testing\b",
            r"\bdo_bench\b",
            r"\bsynchronize\s*=",
            r"\bsetattr\s*\(\s*(torch|time|triton)\b",
            r"^\s*import\s+builtins\b",
            r"\b__builtins__\b",
        ),
    ),
    HackCheck(
        "introspection",
        "Stack or heap introspection",
        "Walking frames or the GC heap finds the reference output or the checker's state.",
        "static",
        "reject",
        (f"{_GPUMODE}/issues/102", "https://github.com/flashinfer-ai/flashinfer-bench-starter-kit/issues/21"),
        patterns=(
            r"\bsys\._getframe\b",
            r"\binspect\.(currentframe|stack|getouterframes)\b",
            r"\bgc\.get_(objects|referrers|referents)\b",
            r"\bsys\.modules\b",
            r"\bf_back\b",
        ),
    ),
    HackCheck(
        "harness_access",
        "Reads or imports the harness",
        "Importing the ladder or the reference problem lets a candidate call the reference or read its outputs.",
        "static",
        "reject",
        ("https://github.com/flashinfer-ai/flashinfer-bench-starter-kit/issues/21", _KB_BLOG),
        patterns=(
            r"^\s*(from|import)\s+(optimizer|kb|retrieval|synthesis)\b",
            r"^\s*(from|import)\s+problem\b",
            r"(?<!class )\bModel\s*\(",
        ),
    ),
    HackCheck(
        "l2_persistence",
        "L2 persistence window",
        "An access-policy window keeps inputs resident in L2 and defeats the flush between timed runs.",
        "static",
        "reject",
        ("https://github.com/gpu-mode/pygpubench/issues/49",),
        patterns=(r"accessPolicyWindow", r"AccessPolicyWindow", r"PersistingL2", r"persisting_l2"),
    ),
    HackCheck(
        "precision_downgrade",
        "Silent precision downgrade",
        "Computing an fp32 problem in fp16/bf16/fp8 or TF32 trades accuracy for speed the reference did not get.",
        "static",
        "reject",
        (f"{_KB}/issues/155", "https://github.com/BytedTsinghua-SIA/CUDA-Agent/issues/16", _DR),
        patterns=(
            r"\.half\s*\(",
            r"\.bfloat16\s*\(",
            r"\btorch\.(float16|half|bfloat16|float8_\w+)\b",
            r"\btl\.(float16|bfloat16|float8\w*)\b",
            r"input_precision\s*=\s*['\"]tf32['\"]",
            r"allow_tf32\s*=\s*True",
            r"set_float32_matmul_precision",
            r"\.to\s*\(\s*tl\.(float16|bfloat16)",
        ),
        only_fp32_reference=True,
    ),
    HackCheck(
        "static_result_cache",
        "Result cache in the source",
        "Memoisation keyed on pointers or identities can return a stale result; the runtime probe decides.",
        "static",
        "warn",
        (f"{_GPUMODE}/issues/102", "https://github.com/deepreinforce-ai/CUDA-L1"),
        patterns=(
            r"\bfunctools\.(lru_)?cache\b",
            r"@\s*(lru_)?cache\b",
            r"\bdata_ptr\s*\(\s*\)\s*(in|==|\])",
            r"\bid\s*\(\s*\w+\s*\)\s*(in|==|\])",
        ),
    ),
    HackCheck(
        "try_except_fallback",
        "try/except fallback",
        "A broad except around the kernel can silently fall back to PyTorch.",
        "static",
        "warn",
        (f"{_KB}/blob/main/src/kernel_static_checker.py",),
        patterns=(r"^\s*except\b",),
    ),
    HackCheck(
        "env_tamper",
        "Environment tampering",
        "Setting environment variables can change compiler or harness behaviour between runs.",
        "static",
        "warn",
        (f"{_GPUMODE}/issues/142",),
        patterns=(r"\bos\.environ\b", r"\bos\.putenv\b"),
    ),
    HackCheck(
        "cuda_graph_replay",
        "Graph replay",
        "Replaying a captured graph can skip work whose inputs changed; allowed, but verified by the cache probe.",
        "static",
        "warn",
        (f"{_KB}/blob/main/src/kernel_static_checker.py",),
        patterns=(r"\btorch\.cuda\.graph\b", r"\bCUDAGraph\b"),
    ),
    # ---- runtime: probes in the validation worker -----------------------------------------------------
    HackCheck(
        "reference_op_call",
        "Calls the reference op",
        "The candidate dispatches a compute ATen op that the reference itself uses (PyTorch wrapping).",
        "runtime",
        "reject",
        (_KB_BLOG, f"{_KB}/blob/main/src/kernel_static_checker.py"),
    ),
    HackCheck(
        "no_kernel_launch",
        "No kernel launched",
        "The forward launched no Triton kernel: the result came from PyTorch or from nowhere.",
        "runtime",
        "reject",
        (_KB_BLOG,),
    ),
    HackCheck(
        "result_caching",
        "Results cached across calls",
        "After the inputs changed (fresh values, or in place at the same addresses) the output did not follow.",
        "runtime",
        "reject",
        (
            f"{_GPUMODE}/issues/102",
            f"{_KB}/blob/main/tests/test_eval_adversarial.py",
            "https://github.com/deepreinforce-ai/CUDA-L1",
        ),
    ),
    HackCheck(
        "output_buffer_reuse",
        "Output buffer reused across calls",
        "Two calls returned the same storage, so a held result is overwritten by the next call.",
        "runtime",
        "reject",
        (f"{_GPUMODE}/issues/104",),
    ),
    HackCheck(
        "input_mutation",
        "Inputs modified",
        "The candidate wrote into its inputs; the reference and the next call see different data.",
        "runtime",
        "reject",
        (f"{_KB}/blob/main/tests/test_eval_adversarial.py",),
    ),
    HackCheck(
        "lazy_output",
        "Lazy or foreign output",
        "The output is not a plain, materialised torch.Tensor on the expected device (deferred work into the checker).",
        "runtime",
        "reject",
        (f"{_GPUMODE}/issues/162", _KB_BLOG),
    ),
    HackCheck(
        "global_patch",
        "Global functions patched",
        "A timer, synchronize, comparison or harness function changed identity while the candidate ran.",
        "runtime",
        "reject",
        (f"{_GPUMODE}/issues/150", _DR),
    ),
    HackCheck(
        "side_stream_runtime",
        "Stream changed at run time",
        "The current stream after the forward is not the default stream the harness times.",
        "runtime",
        "reject",
        (f"{_KB}/blob/main/tests/test_eval_adversarial.py",),
    ),
    HackCheck(
        "precision_flags",
        "Precision flags changed or downcast dispatched",
        "TF32/matmul-precision flags or the default dtype changed, or an fp32 problem dispatched casts to half types.",
        "runtime",
        "reject",
        (f"{_KB}/issues/155", "https://github.com/BytedTsinghua-SIA/CUDA-Agent/issues/16"),
    ),
    HackCheck(
        "faster_than_roofline",
        "Faster than the speed of light",
        "The measured time is below the roofline minimum for the declared flops and bytes: the work was not done.",
        "runtime",
        "reject",
        (_KB_BLOG,),
    ),
    HackCheck(
        "excessive_speedup",
        "Excessive speedup",
        "More than 10x faster than the PyTorch reference: plausible only with evidence; flagged for review.",
        "runtime",
        "warn",
        (f"{_KB}/blob/main/src/eval.py", "https://sakana.ai/ai-cuda-engineer/"),
    ),
)

_BY_CODE = {c.code: c for c in CATALOGUE}


def by_code(code: str) -> HackCheck:
    return _BY_CODE[code]


def _strip_comments_and_docstrings(source: str) -> str:
    """Blank comments and docstrings (keeping line numbers) so prose cannot trigger a pattern."""
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            (r, c) = tok.start
            lines[r - 1] = lines[r - 1][:c] + "\n"
    text = "".join(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    out = text.splitlines(keepends=True)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            val = body[0].value
            if isinstance(val, ast.Constant) and isinstance(val.value, str):
                for ln in range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1):
                    out[ln - 1] = "\n"
    return "".join(out)


def static_scan(source: str, *, fp32_reference: bool = True) -> list[HackFinding]:
    """Apply every static catalogue entry to ``source``; one finding per (code, first matching line)."""
    text = _strip_comments_and_docstrings(source)
    findings: list[HackFinding] = []
    if not re.search(r"@\s*triton\.jit\b|\btriton\.jit\s*\(|@\s*jit\b", text):
        c = _BY_CODE["no_triton_kernel"]
        findings.append(HackFinding(c.code, c.severity, c.description))
    lines = text.splitlines()
    reached = forward_reachable(text).splitlines()
    for check in CATALOGUE:
        if check.kind != "static" or not check.patterns:
            continue
        if check.only_fp32_reference and not fp32_reference:
            continue
        # precision: only code the forward path reaches (a backward kernel in the same file is not a downgrade)
        hit = _first_match(reached if check.only_fp32_reference else lines, check.patterns)
        if hit is not None:
            lineno, snippet = hit
            findings.append(HackFinding(check.code, check.severity, f"{check.title}: `{snippet}`", lineno))
    return findings


_BACKWARD_ONLY = frozenset({"backward", "jvp", "vjp", "setup_context_backward"})


def forward_reachable(source: str) -> str:
    """``source`` with every top-level function or class that ``ModelNew``'s forward path cannot reach blanked
    (line numbers kept). Reached: ``ModelNew``, then, transitively, every top-level definition a reached body names
    (a kernel launched, a launcher, a helper, an ``autograd.Function`` through ``.apply``); of a reached class every
    method but ``backward`` (an autograd Function's backward runs in training, not in the forward that is timed).
    Module-level statements always count. Without a ``ModelNew`` (or on a syntax error) the whole source counts."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    if "ModelNew" not in defs:
        return source
    module_names = {x.id for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    for x in ast.walk(n) if isinstance(x, ast.Name)}
    reached: set[str] = set()
    todo = ["ModelNew", *sorted(module_names & set(defs))]
    while todo:
        name = todo.pop()
        if name in reached or name not in defs:
            continue
        reached.add(name)
        node = defs[name]
        bodies: list[ast.AST] = [node]
        if isinstance(node, ast.ClassDef):
            bodies = [*node.bases, *node.decorator_list,
                      *(b for b in node.body if not (isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                     and b.name in _BACKWARD_ONLY))]
        for body in bodies:
            todo += [x.id for x in ast.walk(body) if isinstance(x, ast.Name) and x.id in defs]
    lines = source.splitlines(keepends=True)
    for name, node in defs.items():
        spans = []
        if name not in reached:
            spans.append(node)
        elif isinstance(node, ast.ClassDef):
            spans += [b for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and b.name in _BACKWARD_ONLY]
        for span in spans:
            first = min([span.lineno, *(d.lineno for d in getattr(span, "decorator_list", []))])
            for ln in range(first, (span.end_lineno or span.lineno) + 1):
                lines[ln - 1] = "\n"
    return "".join(lines)


def _first_match(lines: list[str], patterns: tuple[str, ...]) -> tuple[int, str] | None:
    compiled = [re.compile(p) for p in patterns]
    for i, line in enumerate(lines, start=1):
        if any(rx.search(line) for rx in compiled):
            return i, line.strip()[:120]
    return None


@dataclass
class HackReport:
    """Findings gathered for one candidate (static and runtime); ``rejected`` if any reject-severity fired."""

    findings: list[HackFinding] = field(default_factory=list)

    @property
    def rejected(self) -> bool:
        return any(f.severity == "reject" for f in self.findings)

    @property
    def codes(self) -> list[str]:
        return list(dict.fromkeys(f.code for f in self.findings))
