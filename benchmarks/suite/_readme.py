"""Write benchmarks/suite/README.md from the problems themselves (``--check``: fail if it is out of date).

    python benchmarks/suite/_readme.py          # rewrite README.md
    python benchmarks/suite/_readme.py --check  # exit 1 if README.md differs from what the problems say
"""

from __future__ import annotations

import argparse
import ast
import re
import sys

from _harness import CATEGORIES, SUITE_DIR, list_ops, load_problem, roofline_seconds

README = SUITE_DIR / "README.md"

HEADER = """\
# Operator suite

{n_ops} operators in the KernelBench problem format, drawn from KernelBench levels 1-2 and from the
kernels LLM inference runs (MoE routing, fused add-norm, SwiGLU), in seven categories. Each operator is a
folder holding:

- `problem.py`: `class Model(nn.Module)` (the PyTorch reference), `get_inputs(**case)`,
  `get_init_inputs(**case)`, and our extensions: `CATEGORY`, `CASES` (5 cases sized for an H200),
  `SMOKE_CASES` (2 small cases for the CPU interpreter), `UNSEEN_CASES` on the 32 row/elementwise operators (2
  odd sizes, e.g. M=6007, N=5003, that the session never sees; its selected best is validated and timed on them
  afterwards, `trajectory.unseen`), `TOLERANCES` where the default (fp32 1e-4,
  half types 1e-2) does not fit, and `flops(**case)` / `bytes_moved(**case)` for roofline figures (the
  minimum traffic and work, so a fast kernel is never mistaken for one that skipped work). The module
  docstring names the category and the KernelBench origin.
- `initial.py`: `class ModelNew(nn.Module)` with the same constructor and forward, whose forward launches
  `@triton.jit` kernels: a first, straightforward translation (one row per program with
  `BLOCK_SIZE = next_power_of_2(n_cols)`, one element block per program, a plain tiled matmul without
  grouping or autotuning), with every block size and `num_warps` passed at launch so an optimizer can
  search them. Row-wise kernels take the row from `tl.program_id(0)` and address it through a row stride,
  so processing several rows per program is a local rewrite.

`get_inputs` creates tensors without naming a device: the harness builds them under
`with torch.device(dev):` (see `_harness.build_case`), so the large cases never pass through host memory.
Load problems with `optimizer.harness.problem.load_problem(folder)` and candidates with `load_candidate`.

## Checks

- `python benchmarks/suite/_check.py [OP ...]` (CPU): runs every `SMOKE_CASE` of `ModelNew` in the Triton
  interpreter (`TRITON_INTERPRET=1`, set before triton loads) against `Model`; every element within
  tolerance, NaN fails; prints JSON. `--candidate FILE` checks another `ModelNew` for one operator.
- `pytest tests/benchmarks/test_suite_ops.py` (CPU, CI): the above for all operators in two parallel
  subprocesses, plus the format, the sizing (a roofline of at least 50 us on an H200 for every case), the
  initial kernels' launch parameters, the optimizer's static hack scan, and this README.
- `python benchmarks/suite/_compile_check.py [--smoke] [OP ...]` (CPU): compiles every launch config of every
  `CASE` for sm_90 (`triton.compile` with `GPUTarget("cuda", 90, 32)`, inputs on the `meta` device, unit
  strides specialized as the JIT does) and checks shared memory against the 227 KiB limit.
- `python benchmarks/suite/_gpu_check.py --out DIR [--ops ...] [--category ...] [--budget-s S]` (CUDA): for
  every `CASE`, validates `ModelNew` against `Model` and times both with `triton.testing.do_bench` (median,
  L2 flushed), prints a table and writes `DIR/suite_gpu.{{json,jsonl,txt}}`; a failing or out-of-memory case is
  recorded and the run goes on, a poisoned CUDA context restarts the worker, and `--budget-s` (default 540)
  bounds the run.

## The naive set

Each folder also holds `naive.py`, a naive first translation of the kind a code model writes on the first
try: the starting point of a second benchmark (issue 16; the paper this project implements starts from such
first versions). Same `ModelNew` interface, correct on every case, and untuned:

- one chunk of 64-512 elements or one row per program, long rows walked in fixed 64-256 column chunks; one
  32 x 32 (or 32 x 64) output tile per program for the matmuls, no grouping;
- the default launch: no `num_warps`, `num_stages`, autotune or heuristics, no compiler hints;
- separate passes: max, sum of exp and normalize as separate loops or separate kernels (`softmax` launches
  three); unfused second kernels in `l2_norm`, `residual_rmsnorm`, `masked_cumsum` and `matmul_bias_relu`;
  scalar results through a one-program final kernel or one atomic accumulator (`mse_loss`,
  `cosine_similarity_loss`);
- `input_precision="ieee"` on any fp32 `tl.dot` (the suite's matmuls are bf16/fp16, so none needs it today).

Checks: `_check.py --initial naive`, `_compile_check.py --initial naive` (every CASE compiles under Triton 3.6
and 3.9), `_gpu_check.py --initial naive --out DIR` (validate and time against eager on the GPU), and
`pytest tests/benchmarks/test_naive_ops.py` (the interpreter check for every operator, plus a static check
that each stays naive: it fails on autotune, tuning keywords at launch, block sizes above 512 or computed
ones, hints, an fp32 dot without `ieee`, or a torch compute op in `forward`). A campaign started from them:
`runner.py --initial naive` (results in `benchmarks/results/naive/`, `"initial": "naive"` in every
`result.json`; a result dir holding the other set is refused), reported by
`report.py --out benchmarks/results/naive`, where "initial" means `naive.py`.

## Sizing

Every case is sized so that torch eager needs at least 50 us on an H200, so launch overhead does not decide
the comparison: the roofline time `max(bytes_moved / 4.8 TB/s, flops / 989 TFLOP/s)` of every case is at
least 50 us (checked in CI), and eager can only be slower. One exception: `moe_group_top2` at T=131072
(roofline 29 us) is kept because that is the size measured on an H200 (one group per program 0.636 ms,
32 groups per program 0.045 ms); torch's top-k is expected to run far above its roofline there (not yet
measured). `_gpu_check.py` measures eager directly and flags any case under 50 us.

## Notes

- The Triton interpreter (3.9) computes `tl.dot` on bf16 operands wrongly (off by ~1e10), while fp16 and fp32
  are right; the matmul smoke cases therefore use fp16, and bf16 matmuls are validated on the GPU only.
- The Triton 3.6 interpreter fails on `for ... in range(0, n, BLOCK)` loops under numpy 2.x (`int()` of a
  one-element array); 3.9's interpreter runs them. Use the interpreter with the CI environment's Triton; the
  3.6 compiler (the H200's) builds every kernel here (`_compile_check.py` under 3.6 passes).
- Matmul inputs are scaled (`B / sqrt(K)`, or `nn.Linear`'s own init) so outputs are O(1) and one
  tolerance means the same thing at every K.
- Long sums and scans (`sum_dim`, `matvec`, the cumulative ops) carry wider absolute tolerances: the
  accumulation order legitimately differs between implementations.

## Operators
"""


def _origin(doc: str) -> str:
    m = re.search(r"KernelBench origin:(.*?)(?:\.\s|\.$)", " ".join(doc.split()))
    if not m:
        return "-"
    found = re.findall(r"level[12]/\w+", m.group(1))
    return ", ".join(f"`{f}`" for f in found) if found else "-"


def _case_text(case: dict) -> str:
    return " ".join(str(v) if k == "dtype" else f"{k}={v}" for k, v in case.items())


def _initial_summary(op: str, name: str = "initial") -> str:
    path = SUITE_DIR / op / f"{name}.py"
    if not path.is_file():
        return "-"
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(doc.split())
    return text.split(": ", 1)[1].rstrip(".") if ": " in text else text


def render() -> str:
    ops = list_ops()
    problems = {op: load_problem(SUITE_DIR / op) for op in ops}
    out = [HEADER.format(n_ops=len(ops))]
    for cat, title in CATEGORIES.items():
        members = [op for op in ops if getattr(problems[op].module, "CATEGORY", None) == cat]
        out.append(f"\n### {title} ({len(members)})\n")
        out.append("| operator | KernelBench origin | cases | min roofline | initial kernel | naive kernel |")
        out.append("|---|---|---|---|---|---|")
        for op in members:
            p = problems[op]
            doc = p.module.__doc__ or ""
            cases = "<br>".join(_case_text(c) for c in p.cases)
            roof = min(roofline_seconds(p, c) or 0.0 for c in p.cases) * 1e6
            out.append(f"| `{op}` | {_origin(doc)} | {cases} | {roof:.0f} us | {_initial_summary(op)} | {_initial_summary(op, 'naive')} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not README.is_file() or README.read_text() != text:
            print(f"{README} is out of date: run python benchmarks/suite/_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(text)
    print(f"wrote {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
