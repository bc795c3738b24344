"""The MCP server passes KB text through the one sanitiser (issue 17, item 2): a card whose title, body and
evidence hold terminal escapes reaches an MCP client without a control character (newline and tab kept)."""

from __future__ import annotations

import json

import anyio
import pytest

pytest.importorskip("mcp", reason="needs the official `mcp` Python SDK")

from kb.errors import NotFound
from kb.models import PatternCard
from kb.models.search import ScoreBreakdown, SearchHit

ESC = "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example\x1b\\\x9b"


class FakeKB:
    card = PatternCard(id="hostile-card", title=f"Hostile {ESC}title", summary=f"Summary {ESC} with escapes.",
                       body=f"line one{ESC}\nline\ttwo", backends=["cuda"], levels=["L1"])

    def get_card(self, card_id: str, version: int | None = None) -> PatternCard:
        if card_id != self.card.id:
            raise NotFound(f"card {card_id!r}{ESC} does not exist", field="id")
        return self.card

    def search(self, query):
        return [SearchHit(card=self.card, score=1.0, breakdown=ScoreBreakdown(dense=1.0, bm25=1.0))]

    def close(self) -> None:
        pass


def _texts(result) -> str:
    content = getattr(result, "content", result)
    return "".join(getattr(c, "text", "") for c in content)


def test_tool_answers_and_errors_carry_no_control_characters():
    from retrieval.mcp_server import LazyClient, build_server

    server = build_server(LazyClient(FakeKB))

    async def drive() -> list[str]:
        out = [_texts(await server.call_tool("get_card", {"card_id": "hostile-card"})),
               _texts(await server.call_tool("search", {"text": "x", "body_chars": 200}))]
        try:
            out.append(_texts(await server.call_tool("get_card", {"card_id": "nope"})))
        except Exception as e:
            out.append(str(e))
        return out

    card_text, search_text, error_text = anyio.run(drive)
    for text in (card_text, search_text, error_text):
        assert not any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in json.loads(
            json.dumps(text)))
    card = json.loads(card_text)
    assert card["body"] == "line one[2J]52;c;cm0gLXJmIH4=]8;;https://evil.example\\\nline\ttwo"
    assert "does not exist" in error_text
