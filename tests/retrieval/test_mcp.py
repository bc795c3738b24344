"""``ladder mcp`` driven by the official MCP SDK's own client over stdio (one spawned server, embedded KB)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
mcp = pytest.importorskip("mcp", reason="needs the official `mcp` Python SDK")


def _is_error(result) -> bool:  # noqa: ANN001 - mcp 2 says is_error, mcp 1 isError
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def _json(result) -> dict:  # noqa: ANN001
    assert not _is_error(result), result.content[0].text
    return json.loads(result.content[0].text)


async def _drive(home: Path) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: os.environ[k] for k in ("HOME", "PATH", "VIRTUAL_ENV") if k in os.environ}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    params = StdioServerParameters(command=sys.executable, args=["-m", "optimizer.cli", "mcp", "--home", str(home)],
                                   env=env, cwd=str(ROOT))
    out: dict = {}
    with open(home.parent / "mcp-stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            out["tools"] = {t.name for t in (await s.list_tools()).tools}
            out["search"] = _json(await s.call_tool("search", {"text": "launch bound grid of tiny rows",
                                                               "kind": "pattern", "top_k": 3}))
            out["quick"] = _json(await s.call_tool("quick_match", {"bottleneck_classes": ["launch_bound"],
                                                                   "backend": "cuda", "top_k": 3}))
            out["inv"] = _json(await s.call_tool("get_invariants", {"text": "layout conversion through shared memory",
                                                                    "backend": "cuda"}))
            first = out["search"]["hits"][0]["id"]
            out["card"] = _json(await s.call_tool("get_card", {"card_id": first}))
            out["missing"] = await s.call_tool("get_card", {"card_id": "no-such-card"})
            out["bad"] = await s.call_tool("search", {"text": "x", "mode": "telepathy"})
            out["resources"] = {str(r.uri) for r in (await s.list_resources()).resources}
            templates = await s.list_resource_templates()
            listed = getattr(templates, "resource_templates", None) or templates.resourceTemplates  # mcp 2 / 1
            out["templates"] = {getattr(t, "uri_template", None) or t.uriTemplate for t in listed}
            out["index"] = json.loads((await s.read_resource("cards://active")).contents[0].text)
            out["card_res"] = json.loads((await s.read_resource(f"card://{first}")).contents[0].text)
            try:
                await s.read_resource("card://no-such-card")
                out["res_missing"] = "no error"
            except Exception as e:  # noqa: BLE001 - the SDK's protocol error class differs between majors
                out["res_missing"] = str(e)
    return out


def test_mcp_over_stdio(kb_home: Path):
    import anyio

    r = anyio.run(_drive, kb_home)
    assert {"search", "quick_match", "get_card", "get_invariants"} <= r["tools"]
    hits = r["search"]["hits"]
    assert 1 <= len(hits) <= 3 and all(h["kind"] == "pattern" for h in hits)
    quick = r["quick"]["hits"]
    assert quick and all("bottleneck:launch_bound" in h["matched_symptoms"] for h in quick[:1])
    assert r["inv"]["hits"] and all(h["kind"] == "invariant" for h in r["inv"]["hits"])
    assert r["card"]["id"] == hits[0]["id"] and r["card"]["body"]
    assert _is_error(r["missing"]) and "no-such-card" in r["missing"].content[0].text
    assert _is_error(r["bad"]) and "mode" in r["bad"].content[0].text
    assert "cards://active" in r["resources"] and "card://{card_id}" in r["templates"]
    ids = {c["id"] for c in r["index"]}
    assert hits[0]["id"] in ids and len(ids) > 20
    assert r["card_res"]["id"] == hits[0]["id"] and r["card_res"]["kind"] == "pattern"
    assert "no-such-card" in r["res_missing"]
