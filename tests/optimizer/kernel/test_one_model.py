"""L1's cause findings and the transforms' preconditions read one kernel model (issue 29): the same record, built by
the same function, for kernel forms that the two used to read differently (L1's ``structure.py`` on ``ast``, the
transforms' ``rewrite/facts.py`` on libcst)."""

from __future__ import annotations

import textwrap

from optimizer.kernel.features import extract_features
from optimizer.kernel.flow import pointer_bases
from optimizer.kernel.model import KernelFacts
from optimizer.ladder.causes import code_findings
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import parse_tree, targets
from optimizer.rewrite.recipe import can_apply

#: the program id is read inline (``tl.program_id(0) * BLOCK``): the transforms' facts used to seed the program-id
#: dependence only from ``pid = tl.program_id(0)``, so every address here was "the same in every program" for them
#: (a same-address atomic two_stage_reduction would take) while L1 called the atomic a data-indexed scatter
INLINE_PID_HISTOGRAM = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def count_kernel(ids_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tok = tl.load(ids_ptr + offs, mask=offs < n, other=0)
        tl.atomic_add(out_ptr + tok, 1, mask=offs < n)

    class ModelNew(torch.nn.Module):
        def forward(self, ids):
            out = torch.zeros(16, dtype=torch.int32, device=ids.device)
            n = ids.numel()
            count_kernel[(triton.cdiv(n, 1024),)](ids, out, n, BLOCK=1024)
            return out
''')

#: ``row = tl.program_id(0).to(tl.int64)`` (Liger's form): not a plain ``tl.program_id`` assignment
INT64_ROW = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
        tl.atomic_add(out_ptr + row, tl.sum(x, axis=0))

    def run(x, out):
        k[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=1024)
''')

#: pointer parameters whose names do not say "ptr": L1 followed only parameters named like pointers (``*ptr*``, x, y,
#: a, b, out) and so missed the second pass over ``src``; the transforms' ``pointer_bases`` reads how they are used
TWO_PASS_SRC = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(src, out_ptr, n, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        base = src + row * stride
        m = -float("inf")
        for s in range(0, n, BLOCK):
            cols = s + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.max(tl.load(base + cols, mask=cols < n, other=-float("inf")), axis=0))
        acc = 0.0
        for s in range(0, n, BLOCK):
            cols = s + tl.arange(0, BLOCK)
            acc += tl.sum(tl.exp(tl.load(base + cols, mask=cols < n, other=-float("inf")) - m), axis=0)
        tl.store(out_ptr + row, m + tl.log(acc))

    def run(x, out):
        k[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024)
''')


def _both(src: str, kernel: str) -> tuple[KernelFacts, KernelFacts]:
    """(what L1's findings read, what the transforms' preconditions read) for ``kernel``."""
    ctx = RecipeContext(source=src)
    target = next(t for t in targets(parse_tree(ctx), ctx) if t.kernel.name == kernel)
    return extract_features(src).structures[kernel], target.facts


def test_one_record_one_builder() -> None:
    l1, tr = _both(INLINE_PID_HISTOGRAM, "count_kernel")
    assert type(l1) is type(tr) is KernelFacts
    assert l1.summary() == tr.summary() and l1.pid_dependent == tr.pid_dependent


def test_inline_program_id_atomic_is_a_scatter_for_both() -> None:
    l1, tr = _both(INLINE_PID_HISTOGRAM, "count_kernel")
    assert {"offs", "tok"} <= tr.pid_dependent
    assert not tr.same_address_atomics and not l1.same_address_atomics
    assert all(a.pid_dependent for a in tr.accesses)
    assert l1.scatter_atomics == [(10, "out_ptr")]  # L1 used to name ids_ptr (the index's source), not the target
    feats = extract_features(INLINE_PID_HISTOGRAM)
    assert "scatter_atomic" in feats.tokens and "same_address_atomic" not in feats.tokens
    ok, why = can_apply({"kind": "two_stage_reduction", "params": {}}, RecipeContext(source=INLINE_PID_HISTOGRAM))
    assert not ok and "no atomic hits the same address" in why


def test_int64_program_id_row_is_per_program_for_both() -> None:
    l1, tr = _both(INT64_ROW, "k")
    assert "row" in tr.pid_dependent and tr.pid == {}  # no plain `x = tl.program_id(0)` assignment, still per-program
    (atomic,) = tr.atomics
    assert atomic.pid_dependent and not l1.same_address_atomics
    assert "same_address_atomics" not in [f.cause for f in code_findings(extract_features(INT64_ROW), [])]


def test_passes_follow_pointer_bases_not_parameter_names() -> None:
    l1, tr = _both(TWO_PASS_SRC, "k")
    loads = [a for a in tr.accesses if a.op == "tl.load"]
    assert all(pointer_bases(tr.kernel, a.node.args[0].value) == {"src"} for a in loads)  # type: ignore[arg-type]
    assert l1.multi_pass == {"src": [10, 14]}
    rec = {"kernel": "k", "grid": [1024], "launches": 1, "signature": {}, "constexprs": {}, "numel": {}}
    found = code_findings(extract_features(TWO_PASS_SRC), [rec])
    assert found[0].cause == "redundant_passes" and found[0].source_lines == [10, 14]


def test_keyword_pointer_load_is_read() -> None:
    """``tl.load(pointer=...)`` crashed L1's ast features (kernl's decode attention); the model reads it."""
    src = INT64_ROW.replace("tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)",
                            "tl.load(pointer=x_ptr + row * stride + cols, mask=cols < n, other=0.0)")
    feats = extract_features(src)
    assert "masked_load" in feats.tokens and feats.structures["k"].load_lines == [9]


def test_grid_read_through_the_assignment_above_the_launch() -> None:
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 0.0, mask=offs < n)

        def run(x, n, flat):
            if flat:
                grid = (triton.cdiv(n, 1024),)
                k[grid](x, n, BLOCK=1024)
            grid = (n,)
            k[grid](x, n, BLOCK=1)
    ''')
    assert "cdiv_grid" in extract_features(src).tokens
    ctx = RecipeContext(source=src)
    (target,) = targets(parse_tree(ctx), ctx)
    assert all(lf.grid_elements is None for lf in target.launches)  # two definitions: no single grid to edit
