"""Controlled vocabularies shared by cards, the IR engine, profiling and synthesis.

Cards name their symptoms with these words so that a symptom detected at L2 or L3 can be matched to a card
by exact token, not only by text similarity. Each vocabulary is a ``Literal`` (for pydantic validation) plus
a frozenset of its values (for lookups and lint).
"""

from __future__ import annotations

from typing import Literal, get_args

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

BACKENDS: frozenset[str] = frozenset(get_args(Backend))
LEVELS: tuple[str, ...] = get_args(Level)
CARD_KINDS: frozenset[str] = frozenset(get_args(CardKind))
CARD_STATUSES: frozenset[str] = frozenset(get_args(CardStatus))
BOTTLENECK_CLASSES: frozenset[str] = frozenset(get_args(BottleneckClass))
IR_SIGNATURES: frozenset[str] = frozenset(get_args(IRSignature))

#: Allowed review transitions (from -> to). Curation follows draft -> proposed -> active/rejected -> deprecated.
STATUS_TRANSITIONS: dict[str, frozenset[str]] = {
    "draft": frozenset({"proposed", "rejected"}),
    "proposed": frozenset({"active", "rejected", "draft"}),
    "active": frozenset({"deprecated"}),
    "rejected": frozenset({"draft", "proposed"}),
    "deprecated": frozenset({"active"}),
}

#: Hack-check codes that only ask for a second look (severity ``warn`` in ``optimizer.hacks``): a round that
#: trips only these stays usable as evidence, and synthesis names the flag in the mined example so the curator
#: sees it. Every other code blocks mining. ``tests/optimizer/test_hacks.py`` keeps this in step with the catalogue.
REVIEW_ONLY_HACK_FLAGS: frozenset[str] = frozenset({"excessive_speedup"})


def blocking_hack_flags(flags: list[str]) -> list[str]:
    """The flags that disqualify a round (everything but the review-only ones)."""
    return [f for f in flags if f not in REVIEW_ONLY_HACK_FLAGS]
