"""Mapping between the kb.errors tree and gRPC status codes — one table, used by the server interceptor and
by the client's ``from_rpc_error``. The stable error code and the offending field travel as trailing metadata
(``ladder-error-code``, ``ladder-error-field``)."""

from __future__ import annotations

import grpc

from kb.errors import LadderError, error_for_code

__all__ = ["CODE_KEY", "ERROR_ID_KEY", "FIELD_KEY", "STATUS_FOR_CODE", "from_rpc_error", "status_for"]

CODE_KEY = "ladder-error-code"
FIELD_KEY = "ladder-error-field"
ERROR_ID_KEY = "ladder-error-id"  # INTERNAL errors: the id the server logged the traceback under

STATUS_FOR_CODE: dict[str, grpc.StatusCode] = {
    "invalid_argument": grpc.StatusCode.INVALID_ARGUMENT,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "already_exists": grpc.StatusCode.ALREADY_EXISTS,
    "conflict": grpc.StatusCode.FAILED_PRECONDITION,
    "permission_denied": grpc.StatusCode.PERMISSION_DENIED,
    "unauthenticated": grpc.StatusCode.UNAUTHENTICATED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "storage": grpc.StatusCode.UNAVAILABLE,
    "toolchain": grpc.StatusCode.FAILED_PRECONDITION,
}
_CODE_FOR_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: "invalid_argument",
    grpc.StatusCode.NOT_FOUND: "not_found",
    grpc.StatusCode.ALREADY_EXISTS: "already_exists",
    grpc.StatusCode.FAILED_PRECONDITION: "conflict",
    grpc.StatusCode.PERMISSION_DENIED: "permission_denied",
    grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "unavailable",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "invalid_argument",
}


def status_for(err: LadderError) -> grpc.StatusCode:
    return STATUS_FOR_CODE.get(err.code, grpc.StatusCode.INTERNAL)


def from_rpc_error(e: grpc.RpcError) -> LadderError:
    """Rebuild the domain error from a failed call (fixed code -> class table; nothing is imported by name)."""
    meta = {k: v for k, v in (e.trailing_metadata() or ())} if hasattr(e, "trailing_metadata") else {}
    code = meta.get(CODE_KEY) or _CODE_FOR_STATUS.get(e.code(), "internal")
    field = meta.get(FIELD_KEY) or None
    details = e.details() or e.code().name
    if field and details.startswith(f"{field}: "):
        details = details[len(field) + 2:]
    return error_for_code(code)(details, field=field)
