"""The refusal of a recipe: ``NotApplicable``, a branch of the product's one exception tree (``kb.errors``).

Every transform and applier raises it when its preconditions do not hold in the candidate; the message says why
the recipe does not apply and, where something would make it apply, what (e.g. "launched from 2 places (the host
rewrite needs exactly one)"). The ladder records the message as evidence; ``code`` ``"not_applicable"`` is how a
refusal travels over the wire (and how it is rebuilt after pickling across a worker process).
"""

from __future__ import annotations

from kb.errors import LadderError

__all__ = ["NotApplicable"]


class NotApplicable(LadderError):
    """The recipe's preconditions do not hold for this source (the message says which, and what would make it apply)."""

    code = "not_applicable"
