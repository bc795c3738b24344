"""L1 structure facts and the code findings built on them, on small kernels written for the test."""

from __future__ import annotations

import textwrap

from optimizer.kernel.features import extract_features
from optimizer.ladder.causes import code_findings

PER_ELEMENT = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n_cols):
        pid = tl.program_id(0)
        row = pid // n_cols
        col = pid % n_cols
        v = tl.load(x_ptr + row * n_cols + col)
        tl.store(y_ptr + pid, v * 2)

    def run(x, y, n_cols):
        k[(x.numel(),)](x, y, n_cols)
''')

ATOMIC_SUM = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.atomic_add(out_ptr, tl.sum(x, axis=0))
''')

BINCOUNT = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(labels_ptr, counts_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        lab = tl.load(labels_ptr + offs, mask=offs < n, other=0)
        tl.atomic_add(counts_ptr + lab, 1, mask=offs < n)
''')

TWO_PASS = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = x_ptr + row * stride
        m = -float("inf")
        for s in range(0, n, BLOCK):
            cols = s + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.max(tl.load(base + cols, mask=cols < n, other=-float("inf")), axis=0))
        acc = 0.0
        for s in range(0, n, BLOCK):
            cols = s + tl.arange(0, BLOCK)
            acc += tl.sum(tl.exp(tl.load(base + cols, mask=cols < n, other=-float("inf")) - m), axis=0)
        tl.store(y_ptr + row, m + tl.log(acc))
''')

IEEE_DOT = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid = tl.program_id(0)
        rm = (pid // tl.cdiv(N, BLOCK_N)) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = (pid % tl.cdiv(N, BLOCK_N)) * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            rk = k0 + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
            acc += tl.dot(a, b, input_precision="ieee")
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
''')


def _rec(kernel: str, grid: list[int], **kw) -> dict:
    return {"kernel": kernel, "grid": grid, "launches": 1, "signature": kw.pop("signature", {}), "constexprs": kw.pop("constexprs", {}),
            "divisible_by_16": kw.pop("div", []), "numel": kw.pop("numel", {})}


def test_per_element_grid_with_div_mod() -> None:
    f = extract_features(PER_ELEMENT)
    st = f.structures["k"]
    assert not st.block_range and st.div_mod_lines == [8, 9] and "no_block_range" in f.tokens and "div_mod_index" in f.tokens
    found = code_findings(f, [_rec("k", [1 << 20])])
    assert [x.cause for x in found] == ["per_element_grid"] and found[0].source_lines == [8, 9, 10]


def test_same_address_atomic() -> None:
    f = extract_features(ATOMIC_SUM)
    assert f.structures["k"].same_address_lines == [9] and "same_address_atomic" in f.tokens
    assert "same_address_atomics" in [x.cause for x in code_findings(f, [_rec("k", [4096])])]


def test_scatter_atomic_on_a_loaded_index() -> None:
    f = extract_features(BINCOUNT)
    st = f.structures["k"]
    assert st.scatter_atomics == [(9, "counts_ptr")] and not st.same_address_atomics
    assert "scatter_atomic" in f.tokens and "same_address_atomic" not in f.tokens
    for other in (ATOMIC_SUM, PER_ELEMENT):
        assert "scatter_atomic" not in extract_features(other).tokens
    found = code_findings(f, [_rec("k", [4096], numel={"counts_ptr": 16})])
    assert [x.cause for x in found] == ["same_address_atomics"] and found[0].supporting[0].reference == "scatter_atomic"


def test_two_passes_over_one_pointer() -> None:
    f = extract_features(TWO_PASS)
    assert f.structures["k"].passes == {"x_ptr": [10, 14]} and "multi_pass" in f.tokens
    found = code_findings(f, [_rec("k", [1024])])
    assert found[0].cause == "redundant_passes" and found[0].source_lines == [10, 14]


def test_ieee_dot_small_tiles_and_program_order() -> None:
    f = extract_features(IEEE_DOT)
    assert "input_precision_ieee" in f.tokens and "pid_1d_matmul" in f.tokens
    rec = _rec("k", [1024], signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32"},
               constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16})
    causes = {x.cause: x for x in code_findings(f, [rec])}
    assert causes["fma_dot"].confidence >= 0.8 and causes["fma_dot"].source_lines == [15]
    assert "small_dot_tiles" in causes and "l2_unfriendly_order" in causes


def test_clean_kernel_has_no_findings() -> None:
    src = ATOMIC_SUM.replace("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.store(out_ptr + offs, x, mask=offs < n)")
    assert code_findings(extract_features(src), [_rec("k", [4096], signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                                        div=["x_ptr", "out_ptr", "n"])]) == []


ROW_LOOP = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            acc += tl.sum(x, axis=0)
        tl.store(y_ptr + row, acc)
''')


def _loop_rec(n_cols: int, *, warps: int | None = None, dtype: str = "*fp32") -> dict:
    rec = _rec("k", [8192], signature={"x_ptr": dtype, "y_ptr": "*fp32", "n_cols": "i32"}, constexprs={"BLOCK": 128})
    rec["ir_args"] = {"n_cols": n_cols, "BLOCK": 128}
    rec["options"] = {"num_warps": warps} if warps else {}
    return rec


def _chunk(found: list) -> list:
    return [f for f in found if any(r.reference == "small_loop_chunk" for r in f.supporting)]


def test_a_row_loop_of_small_steps_is_a_cause_when_each_thread_gets_less_than_a_vector() -> None:
    f = extract_features(ROW_LOOP)
    assert f.structures["k"].loop_bounds == ["n_cols"]
    # 128 fp32 elements per step over 4 warps: one per thread, under one 16-byte vector -> decisive (0.6)
    narrow = _chunk(code_findings(f, [_loop_rec(4096)], row_bytes=512.0))
    assert [(x.cause, x.confidence) for x in narrow] == [("tiny_programs", 0.6)]
    assert "1 per thread over 4 warps, under one 16-byte vector" in narrow[0].supporting[0].detail
    # one warp: 4 fp32 per thread fill a 16-byte vector -> only a prior (0.45) that the measured class must confirm
    assert [x.confidence for x in _chunk(code_findings(f, [_loop_rec(4096, warps=1)], row_bytes=512.0))] == [0.45]
    # the loop walks its row in two steps: no finding (the recorded extent decides, not the BLOCK-sized row estimate)
    assert _chunk(code_findings(f, [_loop_rec(256)], row_bytes=512.0)) == []


def test_a_kernel_that_rereads_its_rows_leaves_the_step_to_a_later_round() -> None:
    two_pass = ROW_LOOP.replace("    tl.store(y_ptr + row, acc)\n", textwrap.indent(textwrap.dedent('''
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            acc += tl.sum(x * x, axis=0)
        tl.store(y_ptr + row, acc)
    '''), "    "))
    f = extract_features(two_pass)
    assert f.structures["k"].multi_pass  # the passes are the larger cost: fusing them comes first
    assert _chunk(code_findings(f, [_loop_rec(4096)], row_bytes=512.0)) == []


def test_a_reduction_to_a_scalar_inside_a_row_loop_is_a_cause_of_its_own() -> None:
    f = extract_features(ROW_LOOP)
    assert f.structures["k"].loop_reductions == [12] and "reduction_in_loop" in f.tokens
    found = [x for x in code_findings(f, [_loop_rec(4096)], row_bytes=512.0) if x.cause == "loop_reductions"]
    assert [(x.confidence, x.source_lines) for x in found] == [(0.55, [12])]
    assert "32 iterations of 128" in found[0].supporting[0].detail
    # a per-lane accumulator reduced after the loop is the fixed form: no finding
    fixed = ROW_LOOP.replace("acc = 0.0", "acc = tl.zeros([BLOCK], dtype=tl.float32)").replace(
        "acc += tl.sum(x, axis=0)", "acc += x").replace("tl.store(y_ptr + row, acc)", "tl.store(y_ptr + row, tl.sum(acc, axis=0))")
    g = extract_features(fixed)
    assert g.structures["k"].loop_reductions == [] and "reduction_in_loop" not in g.tokens
    assert not [x for x in code_findings(g, [_loop_rec(4096)], row_bytes=512.0) if x.cause == "loop_reductions"]



def test_a_block_widened_by_the_running_max_before_its_reduction_is_a_loop_reduction() -> None:
    """``m = tl.max(tl.maximum(x, m))`` reduces every chunk as ``m = tl.maximum(m, tl.max(x))`` does; a sum widened
    the same way (``s = tl.sum(x + s)``) is another value and no accumulation."""
    widened = ROW_LOOP.replace("acc = 0.0", 'acc = float("-inf")').replace(
        "acc += tl.sum(x, axis=0)", "acc = tl.max(tl.maximum(x, acc))")
    assert extract_features(widened).structures["k"].loop_reductions == [12]
    summed = ROW_LOOP.replace("acc += tl.sum(x, axis=0)", "acc = tl.sum(x + acc)")
    assert extract_features(summed).structures["k"].loop_reductions == []


ADD_THEN_TWO_PASS_NORM = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_k(x_ptr, r_ptr, h_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(h_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(r_ptr + offs, mask=m), mask=m)

    @triton.jit
    def norm_k(h_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for s in range(0, n_cols, BLOCK):
            c = s + tl.arange(0, BLOCK)
            v = tl.load(h_ptr + row * n_cols + c, mask=c < n_cols, other=0.0)
            acc += v * v
        r = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + 1e-6)
        for s in range(0, n_cols, BLOCK):
            c = s + tl.arange(0, BLOCK)
            v = tl.load(h_ptr + row * n_cols + c, mask=c < n_cols, other=0.0)
            tl.store(y_ptr + row * n_cols + c, v * r, mask=c < n_cols)

    def run(x, r):
        M, N = x.shape
        h, y = torch.empty_like(x), torch.empty_like(x)
        add_k[(triton.cdiv(M * N, 256),)](x, r, h, M * N, BLOCK=256)
        norm_k[(M,)](h, y, N, BLOCK=1024)
        return y, h
''')


def test_static_findings_look_past_the_largest_grid() -> None:
    """Without a profile the largest grid (the residual add) is only a guess at the hot kernel: the two-pass norm
    launched after it moves 40% of the traffic, and its second read of h is a cause; with a measured hot kernel
    only that kernel speaks."""
    f = extract_features(ADD_THEN_TWO_PASS_NORM)
    M, N = 8192, 4096
    sig = {"x_ptr": "*fp32", "r_ptr": "*fp32", "h_ptr": "*fp32", "y_ptr": "*fp32"}
    recs = [_rec("add_k", [M * N // 256], signature=sig, constexprs={"BLOCK": 256},
                 numel={"x_ptr": M * N, "r_ptr": M * N, "h_ptr": M * N}),
            _rec("norm_k", [M], signature=sig, constexprs={"BLOCK": 1024}, numel={"h_ptr": M * N, "y_ptr": M * N})]
    found = code_findings(f, recs, case_bytes=16.0 * M * N)
    passes = [x for x in found if x.cause == "redundant_passes"]
    assert len(passes) == 1 and passes[0].summary.startswith("norm_k:") and passes[0].structural
    assert passes[0].supporting[0].reference == "multi_pass"
    assert "redundant_passes" not in {x.cause for x in code_findings(f, recs, hot_kernel="add_k", case_bytes=16.0 * M * N)}
    # a kernel with a small share of the traffic does not speak for the launcher
    recs[1]["numel"] = {"h_ptr": M * N // 16, "y_ptr": M * N // 16}
    assert "redundant_passes" not in {x.cause for x in code_findings(f, recs, case_bytes=16.0 * M * N)}
