"""The one sanitiser for untrusted text on its way to a terminal or an MCP client.

Card text, proposal ids, problem names and reviewer notes come from contributors. Printed raw, a C0/C1 control
sequence in them acts on the reviewer's terminal: ``ESC [2J`` clears it, OSC 52 writes the clipboard, OSC 8
plants a link. ``terminal_text`` removes every C0 and C1 control character except newline and tab (so no
escape sequence can start; what follows the removed ESC stays visible as plain text); ``terminal_tree`` does it
for every string in a JSON-like value. HTML output escapes instead (``retrieval.web.render``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["terminal_text", "terminal_tree"]

#: C0 (U+0000-U+001F) but tab and newline, DEL, and C1 (U+0080-U+009F: CSI, OSC, ST ... as single code points)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """``text`` with its C0/C1 control characters (newline and tab aside) removed."""
    return _CONTROLS.sub("", text)


def terminal_tree(value: Any) -> Any:
    """``value`` (dicts, lists, strings, numbers) with ``terminal_text`` applied to every string, keys included."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {terminal_tree(k): terminal_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [terminal_tree(v) for v in value]
    return value
