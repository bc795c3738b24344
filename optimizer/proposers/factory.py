"""The proposer factory: a proposer by name (``--proposer``), imported only when chosen."""

from __future__ import annotations

from kb.errors import InvalidArgument
from optimizer.proposers.base import Proposer
from optimizer.settings import LadderSettings

__all__ = ["make_proposer"]


def make_proposer(name: str, settings: LadderSettings) -> Proposer:
    if name == "offline":
        from optimizer.proposers.offline import OfflineProposer

        return OfflineProposer()
    if name == "llm":
        from optimizer.proposers.llm import LLMProposer

        return LLMProposer(settings)
    raise InvalidArgument(f"unknown proposer {name!r}: use offline or llm", field="proposer")
