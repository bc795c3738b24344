"""kb — the Kernel Ladder knowledge base: card models, the SQLite source of truth, the derived vector index,
hybrid search and the KB client protocol. Imports nothing else of ours and never grpc."""

from kb.client import KBClient
from kb.errors import LadderError
from kb.models import AntiSignalCard, AnyCard, InvariantCard, PatternCard, Round, Trajectory
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
