"""The ``ladder`` command modules (``optimizer/cli/``): their tests share the optimizer tests' fakes."""

from __future__ import annotations

import sys
from pathlib import Path

OPTIMIZER_TESTS = Path(__file__).resolve().parents[1]
if str(OPTIMIZER_TESTS) not in sys.path:  # ladder_fakes, cluster_faults and data/ live one level up
    sys.path.insert(0, str(OPTIMIZER_TESTS))
