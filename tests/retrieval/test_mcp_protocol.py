"""Issue 32, item 8: ``ladder mcp`` answers every malformed JSON-RPC line with a JSON-RPC error (the SDK alone
drops it and the client waits forever), and bounds numeric arguments (get_card version 2**70 used to end in an
unhandled OverflowError from SQLite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="needs the official `mcp` Python SDK")

from kb.models import PatternCard  # noqa: E402
from retrieval.mcp_server import rpc_error_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_rpc_error_for_reads_the_id_when_it_can():
    assert rpc_error_for("{bad", ValueError("x"))["error"]["code"] == -32700
    assert rpc_error_for("{bad", ValueError("x"))["id"] is None
    err = rpc_error_for('{"jsonrpc":"2.0","id":7,"method":5}', ValueError("method: str expected"))
    assert err["id"] == 7 and err["error"]["code"] == -32600
    assert rpc_error_for('{"id":{"a":1}}', ValueError("x"))["id"] is None
    assert rpc_error_for('{"id":true}', ValueError("x"))["id"] is None
    assert rpc_error_for("[1,2]", ValueError("x"))["id"] is None


class _OneCard:
    card = PatternCard(id="one-card", title="One card", summary="A card for the version test.",
                       backends=["cuda"], levels=["L1"])

    def get_card(self, card_id: str, version: int | None = None) -> PatternCard:
        if version is not None and version > 2**63:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return self.card

    def close(self) -> None:
        pass


def test_get_card_version_out_of_range_is_invalid_argument():
    from retrieval.mcp_server import LazyClient, build_server

    server = build_server(LazyClient(_OneCard))

    async def drive() -> str:
        try:
            await server.call_tool("get_card", {"card_id": "one-card", "version": 2**70})
        except Exception as e:  # noqa: BLE001 - the SDK's ToolError
            return f"{type(e).__name__}: {e}"
        return "no error"

    out = anyio.run(drive)
    assert "invalid_argument" in out and "version" in out and "Overflow" not in out


def test_kb_get_card_bounds_the_version(kb):
    from kb.errors import InvalidArgument

    with pytest.raises(InvalidArgument) as e:
        kb.get_card(kb.store.served_cards()[0].id, 2**70)
    assert e.value.field == "version"


def test_stdio_answers_malformed_lines(kb_home: Path):
    env = {k: os.environ[k] for k in ("HOME", "PATH", "VIRTUAL_ENV") if k in os.environ}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "0"}}}
    lines = [json.dumps(init), "{not json", '{"jsonrpc":"2.0","id":42,"method":17}', "[1,2,3]", '"just a string"',
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "get_card", "arguments": {"card_id": "x", "version": 2**70}}})]
    proc = subprocess.run([sys.executable, "-m", "optimizer.cli", "mcp", "--home", str(kb_home)],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, env=env,
                          cwd=str(ROOT))
    replies = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    errors = [r for r in replies if "error" in r]
    assert [e["error"]["code"] for e in errors] == [-32700, -32600, -32600, -32600], proc.stdout
    assert [e["id"] for e in errors] == [None, 42, None, None]
    call = next(r for r in replies if r.get("id") == 9)
    text = json.dumps(call)
    assert "invalid_argument" in text and "OverflowError" not in text, text


_SLOW_SERVER = """
import sys, time
import anyio
from retrieval import mcp_server
from tests.retrieval.test_mcp_protocol import _OneCard

def slow():
    time.sleep(3)  # a KB that takes a while to open: the call is still running when stdin ends
    return _OneCard()

anyio.run(mcp_server._run_stdio, mcp_server.build_server(mcp_server.LazyClient(slow)))
"""


def test_stdio_answers_calls_still_running_at_end_of_input():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "0"}}}
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                         "params": {"name": "get_card", "arguments": {"card_id": "one-card"}}})]
    env = {k: os.environ[k] for k in ("HOME", "PATH", "VIRTUAL_ENV") if k in os.environ}
    env.update(PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _SLOW_SERVER], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=120, env=env, cwd=str(ROOT))
    replies = {r.get("id"): r for r in map(json.loads, filter(str.strip, proc.stdout.splitlines()))}
    assert 5 in replies, (proc.stdout, proc.stderr[-2000:])
    assert "one-card" in json.dumps(replies[5]["result"])
