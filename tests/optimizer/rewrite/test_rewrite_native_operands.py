"""low_precision_operands: 16-bit tiles upcast before tl.dot fed natively (fp32 accumulate), exact or gated."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

ITEM = Path(__file__).parents[3] / "benchmarks" / "diagnosis" / "attention_fwd_bf16"
RECIPE = {"kind": "low_precision_operands", "params": {}}
SIG = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "S": "i32", "qk_scale": "fp32"}
BF16 = {"bfloat16": {"atol": 1e-2, "rtol": 1e-2}}


def _ctx(source: str, sig: dict[str, str] | None = SIG, **kw: object) -> RecipeContext:
    launches = [{"kernel": "attention_kernel", "signature": sig}] if sig else []
    return RecipeContext(source=source, launches=launches, tolerance={"atol": 1e-4, "rtol": 1e-4}, **kw)  # type: ignore[arg-type]


def test_exact_upcasts_are_narrowed_and_computed_operands_wait_for_a_tolerance() -> None:
    src = (ITEM / "initial.py").read_text()
    strict = apply_recipe(RECIPE, _ctx(src))  # bf16 output but no bf16 tolerance declared: only the exact dot
    assert "tl.dot(q.to(q_ptr.dtype.element_ty), k) * qk_scale" in strict.source
    assert 'tl.dot(p, v.to(tl.float32), input_precision="ieee")' in strict.source and "1 tl.dot" in strict.description
    loose = apply_recipe(RECIPE, _ctx(src, tolerances=BF16))  # the output is bf16 and judged at 1e-2
    assert "tl.dot(p.to(v_ptr.dtype.element_ty), v)" in loose.source and "input_precision" not in loose.source
    assert "1 fp32-computed operand(s) rounded to bfloat16" in loose.description


@pytest.mark.parametrize(
    ("sig", "reason"),
    [
        (None, "no recorded launch"),
        ({**SIG, "q_ptr": "*fp32", "k_ptr": "*fp32", "v_ptr": "*fp32"}, "no tl.dot takes an upcast 16-bit operand"),
    ],
)
def test_refusals(sig: dict[str, str] | None, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, _ctx((ITEM / "initial.py").read_text(), sig))


def test_the_rewrite_validates_and_compiles_to_wgmma(tmp_path: Path) -> None:
    """Against the torch reference in the interpreter (SMOKE_CASES), then compiled for sm_90: no FMA dot left."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.ir import analyze, capture_kernel
    from optimizer.settings import LadderSettings

    res = apply_recipe(RECIPE, _ctx((ITEM / "initial.py").read_text(), tolerances=BF16))
    path = tmp_path / "native.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(ITEM), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason
    args = [
        "q_ptr=*bf16",
        "k_ptr=*bf16",
        "v_ptr=*bf16",
        "o_ptr=*bf16",
        "S=2048",
        "qk_scale=0.18",
        "HEAD_DIM=64",
        "BLOCK_M=64",
        "BLOCK_N=64",
    ]
    report = analyze(
        capture_kernel(
            f"{path}::attention_kernel", "cuda:90", args, options={"num_warps": 4, "num_stages": 2}, per_pass=False
        )
    )
    sigs = {s.name for s in report.signatures}
    assert "fma_dot" not in sigs and ({"wgmma_dot", "mma_dot"} & sigs), sigs


LINEAR = Path(__file__).parents[3] / "benchmarks" / "diagnosis" / "linear_relu_fp16"


def test_named_upcasts_in_a_k_loop_are_narrowed_back_exactly(tmp_path: Path) -> None:
    from rewrite_support import rewrite, same_outputs

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    res = rewrite("dot_fp16_upcast", RECIPE, launches=[{"kernel": "mm16_kernel", "signature": sig}])
    assert "acc += tl.dot(a.to(a_ptr.dtype.element_ty), b.to(b_ptr.dtype.element_ty))" in res.source
    same_outputs("dot_fp16_upcast", res.source, tmp_path, atol=1e-2, rtol=1e-2)


def test_inline_upcasts_with_an_accumulator_argument_validate(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    sig = {"x_ptr": "*fp16", "w_ptr": "*fp16", "acc_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    src = (LINEAR / "initial.py").read_text()
    res = apply_recipe(RECIPE, RecipeContext(source=src, launches=[{"kernel": "linear_kernel", "signature": sig}]))
    assert "tl.dot(x, w, acc)" in res.source
    path = tmp_path / "native.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(LINEAR), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason
