"""A tokenizer for kernel-engineering text that keeps identifiers whole.

``tl.argmax``, ``num_warps``, ``ttg.convert_layout``, ``aiv_scalar_ratio`` and ``shfl.sync.bfly`` stay single
tokens (so a query quoting IR or a counter matches exactly), and each identifier also contributes its parts
(``argmax``, ``convert``, ``layout`` ...) so that prose matches code. Lower-cased; English stop words dropped.
"""

from __future__ import annotations

import re

__all__ = ["tokenize"]

# identifier with optional dotted/colon parts, e.g. tl.argmax, ttg.convert_layout, tt.divisibility, sm_90a
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.:][A-Za-z_][A-Za-z0-9_]*)*|\d+(?:\.\d+)?[a-zA-Z]*")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its not of on or so "
    "such that the their then there these this to was were what when where which while who why will with "
    "without you your my me we our than too very".split()
)


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for m in _IDENT.finditer(text):
        raw = m.group(0)
        tok = raw.lower()
        if tok in _STOP:
            continue
        out.append(tok)
        if tok[0].isdigit():
            continue
        parts: list[str] = []
        for piece in re.split(r"[._:]+", raw):
            sub = _CAMEL.findall(piece)
            parts.extend(x.lower() for x in (sub if len(sub) > 1 else [piece]))
        seen = {tok}
        for p in parts:
            if len(p) > 1 and p not in _STOP and p not in seen:
                seen.add(p)
                out.append(p)
    return out
