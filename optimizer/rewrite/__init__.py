"""The rewrite engine, on the libcst syntax tree: every recipe kind a KB card names, applied to a candidate.

``context`` holds what a rewrite reads and returns (``RecipeContext``, ``RewriteResult``), ``errors`` the refusal
every transform raises (``NotApplicable``, a ``kb.errors.LadderError``), ``engine`` the ``Transform`` protocol and
its applier; the kernel facts transforms reason over are the one kernel model, ``optimizer.kernel``, which L1's
cause findings read too. ``TRANSFORMS`` maps a recipe kind to its structural transform; ``registry`` declares
every kind (``REGISTRY``, with its preparation steps, and the launch and compiler knobs) and derives ``APPLIERS``;
``recipe`` applies them inside their ``domains`` (``apply_recipe``, ``apply_recipe_variants``, ``can_apply``), for
the ladder and the proposers. ``effect`` refuses candidates that cannot change what runs.

The package's names are resolved on first use (PEP 562), so that importing one module of it (``errors``,
``context``) does not import every transform.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optimizer.kernel.analyze import module_facts
    from optimizer.kernel.model import KernelFacts, ModuleFacts
    from optimizer.rewrite.engine import Target, Transform, applier, parse_tree, targets
    from optimizer.rewrite.errors import NotApplicable

    TRANSFORMS: dict[str, Any]  # built by __getattr__ on first use

__all__ = ["TRANSFORMS", "KernelFacts", "ModuleFacts", "NotApplicable", "Target", "Transform", "applier",
           "module_facts", "parse_tree", "targets"]

_HOME = {"Target": "engine", "Transform": "engine", "applier": "engine", "parse_tree": "engine", "targets": "engine",
         "KernelFacts": "optimizer.kernel.model", "ModuleFacts": "optimizer.kernel.model",
         "module_facts": "optimizer.kernel.analyze", "NotApplicable": "errors"}


def _transforms() -> dict[str, Any]:
    from optimizer.rewrite.block_per_program import BlockPerProgram
    from optimizer.rewrite.block_scale import BlockScale
    from optimizer.rewrite.column_tiles import ColumnTiles
    from optimizer.rewrite.descriptors import DotTensorDescriptor
    from optimizer.rewrite.dot_precision import DotPrecision
    from optimizer.rewrite.dot_tiles import DotTileSearch
    from optimizer.rewrite.histogram import PrivatizedHistogram
    from optimizer.rewrite.host_setup import HostSetupCache
    from optimizer.rewrite.inplace import InplaceOutput
    from optimizer.rewrite.kernel_chain import KernelChainFusion
    from optimizer.rewrite.lane_accumulators import LaneAccumulators
    from optimizer.rewrite.launch_loop import LaunchLoopGrid
    from optimizer.rewrite.native_operands import LowPrecisionOperands
    from optimizer.rewrite.pair_tiles import InterleavedPairs
    from optimizer.rewrite.producer_inline import ProducerInline
    from optimizer.rewrite.repeated_rows import RepeatedIndexLoads
    from optimizer.rewrite.row_resident import RowResident
    from optimizer.rewrite.spill_relief import ChunkedRowReduction
    from optimizer.rewrite.two_stage import TwoStageReduction

    return {tr.kind: tr for tr in (
        BlockPerProgram(), DotPrecision(), TwoStageReduction(), DotTileSearch(), ChunkedRowReduction(),
        LowPrecisionOperands(), LaunchLoopGrid(), KernelChainFusion(), BlockScale(), DotTensorDescriptor(),
        InplaceOutput(), ProducerInline(), HostSetupCache(), PrivatizedHistogram(), LaneAccumulators(), RowResident(),
        ColumnTiles(), InterleavedPairs(), RepeatedIndexLoads())}


def __getattr__(name: str) -> Any:
    if name == "TRANSFORMS":  # built once, on first use: recipe kind -> structural transform
        value: Any = _transforms()
    elif name in _HOME:
        home = _HOME[name]
        value = getattr(importlib.import_module(home if "." in home else f"{__name__}.{home}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
