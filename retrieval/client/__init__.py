"""KB clients and the one factory that picks between them."""

from __future__ import annotations

from pathlib import Path

from kb.client import KBClient
from kb.settings import Settings
from retrieval.client.local import LocalKBClient
from retrieval.client.remote import GrpcKBClient

__all__ = ["GrpcKBClient", "LocalKBClient", "connect"]


def connect(server: str | None = None, *, home: str | Path | None = None, settings: Settings | None = None,
            token: str | None = None, timeout: float = 30.0) -> KBClient:
    """Return a KBClient: gRPC to ``server`` (``HOST:PORT``) when given; else the snapshot named by
    ``LADDER_SNAPSHOT`` when set; else the embedded KB at ``home`` (an explicit ``home`` must hold a KB; opened
    read-only while a server owns it). ``client.opened_as`` (when present) says which KB it is."""
    settings = settings or Settings()
    if home is not None:
        settings = settings.model_copy(update={"home": Path(home).expanduser()})
    if server:
        return GrpcKBClient(server, settings, token=token, timeout=timeout)
    if settings.snapshot is not None:  # LADDER_SNAPSHOT wins: a machine with no route to the KB server (a lent GPU)
        from kb.search.embedding import Embedder
        from kb.snapshot import SnapshotKB

        return SnapshotKB(settings.snapshot, outbox=settings.home / "outbox",
                          embedder=Embedder(model_path=settings.embedding_model_dir, backend=settings.embed_backend))
    if home is not None and not settings.db_path.exists():  # a typo must not seed a fresh KB
        from kb.errors import InvalidArgument

        raise InvalidArgument(f"{settings.home} holds no KB (no {settings.db_path.name}); check the path, or create "
                              f"one with `ladder serve --home {settings.home}`", field="home")
    return LocalKBClient(settings, readonly=None)  # read-only while a server owns the home
