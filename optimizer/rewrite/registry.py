"""Every recipe kind and what applies it, declared once: a real source rewrite of a candidate, with its diff.

Kinds (``kb.models.Recipe.kind``) and their params; each module's docstring states its domain and refusals:

- ``launch_params`` ``{"search": {name: [values]}}``: num_warps / num_stages / num_ctas / maxnreg at the launch,
  or a literal constexpr (e.g. ``BLOCK_SIZE``); one point per round, chosen next to the current one in the
  direction the bottleneck class suggests, never a point already tried (``launch_params``).
- ``autotune`` ``{"configs": [{"kwargs": {...}, "num_warps": w, "num_stages": s}], "key": [...]}``: inserts
  ``@triton.autotune``, removes the tuned arguments from the launch and turns the grid into ``lambda META``
  (``autotune``).
- ``compiler_hints`` ``{"hints": [...], "targets": [...], "value": 16}``: ``tl.multiple_of`` / ``tl.max_contiguous``
  on block offsets, and on stride arguments that every recorded launch shows divisible (``compiler_hints``).
- ``rows_per_program`` ``{"param": "ROWS_PER_PROGRAM", "values": [...], "form": "tile"|"loop"}``: a
  one-row-per-program kernel becomes a [ROWS, BLOCK] tile reduced along axis=1 (``row_tile``) where the kernel is
  straight-line code, else a loop over several rows per program (``row_loop``: parameters the row body advances
  are restored per row); new constexpr, grid divided with ``triton.cdiv`` (``rows_per_program``).
- ``input_precision`` ``{"value": ...}`` on every tl.dot; ``care_padding_false`` (Ascend only) on masked loads.
- ``alignment_hints`` ``{}``: ``tl.multiple_of`` / ``tl.max_constancy`` on stride products and bound checks,
  guarded by an ``ALIGN`` constexpr computed at each launch (``alignment``).
- ``grouped_program_order`` ``{"GROUP_SIZE_M": [...]}``: the matmul tutorial's grouped tile order, remapped inside
  the kernel from the linear program index (``grouping``); grid and host unchanged.
- ``value_only_reduction`` ``{}``: an argmax whose index only masks the maximum becomes value masks plus a
  duplicate count (``value_only``).
- ``block_per_program`` ``{"param", "values", "values_2d"}``: one program per element -> a masked BLOCK tile
  (or a row x column-block 2-D grid that removes per-element // and %), grid via ``triton.cdiv``.
- ``dot_precision`` ``{"tf32_min_tolerance"}``: fp32 ieee dots -> ``tf32x3``; ``tf32`` only under a loose tolerance.
- ``two_stage_reduction`` ``{"block"}``: same-address ``tl.atomic_add`` -> partials + a fixed-order second pass.
- ``privatized_histogram`` ``{"max_bins"}``: a counting ``tl.atomic_add(P + loaded_index, 1)`` (a bincount) ->
  ``tl.histogram`` of each program's block and one atomic per non-empty bin (``PRIV_BINS`` chosen at the launch,
  0 = the original atomics above ``max_bins`` bins).
- ``single_pass_fusion`` ``{}``: mean + deviation passes -> Welford; else max + sum-of-exp -> online.
- ``dot_tile_search`` ``{"configs", "fixed_variants"}``: Hopper tile configs (autotune + fixed variants).
- ``chunked_row_reduction`` / ``register_spill_relief``: a spilling whole-row block -> a CHUNK loop (needs
  ``register_spill`` evidence), else a launch search that never lowers num_warps.
- ``dot_tensor_descriptor`` ``{}``: a dot kernel's operand loads and output store -> ``tl.make_tensor_descriptor``
  (``USE_TMA`` chosen at the launch from 16-byte alignment; also the ``descriptor`` point of ``dot_tile_search``).
- ``host_setup_cache`` ``{}``: per-call host setup in the launcher (kernel warmup, device queries) memoized per
  launch signature (``host_setup``).
- ``inplace_output`` ``{}``: ``y = x.clone()`` rewritten in place -> ``torch.empty_like`` output the kernel writes
  while reading ``x``; a buffer copied back with ``x.copy_(buf)`` -> the kernel writes ``x`` in place.
- ``online_logsumexp`` ``{}``: a max pass and a sum-of-exp pass over the same chunks -> one online pass
  (``online_lse``).
- ``low_precision_operands`` ``{}``: 16-bit tiles upcast to fp32 before ``tl.dot`` -> native 16-bit operands, fp32
  accumulate.
- ``launch_loop_grid`` ``{}``: a kernel launched once per iteration of a host loop (or a nest of two) -> one launch
  with the loops as grid axes.
- ``kernel_chain_fusion`` ``{}``: consecutive launches over the same grid -> one kernel.
- ``block_scale`` ``{"values"}``: a block range too small for the GPU -> a larger one, grid and launch kept in step.
- ``producer_inline`` ``{}``: a flat element-wise kernel whose output only feeds the next kernel -> recomputed
  inside it.
- ``lane_accumulators`` ``{}``: a block reduction inside a column loop -> per-lane accumulators reduced once after it.
- ``row_resident`` ``{"values"}``: several loops over the same row chunks -> one register-resident row.
- ``column_tiles`` ``{"values"}``: a one-row-per-program kernel, element-wise along its row, whose block is the
  whole row -> a (rows, column tiles) grid with a narrower block (``column_tiles``).
- ``interleaved_pairs`` ``{}``: two stride-2 accesses of interleaved pairs (``A`` / ``A + 1``) -> one ``[..., 2]`` tile
  split / joined with ``tl.split`` / ``tl.join`` (``pair_tiles``).
- ``repeated_index_loads`` ``{}``: a tile loaded at row (column) index ``offs // R`` (packed int4 weights) -> the
  distinct rows loaded once and repeated in registers (``repeated_rows``).

Kinds a pattern card may name that no engine applies (``UNSERVED_KINDS``, refused with the reason):
``persistent_grid`` (Ascend core-count grids) and ``split_k``.

Every entry first pins a kernel launched through a variable (``implementation[grid](...)``, the kernel a parameter
defaults to) to a launch by name under an ``is`` guard when it refuses for want of a launched kernel
(``indirect_launch``).

Each kind has one ``RecipeEntry``: a libcst ``Transform`` (applied through ``engine.applier``) or, for the
composites that choose between transforms (``single_pass_fusion``, ``register_spill_relief``,
``rows_per_program``), an applier function; the preparation steps run when it refuses for a known reason (each
rewrites the candidate into the form the transform reads, then the transform is applied to the result: one
rewrite, one diff against the candidate as given); and whether it changes the kernel's structure or only a launch
/ compiler knob. ``APPLIERS`` is derived from ``REGISTRY``; ``optimizer.rewrite.recipe`` applies them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from optimizer.rewrite import TRANSFORMS
from optimizer.rewrite.alignment import AlignmentHints
from optimizer.rewrite.autotune import Autotune
from optimizer.rewrite.compiler_hints import CompilerHints
from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.dot_untie import untie_tiles
from optimizer.rewrite.early_return import TRIGGER as RETURNS_TRIGGER
from optimizer.rewrite.early_return import guard_early_returns
from optimizer.rewrite.engine import applier, prepared_first
from optimizer.rewrite.grouping import GroupedProgramOrder
from optimizer.rewrite.indirect_launch import TRIGGER as INDIRECT_TRIGGER
from optimizer.rewrite.indirect_launch import pin_indirect_launch
from optimizer.rewrite.knobs import CarePaddingFalse, InputPrecision
from optimizer.rewrite.launch_forms import TRIGGER as LAUNCH_ARGS_TRIGGER
from optimizer.rewrite.launch_forms import inline_launch_args
from optimizer.rewrite.launch_params import LaunchParams
from optimizer.rewrite.literal_blocks import promote_literal_blocks
from optimizer.rewrite.online_lse import OnlineLogsumexp
from optimizer.rewrite.row_regrid import regrid_row_broadcast
from optimizer.rewrite.rows_per_program import apply_rows_per_program
from optimizer.rewrite.single_pass import apply_single_pass_fusion
from optimizer.rewrite.spill_relief import apply_register_spill_relief
from optimizer.rewrite.value_only import ValueOnlyReduction

__all__ = ["APPLIERS", "KNOB_KINDS", "REGISTRY", "UNSERVED_KINDS", "Applier", "Preparation", "RecipeEntry"]

Applier = Callable[[dict[str, Any], RecipeContext], RewriteResult]


@dataclass(frozen=True)
class Preparation:
    """Run ``prepare`` (source -> (source, description)) when the applier refuses with a message containing
    ``trigger``; ``label`` introduces the preparation's own refusal when it fails too."""

    trigger: str
    prepare: Callable[[str], tuple[str, str]]
    label: str = ""


@dataclass(frozen=True)
class RecipeEntry:
    kind: str
    #: a ``optimizer.rewrite.engine.Transform`` (applied through ``engine.applier``) ...
    transform: Any = None
    #: ... or an applier function (a composite that chooses between transforms)
    applier: Applier | None = None
    #: tried in order on a refusal; each wraps the previous (the first is the innermost)
    prepare: tuple[Preparation, ...] = ()
    #: a structural transform (True) or a launch / compiler knob (False)
    structural: bool = True

    def build(self) -> Applier:
        if (self.transform is None) == (self.applier is None):
            raise ValueError(f"recipe kind {self.kind!r}: give exactly one of transform / applier")
        if self.transform is not None:
            fn: Applier = applier(self.transform)
        else:
            assert self.applier is not None  # exactly one of the two (tested above)
            fn = self.applier
        for p in self.prepare:
            fn = prepared_first(fn, p.trigger, p.prepare, p.label)
        return fn

    @property
    def engine(self) -> str:
        return "cst" if self.transform is not None else "function"


#: a launch packed into *args / **kwargs is spelled out before any transform reads its arguments
_SPELL_ARGS = Preparation(LAUNCH_ARGS_TRIGGER, inline_launch_args,
                          "spelling out the launch's *args / **kwargs failed: ")
#: a kernel launched through a variable (``implementation[grid](...)``) is launched by its name under an ``is`` guard
#: first (outermost: no other preparation or transform sees a launch before it)
_PIN = Preparation(INDIRECT_TRIGGER, pin_indirect_launch, "pinning a launch through a variable failed: ")
#: a kernel's early `if <guard>: return` -> the rest of its body under `if not (<guard>):`, so a row loop can hold it
_GUARD_RETURNS = Preparation(RETURNS_TRIGGER, guard_early_returns, "folding the early returns failed: ")
#: preparations beyond that one, per transform kind (the first runs innermost)
_PREPARE: dict[str, tuple[Preparation, ...]] = {
    # one constexpr shared by the M, N and K tiles -> BLOCK_M/N/K first
    "dot_tile_search": (Preparation("not three distinct constexpr aranges", untie_tiles,
                                    "untying a shared tile constexpr failed: "),),
    # a flat row-broadcast kernel after a row kernel -> one program per row first, so the two launch the same grid
    "kernel_chain_fusion": (Preparation("launch different grids", regrid_row_broadcast),),
    # a hard-coded block (`pid * 128 + tl.arange(0, 128)`, a 4-row loop tile) -> a named constexpr first
    "block_scale": (Preparation("does not apply", promote_literal_blocks, "naming a literal block size failed: "),),
}

#: every recipe kind with an offline applier: what applies it and with which preparations (read-only, built once)
REGISTRY: Mapping[str, RecipeEntry] = MappingProxyType({e.kind: e for e in (
    *(RecipeEntry(tr.kind, transform=tr, structural=False, prepare=(_PIN,)) for tr in (
        LaunchParams(), Autotune(), CompilerHints(), InputPrecision(), CarePaddingFalse(), AlignmentHints())),
    # a one-row kernel restructured, or (the constexpr already there) its count tuned as a launch parameter
    RecipeEntry("rows_per_program", applier=apply_rows_per_program, prepare=(_GUARD_RETURNS, _PIN)),
    RecipeEntry("value_only_reduction", transform=ValueOnlyReduction(), prepare=(_PIN,)),
    RecipeEntry("online_logsumexp", transform=OnlineLogsumexp(), prepare=(_PIN,)),
    RecipeEntry("grouped_program_order", transform=GroupedProgramOrder(), prepare=(_PIN,)),
    *(RecipeEntry(kind, transform=tr, prepare=(*_PREPARE.get(kind, ()), _SPELL_ARGS, _PIN))
      for kind, tr in TRANSFORMS.items()),
    # composites: Welford, else the online max/sum; the chunk loop, else a launch search that never lowers warps
    RecipeEntry("single_pass_fusion", applier=apply_single_pass_fusion, prepare=(_PIN,)),
    RecipeEntry("register_spill_relief", applier=apply_register_spill_relief, prepare=(_PIN,)),
)})
#: the built applier of each kind (derived from ``REGISTRY``; read-only)
APPLIERS: Mapping[str, Applier] = MappingProxyType({k: e.build() for k, e in REGISTRY.items()})
#: recipe kinds a pattern card may name that no engine applies yet: ``apply_recipe`` refuses them with the reason
UNSERVED_KINDS = frozenset({"persistent_grid", "split_k"})
#: recipe kinds that only change a launch or compiler option (a round's rewrite is "structural" otherwise)
KNOB_KINDS = frozenset(k for k, e in REGISTRY.items() if not e.structural)
