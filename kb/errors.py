"""The one exception tree of Kernel Ladder.

Every error carries a stable ``code`` (a string that travels over the wire) and a message that says what is
wrong and how to fix it. The wire layer maps codes to gRPC status codes in one table (``retrieval``), so this
module stays free of grpc.

    LadderError
    ├── InvalidArgument          (code "invalid_argument", names the offending ``field``)
    ├── NotFound                 (code "not_found")
    ├── AlreadyExists            (code "already_exists")
    ├── Conflict                 (code "conflict": stale version, illegal review transition)
    ├── PermissionDenied         (code "permission_denied")
    ├── Unauthenticated          (code "unauthenticated")
    ├── Unavailable              (code "unavailable": index not loaded, KB locked by another writer)
    ├── StorageError             (code "storage": disk full, corrupt file; KB left as it was)
    └── ToolchainError           (code "toolchain": a compiler, profiler or environment is missing)

A catch of every ``Exception`` belongs only at a process, thread or per-item boundary (a CLI command, a gRPC method,
a worker's top level, one session of a campaign); there :func:`log_error` logs the error with its type and
traceback under a short id, which the caller puts into the message or record the user sees.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, get_args

from kb.vocab import CardKind

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "AlreadyExists",
    "Conflict",
    "InvalidArgument",
    "LadderError",
    "NotFound",
    "PermissionDenied",
    "StorageError",
    "ToolchainError",
    "Unauthenticated",
    "Unavailable",
    "FieldError",
    "error_for_code",
    "field_error",
    "log_error",
]

_REGISTRY: dict[str, type[LadderError]] = {}


class LadderError(Exception):
    """Base class. ``code`` is stable and travels over the wire; ``field`` names the input at fault, if any."""

    code: ClassVar[str] = "internal"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:  # a subclass that keeps its parent's code (CardFileError) never replaces the parent
            _REGISTRY[cls.code] = cls

    def __reduce__(self) -> tuple[object, ...]:  # picklable across subprocesses
        return (_rebuild, (self.code, self.message, self.field))

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def _rebuild(code: str, message: str, field: str | None) -> LadderError:
    return error_for_code(code)(message, field=field)


def error_for_code(code: str) -> type[LadderError]:
    """Return the exception class registered for ``code`` (``LadderError`` if unknown)."""
    return _REGISTRY.get(code, LadderError)


class InvalidArgument(LadderError):
    code = "invalid_argument"


class NotFound(LadderError):
    code = "not_found"


class AlreadyExists(LadderError):
    code = "already_exists"


class Conflict(LadderError):
    code = "conflict"


class PermissionDenied(LadderError):
    code = "permission_denied"


class Unauthenticated(LadderError):
    code = "unauthenticated"


class Unavailable(LadderError):
    code = "unavailable"


class StorageError(LadderError):
    code = "storage"


class ToolchainError(LadderError):
    code = "toolchain"


def log_error(logger: logging.Logger, exc: BaseException, where: str, *, level: int = logging.ERROR) -> str:
    """Log ``exc`` (type, message, traceback) at ``level`` under a new error id and return the id.

    For the broad catches at boundaries only: the id (12 hex digits, as the gRPC edge reports it) goes into the
    message or record the user sees, so that the traceback in the log can be found from it. ``where`` names the
    boundary ("gRPC /ladder.Knowledge/Search", "campaign session mm-1")."""
    error_id = secrets.token_hex(6)
    logger.log(level, "error %s in %s: %s: %s", error_id, where, type(exc).__name__, exc, exc_info=exc)
    return error_id


class FieldError(NamedTuple):
    """The first error of a pydantic ``ValidationError``, located in the caller's input."""

    field: str  # dotted path to the value at fault ("preconditions.0", "kind"); "" for the input as a whole
    message: str  # pydantic's message ("Field required"), or the card-kind message below
    input: Any  # the offending value


#: a location step naming one of these is the branch a tagged card union took, not a field of the input
_CARD_KINDS = get_args(CardKind)


def field_error(e: ValidationError) -> FieldError:
    """Where the first error of ``e`` is and what it says, in the input's own terms.

    The steps pydantic adds for validator functions and unions (``function-after[...]``, ``tagged-union[...]``,
    the card kind a ``Card`` union branched to) are left out of ``field``. A card whose ``kind`` is missing or
    unknown is reported at ``kind`` with the values to use. Every transport formats its message from this
    (card files, the gRPC edge, the MCP tools, the review CLI), so they all name the same field.
    """
    err = e.errors()[0]
    loc = [str(x) for x in err["loc"] if not str(x).startswith(("function-", "tagged-union"))]
    loc = [x for x in loc if x not in _CARD_KINDS or len(loc) == 1]
    if err["type"].startswith("union_tag"):
        kinds = ", ".join(_CARD_KINDS[:-1]) + f" or {_CARD_KINDS[-1]}"  # the one discriminated union: Card
        return FieldError(".".join([*loc, "kind"]), f"missing or unknown; use {kinds}", err.get("input"))
    return FieldError(".".join(loc), err["msg"], err.get("input"))
