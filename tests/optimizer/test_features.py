"""Code features: the L1 vocabulary extracted from kernels, launches and cases."""

from __future__ import annotations

from pathlib import Path

from optimizer.features import extract_features

DATA = Path(__file__).parent / "data"

MATMUL = '''
import triton
import triton.language as tl

@triton.jit
def mm(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(a + tl.arange(0, BLOCK_M)[:, None] * K + k + tl.arange(0, BLOCK_K)[None, :])
        y = tl.load(b + (k + tl.arange(0, BLOCK_K))[:, None] * N + tl.arange(0, BLOCK_N)[None, :])
        acc += tl.dot(x, y)
    tl.store(c + tl.arange(0, BLOCK_M)[:, None] * N + tl.arange(0, BLOCK_N)[None, :], acc)

def launch(a, b, c):
    mm[(4, 4)](a, b, c, 64, 64, 64, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
'''


def test_softmax_features() -> None:
    f = extract_features((DATA / "softmax" / "initial.py").read_text(), cases=[{"M": 8, "N": 32}, {"M": 5, "N": 20}],
                         launches=[{"kernel": "softmax_kernel", "grid": [8], "signature": {"x_ptr": "*fp32"}}])
    for tok in ("row_per_program", "masked_load", "tl.max", "tl.sum", "num_warps", "single_pass_kernel", "multiple_shapes",
                "short_rows", "few_programs", "strides"):
        assert tok in f.tokens, tok
    assert "elementwise" not in f.tokens and "tl.dot" not in f.tokens and f.kernels == ["softmax_kernel"]


def test_matmul_and_elementwise_features() -> None:
    f = extract_features(MATMUL, launches=[{"kernel": "mm", "grid": [4, 4], "signature": {"a": "*fp32"}}])
    for tok in ("tl.dot", "k_loop", "matmul", "grid_over_tiles", "2d_tile", "hard_coded_block_size", "fp32_dot", "inner_loop"):
        assert tok in f.tokens, tok
    g = extract_features((DATA / "scale" / "initial.py").read_text(), input_dtypes=["bfloat16"], torch_ops=["aten.add"])
    for tok in ("elementwise", "cdiv_grid", "bf16", "torch_ops_in_forward", "masked_load"):
        assert tok in g.tokens, tok
    assert extract_features("def broken(:\n").tokens == ["syntax_error"]
