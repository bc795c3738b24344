"""kb — the Kernel Ladder knowledge base: card models, the SQLite source of truth, the derived vector index,
hybrid search and the KB client protocol. Imports nothing else of ours and never grpc.

The models and the client protocol import eagerly (they need only pydantic); the service (store, index, search)
loads on first use, so code that only needs the schema (e.g. an optimizer worker on a GPU host) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kb.client import KBClient
from kb.errors import LadderError
from kb.models import AntiSignalCard, AnyCard, InvariantCard, PatternCard, Round, Trajectory

if TYPE_CHECKING:
    from kb.service import KnowledgeBase
    from kb.settings import Settings

__all__ = [
    "AntiSignalCard",
    "AnyCard",
    "InvariantCard",
    "KBClient",
    "KnowledgeBase",
    "LadderError",
    "PatternCard",
    "Round",
    "Settings",
    "Trajectory",
]


def __getattr__(name: str) -> Any:
    if name == "KnowledgeBase":
        from kb.service import KnowledgeBase

        return KnowledgeBase
    if name == "Settings":
        from kb.settings import Settings

        return Settings
    raise AttributeError(f"module 'kb' has no attribute {name!r}")
