"""Code features: the L1 vocabulary extracted from kernels, launches and cases."""

from __future__ import annotations

from pathlib import Path

from optimizer.kernel.features import extract_features

DATA = Path(__file__).parents[1] / "data"

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


ROUNDTRIP = '''
import torch, triton, triton.language as tl

@triton.jit
def a_kernel(x_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    out = t_ptr + offs
    tl.store(out, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

@triton.jit
def b_kernel(t_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(t_ptr + offs, mask=offs < n) + 1, mask=offs < n)

def forward(x):
    t = torch.empty_like(x)
    y = torch.empty_like(x)
    a_kernel[(4,)](x, t, x.numel(), BLOCK=1024)
    b_kernel[(4,)](t, y, x.numel(), BLOCK=1024)
    return y
'''


def test_an_intermediate_written_then_read_back_is_a_roundtrip() -> None:
    f = extract_features(ROUNDTRIP)
    assert "intermediate_roundtrip" in f.tokens
    (trip,) = f.details["roundtrips"]
    assert trip["buffer"] == "t" and trip["written_by"] == "a_kernel" and trip["read_by"] == "b_kernel"
    # the returned output is not an intermediate; nor is a buffer only one kernel touches
    assert "intermediate_roundtrip" not in extract_features(ROUNDTRIP.replace("return y", "return t, y")).tokens
    one = ROUNDTRIP.replace("    b_kernel[(4,)](t, y, x.numel(), BLOCK=1024)\n", "")
    assert "intermediate_roundtrip" not in extract_features(one).tokens


def test_an_operand_upcast_before_the_dot_is_a_feature() -> None:
    base = '''
import triton, triton.language as tl

@triton.jit
def k(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], DOT)
'''
    assert "upcast_before_dot" in extract_features(base.replace("DOT", "tl.dot(a.to(tl.float32), b.to(tl.float32))")).tokens
    named = base.replace("    b = tl.load", "    a = a.to(tl.float32)\n    b = tl.load").replace("DOT", "tl.dot(a, b)")
    assert "upcast_before_dot" in extract_features(named).tokens
    assert "upcast_before_dot" not in extract_features(base.replace("DOT", "tl.dot(a, b)")).tokens


def test_a_stride_passed_as_one_is_not_unaligned() -> None:
    """The JIT specializes an integer 1 to a constant (a unit stride the compiler sees): it does not keep loads from
    vectorizing, so it is no `unaligned_launch_arg` (issue 29: a contiguity hint was proposed for such strides)."""
    from optimizer.kernel.features import unaligned_args

    rec = {"kernel": "mm", "signature": {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
           "divisible_by_16": ["a", "b", "c", "M", "N"], "ir_args": {"M": 64, "N": 64, "K": 1}}
    assert unaligned_args(rec) == []
    assert "unaligned_launch_arg" not in extract_features(MATMUL, launches=[rec]).tokens
    odd = {**rec, "ir_args": {"M": 64, "N": 64, "K": 33}}
    assert unaligned_args(odd) == ["K"]
    assert "unaligned_launch_arg" in extract_features(MATMUL, launches=[odd]).tokens


def test_round_trips_and_shared_inputs_count_only_the_kernels_a_run_launched() -> None:
    """A file with two algorithms: the second's pair of kernels (a buffer written by one, read by the other) is not
    launched by the recorded run, so it is no round trip and shares no input of that run."""
    src = '''
import torch
import triton
import triton.language as tl


@triton.jit
def amax_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_max(out_ptr, tl.max(tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=0.0))))


@triton.jit
def amax_blocks(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + tl.program_id(0), tl.max(tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=0.0))))


@triton.jit
def amax_final(part_ptr, out_ptr, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.max(tl.load(part_ptr + offs, mask=offs < m, other=0.0)))


def amax(x, atomic=True):
    n = x.numel()
    out = torch.zeros(1, device=x.device)
    if atomic:
        amax_atomic[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    else:
        part = torch.empty(triton.cdiv(n, 1024), device=x.device)
        amax_blocks[(triton.cdiv(n, 1024),)](x, part, n, BLOCK=1024)
        amax_final[(1,)](part, out, triton.cdiv(n, 1024), BLOCK=1024)
    return out
'''
    from optimizer.kernel.features import extract_features

    static = extract_features(src)
    assert "intermediate_roundtrip" in static.tokens and "multi_kernel_same_input" in static.tokens
    ran = extract_features(src, launches=[{"kernel": "amax_atomic", "grid": [64]}])
    assert "intermediate_roundtrip" not in ran.tokens and "multi_kernel_same_input" not in ran.tokens
    both = extract_features(src, launches=[{"kernel": "amax_blocks"}, {"kernel": "amax_final"}])
    assert "intermediate_roundtrip" in both.tokens
