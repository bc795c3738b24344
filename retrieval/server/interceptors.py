"""Server interceptors: bearer-token auth by role, and domain-error -> gRPC status mapping.

Reads are open by default (``Settings.read_access="open"``); writes need a token whose roles include the one the
method requires. Tokens are compared in constant time and never logged (only the role set is).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any

import grpc

from kb.errors import LadderError
from kb.settings import Settings
from retrieval.errors import CODE_KEY, FIELD_KEY, status_for

__all__ = ["AuthInterceptor", "ErrorInterceptor", "METHOD_ROLES"]

log = logging.getLogger(__name__)

_K = "/ladder.v1.KnowledgeService/"
_S = "/ladder.v1.SynthesisService/"
#: required role per method; None = a read (open unless read_access="token")
METHOD_ROLES: dict[str, str | None] = {
    _K + "Search": None, _K + "QuickMatch": None, _K + "GetCard": None, _K + "ListCards": None,
    _K + "GetInvariants": None,
    _K + "UpsertCard": "contributor", _K + "SetCardStatus": "reviewer",
    _S + "SubmitTrajectory": "contributor", _S + "RunSynthesis": "reviewer", _S + "GetJob": None,
    _S + "ListProposals": None, _S + "GetProposal": None, _S + "Review": "reviewer",
}
#: a reviewer may do what a contributor may; a contributor may read
_IMPLIES = {"reviewer": {"reviewer", "contributor", "reader"}, "contributor": {"contributor", "reader"},
            "reader": {"reader"}}


def _wrap(handler: grpc.RpcMethodHandler, fn: Callable[[Any, grpc.ServicerContext, Callable], Any]) -> Any:
    if handler is None or handler.unary_unary is None:
        return handler
    inner = handler.unary_unary

    def unary(request: Any, context: grpc.ServicerContext) -> Any:
        return fn(request, context, inner)

    return grpc.unary_unary_rpc_method_handler(unary, request_deserializer=handler.request_deserializer,
                                               response_serializer=handler.response_serializer)


class AuthInterceptor(grpc.ServerInterceptor):
    def __init__(self, settings: Settings) -> None:
        self._tokens = [(t.encode(), frozenset(r for role in roles for r in _IMPLIES[role]))
                        for t, roles in settings.tokens.items()]
        self._reads_open = settings.read_access == "open"

    def _roles(self, metadata: tuple[tuple[str, str], ...]) -> frozenset[str] | None:
        auth = next((v for k, v in metadata if k == "authorization"), None)
        if not auth or not auth.startswith("Bearer "):
            return None
        presented = auth[len("Bearer "):].encode()
        found: frozenset[str] | None = None
        for token, roles in self._tokens:  # check every token: timing does not reveal which one matched
            if hmac.compare_digest(presented, token):
                found = roles
        return found if found is not None else frozenset()

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        method = details.method
        if method not in METHOD_ROLES:  # health, reflection
            return continuation(details)
        need = METHOD_ROLES[method]
        if need is None and self._reads_open:
            return continuation(details)
        need = need or "reader"
        roles = self._roles(tuple(details.invocation_metadata or ()))
        handler = continuation(details)

        def check(request: Any, context: grpc.ServicerContext, inner: Callable) -> Any:
            if roles is None:
                context.abort(grpc.StatusCode.UNAUTHENTICATED,
                              f"{method} needs a bearer token with the {need} role (set LADDER_TOKEN / --token)")
            if need not in roles:
                log.info("denied %s: token roles %s lack %s", method, sorted(roles), need)
                context.abort(grpc.StatusCode.PERMISSION_DENIED,
                              f"{method} needs the {need} role; this token has {sorted(roles) or 'no valid role'}")
            return inner(request, context)

        return _wrap(handler, check)


class ErrorInterceptor(grpc.ServerInterceptor):
    """Turn domain errors into statuses (with code and field as trailing metadata); log unexpected ones."""

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)

        def guarded(request: Any, context: grpc.ServicerContext, inner: Callable) -> Any:
            try:
                return inner(request, context)
            except LadderError as e:
                context.set_trailing_metadata(((CODE_KEY, e.code), (FIELD_KEY, e.field or "")))
                context.abort(status_for(e), str(e))
            except ValueError as e:  # protobuf rejects out-of-range values while building messages
                context.set_trailing_metadata(((CODE_KEY, "invalid_argument"), (FIELD_KEY, "request")))
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"request: {e}")

        return _wrap(handler, guarded)
