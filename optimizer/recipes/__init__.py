"""Machine-applicable recipes: the source rewrites a pattern card's ``rewrite.recipe`` names, and their domains.

Below both the ladder (which dry-runs a card's recipe with ``appliers.can_apply``) and the proposers (which
apply it); imports neither. ``base`` holds the shared machinery (``RecipeContext``, ``RewriteResult``, the point
search; ``NotApplicable`` is re-exported from ``optimizer.rewrite.errors``), ``appliers`` the registry
(``REGISTRY``, ``APPLIERS``, ``apply_recipe``, ``can_apply``), ``domains`` the per-recipe search-space checks.

Issue 29 moves every kind onto the libcst engine of ``optimizer.rewrite``: ``value_only_reduction``,
``grouped_program_order``, ``alignment_hints``, ``online_logsumexp``, ``input_precision`` and
``care_padding_false`` are Transforms there. Still ast/text appliers here: ``launch_params``, ``autotune`` and
``compiler_hints`` (``appliers``), and the tile form of ``rows_per_program`` (``row_tile``, ``appliers``).
"""
