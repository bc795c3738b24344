"""The recipe registry's entry type: what a recipe kind is applied with, declared once.

Each recipe kind (``kb.models.Recipe.kind``) has one ``RecipeEntry``: the engine that applies it (a libcst
``Transform`` of ``optimizer.rewrite``, or an applier function -- the ast/text recipes of this package and the
composite appliers that choose between transforms), the preparation steps run when it refuses for a known reason
(each rewrites the candidate into the form the transform reads, then the transform is applied to the result: one
rewrite, one diff against the candidate as given), and whether it changes the kernel's structure (a structural
transform) or only a launch / compiler knob. ``optimizer.recipes.appliers`` declares the table (``REGISTRY``) and
derives ``APPLIERS`` from it, so what applies a kind, with which preparations, is read in one place instead of
being patched into a mutable table after the fact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optimizer.recipes.base import RecipeContext, RewriteResult

__all__ = ["Applier", "Preparation", "RecipeEntry"]

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
    #: ... or an applier function (an ast/text recipe, or a composite that chooses between transforms)
    applier: Applier | None = None
    #: tried in order on a refusal; each wraps the previous (the first is the innermost)
    prepare: tuple[Preparation, ...] = ()
    #: a structural transform (True) or a launch / compiler knob (False)
    structural: bool = True

    def build(self) -> Applier:
        from optimizer.rewrite.engine import applier, prepared_first

        if (self.transform is None) == (self.applier is None):
            raise ValueError(f"recipe kind {self.kind!r}: give exactly one of transform / applier")
        fn: Applier = applier(self.transform) if self.transform is not None else self.applier  # type: ignore[assignment]
        for p in self.prepare:
            fn = prepared_first(fn, p.trigger, p.prepare, p.label)
        return fn

    @property
    def engine(self) -> str:
        return "cst" if self.transform is not None else "function"
