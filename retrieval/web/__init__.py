"""The review web page (stdlib HTTP server) served beside the gRPC server: ``start_web`` / ``WebServer``."""

from retrieval.web.app import WebServer, start_web

__all__ = ["WebServer", "start_web"]
