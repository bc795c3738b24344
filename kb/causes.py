"""The seed causes: the cause records a KB starts with (store migration 5) and keeps in step with on every seed.

They are the code-side default set (``kb.vocab.CAUSES``, ``CAUSE_CLASS``, ``CAUSE_FAMILIES``) written as data, with
the description each cause used to carry as a comment on the ``Literal`` and the inefficiency kinds of the static
account it explains (the inverse of ``optimizer.ir.gap_account.EXPLAINED_BY``; a test keeps the two in step).
Causes beyond these are KB data only: synthesis proposes them, a curator approves them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kb.errors import InvalidArgument
from kb.models.cards import Provenance
from kb.models.cause import CauseRecord
from kb.vocab import CAUSE_CLASS, CAUSE_FAMILIES, CAUSE_ID_PATTERN

__all__ = ["SEED_CAUSES", "cause_tokens", "check_cause_id"]

_SEED: dict[str, tuple[str, str, tuple[str, ...]]] = {  # id -> (title, description, inefficiency kinds explained)
    "per_element_grid": ("One element per program",
                         "One element (or a few) per program: no tl.arange block range, scalar loads, a huge grid.",
                         ("vector_width",)),
    "tiny_programs": ("Too little work per program",
                      "One short row or group per program: too little work per program to hide latency.", ()),
    "unvectorized_access": ("Unvectorized global access",
                            "Loads and stores are not vectorized: divisibility or alignment is missing "
                            "(tt.divisibility=16).", ("vector_width",)),
    "same_address_atomics": ("Atomics on the same address",
                             "Many programs atomically update the same address(es): the updates serialize in L2.", ()),
    "redundant_passes": ("Redundant passes over the data",
                         "The kernel (or its launcher) reads the same data several times.", ()),
    "loop_reductions": ("Block reductions inside a loop",
                        "A block reduction to a scalar inside a column loop: a cross-warp reduction per iteration.",
                        ("layout_conversion_in_loop",)),
    "serial_tail": ("A serial tail",
                    "One program walks a problem-sized loop alone (a two-stage reduction's second pass): one SM works.",
                    ("wave_quantization",)),
    "register_spills": ("Register spills",
                        "Registers exceed the budget: local-memory spills or low occupancy.",
                        ("occupancy", "register_spills")),
    "fma_dot": ("tl.dot lowered to FMA",
                "tl.dot lowered to FMA (ieee fp32) instead of tensor-core MMA / wgmma.",
                ("dot_units", "register_spills")),
    "small_dot_tiles": ("Small dot tiles",
                        "tl.dot on small or ill-shaped tiles: tensor cores starved, little reuse.", ("dot_units",)),
    "l2_unfriendly_order": ("L2-unfriendly program order",
                            "A 1-D program order over output tiles: operands are re-read from DRAM instead of L2.", ()),
    "launch_overhead": ("Launch overhead",
                        "Launch or host overhead dominates (many tiny kernels, work of a few microseconds).",
                        ("wave_quantization",)),
    "at_roofline": ("At the roofline",
                    "Nothing structural to gain: the kernel runs near its attainable floor; stopping is the answer.",
                    ()),
    "unknown": ("Unknown cause", "No cause decided (older rounds, or the evidence did not localize one).", ()),
}

#: The seed records, in id order.
SEED_CAUSES: tuple[CauseRecord, ...] = tuple(
    CauseRecord.model_validate({"id": cid, "title": title, "description": desc, "bottleneck_class": CAUSE_CLASS[cid],
                                "families": list(CAUSE_FAMILIES[cid]), "explains": list(explains),
                                "provenance": Provenance(origin="curated", author="kb.causes seed")})
    for cid, (title, desc, explains) in sorted(_SEED.items())
)


def check_cause_id(value: str, field: str, known: Iterable[str] | None = None) -> None:
    """Raise InvalidArgument naming ``field`` unless ``value`` is a cause id (and, with ``known``, one of them)."""
    if not isinstance(value, str) or not re.match(CAUSE_ID_PATTERN, value):
        raise InvalidArgument(f"{value!r} is not a cause id (snake_case, 2-48 characters)", field=field)
    if known is not None:
        names = set(known)
        if value not in names:
            raise InvalidArgument(f"{value!r} is not a cause this KB knows; list them with `ladder kb causes` "
                                  f"(a new cause enters through review: `ladder review`)", field=field)


def cause_tokens(tokens: Iterable[str]) -> list[tuple[int, str]]:
    """(position, cause id) of every ``cause:<id>`` alternative in recipe evidence tokens (``a|b`` = either)."""
    return [(i, alt.split(":", 1)[1]) for i, tok in enumerate(tokens) for alt in tok.split("|")
            if alt.startswith("cause:")]
