"""retrieval — the wire layer: proto conversion, gRPC servicers and server, and KB clients.

Names are imported on first use, so client-only code (``ladder optimize``, ``ladder query --server``) never
loads the server and needs neither grpcio-health-checking nor grpcio-reflection.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retrieval.client import GrpcKBClient, LocalKBClient, connect
    from retrieval.server.app import create_server, serve

_HOMES = {"GrpcKBClient": "retrieval.client", "LocalKBClient": "retrieval.client", "connect": "retrieval.client",
          "create_server": "retrieval.server.app", "serve": "retrieval.server.app"}
__all__ = ["GrpcKBClient", "LocalKBClient", "connect", "create_server", "serve"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'retrieval' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
