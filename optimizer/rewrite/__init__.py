"""A rewrite engine on the libcst syntax tree: kernel facts, structural transforms, and their recipe appliers.

``TRANSFORMS`` maps a recipe kind to its structural transform; ``optimizer.recipes.appliers.REGISTRY`` declares each
one (with its preparation steps) and derives ``APPLIERS`` from it, so the ladder and the offline proposer use them
through ``apply_recipe`` / ``can_apply``. ``effect`` refuses candidates that cannot change what runs.
"""

from __future__ import annotations

from optimizer.rewrite.block_per_program import BlockPerProgram
from optimizer.rewrite.block_scale import BlockScale
from optimizer.rewrite.descriptors import DotTensorDescriptor
from optimizer.rewrite.dot_precision import DotPrecision
from optimizer.rewrite.dot_tiles import DotTileSearch
from optimizer.rewrite.engine import Target, Transform, applier, parse_tree, targets
from optimizer.rewrite.facts import KernelFacts, ModuleFacts, module_facts
from optimizer.rewrite.histogram import PrivatizedHistogram
from optimizer.rewrite.host_setup import HostSetupCache
from optimizer.rewrite.inplace import InplaceOutput
from optimizer.rewrite.kernel_chain import KernelChainFusion
from optimizer.rewrite.lane_accumulators import LaneAccumulators
from optimizer.rewrite.launch_loop import LaunchLoopGrid
from optimizer.rewrite.native_operands import LowPrecisionOperands
from optimizer.rewrite.producer_inline import ProducerInline
from optimizer.rewrite.row_resident import RowResident
from optimizer.rewrite.spill_relief import ChunkedRowReduction
from optimizer.rewrite.two_stage import TwoStageReduction

__all__ = ["TRANSFORMS", "KernelFacts", "ModuleFacts", "Target", "Transform", "applier", "module_facts", "parse_tree",
           "targets"]

TRANSFORMS: dict[str, Transform] = {tr.kind: tr for tr in (
    BlockPerProgram(), DotPrecision(), TwoStageReduction(), DotTileSearch(), ChunkedRowReduction(),
    LowPrecisionOperands(), LaunchLoopGrid(), KernelChainFusion(), BlockScale(), DotTensorDescriptor(),
    InplaceOutput(), ProducerInline(), HostSetupCache(), PrivatizedHistogram(), LaneAccumulators(), RowResident())}
