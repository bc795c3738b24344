"""Machine-applicable recipes: the source rewrites a pattern card's ``rewrite.recipe`` names, and their domains.

Below both the ladder (which dry-runs a card's recipe with ``appliers.can_apply``) and the proposers (which
apply it); imports neither. ``base`` holds the shared machinery (``RecipeContext``, ``RewriteResult``,
``NotApplicable``, the point search), ``appliers`` the registry (``APPLIERS``, ``apply_recipe``, ``can_apply``),
``domains`` the per-recipe search-space checks; the other modules are single recipes.
"""
