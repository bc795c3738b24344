"""Fixtures for synthesis tests."""

from __future__ import annotations

import pytest
from synth_builders import card

from kb.models import PatternCard


@pytest.fixture
def families() -> list[PatternCard]:
    return [
        card("rows-per-program", "Process several rows per program",
             "Give each program a block of rows so small rows do not leave the grid launch bound.",
             "Loop over ROWS rows inside one program; grid shrinks by ROWS.",
             symptoms={"bottleneck_classes": ["launch_bound", "latency_bound"]}),
        card("autotune-num-warps", "Autotune num_warps and block size",
             "Search num_warps, num_stages and BLOCK sizes with triton.autotune keyed on the problem shape.",
             "Wrap the kernel in triton.autotune over num_warps and BLOCK configs.",
             symptoms={"bottleneck_classes": ["occupancy_limited"]}),
        card("top2-pairwise-max", "Top-2 via pairwise max without argmax",
             "Replace argmax plus masked max by value-only max reductions counting ties.",
             "Compute m1 = tl.max, count maxima, second max by masking; no tl.argmax.",
             symptoms={"ir_signatures": ["multi_operand_reduction"], "code_features": ["tl.argmax"]},
             levels=["L1", "L3"]),
    ]
