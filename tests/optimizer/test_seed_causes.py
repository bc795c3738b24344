"""The seed causes (``kb.causes``, KB data) and the optimizer's code-side rules agree: each seed cause explains
exactly the static-account kinds ``optimizer.ir.gap_account.EXPLAINED_BY`` attributes to it."""

from __future__ import annotations

from kb.causes import SEED_CAUSES
from optimizer.ir.gap_account import EXPLAINED_BY


def test_seed_explains_is_the_inverse_of_explained_by():
    inverse: dict[str, set[str]] = {}
    for kind, causes in EXPLAINED_BY.items():
        for c in causes:
            inverse.setdefault(c, set()).add(kind)
    assert {c.id: set(c.explains) for c in SEED_CAUSES if c.explains} == inverse
