"""CPU step: apply each example's recipe with the rewrite engine and write the transformed candidates.

    PYTHONPATH=. python benchmarks/rewrite/prepare.py

Writes ``benchmarks/rewrite/transformed/<example>.py`` (the rewritten module) and ``<example>.json`` (recipe,
applied point, description, unified diff). The GPU script times these files, so the H200 needs only torch and
triton; it re-checks them against a fresh rewrite when the engine (libcst) is importable there.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "examples"
OUT = HERE / "transformed"


def module_literal(source: str, name: str) -> Any:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"example lacks a literal {name} = ... at module level")


def variants(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every point of the example's recipe (``VARIANTS = True``): autotune, fixed configs, persistent, ..."""
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe_variants

    src = path.read_text()
    recipe, context = module_literal(src, "RECIPE"), module_literal(src, "CONTEXT")
    out = apply_recipe_variants(recipe, RecipeContext(source=src, filename=path.name, new_filename=path.name, **context))
    return [(r.source, {"recipe": recipe, "context": context, "applied": r.applied, "description": r.description,
                        "diff": r.diff}) for r in out]


def transform(path: Path) -> tuple[str, dict[str, Any]]:
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    src = path.read_text()
    recipe, context = module_literal(src, "RECIPE"), module_literal(src, "CONTEXT")
    res = apply_recipe(recipe, RecipeContext(source=src, filename=path.name, new_filename=path.name, **context))
    return res.source, {"recipe": recipe, "context": context, "applied": res.applied, "description": res.description,
                        "diff": res.diff}


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for path in sorted(EXAMPLES.glob("*.py")):
        source, meta = transform(path)
        (OUT / path.name).write_text(source)
        (OUT / f"{path.stem}.json").write_text(json.dumps(meta, indent=2) + "\n")
        print(f"{path.stem}: {meta['description']}")
        if "VARIANTS = True" in path.read_text():
            for i, (src, m) in enumerate(variants(path)[1:], start=1):
                (OUT / f"{path.stem}__v{i}.py").write_text(src)
                (OUT / f"{path.stem}__v{i}.json").write_text(json.dumps(m, indent=2) + "\n")
                print(f"{path.stem}__v{i}: {m['description']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
