"""Storage: the SQLite source of truth and the Chroma vector index derived from it."""

from kb.store.structured import StructuredStore
from kb.store.vector import VectorIndex

__all__ = ["StructuredStore", "VectorIndex"]
