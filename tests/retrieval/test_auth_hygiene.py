"""Issue 32, item 6: empty and short tokens are refused at start-up, a bare ``Authorization: Bearer `` never
authorizes, unknown tokens are throttled per address (gRPC and the review page), and the review page neither
waits forever on a half-sent request nor gives every connection a thread."""

from __future__ import annotations

import http.client
import shutil
import socket
import threading
import time
from urllib.parse import urlencode

import grpc
import pytest

from kb.errors import InvalidArgument
from kb.settings import Principal, Settings
from retrieval.throttle import AuthThrottle, client_address

GOOD = "review-token-0123456789abcdef"
TOKENS = {GOOD: {"name": "ana", "roles": ["reviewer"]}}


@pytest.mark.parametrize("tokens", [{"": ["reviewer"]}, {"   ": ["reviewer"]}, {"abc": ["contributor"]},
                                    {GOOD: ["reviewer"], "short-15-chars!": ["reader"]}])
def test_empty_and_short_tokens_are_refused_at_start_up(tokens, tmp_path):
    from retrieval.server.app import create_server

    settings = Settings(home=tmp_path / "kb", tokens=tokens, port=0)
    with pytest.raises(InvalidArgument) as e:
        create_server(settings, bind="127.0.0.1:0")
    assert e.value.field == "LADDER_TOKENS" and "16" in e.value.message


def test_a_bare_bearer_never_authorizes():
    from retrieval.server.interceptors import AuthInterceptor

    auth = AuthInterceptor(Settings(tokens=TOKENS))
    auth._tokens.append((b"", Principal("x", frozenset({"reviewer"}))))  # as if an empty token slipped through
    assert auth._roles((("authorization", "Bearer "),)) == frozenset()
    assert auth._roles((("authorization", "Bearer    "),)) == frozenset()


def test_throttle_blocks_after_max_failures_and_forgets_after_the_window():
    now = [0.0]
    t = AuthThrottle(3, 60.0, clock=lambda: now[0])
    for _ in range(3):
        assert t.retry_after("a") == 0
        t.failed("a")
    assert 59 < t.retry_after("a") <= 60 and t.retry_after("b") == 0
    now[0] = 61.0
    assert t.retry_after("a") == 0
    assert client_address("ipv4:127.0.0.1:5555") == "127.0.0.1" and client_address("ipv6:[::1]:80") == "::1"


@pytest.fixture(scope="module")
def tight(tmp_path_factory, seeded_home, embedder):
    """A server with the review page whose throttle blocks after 5 unknown tokens, and a 1 s read timeout."""
    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("auth") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0, auth_max_failures=5, web_read_timeout_s=1.0,
                        web_max_connections=8)
    kb = KnowledgeBase.open(settings, embedder=embedder)
    handle = create_server(settings, kb=kb, bind="127.0.0.1:0", web_port=0)
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)


def test_grpc_guessing_is_throttled(tight):
    from retrieval.v1 import ladder_pb2 as pb
    from retrieval.v1 import ladder_pb2_grpc as pb_grpc

    with grpc.insecure_channel(f"127.0.0.1:{tight.port}") as ch:
        stub = pb_grpc.KnowledgeServiceStub(ch)
        codes = []
        for i in range(8):
            try:
                stub.SetCardStatus(pb.SetCardStatusRequest(id="x", status="active"),
                                   metadata=(("authorization", f"Bearer guess-{i:020d}"),), timeout=30)
            except grpc.RpcError as e:
                codes.append(e.code())
        assert codes[:5] == [grpc.StatusCode.PERMISSION_DENIED] * 5
        assert codes[5:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 3
        with pytest.raises(grpc.RpcError) as e:  # the right token is refused too while the address is blocked
            stub.SetCardStatus(pb.SetCardStatusRequest(id="x", status="active"),
                               metadata=(("authorization", f"Bearer {GOOD}"),), timeout=30)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "retry in" in e.value.details()


def _web(port: int, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = urlencode(body) if body is not None else None
    hdrs = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
    c.request(method, path, body=data, headers=hdrs)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def test_web_bearer_guessing_is_throttled_and_a_bare_bearer_is_refused(tight):
    port = tight.web.port
    tight.web.throttle._failures.clear()
    assert _web(port, "POST", "/p/none", {"action": "approve"}, {"Authorization": "Bearer "}) == 401
    statuses = [_web(port, "POST", "/p/none", {"action": "approve"}, {"Authorization": f"Bearer g{i:020d}"})
                for i in range(6)]
    assert statuses[:4] == [401] * 4 and statuses[4:] == [429, 429]
    tight.web.throttle._failures.clear()


def test_web_read_timeout_and_connection_cap(tight):
    port = tight.web.port
    socks = []
    for _ in range(20):  # half-sent requests: a request line and no end of headers
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /queue HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    time.sleep(0.3)
    # the server's request threads only (other tests' reader threads are also named "Thread-N (...)")
    web_threads = [t for t in threading.enumerate() if t.name.endswith("(process_request_thread)") and t.is_alive()]
    assert len(web_threads) <= 8, [t.name for t in web_threads]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _healthy(port) is False:
        time.sleep(0.2)
    assert _healthy(port), "the page still answers once the half-sent requests time out"
    for s in socks:  # every one of them was closed by the server (over the cap at once, else after its timeout)
        s.settimeout(5)
        try:
            got = s.recv(1024)
        except ConnectionResetError:
            got = b""
        assert got == b"", got
        s.close()


def _healthy(port: int) -> bool:
    try:
        return _web(port, "GET", "/healthz") == 200
    except OSError:
        return False


def test_a_client_hanging_up_prints_no_traceback(tight, capsys):
    """Found by the red-team script: a half-sent request closed by the client ended in a BrokenPipeError
    traceback on the server's stderr (socketserver's default handle_error)."""
    port = tight.web.port
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /queue HTTP/1.1\r\nHost: x\r\n")
        s.close()
    time.sleep(1.5)
    assert "Traceback" not in capsys.readouterr().err
