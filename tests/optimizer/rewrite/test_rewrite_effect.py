"""No rewrite that cannot change the kernel: knobs a decorator overrides, and candidates that compile to the base's PTX."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite import effect
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.effect import compiled_identity, effect_reasons, overridden_knobs
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

HEUR = '''
import torch
import triton
import triton.language as tl


@triton.heuristics({"num_warps": lambda args: 8 if args["n_cols"] > 4096 else 4,
                    "BLOCK": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def row_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask)
    tl.store(out_ptr + row * n_cols + offs, x * 2, mask=mask)


def double(x):
    out = torch.empty_like(x)
    row_kernel[(x.shape[0],)](x, out, x.shape[1])
    return out
'''

ADD = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
'''


def _record(tmp_path: Path, source: str, block: int = 1024, warps: int = 4) -> dict:
    f = tmp_path / "base.py"
    f.write_text(source)
    return {"kernel": "add_kernel", "file": str(f), "launches": 1,
            "ir_args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": 98304, "BLOCK": block},
            "options": {"num_warps": warps, "num_stages": 3, "num_ctas": 1}}


def test_launch_warps_overridden_by_a_heuristic_is_refused() -> None:
    cand = HEUR.replace("x.shape[1])", "x.shape[1], num_warps=8)")
    why = overridden_knobs(HEUR, cand)
    assert why and "num_warps=8" in why[0] and "@triton.heuristics" in why[0]
    assert effect_reasons(HEUR, cand, [], target=None)[0].startswith("no-op: num_warps=8")


def test_a_constexpr_set_by_a_heuristic_is_not_a_launch_knob() -> None:
    cand = HEUR.replace("x.shape[1])", "x.shape[1], BLOCK=1024)")
    assert any("BLOCK=1024" in r for r in overridden_knobs(HEUR, cand))


def test_autotune_configs_set_every_launch_option() -> None:
    src = HEUR.replace('@triton.heuristics({"num_warps": lambda args: 8 if args["n_cols"] > 4096 else 4,\n'
                       '                    "BLOCK": lambda args: triton.next_power_of_2(args["n_cols"])})',
                       '@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4)], key=["n_cols"])')
    assert "@triton.autotune" in src
    why = overridden_knobs(src, src.replace("x.shape[1])", "x.shape[1], num_stages=4)"))
    assert why and "@triton.autotune" in why[0]


def test_unrelated_launch_change_is_kept() -> None:
    assert overridden_knobs(ADD, ADD.replace("BLOCK=1024)", "BLOCK=1024, num_warps=8)")) == []


def test_contiguity_hint_the_compiler_already_knows_is_a_noop(tmp_path) -> None:
    rec = _record(tmp_path, ADD)
    ctx = RecipeContext(source=ADD, launches=[rec], effect_target="cuda:90")
    recipe = {"kind": "compiler_hints", "params": {"hints": ["multiple_of", "max_contiguous"], "targets": ["offsets"]}}
    with pytest.raises(NotApplicable, match="no-op: the candidate compiles to the same cuda:90 PTX"):
        apply_recipe(recipe, ctx)
    with pytest.raises(NotApplicable, match="no-op"):
        apply_recipe_variants(recipe, ctx)
    # without a target only the static check runs: the same hint is handed out
    assert apply_recipe(recipe, RecipeContext(source=ADD, launches=[rec])).source != ADD


def test_a_change_the_compiler_sees_is_not_a_noop(tmp_path) -> None:
    rec = _record(tmp_path, ADD)
    warps = ADD.replace("BLOCK=1024)", "BLOCK=1024, num_warps=8)")
    assert compiled_identity(ADD, warps, [rec]) is None
    assert effect_reasons(ADD, warps, [rec], target="cuda:90") == []
    host = ADD.replace("out = torch.empty_like(x)", "out = torch.zeros_like(x)")
    assert compiled_identity(ADD, host, [rec]) is None  # a host change is never called a no-op


def test_an_edited_decorator_is_never_called_a_noop(tmp_path) -> None:
    """Autotune configs and heuristics decide launch values at run time, which the base's records do not show."""
    src = HEUR.replace("else 4,", "else 2,")
    rec = {"kernel": "row_kernel", "file": str(tmp_path / "h.py"), "ir_args": {"x_ptr": "*fp32", "out_ptr": "*fp32",
           "n_cols": 1024, "BLOCK": 1024}, "options": {"num_warps": 4}}
    assert compiled_identity(HEUR, src, [rec]) is None


def test_a_warp_count_a_heuristic_sets_is_edited_in_the_heuristic() -> None:
    """issue 29: `num_warps=8` at the launch was overridden by the kernel's heuristic; the search edits the heuristic."""
    rec = {"kernel": "row_kernel", "options": {"num_warps": 4}}
    res = apply_recipe({"kind": "launch_params", "params": {"search": {"num_warps": [2, 4, 8]}}},
                       RecipeContext(source=HEUR, launches=[rec], bottleneck="memory_bound"))
    assert '"num_warps": lambda args: 8,' in res.source and "x.shape[1])" in res.source  # the launch is unchanged
    assert "in its @triton.heuristics" in res.description


def test_family_selection_skips_the_compile_the_proposal_runs_it(tmp_path) -> None:
    """can_apply (every matched card, every level) checks only the static override; apply_recipe / variants compile."""
    from optimizer.rewrite.recipe import can_apply

    rec = _record(tmp_path, ADD)
    ctx = RecipeContext(source=ADD, launches=[rec], effect_target="cuda:90")
    recipe = {"kind": "compiler_hints", "params": {"hints": ["multiple_of", "max_contiguous"], "targets": ["offsets"]}}
    assert can_apply(recipe, ctx)[0]
    with pytest.raises(NotApplicable, match="no-op"):
        apply_recipe(recipe, ctx)


def test_preview_falls_to_the_next_family_when_the_chosen_one_is_a_noop(monkeypatch) -> None:
    """`diagnose --rewrite`: the chosen family's points are all no-ops -> it says so and previews the next family."""
    from dataclasses import dataclass, field
    from types import SimpleNamespace

    import optimizer.diagnosis as dg

    @dataclass
    class Outcome:
        results: list = field(default_factory=list)
        stop: object = None
        chosen: object = None

        def summary(self) -> str:
            return ""

    a = SimpleNamespace(id="compiler-hints-contiguity", recipe={"kind": "compiler_hints"}, applicable=True)
    b = SimpleNamespace(id="enlarge-tiny-blocks", recipe={"kind": "block_scale"}, applicable=True)
    out = Outcome(results=[SimpleNamespace(matched_cards=[a, b])], stop=SimpleNamespace(), chosen=a)

    def fake(ctx, outcome):
        if outcome.chosen is a:
            return dg.RewritePreview(family=a.id, refused="compiler_hints: no-op: the candidate compiles to the same PTX")
        return dg.RewritePreview(family=b.id, kind="block_scale", description="BLOCK 128 -> 1024", source="x", points=2)

    monkeypatch.setattr(dg, "rewrite_preview", fake)
    pre = dg._preview_or_next(None, out)
    assert pre.family == "enlarge-tiny-blocks" and not pre.refused
    assert pre.description.startswith("compiler-hints-contiguity refused (compiler_hints: no-op")


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[list[dict]]:
    """The batches of compile jobs the no-op check sends (each still compiled)."""
    batches: list[list[dict]] = []
    real = effect._compile

    def counting(jobs: list[dict], target: str, timeout_s: float) -> list[str | None]:
        batches.append(jobs)
        return real(jobs, target, timeout_s)

    monkeypatch.setattr(effect, "_compile", counting)
    return batches


def test_a_change_seen_in_the_first_configuration_compiles_no_other(
        tmp_path: Path, compiled: list[list[dict]]) -> None:
    """Many recorded configurations (an autotuned kernel's): a rewrite whose first configuration already compiles to
    different PTX is settled there; the rest are compiled only when that pair is identical."""
    recs = [_record(tmp_path, ADD) | {"ir_args": {**_record(tmp_path, ADD)["ir_args"], "n": 98304 + 1024 * i}}
            for i in range(6)]
    warps = ADD.replace("BLOCK=1024)", "BLOCK=1024, num_warps=8)")
    assert compiled_identity(ADD, warps, recs) is None
    assert [len(jobs) for jobs in compiled] == [2]  # one pair, not twelve compiles


# The no-op check compiles only recorded configurations within the compile budget (``optimizer.ir.compile_cost``): a
# one-warp 65536-wide configuration's compile is unbounded and its time would decide the check.
HINTED = ADD.replace("    mask = offs < n\n",
                     "    offs = tl.max_contiguous(tl.multiple_of(offs, 1024), 1024)\n    mask = offs < n\n")


def test_configurations_over_the_budget_are_not_compiled(tmp_path: Path, compiled: list[list[dict]]) -> None:
    recs = [_record(tmp_path, ADD, 65536, 1), _record(tmp_path, ADD, 1024, 4)]
    why = compiled_identity(ADD, HINTED, recs)
    assert why is not None and why.startswith("no-op") and "(1 over it not compiled)" in why
    assert all(job["args"]["BLOCK"] == 1024 for batch in compiled for job in batch)


def test_a_kernel_with_no_configuration_within_the_budget_is_not_called_a_noop(
        tmp_path: Path, compiled: list[list[dict]]) -> None:
    assert compiled_identity(ADD, HINTED, [_record(tmp_path, ADD, 65536, 1)]) is None
    assert compiled == []
