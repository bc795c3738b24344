"""retrieval — the wire layer: proto conversion, gRPC servicers and server, and KB clients."""

from retrieval.client import GrpcKBClient, LocalKBClient, connect
from retrieval.server.app import create_server, serve

__all__ = ["GrpcKBClient", "LocalKBClient", "connect", "create_server", "serve"]
