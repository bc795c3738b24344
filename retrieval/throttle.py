"""Failed-authentication throttling, shared by the gRPC interceptor and the review web page.

Without it a client could try about 1,100 tokens a second. Every unknown token presented is a failure charged to
the client's address; once an address has ``max_failures`` failures inside the last ``window_s`` seconds, every
authenticated request from it (a right token included, so guessing cannot continue) is refused until the oldest
failure leaves the window. gRPC answers RESOURCE_EXHAUSTED, the web page 429, both with the seconds to wait. A
request without any token is not a guess and is not counted. Memory is bounded: at most ``max_clients`` addresses
are tracked (the least recently failed are forgotten first).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["AuthThrottle", "client_address"]


def client_address(peer: str) -> str:
    """The address part of a gRPC peer string (``ipv4:127.0.0.1:5432`` -> ``127.0.0.1``, ``ipv6:[::1]:80`` ->
    ``::1``); anything else is returned as it is."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        return rest.rsplit(":", 1)[0].strip("[]")
    return peer


class AuthThrottle:
    def __init__(self, max_failures: int = 10, window_s: float = 60.0, *, max_clients: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.max_clients = max_clients
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may authenticate again (0: it may now)."""
        with self._lock:
            q = self._recent(client)
            if q is None or len(q) < self.max_failures:
                return 0.0
            return max(0.0, q[-self.max_failures] + self.window_s - self._clock())

    def failed(self, client: str) -> None:
        """Record one failed authentication (an unknown token) from ``client``."""
        with self._lock:
            q = self._recent(client) or deque()
            q.append(self._clock())
            while len(q) > self.max_failures:
                q.popleft()
            self._failures[client] = q
            self._failures.move_to_end(client)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)

    def _recent(self, client: str) -> deque[float] | None:
        q = self._failures.get(client)
        if q is None:
            return None
        cutoff = self._clock() - self.window_s
        while q and q[0] < cutoff:
            q.popleft()
        if not q:
            del self._failures[client]
            return None
        return q
