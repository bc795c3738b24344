"""The one sanitiser for untrusted text on its way to a terminal, an MCP client or the review page.

Card text, proposal ids, problem names and reviewer notes come from contributors. Printed raw, a C0/C1 control
sequence in them acts on the reviewer's terminal: ``ESC [2J`` clears it, OSC 52 writes the clipboard, OSC 8
plants a link. Unicode format characters (category Cf) do the same to what a reader *sees*: U+202E
(right-to-left override) and the other bidirectional overrides, embeddings and isolates reorder the text after
them (an id can read as another), and zero-width characters hide a difference between two ids.
``terminal_text`` removes every C0 and C1 control character except newline and tab, and every Cf character (so
no escape sequence can start and no text is reordered or hidden; what follows a removed character stays
visible as plain text); ``terminal_tree`` does it for every string in a JSON-like value. HTML
output escapes as well (``retrieval.web.render``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMAT_RANGES", "terminal_text", "terminal_tree"]

#: Unicode category Cf (format), as ranges: U+00AD, U+0600-5, U+061C, U+200B-F, U+202A-E, U+2060-F, U+FEFF,
#: U+FFF9-B, the Egyptian-hieroglyph and musical format controls, the tag characters U+E0000-7F. A superset of
#: Unicode 15's Cf set; tests/kb/test_sanitize.py checks it covers every Cf of the running Python.
FORMAT_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
    (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE007F))

#: C0 (U+0000-U+001F) but tab and newline, DEL, C1 (U+0080-U+009F: CSI, OSC, ST ... as single code points), and Cf
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in FORMAT_RANGES) + "]")


def terminal_text(text: str) -> str:
    """``text`` with its C0/C1 control characters (newline and tab aside) and format characters removed."""
    return _UNSAFE.sub("", text)


def terminal_tree(value: Any) -> Any:
    """``value`` (dicts, lists, strings, numbers) with ``terminal_text`` applied to every string, keys included."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {terminal_tree(k): terminal_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [terminal_tree(v) for v in value]
    return value
