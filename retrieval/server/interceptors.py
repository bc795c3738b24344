"""Server interceptors: bearer-token auth by role, and domain-error -> gRPC status mapping.

Reads are open by default (``Settings.read_access="open"``); writes need a token whose roles include the one the
method requires. Tokens are compared in constant time and never logged (only the role set is).
"""

from __future__ import annotations

import contextvars
import hmac
import logging
from collections.abc import Callable
from typing import Any

import grpc

from kb.errors import LadderError, log_error
from kb.settings import Principal, Settings
from retrieval.errors import CODE_KEY, ERROR_ID_KEY, FIELD_KEY, status_for
from retrieval.throttle import AuthThrottle, client_address

__all__ = ["METHOD_ROLES", "AuthInterceptor", "ErrorInterceptor", "caller", "header_safe"]

log = logging.getLogger(__name__)

_K = "/ladder.v1.KnowledgeService/"
_S = "/ladder.v1.SynthesisService/"
#: required role per method; None = a read (open unless read_access="token")
METHOD_ROLES: dict[str, str | None] = {
    _K + "Search": None, _K + "QuickMatch": None, _K + "GetCard": None, _K + "ListCards": None,
    _K + "GetInvariants": None, _K + "ListCauses": None,
    _K + "UpsertCard": "contributor", _K + "SetCardStatus": "reviewer",
    _S + "SubmitTrajectory": "contributor", _S + "RunSynthesis": "reviewer", _S + "GetJob": None,
    _S + "ListProposals": None, _S + "GetProposal": None, _S + "Review": "reviewer",
}
#: who the call being served was authenticated as (set by AuthInterceptor around the handler; None when the
#: method needs no token)
_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("ladder_caller", default=None)


def caller() -> Principal | None:
    """The principal of the authenticated call this thread is serving (its token's name and roles), if any."""
    return _CALLER.get()


def header_safe(text: str, limit: int = 200) -> str:
    """``text`` as a valid metadata value: printable ASCII, other characters escaped (``\\x1f``, ``\\xe9``).

    Field paths can carry client input (an unknown JSON key), and gRPC fails the whole call with INTERNAL
    ("Invalid metadata") when a header value holds a control or non-ASCII character."""
    out = "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


class _Malformed:
    """Stands in for a request body that is not a valid message; ``ErrorInterceptor`` rejects it.

    gRPC answers a deserializer exception with INTERNAL ("Exception deserializing request!"), which blames the
    server for the client's bytes; parsing leniently lets the interceptor answer INVALID_ARGUMENT instead."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def parse(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except Exception as e:  # noqa: BLE001 - wire boundary: untrusted bytes; any parse failure is the client's
            return _Malformed(e)

    return parse


def _wrap(handler: grpc.RpcMethodHandler, fn: Callable[[Any, grpc.ServicerContext, Callable], Any], *,
          lenient: bool = False) -> Any:
    if handler is None or handler.unary_unary is None:
        return handler
    inner = handler.unary_unary

    def unary(request: Any, context: grpc.ServicerContext) -> Any:
        return fn(request, context, inner)

    deserializer = _lenient(handler.request_deserializer) if lenient else handler.request_deserializer
    return grpc.unary_unary_rpc_method_handler(unary, request_deserializer=deserializer,
                                               response_serializer=handler.response_serializer)


class AuthInterceptor(grpc.ServerInterceptor):
    """Bearer-token auth by role. Refuses to be built over an empty or short token (``Settings.principals``), and
    throttles addresses that present unknown tokens (``retrieval.throttle``: RESOURCE_EXHAUSTED while blocked)."""

    def __init__(self, settings: Settings, throttle: AuthThrottle | None = None) -> None:
        self._tokens = settings.principals()
        self._reads_open = settings.read_access == "open"
        self.throttle = throttle or AuthThrottle(settings.auth_max_failures, settings.auth_window_s)

    def _principal(self, metadata: tuple[tuple[str, str], ...]) -> Principal | None:
        """The token's principal; None without credentials; a nameless principal with no roles for a bad token."""
        auth = next((v for k, v in metadata if k == "authorization"), None)
        if not auth or not auth.startswith("Bearer "):
            return None
        presented = auth[len("Bearer "):].encode()
        found = Principal("", frozenset())
        for token, principal in self._tokens:  # check every token: timing does not reveal which one matched
            if hmac.compare_digest(presented, token):
                found = principal
        if not presented.strip():  # a bare "Bearer " is an unknown token, whatever LADDER_TOKENS holds
            return Principal("", frozenset())
        return found

    def _roles(self, metadata: tuple[tuple[str, str], ...]) -> frozenset[str] | None:
        p = self._principal(metadata)
        return None if p is None else p.roles

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        method = details.method
        if method not in METHOD_ROLES:  # health, reflection
            return continuation(details)
        need = METHOD_ROLES[method]
        if need is None and self._reads_open:
            return continuation(details)
        need = need or "reader"
        principal = self._principal(tuple(details.invocation_metadata or ()))
        roles = None if principal is None else principal.roles
        handler = continuation(details)

        def check(request: Any, context: grpc.ServicerContext, inner: Callable) -> Any:
            client = client_address(context.peer() or "")
            if roles is not None:
                wait = self.throttle.retry_after(client)
                if wait > 0:
                    context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                  f"too many unknown tokens from {client}; retry in {wait:.0f} s")
                if not roles:
                    self.throttle.failed(client)
            if roles is None:
                context.abort(grpc.StatusCode.UNAUTHENTICATED,
                              f"{method} needs a bearer token with the {need} role (set LADDER_TOKEN / --token)")
            held = roles or frozenset()  # abort() raised when there was no valid token
            if need not in held:
                log.info("denied %s: token roles %s lack %s", method, sorted(held), need)
                context.abort(grpc.StatusCode.PERMISSION_DENIED,
                              f"{method} needs the {need} role; this token has {sorted(held) or 'no valid role'}")
            reset = _CALLER.set(principal)
            try:
                return inner(request, context)
            finally:
                _CALLER.reset(reset)

        return _wrap(handler, check)


class ErrorInterceptor(grpc.ServerInterceptor):
    """Turn domain errors into statuses (with code and field as trailing metadata).

    Only the errors the domain declares as the caller's (``kb.errors`` subclasses: ``InvalidArgument``,
    ``NotFound``, ``Conflict`` ...) keep their status. Anything else, a ``ValueError`` from a bug included, is
    INTERNAL: the caller gets an error id and no internals, and the traceback is logged under that id."""

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        method = details.method

        def guarded(request: Any, context: grpc.ServicerContext, inner: Callable) -> Any:
            if isinstance(request, _Malformed):
                context.set_trailing_metadata(((CODE_KEY, "invalid_argument"), (FIELD_KEY, "request")))
                context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              f"request: the body is not a valid protobuf message ({request.error}); "
                              "send the message type the method declares")
            try:
                return inner(request, context)
            except LadderError as e:
                if status_for(e) == grpc.StatusCode.INTERNAL:
                    _internal(context, method, e)
                field = header_safe(e.field or "")
                context.set_trailing_metadata(((CODE_KEY, e.code), (FIELD_KEY, field)))
                context.abort(status_for(e), f"{field}: {e.message}" if field else e.message)
            except Exception as e:  # noqa: BLE001 - gRPC method boundary: a bug is INTERNAL with an error id
                if _aborted(context):  # context.abort() raised it (auth, deadline): the status is already set
                    raise
                _internal(context, method, e)

        return _wrap(handler, guarded, lenient=True)


def _aborted(context: grpc.ServicerContext) -> bool:
    code = context.code() if hasattr(context, "code") else None
    return code is not None and code != grpc.StatusCode.OK


def _internal(context: grpc.ServicerContext, method: str, error: BaseException) -> None:
    error_id = log_error(log, error, f"gRPC {method}")
    context.set_trailing_metadata(((CODE_KEY, "internal"), (ERROR_ID_KEY, error_id)))
    context.abort(grpc.StatusCode.INTERNAL, f"internal error {error_id}: the server failed on this request (not "
                  "your input); its log holds the details under this id")
