"""The serial-tail cause: a one-program pass whose loop walks a problem-sized extent, and a two-stage reduction's
per-program partials, which are not a redundant pass (their round trip is a sliver of the traffic)."""

from __future__ import annotations

import textwrap

from optimizer.kernel.features import extract_features
from optimizer.ladder.causes import code_findings
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.recipe import apply_recipe_variants

TWO_STAGE = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def partial_k(a_ptr, b_ptr, part_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(a_ptr + offs, mask=m, other=0.0) - tl.load(b_ptr + offs, mask=m, other=0.0)
        tl.store(part_ptr + tl.program_id(0), tl.sum(d * d, axis=0))

    @triton.jit
    def finish_k(part_ptr, out_ptr, n_parts, n, BLOCK: tl.constexpr):
        acc = 0.0
        for s in range(0, n_parts, BLOCK):
            o = s + tl.arange(0, BLOCK)
            acc += tl.sum(tl.load(part_ptr + o, mask=o < n_parts, other=0.0), axis=0)
        tl.store(out_ptr, acc / n)

    def run(a, b):
        n = a.numel()
        n_parts = triton.cdiv(n, 256)
        parts = torch.empty(n_parts, dtype=torch.float32, device=a.device)
        out = torch.empty((), dtype=torch.float32, device=a.device)
        partial_k[(n_parts,)](a, b, parts, n, BLOCK=256)
        finish_k[(1,)](parts, out, n_parts, n, BLOCK=256)
        return out
''')

N = 1 << 24


def _recs(n: int = N, block: int = 256) -> list[dict]:
    parts = -(-n // block)
    return [
        {"kernel": "partial_k", "grid": [parts], "launches": 1, "constexprs": {"BLOCK": block},
         "signature": {"a_ptr": "*fp32", "b_ptr": "*fp32", "part_ptr": "*fp32", "n": "i32"},
         "numel": {"a_ptr": n, "b_ptr": n, "part_ptr": parts}, "ir_args": {"n": n, "BLOCK": block}},
        {"kernel": "finish_k", "grid": [1], "launches": 1, "constexprs": {"BLOCK": block},
         "signature": {"part_ptr": "*fp32", "out_ptr": "*fp32", "n_parts": "i32", "n": "i32"},
         "numel": {"part_ptr": parts, "out_ptr": 1}, "ir_args": {"n_parts": parts, "n": n, "BLOCK": block}},
    ]


def test_one_program_loop_over_partials_is_a_serial_tail_not_a_redundant_pass() -> None:
    f = extract_features(TWO_STAGE)
    trip = f.details["roundtrips"][0]
    assert trip["buffer"] == "parts" and trip["params"] == {"writer": "part_ptr", "reader": "part_ptr"}
    found = {x.cause: x for x in code_findings(f, _recs(), case_bytes=8.0 * N)}
    assert "redundant_passes" not in found  # 256 KB of partials next to 128 MB of input
    tail = found["serial_tail"]
    assert tail.structural and tail.confidence == 0.7
    assert "256 iterations" in tail.supporting[0].detail and "partial_k" in tail.supporting[0].detail


def test_short_tail_and_large_intermediates_keep_their_old_reading() -> None:
    f = extract_features(TWO_STAGE)
    # a tail of 16 iterations is not a cause
    assert "serial_tail" not in {x.cause for x in code_findings(f, _recs(n=1 << 20, block=256 * 4), case_bytes=8.0 * (1 << 20))}
    # an intermediate as large as the input is a real round trip
    recs = _recs()
    recs[0]["numel"]["part_ptr"] = N
    assert "redundant_passes" in {x.cause for x in code_findings(f, recs, case_bytes=8.0 * N)}


def test_block_scale_prefers_large_blocks_for_a_serial_tail() -> None:
    recipe = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}, "requires": ["code:tl.arange"]}
    plain = apply_recipe_variants(recipe, RecipeContext(source=TWO_STAGE, evidence=["code:tl.arange"]))
    tail = apply_recipe_variants(recipe, RecipeContext(source=TWO_STAGE, evidence=["code:tl.arange", "cause:serial_tail"]))
    assert plain[0].applied["BLOCK"] == 1024
    assert tail[0].applied["BLOCK"] == 4096 and max(r.applied["BLOCK"] for r in tail) == 16384
    for r in tail:  # the producer's block and the partial count move together; the one-program pass is untouched
        b = r.applied["BLOCK"]
        assert f"triton.cdiv(n, {b})" in r.source and f"BLOCK={b}" in r.source
        assert "finish_k[(1,)](parts, out, n_parts, n, BLOCK=256)" in r.source


def test_the_tail_reads_its_loop_step_whatever_its_name() -> None:
    src = TWO_STAGE.replace("def finish_k(part_ptr, out_ptr, n_parts, n, BLOCK: tl.constexpr):",
                            "def finish_k(part_ptr, out_ptr, n_parts, n, CHUNK: tl.constexpr):")
    src = src.replace("for s in range(0, n_parts, BLOCK):\n        o = s + tl.arange(0, BLOCK)",
                      "for s in range(0, n_parts, CHUNK):\n        o = s + tl.arange(0, CHUNK)")
    src = src.replace("finish_k[(1,)](parts, out, n_parts, n, BLOCK=256)", "finish_k[(1,)](parts, out, n_parts, n, CHUNK=1024)")
    recs = _recs()
    recs[1]["constexprs"] = {"CHUNK": 1024}
    recs[1]["ir_args"] = {"n_parts": N // 256, "n": N, "CHUNK": 1024}
    tail = next(x for x in code_findings(extract_features(src), recs, case_bytes=8.0 * N) if x.cause == "serial_tail")
    assert "64 iterations of 1024" in tail.supporting[0].detail


def test_a_serial_tail_lets_block_scale_go_past_1024() -> None:
    """A first pass already at 1024 elements per program is 'not tiny' for enlarge-tiny-blocks, but with a serial
    tail behind it larger blocks still cut the one-program loop: scaled to 4096 first, up to 16384."""
    src = TWO_STAGE.replace("triton.cdiv(n, 256)", "triton.cdiv(n, 1024)").replace(
        "partial_k[(n_parts,)](a, b, parts, n, BLOCK=256)", "partial_k[(n_parts,)](a, b, parts, n, BLOCK=1024)")
    recipe = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}, "requires": ["code:tl.arange"]}
    plain = apply_recipe_variants(recipe, RecipeContext(source=src, evidence=["code:tl.arange"]))
    assert all(r.description.startswith("finish_k:") for r in plain)  # only the tail's own loop step was small
    out = apply_recipe_variants(recipe, RecipeContext(source=src, evidence=["code:tl.arange", "cause:serial_tail"]))
    assert all(r.description.startswith("partial_k: BLOCK 1024 ->") for r in out)
    assert [r.applied["BLOCK"] for r in out][:1] == [4096] and {8192, 16384} <= {r.applied["BLOCK"] for r in out}


def test_a_chain_through_small_buffers_still_reads_as_repeated_passes() -> None:
    """Three row kernels passing the row max and sum through M-element buffers: the buffers are a sliver of the
    traffic, but each kernel re-reads x, and that (tied to the launch lines) is the structural cause."""
    from pathlib import Path

    src = (Path(__file__).resolve().parents[2] / "benchmarks" / "diagnosis" / "softmax_three_kernels" / "initial.py").read_text()
    M, N = 8192, 4096
    sig = {"x_ptr": "*fp32", "max_ptr": "*fp32", "sum_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}
    recs = [{"kernel": k, "grid": [M], "launches": 1, "signature": sig, "constexprs": {"BLOCK_N": 4096},
             "numel": {p: (M * N if p in ("x_ptr", "y_ptr") else M) for p in ps}}
            for k, ps in (("row_max_kernel", ("x_ptr", "max_ptr")), ("row_sumexp_kernel", ("x_ptr", "max_ptr", "sum_ptr")),
                          ("normalize_kernel", ("x_ptr", "max_ptr", "sum_ptr", "y_ptr")))]
    f = extract_features(src)
    assert "multi_kernel_same_input" in f.tokens
    passes = [x for x in code_findings(f, recs, case_bytes=8.0 * M * N) if x.cause == "redundant_passes" and x.structural]
    assert [r.reference for x in passes for r in x.supporting] == ["chained_rereads"]
    assert passes[0].confidence == 0.7 and passes[0].source_lines == [48, 49, 50]
