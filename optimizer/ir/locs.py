"""Map IR back to kernel source lines: MLIR ``loc(...)`` attributes and PTX ``.loc`` directives.

MLIR locations nest: ``#loc23 = loc("x"(#loc1))`` (a named location), ``loc(callsite(#loc9 at #loc10))``
(an inlined call: callee at caller), ``loc(fused[...])``. A frame chain is resolved innermost first and the
first frame in the kernel's own file is the line reported, so an op produced inside ``tl.argmax``
(``standard.py``) is reported at the user's ``tl.argmax(...)`` line. PTX does the same through
``.loc F L C, ..., inlined_at F' L' C'`` chains.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from optimizer.ir import patterns as P

__all__ = ["LocResolver", "PtxLines", "same_file"]

Frame = tuple[str, int, int]


def same_file(a: str, b: str) -> bool:
    """True if two paths name the same file (resolved path, or the same basename when one is relative)."""
    if a == b:
        return True
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
    except OSError:
        pass
    return not (os.path.isabs(a) and os.path.isabs(b)) and os.path.basename(a) == os.path.basename(b)


class LocResolver:
    """Resolves MLIR location expressions of one IR text to lines of ``source_file``."""

    def __init__(self, text: str, source_file: str) -> None:
        self.source_file = source_file
        self._defs = {m.group(1): m.group(2) for m in P.LOC_DEF.finditer(text)}
        self._cache: dict[str, list[Frame]] = {}
        self._is_source = lru_cache(maxsize=64)(lambda f: same_file(f, source_file))

    def line_of(self, op_line: str) -> int | None:
        """Source line of the op printed on ``op_line`` (its trailing ``loc(...)``), or None."""
        m = P.TRAILING_LOC.search(op_line)
        if not m:
            return None
        return self.pick(self.frames(m.group(1)))

    def pick(self, frames: list[Frame]) -> int | None:
        for file, line, _ in frames:
            if self._is_source(file):
                return line
        return None

    def frames(self, expr: str) -> list[Frame]:
        expr = expr.strip()
        if expr.startswith("#loc"):
            name = expr.split()[0].rstrip(")")
            if name not in self._cache:
                self._cache[name] = []  # guards against cycles
                self._cache[name] = self.frames(self._defs.get(name, "unknown"))
            return self._cache[name]
        if expr.startswith("loc(") and expr.endswith(")"):
            return self.frames(expr[4:-1])
        if expr.startswith("callsite("):
            inner = expr[len("callsite(") : _matching(expr, len("callsite"))]
            callee, _, caller = _split_top(inner, " at ")
            return self.frames(callee) + self.frames(caller)
        if expr.startswith("fused"):
            start = expr.find("[")
            body = expr[start + 1 : _matching(expr, start, "[", "]")] if start >= 0 else ""
            out: list[Frame] = []
            for part in _split_all(body, ","):
                out += self.frames(part)
            return out
        if expr.startswith('"'):
            end = expr.find('"', 1)
            name, rest = expr[1:end], expr[end + 1 :]
            if rest.startswith(":"):
                bits = rest[1:].split(":")
                try:
                    return [(name, int(bits[0]), int(bits[1].split(" ")[0].split(")")[0]) if len(bits) > 1 else 0)]
                except ValueError:
                    return []
            if rest.startswith("("):
                return self.frames(rest[1 : _matching(rest, 0)])
        return []


def _matching(s: str, open_at: int, open_ch: str = "(", close_ch: str = ")") -> int:
    """Index of the bracket closing the one at ``open_at`` (or the end of ``s``)."""
    depth, in_str = 0, False
    for i in range(open_at, len(s)):
        c = s[i]
        if c == '"':
            in_str = not in_str
        elif not in_str and c == open_ch:
            depth += 1
        elif not in_str and c == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return len(s)


def _split_top(s: str, sep: str) -> tuple[str, str, str]:
    depth, in_str = 0, False
    for i, c in enumerate(s):
        if c == '"':
            in_str = not in_str
        elif not in_str and c in "([":
            depth += 1
        elif not in_str and c in ")]":
            depth -= 1
        elif not in_str and depth == 0 and s.startswith(sep, i):
            return s[:i], sep, s[i + len(sep) :]
    return s, "", ""


def _split_all(s: str, sep: str) -> list[str]:
    parts = []
    while s:
        head, found, s = _split_top(s, sep)
        parts.append(head)
        if not found:
            break
    return parts


class PtxLines:
    """Source line of every PTX instruction line, following ``.loc`` / ``inlined_at`` chains.

    Inside ``// begin inline asm`` ... ``// end inline asm`` only the first ``.loc`` counts: LLVM advances the
    line number for every line of the asm string (a 4-line load sequence at line 11 reports 11..14).
    """

    def __init__(self, ptx: str, source_file: str) -> None:
        files = {int(n): path for n, path in P.PTX_FILE.findall(ptx)}
        src_ids = {n for n, path in files.items() if same_file(path, source_file)}
        parent: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        base = os.path.basename(source_file)
        self.lines = ptx.splitlines()
        self.source_line: list[int | None] = [None] * len(self.lines)
        current: int | None = None
        in_asm, asm_loc_seen = False, False
        for i, line in enumerate(self.lines):
            if "inline asm" in line:  # LLVM numbers the lines of an inline asm string from the op's own line
                in_asm, asm_loc_seen = "begin inline asm" in line, False
            elif ".loc" in line and (m := P.PTX_LOC.match(line)):
                here = (int(m[1]), int(m[2]), int(m[3]))
                if m[4]:
                    parent[here] = (int(m[4]), int(m[5]), int(m[6]))
                if not (in_asm and asm_loc_seen):
                    current = _resolve_ptx(here, parent, src_ids)
                    if current is None and "@[" in line:  # Triton 3.6: the chain only in the comment
                        current = _from_comment(line, base)
                asm_loc_seen = in_asm
            self.source_line[i] = current

    def lines_matching(self, pattern) -> tuple[list[int], list[str]]:
        """(source lines, instruction lines) of every PTX line matching ``pattern``."""
        src: list[int] = []
        hits: list[str] = []
        for i, line in enumerate(self.lines):
            if pattern.search(line):
                hits.append(line.strip())
                if (n := self.source_line[i]) is not None:
                    src.append(n)
        return src, hits


def _from_comment(line: str, base: str) -> int | None:
    """``.loc 2 152 28 // standard.py:152:28 @[ standard.py:160:59 @[ k.py:12:20 ] ]`` -> 12 for ``k.py``."""
    comment = line.split("//", 1)[1] if "//" in line else ""
    for name, n in P.PTX_LOC_COMMENT.findall(comment):
        if name == base:
            return int(n)
    return None


def _resolve_ptx(loc: tuple[int, int, int] | None, parent: dict, src_ids: set[int]) -> int | None:
    seen = 0
    while loc is not None and seen < 64:
        if loc[0] in src_ids:
            return loc[1]
        loc = parent.get(loc)
        seen += 1
    return None
