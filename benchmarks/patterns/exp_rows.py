"""Row-wise, scan, loss and elementwise experiments for the pattern cards (see measure_idioms.py)."""

from __future__ import annotations

import re

import torch
import triton
import triton.language as tl

from common import DEV, measure

# ---------------------------------------------------------------- softmax: one row vs several rows per program
@triton.jit
def softmax_row_kernel(X, Y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(X + row * n_cols + cols, mask=m, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(Y + row * n_cols + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def softmax_rows_kernel(X, Y, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    off = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(X + off, mask=m, other=float("-inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    tl.store(Y + off, e / tl.sum(e, axis=1)[:, None], mask=m)


def exp_softmax_rows(small: bool) -> list[dict]:
    M, N = (64, 64) if small else (262144, 64)
    x = torch.randn(M, N, device=DEV)
    ref = torch.softmax(x, dim=1)
    y = torch.empty_like(x)
    out = []
    runs = {"one_row_per_program,num_warps=4": lambda: softmax_row_kernel[(M,)](x, y, N, BLOCK=64, num_warps=4),
            "one_row_per_program,num_warps=1": lambda: softmax_row_kernel[(M,)](x, y, N, BLOCK=64, num_warps=1)}
    for r in (4, 16, 32):
        runs[f"rows_per_program_{r}"] = (lambda r=r: softmax_rows_kernel[(triton.cdiv(M, r),)](
            x, y, M, N, ROWS=r, BLOCK=64, num_warps=4))
    for name, fn in runs.items():
        out.append(measure("softmax_short_rows", name, fn, lambda: y, ref, small, bytes_moved=2 * x.numel() * 4))
    return out


# ---------------------------------------------------------------- top-2 sum: argmax vs value-only
@triton.jit
def top2_argmax_kernel(X, OUT, n_rows, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    rm = rows < n_rows
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=rm[:, None], other=0.0)
    i1 = tl.argmax(x, axis=1)
    m1 = tl.max(x, axis=1)
    x2 = tl.where(cols[None, :] == i1[:, None], float("-inf"), x)
    tl.store(OUT + rows, m1 + tl.max(x2, axis=1), mask=rm)


@triton.jit
def top2_value_kernel(X, OUT, n_rows, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, N)
    rm = rows < n_rows
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=rm[:, None], other=0.0)
    m1 = tl.max(x, axis=1)
    is_max = x == m1[:, None]
    n_max = tl.sum(is_max.to(tl.int32), axis=1)
    m2 = tl.max(tl.where(is_max, float("-inf"), x), axis=1)
    tl.store(OUT + rows, m1 + tl.where(n_max > 1, m1, m2), mask=rm)


def exp_top2(small: bool) -> list[dict]:
    M, N, R = (64, 32, 8) if small else (1 << 20, 32, 32)
    x = torch.randn(M, N, device=DEV)
    ref = torch.topk(x, 2, dim=1).values.sum(1)
    o = torch.empty(M, device=DEV)
    out = []
    for rows in (1, R):
        grid = (triton.cdiv(M, rows),)
        for name, kern in (("argmax", top2_argmax_kernel), ("value_only", top2_value_kernel)):
            out.append(measure("top2_sum_groups_of_32", f"{name},groups_per_program={rows}",
                                lambda kern=kern, grid=grid, rows=rows: kern[grid](x, o, M, N=N, ROWS=rows),
                                lambda: o, ref, small, bytes_moved=x.numel() * 4))
    return out


# ---------------------------------------------------------------- scans: serial loop vs tl.cumsum
@triton.jit
def cumsum_serial_kernel(X, Y, N: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for j in range(N):
        acc += tl.load(X + row * N + j)
        tl.store(Y + row * N + j, acc)


@triton.jit
def cumsum_block_kernel(X, Y, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(X + row * N + cols)
    tl.store(Y + row * N + cols, tl.cumsum(x, axis=0))


def exp_cumsum(small: bool) -> list[dict]:
    M, N = (8, 64) if small else (8192, 4096)
    x = torch.randn(M, N, device=DEV)
    ref = torch.cumsum(x.double(), dim=1)
    y = torch.empty_like(x)
    return [
        measure("cumsum_rows", "serial_scalar_loop", lambda: cumsum_serial_kernel[(M,)](x, y, N=N, num_warps=1),
                 lambda: y.double(), ref, small, bytes_moved=2 * x.numel() * 4, tol=(1e-2, 1e-3)),
        measure("cumsum_rows", "tl.cumsum", lambda: cumsum_block_kernel[(M,)](x, y, N=N, num_warps=8),
                 lambda: y.double(), ref, small, bytes_moved=2 * x.numel() * 4, tol=(1e-2, 1e-3)),
    ]


# ---------------------------------------------------------------- long-row softmax: 3 passes vs online (2 passes)
@triton.jit
def softmax_3pass_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = X + row * N
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(base + c, mask=c < N, other=float("-inf")))
    mx = tl.max(m, axis=0)
    d = tl.zeros([BLOCK], tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        d += tl.exp(tl.load(base + c, mask=c < N, other=float("-inf")) - mx)
    den = tl.sum(d, axis=0)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(base + c, mask=c < N, other=float("-inf"))
        tl.store(Y + row * N + c, tl.exp(x - mx) / den, mask=c < N)


@triton.jit
def softmax_online_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = X + row * N
    # finite start: a lane masked in every chunk would otherwise compute exp(-inf - -inf) = NaN
    m = tl.full([BLOCK], -1e30, tl.float32)
    d = tl.zeros([BLOCK], tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(base + c, mask=c < N, other=float("-inf"))
        m_new = tl.maximum(m, x)
        d = d * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    mx = tl.max(m, axis=0)
    den = tl.sum(d * tl.exp(m - mx), axis=0)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(base + c, mask=c < N, other=float("-inf"))
        tl.store(Y + row * N + c, tl.exp(x - mx) / den, mask=c < N)


def exp_online_softmax(small: bool) -> list[dict]:
    M, N = (4, 4096) if small else (4096, 32768)
    x = torch.randn(M, N, device=DEV)
    ref = torch.softmax(x, dim=1)
    y = torch.empty_like(x)
    B = 1024 if small else 2048
    return [
        measure("softmax_long_rows", "three_pass", lambda: softmax_3pass_kernel[(M,)](x, y, N, BLOCK=B, num_warps=8),
                 lambda: y, ref, small, bytes_moved=2 * x.numel() * 4),
        measure("softmax_long_rows", "online_two_pass",
                 lambda: softmax_online_kernel[(M,)](x, y, N, BLOCK=B, num_warps=8), lambda: y, ref, small,
                 bytes_moved=2 * x.numel() * 4),
    ]


# ---------------------------------------------------------------- fused cross-entropy vs torch
@triton.jit
def cross_entropy_kernel(X, T, LOSS, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = X + row * V
    # finite start: a lane masked in every chunk would otherwise compute exp(-inf - -inf) = NaN
    m = tl.full([BLOCK], -1e30, tl.float32)
    d = tl.zeros([BLOCK], tl.float32)
    for s in range(0, V, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(base + c, mask=c < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        d = d * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    mx = tl.max(m, axis=0)
    lse = mx + tl.log(tl.sum(d * tl.exp(m - mx), axis=0))
    t = tl.load(T + row)
    xt = tl.load(base + t).to(tl.float32)
    tl.store(LOSS + row, lse - xt)


def exp_cross_entropy(small: bool) -> list[dict]:
    M, V = (8, 1000) if small else (4096, 32768)
    x = torch.randn(M, V, device=DEV)
    t = torch.randint(0, V, (M,), device=DEV)
    ref = torch.nn.functional.cross_entropy(x, t, reduction="none")
    loss = torch.empty(M, device=DEV)
    return [
        measure("cross_entropy", "torch_eager", lambda: loss.copy_(
            torch.nn.functional.cross_entropy(x, t, reduction="none")), lambda: loss, ref, small,
            bytes_moved=x.numel() * 4),
        measure("cross_entropy", "fused_online_lse", lambda: cross_entropy_kernel[(M,)](x, t, loss, V, BLOCK=2048,
                                                                                        num_warps=8),
                 lambda: loss, ref, small, bytes_moved=x.numel() * 4),
    ]


# ---------------------------------------------------------------- elementwise fusion vs torch chain
@triton.jit
def fused_affine_relu_kernel(X, Y, a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m)
    tl.store(Y + offs, tl.maximum(x * a + b, 0.0), mask=m)


def exp_fusion(small: bool) -> list[dict]:
    n = 4096 if small else 1 << 28
    x = torch.randn(n, device=DEV)
    y = torch.empty_like(x)
    ref = torch.relu(x * 1.5 + 0.25)
    return [
        measure("elementwise_chain", "torch_three_ops", lambda: y.copy_(torch.relu(x * 1.5 + 0.25)), lambda: y, ref,
                 small, bytes_moved=2 * n * 4),
        measure("elementwise_chain", "fused_triton", lambda: fused_affine_relu_kernel[(triton.cdiv(n, 4096),)](
            x, y, 1.5, 0.25, n, BLOCK=4096, num_warps=8), lambda: y, ref, small, bytes_moved=2 * n * 4),
    ]


# ---------------------------------------------------------------- masked row loads: runtime bound vs constexpr bound
@triton.jit
def rowsum_runtime_kernel(X, Y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + c, mask=c < n_cols, other=0.0)
    tl.store(Y + row, tl.sum(x, axis=0))


@triton.jit
def rowsum_constexpr_kernel(X, Y, stride, N_COLS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + c, mask=c < N_COLS, other=0.0)
    tl.store(Y + row, tl.sum(x, axis=0))


def exp_mask_vectorization(small: bool) -> list[dict]:
    M, S, N = (16, 1024, 1000) if small else (131072, 1024, 1000)
    xp = torch.randn(M, S, device=DEV)
    ref = xp[:, :N].sum(1)
    y = torch.empty(M, device=DEV)
    recs = [
        measure("rowsum_masked_1000_of_1024", "runtime_n_cols",
                 lambda: rowsum_runtime_kernel[(M,)](xp, y, N, S, BLOCK=1024, num_warps=4), lambda: y, ref, small,
                 bytes_moved=M * N * 4, tol=(1e-3, 1e-4)),
        measure("rowsum_masked_1000_of_1024", "constexpr_n_cols",
                 lambda: rowsum_constexpr_kernel[(M,)](xp, y, S, N_COLS=N, BLOCK=1024, num_warps=4), lambda: y, ref,
                 small, bytes_moved=M * N * 4, tol=(1e-3, 1e-4)),
    ]
    if DEV == "cuda":  # what the launches compiled to: vector width of the global loads
        k1 = rowsum_runtime_kernel[(1,)](xp, y, N, S, BLOCK=1024, num_warps=4)
        k2 = rowsum_constexpr_kernel[(1,)](xp, y, S, N_COLS=N, BLOCK=1024, num_warps=4)
        for rec, k in zip(recs, (k1, k2)):
            ptx = k.asm["ptx"]
            rec["ptx_ld_global_v4"] = len(re.findall(r"ld\.global(?:\.\w+)*\.v4\.", ptx))
            rec["ptx_ld_global_scalar_b32"] = len(re.findall(r"ld\.global(?:\.(?!v[248]\b)\w+)*\.b32\s", ptx))
    return recs


# ---------------------------------------------------------------- elementwise: one tile per program vs persistent
@triton.jit
def affine_relu_persistent_kernel(X, Y, a, b, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for t in range(pid, tl.cdiv(n, BLOCK), nprog):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(X + offs, mask=m)
        tl.store(Y + offs, tl.maximum(x * a + b, 0.0), mask=m)


def exp_persistent_elementwise(small: bool) -> list[dict]:
    n = 4096 if small else 1 << 28
    x = torch.randn(n, device=DEV)
    y = torch.empty_like(x)
    ref = torch.relu(x * 1.5 + 0.25)
    sms = torch.cuda.get_device_properties(0).multi_processor_count if DEV == "cuda" else 4
    out = [measure("elementwise_grid", "one_tile_per_program", lambda: fused_affine_relu_kernel[(triton.cdiv(n, 4096),)](
        x, y, 1.5, 0.25, n, BLOCK=4096, num_warps=8), lambda: y, ref, small, bytes_moved=2 * n * 4)]
    for k in (1, 4):
        out.append(measure("elementwise_grid", f"persistent_{k}x_SMs",
                            lambda k=k: affine_relu_persistent_kernel[(k * sms,)](x, y, 1.5, 0.25, n, BLOCK=4096,
                                                                                 num_warps=8),
                            lambda: y, ref, small, bytes_moved=2 * n * 4))
    return out

