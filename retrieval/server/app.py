"""Server assembly: ``create_server`` builds and starts it (port 0 picks a free port); ``serve`` runs it until
SIGTERM/SIGINT and shuts down gracefully.

Health (grpc.health.v1) reports NOT_SERVING until the KB index is loaded, then SERVING; on shutdown it flips back
to NOT_SERVING before the server drains. Reflection lists both services.
"""

from __future__ import annotations

import logging
import signal
import threading
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from kb.service import KnowledgeBase
from kb.settings import Settings
from retrieval.server.interceptors import AuthInterceptor, ErrorInterceptor
from retrieval.server.knowledge import KnowledgeServicer
from retrieval.server.synthesis import SynthesisServicer
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc
from synthesis.curation import Curator

__all__ = ["ServerHandle", "create_server", "serve"]

log = logging.getLogger(__name__)
SERVICES = ("ladder.v1.KnowledgeService", "ladder.v1.SynthesisService")


@dataclass
class ServerHandle:
    server: grpc.Server
    port: int
    health: health.HealthServicer
    settings: Settings
    kb: KnowledgeBase | None = None
    curator: Curator | None = None
    loaded: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.loaded.wait(timeout)
        if self.error:
            raise self.error
        return self.kb is not None and self.kb.ready

    def stop(self, grace: float = 5.0) -> None:
        for name in ("", *SERVICES):
            self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        self.server.stop(grace).wait()
        if self.kb is not None:
            self.kb.close()
            self.kb = None


def _credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if settings.tls_cert and settings.tls_key:
        return grpc.ssl_server_credentials([(settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())])
    return None


def create_server(settings: Settings, *, kb: KnowledgeBase | None = None, block_until_ready: bool = False,
                  bind: str | None = None) -> ServerHandle:
    """Start a server on ``bind`` (default ``host:port`` from settings). The KB loads in the background unless
    given; health flips to SERVING when it is ready."""
    opts = [("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", settings.max_message_bytes),
            ("grpc.so_reuseport", 0)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=settings.server_workers, thread_name_prefix="rpc"),
                         interceptors=[ErrorInterceptor(), AuthInterceptor(settings)], options=opts)
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    for name in ("", *SERVICES):
        health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (*SERVICES, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    address = bind or f"{settings.host}:{settings.port}"
    creds = _credentials(settings)
    port = server.add_secure_port(address, creds) if creds else server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind {address}: the port is in use or the address is invalid")
    handle = ServerHandle(server=server, port=port, health=health_servicer, settings=settings)

    # Servicers must be registered before start(); they answer UNAVAILABLE until the KB is ready.
    lazy = _LazyKB()
    pb_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeServicer(lazy), server)  # type: ignore[arg-type]
    pb_grpc.add_SynthesisServiceServicer_to_server(_LazySynthesis(lazy, handle), server)
    server.start()

    def load() -> None:
        try:
            handle.kb = kb or KnowledgeBase.open(settings)
            handle.kb.embedder.warm()
            handle.curator = Curator(handle.kb)
            lazy.target = handle.kb
            for name in ("", *SERVICES):
                health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
            log.info("KB loaded from %s: serving on port %d", settings.home, port)
        except BaseException as e:  # noqa: BLE001 - reported through health + handle.error
            handle.error = e
            log.error("KB failed to load: %s", e)
        finally:
            handle.loaded.set()

    if block_until_ready:
        load()
        if handle.error:
            handle.stop(0)
            raise handle.error
    else:
        threading.Thread(target=load, name="kb-loader", daemon=True).start()
    return handle


class _LazyKB:
    """Forwards to the KB once loaded; before that every call raises Unavailable (health says NOT_SERVING)."""

    target: KnowledgeBase | None = None

    def __getattr__(self, name: str):  # noqa: ANN204
        if self.target is None:
            from kb.errors import Unavailable

            raise Unavailable("the KB index is still loading; health reports SERVING when it is ready")
        return getattr(self.target, name)


class _LazySynthesis(SynthesisServicer):
    """The synthesis servicer, bound to the curator once the KB has loaded."""

    def __init__(self, lazy: _LazyKB, handle: ServerHandle) -> None:
        super().__init__(lazy)
        self._handle = handle

    @property
    def curator(self) -> Curator:
        if self._handle.curator is None:
            from kb.errors import Unavailable

            raise Unavailable("the KB index is still loading; health reports SERVING when it is ready")
        return self._handle.curator


def serve(settings: Settings, *, on_ready=None) -> int:  # noqa: ANN001
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    handle = create_server(settings)
    stop = threading.Event()

    def _signal(signum: int, _frame: object) -> None:
        log.info("signal %d: shutting down gracefully", signum)
        stop.set()

    signal.signal(signal.SIGTERM, _signal)
    signal.signal(signal.SIGINT, _signal)
    handle.loaded.wait()
    if handle.error:
        handle.stop(0)
        raise handle.error
    if on_ready:
        on_ready(handle)
    stop.wait()
    handle.stop(grace=5.0)
    return 0


_ = pb  # generated module import keeps descriptors registered for reflection
