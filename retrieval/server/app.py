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
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from kb.errors import log_error
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
    web: Any = None  # retrieval.web.WebServer when started with web_port

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.loaded.wait(timeout)
        if self.error:
            raise self.error
        return self.kb is not None and self.kb.ready

    def stop(self, grace: float = 5.0) -> None:
        for name in ("", *SERVICES):
            self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        if self.web is not None:
            self.web.stop()
            self.web = None
        self.server.stop(grace).wait()
        if self.curator is not None:
            self.curator.close(timeout=grace)
        if self.kb is not None:
            self.kb.close()
            self.kb = None


def _credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS server credentials when both tls_cert and tls_key are set; half a TLS setting is an error, never a
    silent fallback to plaintext."""
    from kb.errors import InvalidArgument

    if bool(settings.tls_cert) != bool(settings.tls_key):
        missing = "tls_key" if settings.tls_cert else "tls_cert"
        raise InvalidArgument(f"TLS needs both LADDER_TLS_CERT and LADDER_TLS_KEY; {missing} is not set",
                              field=missing)
    if not settings.tls_cert:
        return None
    pem = {}
    for name in ("tls_key", "tls_cert"):
        path = getattr(settings, name)
        try:
            pem[name] = path.read_bytes()
        except OSError as e:
            raise InvalidArgument(f"cannot read {path}: {e.strerror}", field=name) from e
    log.info("TLS enabled with certificate %s", settings.tls_cert)
    return grpc.ssl_server_credentials([(pem["tls_key"], pem["tls_cert"])])


def create_server(settings: Settings, *, kb: KnowledgeBase | None = None, block_until_ready: bool = False,
                  bind: str | None = None, web_port: int | None = None) -> ServerHandle:
    """Start a server on ``bind`` (default ``host:port`` from settings). The KB loads in the background unless
    given; health flips to SERVING when it is ready. With ``web_port`` (0 = any free port) the review web page
    runs in this process too, on the same Curator (``handle.web.port``)."""
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
    try:
        port = server.add_secure_port(address, creds) if creds else server.add_insecure_port(address)
    except RuntimeError as e:  # grpc >= 1.5x raises "Failed to bind" instead of returning 0
        raise OSError(f"cannot bind {address}: the port is in use or the address is invalid ({e})") from None
    if port == 0:
        raise OSError(f"cannot bind {address}: the port is in use or the address is invalid")
    handle = ServerHandle(server=server, port=port, health=health_servicer, settings=settings)

    # Servicers must be registered before start(); they answer UNAVAILABLE until the KB is ready.
    lazy = _LazyKB()
    pb_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeServicer(lazy), server)  # type: ignore[arg-type]
    pb_grpc.add_SynthesisServiceServicer_to_server(_LazySynthesis(lazy, handle), server)
    server.start()
    if web_port is not None:
        from retrieval.client.review import LocalReview
        from retrieval.web import start_web

        review: list[LocalReview] = []

        def queue() -> LocalReview | None:  # answers "loading" until the KB and its Curator exist
            if not review and handle.kb is not None and handle.curator is not None:
                review.append(LocalReview(handle.kb, curator=handle.curator))
            return review[0] if review else None

        try:
            handle.web = start_web(settings, queue, port=web_port)
        except OSError as e:
            server.stop(0)
            raise OSError(f"cannot serve the review page on {settings.host}:{web_port}: {e}") from e

    def load() -> None:
        try:
            handle.kb = kb or KnowledgeBase.open(settings)
            handle.kb.embedder.warm()
            handle.curator = Curator(handle.kb)
            lazy.target = handle.kb
            for name in ("", *SERVICES):
                health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
            log.info("KB loaded from %s: serving on port %d", settings.home, port)
        except BaseException as e:  # noqa: BLE001 - loader thread boundary: reported through health + handle.error
            handle.error = e
            log_error(log, e, f"loading the KB from {settings.home}")
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


def _one_blas_thread() -> None:
    """Run NumPy's BLAS on one thread in the server process. Its matrix-vector products are small and memory
    bound; a second BLAS thread only spins against the embedding model and the gRPC threads for the same cores
    (on 2 cores that cost more than the products take). Each output element is still one dot product, so the
    scores are unchanged."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def serve(settings: Settings, *, on_ready=None, web_port: int | None = None) -> int:  # noqa: ANN001
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    _one_blas_thread()
    handle = create_server(settings, web_port=web_port)
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
