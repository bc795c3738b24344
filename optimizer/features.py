"""Transition re-export: L1's code features now live in ``optimizer.kernel.features``, on the one kernel model.

Kept only for ``benchmarks/diagnosis/replay.py``, which another change is editing; import from
``optimizer.kernel.features`` instead. To be removed once that file moves.
"""

from optimizer.kernel.features import FEATURE_DOC, CodeFeatures, dot_tile, extract_features, unaligned_args

__all__ = ["FEATURE_DOC", "CodeFeatures", "dot_tile", "extract_features", "unaligned_args"]
