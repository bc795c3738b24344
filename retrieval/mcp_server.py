"""The KB over the Model Context Protocol (official ``mcp`` SDK), beside the gRPC (``retrieval.server``) and
HTTP (``retrieval.web``) transports; ``ladder mcp`` (``optimizer.cli.mcpcmd``) serves it on stdio.

Tools: ``search`` (hybrid search), ``quick_match`` (L1 triage by symptoms), ``get_card`` and
``get_invariants`` (L4 compiler invariants). Resources: ``card://{card_id}`` (one card as JSON) and
``cards://active`` (id, kind, title and summary of every served card). Everything goes through a
``kb.client.KBClient`` (embedded KB or ``--server``), opened in the background so the MCP handshake is instant;
the first tool call waits for it. Nothing here writes to stdout except the protocol itself.

Every line a client sends gets an answer: the SDK drops a line that is not JSON, or not a JSON-RPC message,
with a debug log and no reply (the client then waits forever), so ``serve_stdio`` answers it with a JSON-RPC
error itself (-32700 parse error, -32600 invalid request; the request's id when it can be read, else null).
At the end of stdin every request already read is answered before the server exits (``_Pending``).
Numeric tool arguments are bounded (``_bounded``): an out-of-range version or size is ``invalid_argument``, never
an OverflowError from SQLite.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from kb.client import KBClient
from kb.errors import InvalidArgument, LadderError, Unavailable, field_error, log_error
from kb.models import AnyCard
from kb.models.search import (
    CardFilter,
    InvariantQuery,
    QuickMatchQuery,
    SearchHit,
    SearchQuery,
)
from kb.sanitize import terminal_text, terminal_tree

__all__ = ["LazyClient", "build_server", "serve_stdio"]

M = TypeVar("M", bound=BaseModel)
log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Kernel Ladder knowledge base for Triton kernel optimization: pattern cards (rewrites with preconditions and "
    "evidence), anti-signals (evidence that forbids a rewrite) and compiler invariants (pass-level legality "
    "rules). At L1 call quick_match with the symptoms you know (bottleneck classes, IR signatures, code "
    "features); open only the one or two best cards with get_card. Use search for free text, and "
    "get_invariants with pass names or IR signatures when an IR symptom needs a compiler-level explanation."
)


def _sdk() -> tuple[Any, type[Exception], type[Exception], type[Exception]]:
    """(server class, ToolError, ResourceError, not-found ResourceError) of the installed SDK (2.x or 1.x)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import (
            ResourceError,
            ResourceNotFoundError,
            ToolError,
        )

        return MCPServer, ToolError, ResourceError, ResourceNotFoundError
    except ImportError:  # mcp 1.x (looked up by name: the type checker sees the installed 2.x)
        fastmcp = importlib.import_module("mcp.server.fastmcp")
        errors = importlib.import_module("mcp.server.fastmcp.exceptions")
        return fastmcp.FastMCP, errors.ToolError, errors.ResourceError, errors.ResourceError


class LazyClient:
    """Opens the KB client in a background thread; ``get()`` waits for it (and re-raises a failed open)."""

    OPEN_TIMEOUT = 600.0

    def __init__(self, factory: Callable[[], KBClient], timeout: float = OPEN_TIMEOUT) -> None:
        self._client: KBClient | None = None
        self._error: BaseException | None = None
        self._error_id = ""
        self._done = threading.Event()
        self._timeout = timeout
        threading.Thread(target=self._open, args=(factory,), name="kb-open", daemon=True).start()

    def _open(self, factory: Callable[[], KBClient]) -> None:
        try:
            self._client = factory()
        except BaseException as e:  # noqa: BLE001 - opener thread boundary: surfaced on every tool call, with its id
            self._error, self._error_id = e, log_error(log, e, "opening the KB for the MCP server")
        finally:
            self._done.set()

    def get(self) -> KBClient:
        if not self._done.wait(self._timeout):
            raise Unavailable(f"the KB did not open within {self._timeout:.0f}s")
        if self._error is not None:
            raise Unavailable(f"the KB could not be opened: {type(self._error).__name__}: {self._error} "
                              f"(error {self._error_id})")
        assert self._client is not None
        return self._client

    def close(self) -> None:
        if self._done.is_set() and self._client is not None:
            self._client.close()


def _hit(h: SearchHit, body_chars: int) -> dict[str, Any]:
    c = h.card
    out = {"id": c.id, "kind": c.kind, "title": c.title, "summary": c.summary, "score": h.score,
           "backends": c.backends, "levels": c.levels, "matched_symptoms": h.breakdown.matched_symptoms}
    if c.rewrite is not None:
        out["rewrite"] = c.rewrite.description
    if body_chars:
        out["body"] = c.body[:body_chars] + ("..." if len(c.body) > body_chars else "")
    return out


def _card(card: AnyCard) -> dict[str, Any]:
    return card.model_dump(mode="json", exclude_defaults=False)


def _query(model: type[M], **data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        where = field_error(e)
        field = where.field or "arguments"
        raise InvalidArgument(f"{field}: {where.message}", field=field) from e


#: the largest version number a card can have (SQLite INTEGER; the wire's int64)
MAX_VERSION = 2**63 - 1
MAX_BODY_CHARS = 1 << 20


def _bounded(name: str, value: int | None, lo: int, hi: int) -> int | None:
    """``value`` if it is None or an int in ``lo..hi``; else InvalidArgument naming ``name``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidArgument(f"must be an integer in {lo}..{hi}, got {str(value)[:40]}", field=name)
    return value


def build_server(lazy: LazyClient) -> Any:
    """The MCP server (the ``mcp`` SDK's high-level server) over the KB client ``lazy`` opens."""
    server_cls, tool_error, resource_error, not_found = _sdk()
    mcp = server_cls("kernel-ladder", instructions=INSTRUCTIONS)

    async def call(fn: Callable[[KBClient], Any], *, resource: bool = False) -> Any:
        """Run a KB call off the event loop; domain errors reach the client with their message (sanitised).
        Every answer below goes through ``terminal_tree`` (the one sanitiser, ``kb.sanitize``): card text is
        untrusted and MCP clients show it in terminals."""
        try:
            return await anyio.to_thread.run_sync(lambda: fn(lazy.get()))
        except LadderError as e:
            msg = terminal_text(f"{e.code}: {e}")
            if resource:
                raise (not_found if e.code == "not_found" else resource_error)(msg) from e
            raise tool_error(msg) from e

    def query(model: type[M], **data: Any) -> M:
        try:
            return _query(model, **data)
        except InvalidArgument as e:
            raise tool_error(terminal_text(f"invalid_argument: {e}")) from e

    def bounded(name: str, value: int | None, lo: int, hi: int) -> int | None:
        try:
            return _bounded(name, value, lo, hi)
        except InvalidArgument as e:
            raise tool_error(terminal_text(f"invalid_argument: {e}")) from e

    @mcp.tool()
    async def search(text: str, top_k: int = 5, kind: str | None = None, backend: str | None = None,
                     level: str | None = None, mode: str = "hybrid", body_chars: int = 0) -> dict[str, Any]:
        """Hybrid (dense + BM25) search over the KB. kind: pattern | anti_signal | invariant; backend: cuda |
        ascend | amd | any; level: L1..L4; mode: hybrid | dense | bm25. body_chars > 0 adds that much card body."""
        flt = query(CardFilter, kinds=[kind] if kind else [], backends=[backend] if backend else [],
                     levels=[level] if level else [])
        q = query(SearchQuery, text=text, top_k=top_k, filter=flt, mode=mode)
        body = bounded("body_chars", body_chars, 0, MAX_BODY_CHARS) or 0
        hits = await call(lambda c: c.search(q))
        return terminal_tree({"hits": [_hit(h, body) for h in hits]})

    @mcp.tool()
    async def quick_match(text: str = "", bottleneck_classes: list[str] | None = None,
                          profile_signals: list[str] | None = None, ir_signatures: list[str] | None = None,
                          code_features: list[str] | None = None, backend: str = "cuda", top_k: int = 3,
                          exclude: list[str] | None = None) -> dict[str, Any]:
        """L1 pattern triage: active pattern cards that match the known symptoms (bottleneck classes, profile
        signals, IR signature names, code features such as tl.argmax) and optional text, for one backend.
        exclude: card ids already tried in earlier rounds."""
        q = query(QuickMatchQuery, text=text, backend=backend, top_k=top_k, exclude=exclude or [],
                   symptoms={"bottleneck_classes": bottleneck_classes or [], "profile_signals": profile_signals or [],
                             "ir_signatures": ir_signatures or [], "code_features": code_features or []})
        hits = await call(lambda c: c.quick_match(q))
        return terminal_tree({"hits": [_hit(h, 0) for h in hits]})

    @mcp.tool()
    async def get_card(card_id: str, version: int | None = None) -> dict[str, Any]:
        """One card in full (body, preconditions, rewrite, evidence, sources); the served version unless given."""
        v = bounded("version", version, 1, MAX_VERSION)
        return terminal_tree(_card(await call(lambda c: c.get_card(card_id, v))))

    @mcp.tool()
    async def get_invariants(pass_names: list[str] | None = None, ir_signatures: list[str] | None = None,
                             text: str = "", backend: str = "any", top_k: int = 5) -> dict[str, Any]:
        """L4: compiler invariant cards for the passes and IR signatures involved (e.g. pass_names=
        ["tritongpu-coalesce"], ir_signatures=["layout_conversion"]); give at least one of the three inputs."""
        q = query(InvariantQuery, pass_names=pass_names or [], ir_signatures=ir_signatures or [], text=text,
                   backend=backend, top_k=top_k)
        hits = await call(lambda c: c.get_invariants(q))
        return terminal_tree({"hits": [_hit(h, 600) | {"passes": getattr(h.card, "passes", []),
                                                       "legality": getattr(h.card, "legality", "")} for h in hits]})

    @mcp.resource("card://{card_id}", mime_type="application/json", description="one served card as JSON")
    async def card_resource(card_id: str) -> str:
        return json.dumps(terminal_tree(_card(await call(lambda c: c.get_card(card_id), resource=True))), indent=1)

    @mcp.resource("cards://active", mime_type="application/json",
                  description="id, kind, title and summary of every served (active) card")
    async def card_list() -> str:
        def collect(c: KBClient) -> list[dict[str, str]]:
            out, cursor = [], ""
            while True:
                page = c.list_cards(CardFilter(), page_size=500, cursor=cursor)
                out += [{"id": x.id, "kind": x.kind, "title": x.title, "summary": x.summary,
                         "uri": f"card://{x.id}"} for x in page.cards]
                if not page.next_cursor:
                    return out
                cursor = page.next_cursor

        return json.dumps(terminal_tree(await call(collect, resource=True)), indent=1)

    return mcp


class _LineTap:
    """stdin as the SDK reads it (an async iterable of lines), remembering the last lines read so that a line
    the SDK fails to parse can be answered with its own id."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self.seen: deque[str] = deque(maxlen=4)

    def __aiter__(self) -> Any:
        return self._read()

    async def _read(self) -> Any:
        async for line in self._lines:
            self.seen.append(line)
            yield line


def rpc_error_for(line: str | None, error: Exception) -> dict[str, Any]:
    """The JSON-RPC error object that answers a line the SDK could not read as a message."""
    try:
        doc = json.loads(line) if line is not None else None
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: the line is not "
                                                          "JSON; send one JSON-RPC 2.0 message per line"}}
    rid = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (int, str)) or (isinstance(rid, int) and abs(rid) >= 2**63):
        rid = None
    what = terminal_text(str(error).splitlines()[0] if str(error) else type(error).__name__)[:200]
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": f"Invalid Request: {what}"}}


def _rpc(item: Any) -> Any:
    """The JSON-RPC message inside a SessionMessage (mcp 1.x wraps it in a RootModel), else None."""
    msg = getattr(item, "message", None)
    return getattr(msg, "root", msg)


class _Pending:
    """Ids of the requests read and not yet answered. At the end of stdin the reader waits for them (up to
    ``timeout`` seconds): the SDK ends the session at end of input and cancels calls still running, so a client
    that writes its requests and closes stdin would otherwise lose the answers still being computed."""

    def __init__(self, timeout: float) -> None:
        self.ids: set[Any] = set()
        self.timeout = timeout
        self._changed = anyio.Event()

    def asked(self, item: Any) -> None:
        msg = _rpc(item)
        method, rid = getattr(msg, "method", None), getattr(msg, "id", None)
        if method == "notifications/cancelled":  # a cancelled request gets no answer
            params = getattr(msg, "params", None) or {}
            self.answered(params.get("requestId") if isinstance(params, dict) else None)
        elif method is not None and rid is not None:
            self.ids.add(rid)

    def answered(self, rid: Any) -> None:
        if rid in self.ids:
            self.ids.discard(rid)
            self._changed.set()
            self._changed = anyio.Event()

    async def drain(self) -> None:
        with anyio.move_on_after(self.timeout):
            while self.ids:
                await self._changed.wait()


class _AnsweringWriter:
    """The SDK's write stream, telling ``_Pending`` which requests have been answered."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner, self._pending = inner, pending

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        msg = _rpc(item)
        if getattr(msg, "method", None) is None:  # a response or an error, not a server request/notification
            self._pending.answered(getattr(msg, "id", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnsweringWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _AnsweringReader:
    """The SDK's read stream, with every transport error (a line that is not a JSON-RPC message) answered on the
    write stream with a JSON-RPC error instead of being dropped silently, and end of input held back until every
    request read so far is answered (``_Pending``)."""

    def __init__(self, inner: Any, write: Any, tap: _LineTap, message: Callable[[dict[str, Any]], Any],
                 pending: _Pending) -> None:
        self._inner, self._write, self._tap, self._message = inner, write, tap, message
        self._pending = pending

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    def __aiter__(self) -> _AnsweringReader:
        return self

    async def __anext__(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                await self._pending.drain()
                raise StopAsyncIteration from None
            if not isinstance(item, Exception):
                self._pending.asked(item)
                return item
            line = self._tap.seen[-1] if self._tap.seen else None  # read before any await: the line just failed
            await self._write.send(self._message(rpc_error_for(line, item)))

    async def receive(self) -> Any:
        return await self.__anext__()

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnsweringReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _run_stdio(mcp: Any) -> None:
    """``mcp.run("stdio")`` with malformed lines answered (see the module docstring)."""
    from io import TextIOWrapper

    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    try:
        jsonrpc = importlib.import_module("mcp_types").jsonrpc_message_adapter  # mcp 2.x
    except ImportError:  # mcp 1.x
        jsonrpc = importlib.import_module("mcp.types").JSONRPCMessage

    def message(doc: dict[str, Any]) -> Any:
        validate = getattr(jsonrpc, "validate_python", None) or jsonrpc.model_validate
        return SessionMessage(validate(doc))

    low = getattr(mcp, "_lowlevel_server", None) or mcp._mcp_server
    tap = _LineTap(anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")))
    pending = _Pending(timeout=LazyClient.OPEN_TIMEOUT + 60.0)
    async with stdio_server(stdin=tap) as (read, write):  # type: ignore[arg-type]
        answering = _AnsweringWriter(write, pending)
        await low.run(_AnsweringReader(read, answering, tap, message, pending), answering,
                      low.create_initialization_options())


def serve_stdio(server: str | None = None, *, home: str | None = None, token: str | None = None) -> None:
    """Run the MCP server on stdin/stdout until the client closes the stream."""
    from retrieval.client import connect

    lazy = LazyClient(lambda: connect(server, home=home, token=token))
    try:
        anyio.run(_run_stdio, build_server(lazy))
    finally:
        lazy.close()
