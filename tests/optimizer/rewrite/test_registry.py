"""The recipe registry: one declared entry per recipe kind (engine, preparations, structural or knob)."""

from __future__ import annotations

from pathlib import Path

from optimizer.rewrite import TRANSFORMS
from optimizer.rewrite.registry import APPLIERS, KNOB_KINDS, REGISTRY


def test_every_kind_is_declared_once_and_built_from_its_entry() -> None:
    assert set(APPLIERS) == set(REGISTRY)
    for kind, entry in REGISTRY.items():
        assert entry.kind == kind and (entry.transform is None) != (entry.applier is None)
    # one engine: every kind is a Transform but the composites that choose between transforms
    composites = {"rows_per_program", "single_pass_fusion", "register_spill_relief"}
    assert {k for k, e in REGISTRY.items() if e.engine == "function"} == composites
    assert set(TRANSFORMS) < {k for k, e in REGISTRY.items() if e.engine == "cst"}
    assert KNOB_KINDS == {"launch_params", "autotune", "compiler_hints", "input_precision", "care_padding_false",
                          "alignment_hints"}


def test_preparations_are_declared_not_patched_in() -> None:
    triggers = {k: [p.trigger for p in e.prepare] for k, e in REGISTRY.items()}
    assert triggers["dot_tile_search"][0] == "not three distinct constexpr aranges"
    assert triggers["kernel_chain_fusion"][0] == "launch different grids"
    assert all(t[-2] == "passes *args / **kwargs" for k, t in triggers.items() if k in TRANSFORMS)
    # every entry pins a launch through a variable first (outermost: the other preparations read launches)
    assert all(t[-1] == "no kernel of the candidate is launched" for t in triggers.values())
    assert getattr(APPLIERS["block_scale"], "transform", None) is TRANSFORMS["block_scale"]


def test_ported_knobs_run_on_the_engine() -> None:
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    src = (Path(__file__).parent / "kernels" / "dot_kloop.py").read_text()
    res = apply_recipe({"kind": "input_precision", "params": {"value": "tf32"}}, RecipeContext(source=src))
    assert "tl.dot(a, b, input_precision='tf32')" in res.source and res.applied == {"value": "tf32"}
    assert REGISTRY["input_precision"].engine == "cst" and not REGISTRY["input_precision"].structural
