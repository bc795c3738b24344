"""Issue 32, item 8: the output sanitiser neutralises Unicode format characters (category Cf) as it does control
characters: a right-to-left override in card text must not reach a terminal, an MCP client or the review page."""

from __future__ import annotations

import sys
import unicodedata

from kb.sanitize import FORMAT_RANGES, terminal_text, terminal_tree


def test_bidi_overrides_and_zero_width_characters_are_removed():
    hostile = "approve\u202eevil\u202c \u2066x\u2069 a\u200bb\ufeff \U000e0041tag"
    assert terminal_text(hostile) == "approveevil x ab tag"
    assert terminal_tree({"k\u202e": ["v\u200f"]}) == {"k": ["v"]}


def test_every_format_character_of_this_python_is_covered():
    cf = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    missing = [hex(c) for c in cf if not any(a <= c <= b for a, b in FORMAT_RANGES)]
    assert not missing
    assert terminal_text("".join(map(chr, cf))) == ""


def test_ordinary_text_is_kept():
    text = "naïve 中文 emoji 🙂 tab\tnewline\n ->"
    assert terminal_text(text) == text
