"""The dense index: a Chroma collection derived from the structured store, mirrored in memory.

Chroma persists the vectors (so a restart does not re-embed the KB) and answers approximate nearest-neighbour
queries on large KBs. Filters are applied in our code (Chroma's ``where`` pushdown is slow on large
collections). Small KBs, and filtered queries that the ANN over-fetch cannot satisfy, use an exact dot product
over the in-memory matrix. Chroma is not process-safe: only the single writer process (the server, or an
embedded KB that holds the writer lock) opens it.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kb.errors import StorageError, log_error
from kb.search.embedding import DIM

__all__ = ["VectorIndex"]

log = logging.getLogger(__name__)
_COLLECTION = "cards_v1"
EXACT_LIMIT = 20_000  # below this many vectors an exact matvec is faster than HNSW and always correct


class VectorIndex:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self.ids: list[str] = []
        self.versions: dict[str, int] = {}
        self._row: dict[str, int] = {}
        self.matrix = np.zeros((0, DIM), dtype=np.float32)
        self._client: Any = None  # chromadb ClientAPI / Collection once opened (chromadb is imported lazily)
        self._col: Any = None
        #: why persisting stopped in this process (None while the collection is healthy). After an I/O error
        #: chroma can hang on its next write (seen with a full disk), so it is not called again until reopened.
        self.persist_error: str | None = None

    # ------------------------------------------------------------------ open / recover
    def open(self) -> None:
        """Open (or create) the persisted collection and load it into memory.

        A corrupt index directory is moved aside (``chroma.corrupt-<ts>``) and recreated empty; the caller then
        re-indexes from the structured store, which is the source of truth.
        """
        self.persist_error = None
        try:
            self._open_collection()
            self._load_all()
        except Exception as e:  # noqa: BLE001 - recovery boundary: chroma raises undeclared types on corrupt segments
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            error_id = log_error(log, e, f"reading the vector index at {self.path}", level=logging.WARNING)
            log.warning("vector index at %s is unreadable (error %s); moving it to %s and rebuilding", self.path,
                        error_id, aside)
            self._client = self._col = None
            _forget_chroma_system(self.path)
            if self.path.exists():
                shutil.move(str(self.path), str(aside))
            try:
                self._open_collection()
                self._load_all()
            except Exception as e2:  # noqa: BLE001 - translation boundary: any chroma failure becomes one StorageError
                raise StorageError(f"cannot create a vector index at {self.path}: {type(e2).__name__}: {e2}") from e2

    def _open_collection(self) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        self.path.mkdir(parents=True, exist_ok=True)
        self._client = chromadb.PersistentClient(
            path=str(self.path), settings=ChromaSettings(anonymized_telemetry=False, allow_reset=True)
        )
        self._col = self._client.get_or_create_collection(
            _COLLECTION, embedding_function=None, metadata={"hnsw:space": "ip"}
        )

    def _load_all(self) -> None:
        assert self._col is not None
        ids: list[str] = []
        vecs: list[np.ndarray] = []
        versions: dict[str, int] = {}
        total = self._col.count()
        for off in range(0, total, 5000):
            got = self._col.get(include=["embeddings", "metadatas"], limit=5000, offset=off)
            for i, emb, meta in zip(got["ids"], got["embeddings"], got["metadatas"], strict=True):
                ids.append(i)
                vecs.append(np.asarray(emb, dtype=np.float32))
                versions[i] = int((meta or {}).get("version", 0))
        with self._lock:
            self.ids = ids
            self.versions = versions
            self._row = {i: n for n, i in enumerate(ids)}
            self.matrix = np.vstack(vecs) if vecs else np.zeros((0, DIM), dtype=np.float32)

    # ------------------------------------------------------------------ writes
    def upsert(self, ids: list[str], versions: list[int], vectors: np.ndarray, kinds: list[str]) -> None:
        """Persist and serve the vectors. If persisting fails (disk full, a broken collection) the vectors are
        still served from memory and ``StorageError`` is raised; the next ``open`` re-embeds what is missing."""
        if not ids:
            return
        assert self._col is not None, "open() first"
        self._remember(ids, versions, vectors)
        self._persist(lambda col: [col.upsert(
            ids=ids[off:off + 4000], embeddings=vectors[off:off + 4000].tolist(),
            metadatas=[{"version": v, "kind": k}
                       for v, k in zip(versions[off:off + 4000], kinds[off:off + 4000], strict=True)],
        ) for off in range(0, len(ids), 4000)], f"persist {len(ids)} vectors")

    def _persist(self, write: Callable[[Any], object], what: str) -> None:
        if self.persist_error is None:
            try:
                write(self._col)
                return
            except Exception as e:  # noqa: BLE001 - translation boundary: chroma's own I/O error types -> StorageError
                self.persist_error = f"{type(e).__name__}: {e}"
        raise StorageError(f"cannot {what} under {self.path} ({self.persist_error}); search serves them from memory, "
                           "and the index is brought up to date when the KB is next opened (or by `ladder kb rebuild`)")

    def _remember(self, ids: list[str], versions: list[int], vectors: np.ndarray) -> None:
        with self._lock:
            new_rows = []
            for i, v, vec in zip(ids, versions, vectors, strict=True):
                self.versions[i] = v
                if i in self._row:
                    self.matrix[self._row[i]] = vec
                else:
                    self._row[i] = len(self.ids)
                    new_rows.append(vec)
                    self.ids.append(i)
            if new_rows:
                self.matrix = np.vstack([self.matrix, np.asarray(new_rows, dtype=np.float32)])

    def upsert_memory(self, ids: list[str], versions: list[int], vectors: np.ndarray) -> None:
        """Load vectors into memory only (read-only snapshots); nothing is persisted."""
        with self._lock:
            self.ids = list(ids)
            self.versions = dict(zip(ids, versions, strict=True))
            self._row = {i: n for n, i in enumerate(ids)}
            self.matrix = np.asarray(vectors, dtype=np.float32)

    def delete(self, ids: list[str]) -> None:
        if not ids:
            return
        assert self._col is not None
        gone = set(ids)
        with self._lock:
            keep = [n for n, i in enumerate(self.ids) if i not in gone]
            self.ids = [self.ids[n] for n in keep]
            self.versions = {i: v for i, v in self.versions.items() if i not in gone}
            self._row = {i: n for n, i in enumerate(self.ids)}
            self.matrix = self.matrix[keep] if keep else np.zeros((0, DIM), dtype=np.float32)
        self._persist(lambda col: col.delete(ids=ids), f"delete {len(ids)} vectors")

    def reset(self) -> None:
        """Drop every vector (used by ``ladder kb rebuild``)."""
        if self._client is not None:
            from chromadb.errors import NotFoundError

            try:
                self._client.delete_collection(_COLLECTION)
            except (NotFoundError, ValueError):  # absent collection (earlier chromadb releases raised ValueError)
                pass
        self._open_collection()
        self._load_all()

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self.ids)

    def row_of(self, card_id: str) -> int | None:
        return self._row.get(card_id)

    def query(self, vec: np.ndarray, n: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-``n`` (row, cosine) pairs, restricted to rows where ``allowed`` is True."""
        with self._lock:
            m = self.matrix
            if m.shape[0] == 0 or n <= 0:
                return []
            if m.shape[0] > EXACT_LIMIT and self._col is not None and self.persist_error is None:
                try:
                    hits = self._ann(vec, n, allowed)
                except Exception as e:  # noqa: BLE001 - fallback boundary: a damaged HNSW segment raises undeclared
                    # chroma types; the exact path still answers
                    error_id = log_error(log, e, "an ANN query", level=logging.WARNING)
                    log.warning("ANN query failed (error %s); answering with an exact scan. Run `ladder kb rebuild`.",
                                error_id)
                    hits = None
                if hits is not None:
                    return hits
            return _exact(m, vec, n, allowed)

    def _ann(self, vec: np.ndarray, n: int, allowed: np.ndarray | None) -> list[tuple[int, float]] | None:
        fetch = n if allowed is None else min(len(self.ids), max(n * 8, 64))
        res = self._col.query(query_embeddings=[vec.tolist()], n_results=fetch, include=["distances"])
        out: list[tuple[int, float]] = []
        for cid, dist in zip(res["ids"][0], res["distances"][0], strict=True):
            row = self._row.get(cid)
            if row is None or (allowed is not None and not allowed[row]):
                continue
            out.append((row, 1.0 - float(dist)))  # chroma "ip" distance = 1 - dot
            if len(out) == n:
                return out
        return None if allowed is not None else out  # too few survived the filter: caller goes exact


def _forget_chroma_system(path: Path) -> None:
    """Drop chroma's per-process cache entry for ``path``. Chroma caches a System per directory even when
    starting it failed, so without this every later client for the path reuses the broken one."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient._identifier_to_system.pop(str(path), None)
        SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    except (ImportError, AttributeError):  # a chroma without this cache: nothing to forget
        pass


def _exact(m: np.ndarray, vec: np.ndarray, n: int, allowed: np.ndarray | None) -> list[tuple[int, float]]:
    scores = m @ vec
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    n = min(n, int(np.isfinite(scores).sum()))
    if n <= 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(r), float(scores[r])) for r in top]
