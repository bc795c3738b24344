"""The review web page: a small stdlib HTTP server over the same review queue as ``ladder review``.

Started by ``ladder serve --web-port N`` inside the server process, on the server's Curator. Reads follow
``Settings.read_access``; decisions need a token with the reviewer role. People sign in once with a token
(kept server-side; the browser holds an opaque HttpOnly SameSite=Strict session cookie) and every form carries
the session's CSRF token. Scripts may also send ``Authorization: Bearer TOKEN`` (no CSRF token then). Every
response forbids scripts outright (CSP ``script-src 'none'``) and card text is HTML-escaped.

Slow or hostile clients: a connection must send its request within ``Settings.web_read_timeout_s`` (then it is
closed), and at most ``web_max_connections`` are served at once (more are closed at once), so half-sent
requests cannot pin a thread each in the server process. Unknown tokens (sign-in or bearer) are throttled per
address like the gRPC ones (``retrieval.throttle``: 429 with Retry-After).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from pydantic import ValidationError

from kb.errors import LadderError
from kb.limits import check_json
from kb.models import parse_card
from kb.settings import Principal, Settings
from retrieval.client.review import ReviewClient
from retrieval.throttle import AuthThrottle
from retrieval.web import render

__all__ = ["WebServer", "start_web"]

log = logging.getLogger(__name__)
SESSION_COOKIE, LOGIN_COOKIE = "ladder_session", "ladder_login"
SESSION_TTL_S = 8 * 3600
MAX_BODY = 1 << 20
_STATUS_FOR = {"invalid_argument": 400, "not_found": 404, "conflict": 409, "permission_denied": 403,
               "unauthenticated": 401, "unavailable": 503}


@dataclass
class Session:
    roles: frozenset[str]
    name: str
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    expires: float = field(default_factory=lambda: time.time() + SESSION_TTL_S)


class WebServer:
    """Owns the HTTP server thread. ``review()`` returns the queue client, or None while the KB still loads."""

    def __init__(self, settings: Settings, review: Callable[[], ReviewClient | None], *, host: str | None = None,
                 port: int = 0) -> None:
        self.settings = settings
        self.review = review
        self._tokens = settings.principals()
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self.throttle = AuthThrottle(settings.auth_max_failures, settings.auth_window_s)
        app = self

        class Handler(_Handler):
            web = app
            timeout = settings.web_read_timeout_s  # socket timeout for every read: a half-sent request ends

        self.httpd = _BoundedHTTPServer((host or settings.host, port), Handler, settings.web_max_connections)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="review-web", daemon=True)

    def start(self) -> WebServer:
        self._thread.start()
        log.info("review page on http://%s:%d/", self.httpd.server_address[0], self.port)
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    # ------------------------------------------------------------------ auth
    def principal_for(self, token: str) -> Principal:
        """The token's name and roles (no name, no roles for an unknown token; an empty one never matches)."""
        found = Principal("", frozenset())
        for known, principal in self._tokens:  # compare with every token: timing does not tell which matched
            if hmac.compare_digest(token.encode("utf-8", "replace"), known):
                found = principal
        return found if token.strip() else Principal("", frozenset())

    def roles_for(self, token: str) -> frozenset[str]:
        return self.principal_for(token).roles

    def new_session(self, roles: frozenset[str], name: str) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = time.time()
            for k in [k for k, s in self._sessions.items() if s.expires < now]:
                del self._sessions[k]
            self._sessions[sid] = Session(roles, name)
        return sid

    def session(self, sid: str | None) -> Session | None:
        with self._lock:
            s = self._sessions.get(sid or "")
            if s is not None and s.expires < time.time():
                del self._sessions[sid or ""]
                return None
            return s

    def end_session(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)


class _BoundedHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that serves at most ``limit`` connections at once; one more is closed at once
    (the client sees a reset and may retry) instead of getting a thread of its own."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], limit: int) -> None:
        self._slots = threading.BoundedSemaphore(limit)
        self.limit = limit
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("review page: %s refused: %d connections already open", client_address[0], self.limit)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # cleanup boundary: give the slot back on any failure, then re-raise it unchanged
            self._slots.release()
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request is routine (a log line at debug level); anything else is logged
        once with its traceback, never printed to the server's stderr by socketserver."""
        import sys

        err = sys.exc_info()[1]
        if isinstance(err, (ConnectionError, TimeoutError)):
            log.debug("review page: %s went away: %s", client_address[0], err)
        else:
            log.error("review page: request from %s failed", client_address[0], exc_info=err)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def start_web(settings: Settings, review: Callable[[], ReviewClient | None], *, port: int,
              host: str | None = None) -> WebServer:
    return WebServer(settings, review, host=host, port=port).start()


class _Handler(BaseHTTPRequestHandler):
    web: WebServer
    def version_string(self) -> str:
        return "ladder-review"

    # ------------------------------------------------------------------ plumbing
    def log_message(self, fmt: str, *args: object) -> None:
        log.debug("web %s %s", self.address_string(), fmt % args)

    def _cookies(self) -> dict[str, str]:
        c = SimpleCookie()
        try:
            c.load(self.headers.get("Cookie", ""))
        except CookieError:  # a malformed cookie header is treated as none
            return {}
        return {k: m.value for k, m in c.items()}

    def _send(self, status: int, body: str = "", *, nonce: str = "", headers: dict[str, str] | None = None,
              ctype: str = "text/html; charset=utf-8") -> None:
        data = body.encode()
        self.send_response(status)
        style = f"'nonce-{nonce}'" if nonce else "'none'"
        self.send_header("Content-Security-Policy",
                         f"default-src 'none'; script-src 'none'; style-src {style}; img-src 'none'; "
                         "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _redirect(self, location: str, cookies: list[str] | None = None) -> None:
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.send_header("Cache-Control", "no-store")
        for c in cookies or []:
            self.send_header("Set-Cookie", c)
        self.end_headers()

    def _error(self, status: int, title: str, text: str) -> None:
        nonce = secrets.token_urlsafe(16)
        self._send(status, render.message_page(title, text, nonce=nonce, user=self._user()), nonce=nonce)

    def _form(self) -> dict[str, str] | None:
        raw_len = (self.headers.get("Content-Length") or "0").strip()
        if not raw_len.isdigit():  # "-1" would read until the client hangs up; "abc" is no length at all
            self.close_connection = True
            self._error(400, "bad request", "Content-Length must be a non-negative integer")
            return None
        n = int(raw_len)
        if n > MAX_BODY:
            self.close_connection = True
            self._error(413, "too large", f"form bodies are limited to {MAX_BODY} bytes")
            return None
        raw = self.rfile.read(n).decode("utf-8", errors="replace")
        return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

    # ------------------------------------------------------------------ who is asking
    def _bearer(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return auth[len("Bearer "):] if auth.startswith("Bearer ") else None

    def _session(self) -> Session | None:
        return self.web.session(self._cookies().get(SESSION_COOKIE))

    def _client(self) -> str:
        return str(self.client_address[0])

    def _throttled(self) -> bool:
        """Answer 429 (and True) while this address is blocked for presenting unknown tokens."""
        wait = self.web.throttle.retry_after(self._client())
        if wait <= 0:
            return False
        self.close_connection = True
        nonce = secrets.token_urlsafe(16)
        self._send(429, render.message_page("too many attempts", f"too many unknown tokens from this address; "
                                            f"retry in {wait:.0f} s", nonce=nonce), nonce=nonce,
                   headers={"Retry-After": str(int(wait) + 1)})
        return True

    def _check_token(self, token: str) -> Principal:
        """The token's principal; an unknown token is charged to this address (``AuthThrottle``)."""
        known = getattr(self, "_checked", None)
        if known is not None and known[0] == token:  # one request asks more than once: charge it once
            return known[1]
        who = self.web.principal_for(token)
        if not who.roles:
            self.web.throttle.failed(self._client())
        self._checked = (token, who)
        return who

    def _roles(self) -> frozenset[str]:
        tok = self._bearer()
        if tok is not None:
            return self._check_token(tok).roles
        s = self._session()
        return s.roles if s else frozenset()

    def _user(self) -> str | None:
        s = self._session()
        return s.name if s else None

    def _can_read(self) -> bool:
        return self.web.settings.read_access == "open" or "reader" in self._roles()

    def _cross_site(self) -> bool:
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            return True
        origin = self.headers.get("Origin")
        return bool(origin) and origin != "null" and urlsplit(origin).netloc != self.headers.get("Host", "")

    # ------------------------------------------------------------------ routes
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/healthz":
            ok = self.web.review() is not None
            return self._send(200 if ok else 503, "ok\n" if ok else "loading\n", ctype="text/plain; charset=utf-8")
        if url.path == "/login":
            return self._login_form()
        if url.path in ("/", ""):
            return self._redirect("/queue")
        if self._bearer() is not None and self._throttled():
            return None
        if not self._can_read():
            return self._redirect("/login")
        review = self.web.review()
        if review is None:
            return self._error(503, "loading", "the KB index is still loading; retry in a few seconds")
        nonce, flash = secrets.token_urlsafe(16), query.get("msg", "")
        try:
            if url.path == "/queue":
                status = query.get("status", "pending")
                props = review.proposals(status)
                return self._send(200, render.queue_page(props, status, nonce=nonce, user=self._user(), flash=flash),
                                  nonce=nonce)
            if url.path.startswith("/p/"):
                return self._detail(review, unquote(url.path[3:]), nonce=nonce, flash=flash)
        except LadderError as e:
            return self._error(_STATUS_FOR.get(e.code, 500), e.code.replace("_", " "), str(e))
        return self._error(404, "not found", f"no page at {url.path}")

    def _detail(self, review: ReviewClient, pid: str, *, nonce: str, flash: str = "", error: str = "",
                status: int = 200) -> None:
        item = review.get(pid)
        s = self._session()
        page = render.detail_page(item.proposal, item.nearest, nonce=nonce, user=s.name if s else None,
                                  csrf=s.csrf if s else None, can_write="reviewer" in self._roles(), flash=flash,
                                  error=error)
        self._send(status, page, nonce=nonce)

    def _login_form(self, error: str = "", status: int = 200) -> None:
        nonce, pre = secrets.token_urlsafe(16), secrets.token_urlsafe(24)
        cookie = f"{LOGIN_COOKIE}={pre}; Path=/login; HttpOnly; SameSite=Strict"
        self._send(status, render.login_page(nonce=nonce, error=error, csrf=pre), nonce=nonce,
                   headers={"Set-Cookie": cookie})

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if self._cross_site():
            return self._error(403, "forbidden", "cross-site form posts are refused")
        if (url.path == "/login" or self._bearer() is not None) and self._throttled():
            return None
        form = self._form()
        if form is None:
            return None
        if url.path == "/login":
            return self._login(form)
        if url.path == "/logout":
            self.web.end_session(self._cookies().get(SESSION_COOKIE))
            return self._redirect("/queue?msg=logout", [f"{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; "
                                                        "SameSite=Strict"])
        if not url.path.startswith("/p/"):
            return self._error(404, "not found", f"nothing accepts posts at {url.path}")
        return self._decide(unquote(url.path[3:]), form)

    def _login(self, form: dict[str, str]) -> None:
        pre = self._cookies().get(LOGIN_COOKIE, "")
        if not pre or not hmac.compare_digest(pre, form.get("csrf", "")):
            return self._login_form("the sign-in form expired; try again", 400)
        who = self._check_token(form.get("token", ""))
        if not who.roles:
            return self._login_form("unknown token (tokens come from LADDER_TOKENS on the server)", 401)
        sid = self.web.new_session(who.roles, who.name)  # the name is the token's, never typed in
        self._redirect("/queue?msg=login", [f"{SESSION_COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict",
                                             f"{LOGIN_COOKIE}=; Path=/login; Max-Age=0"])

    def _decide(self, pid: str, form: dict[str, str]) -> None:
        session, bearer = self._session(), self._bearer()
        roles = self._check_token(bearer).roles if bearer is not None else (session.roles if session else frozenset())
        if "reviewer" not in roles:
            return self._error(403 if roles else 401, "reviewer role needed",
                               "decisions need a token with the reviewer role: sign in at /login")
        if bearer is None and not (session and hmac.compare_digest(session.csrf, form.get("csrf", ""))):
            return self._error(403, "forbidden", "the form's CSRF token does not match this session; reload the page")
        review = self.web.review()
        if review is None:
            return self._error(503, "loading", "the KB index is still loading; retry in a few seconds")
        action = form.get("action", "")
        reviewer = session.name if (session and bearer is None) else self.web.principal_for(bearer or "").name
        nonce = secrets.token_urlsafe(16)
        try:
            card = None
            if action == "edit":
                raw = form.get("card_json", "") or "{}"
                check_json(raw, self.web.settings.limits, "card_json")  # before the parser recurses into it
                card = parse_card(json.loads(raw))
            review.review(pid, action, reviewer=reviewer, reason=form.get("reason", ""), card=card,
                          merge_into=form.get("merge_into", "").strip())
        except (LadderError, ValidationError, ValueError) as e:
            code = getattr(e, "code", "invalid_argument")
            msg = f"{getattr(e, 'field', None) or 'card_json'}: {e}" if code == "invalid_argument" else str(e)
            try:
                return self._detail(review, pid, nonce=nonce, error=msg, status=_STATUS_FOR.get(code, 400))
            except LadderError as e2:
                return self._error(_STATUS_FOR.get(e2.code, 500), e2.code.replace("_", " "), str(e2))
        self._redirect(f"/p/{quote(pid, safe='')}?msg={quote(action)}")
