"""The cause record: one diagnosis cause as KB data (issue 30, "Causes that grow").

A cause says WHY a kernel is slow. Its record names the rewrite families that act on it (pattern card ids, the
canonical one first), the bottleneck class it usually shows as, and the static-account inefficiency kinds it
explains (``optimizer.ir.gap_account.AccountKind`` names, or a newer kind). Records move through review like cards
(``kb.vocab.STATUS_TRANSITIONS``); the seed set is ``kb.causes.SEED_CAUSES``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from kb.models.cards import SLUG, Evidence, Provenance
from kb.vocab import CAUSE_ID_PATTERN, BottleneckClass, CardStatus

__all__ = ["INEFFICIENCY_KIND", "Cause", "CauseRecord"]

#: a cause id (``kb.vocab.CAUSE_ID_PATTERN``); whether the KB knows it is checked where a KB is at hand
Cause = Annotated[str, StringConstraints(pattern=CAUSE_ID_PATTERN)]

#: an inefficiency kind of the static account of the gap (snake_case)
INEFFICIENCY_KIND = r"^[a-z][a-z0-9_]{1,63}$"
_FamilyId = Annotated[str, StringConstraints(pattern=SLUG)]
_Kind = Annotated[str, StringConstraints(pattern=INEFFICIENCY_KIND)]


class CauseRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: Cause
    title: str = Field(min_length=3, max_length=200)
    description: str = Field(min_length=10, max_length=2000)
    bottleneck_class: BottleneckClass = Field(default="unknown", description="the class it usually shows as")
    families: list[_FamilyId] = Field(default_factory=list, max_length=32,
                                      description="pattern card ids of the families that remove it, canonical first")
    explains: list[_Kind] = Field(default_factory=list, max_length=32,
                                  description="static-account inefficiency kinds this cause accounts for")
    status: CardStatus = "active"
    version: int = Field(default=1, ge=1)
    provenance: Provenance = Field(default_factory=Provenance)
    evidence: list[Evidence] = Field(default_factory=list, max_length=200)
