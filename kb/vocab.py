"""Controlled vocabularies shared by cards, the IR engine, profiling and synthesis.

Cards name their symptoms with these words so that a symptom detected at L2 or L3 can be matched to a card
by exact token, not only by text similarity. Each vocabulary is a ``Literal`` (for pydantic validation) plus
a frozenset of its values (for lookups and lint), except causes: they are KB data (``kb.causes``), and ``Cause``
is a checked id whose seed set lives here.
"""

from __future__ import annotations

from typing import Any, Literal, TypeGuard, get_args

Backend = Literal["cuda", "ascend", "amd", "any"]
Level = Literal["L1", "L2", "L3", "L4"]
CardKind = Literal["pattern", "anti_signal", "invariant"]
CardStatus = Literal["draft", "proposed", "active", "rejected", "deprecated"]

#: Bottleneck classes produced by L2 (CUDA and Ascend profiles map into the same set).
BottleneckClass = Literal[
    "memory_bound",  # DRAM / HBM traffic dominates (high fraction of bandwidth roofline, or mte2-bound on Ascend)
    "compute_bound",  # tensor-core / vector ALU throughput dominates
    "latency_bound",  # neither bound: too little parallelism, serial dependency chains, tiny tiles
    "launch_bound",  # launch / API overhead dominates (many tiny kernels or grids)
    "occupancy_limited",  # registers / shared memory / UB cap the resident programs
    "scalar_bound",  # scalar pipeline dominates (Ascend aiv_scalar_ratio, scalarized loops, vec=1 loads)
    "sync_bound",  # barriers / shuffles / cross-warp reductions dominate
    "unknown",
]

#: Structural signatures the IR engine (L3) can detect; cards cite them in ``symptoms.ir_signatures``.
IRSignature = Literal[
    "barrier",
    "warp_shuffle",
    "cross_warp_reduction",
    "multi_operand_reduction",
    "surviving_convert_layout",
    "shared_memory_roundtrip",
    "scalar_global_load",
    "vector_global_load",
    "masked_load_not_vectorized",
    "fma_dot",
    "mma_dot",
    "wgmma_dot",
    "no_software_pipelining",
    "register_spill",
    "ascend_max_with_index",
    "ascend_min_with_index",
    "ascend_discrete_mem_access",
    "ascend_padding_fill",
    "ascend_mix_mode",
]

#: A cause id: snake_case, 2-48 characters. A cause is WHY a kernel is slow, a class is WHAT the counters see (issue
#: "Evidence decides"); each level returns findings over causes and the decision combines them. Causes are KB data
#: (``kb.causes``: a record per cause with its description, families, explained inefficiencies and review status),
#: so a model field typed ``Cause`` checks the syntax only; the store and the service check an id against the KB's
#: causes where a KB is at hand (``KnowledgeBase.submit_trajectory``, ``upsert_card``). A cause a curator approves is
#: then valid without a code change.
#: ``Cause`` itself (the checked string type) lives in ``kb.models.cause`` and is served here on first use (PEP 562):
#: this module imports nothing but the standard library, so scripts without pydantic can read the vocabularies.
CAUSE_ID_PATTERN = r"^[a-z][a-z0-9_]{1,47}$"

#: The seed causes: the code-side default set the optimizer's rules (``optimizer.ladder``) are written against, and
#: what a new KB starts with (``kb.causes.SEED_CAUSES`` holds their descriptions). Use it where only a listed cause
#: makes sense (the labels of the diagnosis benchmark).
SeedCause = Literal[
    "per_element_grid",
    "tiny_programs",
    "unvectorized_access",
    "same_address_atomics",
    "redundant_passes",
    "loop_reductions",
    "serial_tail",
    "register_spills",
    "fma_dot",
    "small_dot_tiles",
    "l2_unfriendly_order",
    "launch_overhead",
    "at_roofline",
    "unknown",
]

#: The bottleneck class a cause shows as in profiles (the default expectation; a labelled kernel may differ).
CAUSE_CLASS: dict[str, BottleneckClass] = {
    "per_element_grid": "latency_bound",
    "tiny_programs": "latency_bound",
    "unvectorized_access": "memory_bound",
    "same_address_atomics": "sync_bound",
    "redundant_passes": "memory_bound",
    "loop_reductions": "sync_bound",
    "serial_tail": "latency_bound",
    "register_spills": "occupancy_limited",
    "fma_dot": "compute_bound",
    "small_dot_tiles": "compute_bound",
    "l2_unfriendly_order": "memory_bound",
    "launch_overhead": "launch_bound",
    "at_roofline": "memory_bound",
    "unknown": "unknown",
}

#: Rewrite families (pattern card ids) that remove each cause, the canonical one first. ``at_roofline`` has none:
#: stopping is the right answer there.
CAUSE_FAMILIES: dict[str, tuple[str, ...]] = {
    "per_element_grid": ("block-per-program",),
    "tiny_programs": ("rows-per-program", "enlarge-tiny-blocks", "groups-per-program-moe-scoring"),
    "unvectorized_access": ("unaligned-size-alignment-hints", "interleaved-pair-tiles", "compiler-hints-contiguity"),
    "same_address_atomics": ("two-stage-reduction", "privatized-histogram"),
    # kernel-chain-fusion is second, not canonical: the diagnosis labels' first family must be the canonical one,
    # and most redundant_passes items are one kernel with several loops (single-pass-fusion refuses a chain of
    # kernels, kernel-chain-fusion refuses one kernel, so either order picks the family that applies)
    "redundant_passes": ("single-pass-fusion", "kernel-chain-fusion", "online-softmax",
                         "fused-cross-entropy-online-lse", "fused-softmax-row-in-registers", "fused-layernorm",
                         "elementwise-chain-fusion", "repeated-index-load-dedup"),
    "loop_reductions": ("looped-row-reduction",),
    "serial_tail": ("enlarge-tiny-blocks",),
    # a tl.dot kernel that spills (an autotuned matmul whose chosen config holds a large accumulator) has no straight-
    # line row block for spill relief to shrink; the tile search re-tiles it, never with fewer warps or a larger tile
    "register_spills": ("register-spill-relief", "matmul-tile-config-search"),
    "fma_dot": ("tf32-for-fp32-matmul", "low-precision-operands-fp32-accumulate"),
    "small_dot_tiles": ("matmul-tile-config-search", "persistent-tile-loop"),
    "l2_unfriendly_order": ("grouped-program-order",),
    "launch_overhead": ("fuse-launches-for-launch-bound", "kernel-chain-fusion", "elementwise-chain-fusion",
                        "cache-host-launch-setup"),
    "at_roofline": (),
    "unknown": (),
}

BACKENDS: frozenset[str] = frozenset(get_args(Backend))
LEVELS: tuple[Level, ...] = get_args(Level)
CARD_KINDS: frozenset[str] = frozenset(get_args(CardKind))
CARD_STATUSES: frozenset[str] = frozenset(get_args(CardStatus))
BOTTLENECK_CLASSES: frozenset[str] = frozenset(get_args(BottleneckClass))
IR_SIGNATURES: frozenset[str] = frozenset(get_args(IRSignature))
#: the seed cause ids (the code-side default set; the KB may know more)
CAUSES: frozenset[str] = frozenset(get_args(SeedCause))

#: Allowed review transitions (from -> to). Curation follows draft -> proposed -> active/rejected -> deprecated.
STATUS_TRANSITIONS: dict[str, frozenset[str]] = {
    "draft": frozenset({"proposed", "rejected"}),
    "proposed": frozenset({"active", "rejected", "draft"}),
    "active": frozenset({"deprecated"}),
    "rejected": frozenset({"draft", "proposed"}),
    "deprecated": frozenset({"active"}),
}

#: Hack-check codes that only ask for a second look (severity ``warn`` in ``optimizer.harness.hacks``): a round that
#: trips only these stays usable as evidence, and synthesis names the flag in the mined example so the curator
#: sees it. Every other code blocks mining. ``tests/optimizer/harness/test_hacks.py`` keeps this in step with the
#: catalogue.
REVIEW_ONLY_HACK_FLAGS: frozenset[str] = frozenset({"excessive_speedup"})


def is_backend(value: str) -> TypeGuard[Backend]:
    """``value`` is a card backend (narrows a plain string for the type checker)."""
    return value in BACKENDS


def is_level(value: str) -> TypeGuard[Level]:
    return value in LEVELS


def is_bottleneck_class(value: str) -> TypeGuard[BottleneckClass]:
    return value in BOTTLENECK_CLASSES


def is_ir_signature(value: str) -> TypeGuard[IRSignature]:
    return value in IR_SIGNATURES


def blocking_hack_flags(flags: list[str]) -> list[str]:
    """The flags that disqualify a round (everything but the review-only ones)."""
    return [f for f in flags if f not in REVIEW_ONLY_HACK_FLAGS]


def __getattr__(name: str) -> Any:
    if name == "Cause":
        from kb.models.cause import Cause

        return Cause
    raise AttributeError(f"module 'kb.vocab' has no attribute {name!r}")
