"""Card lint (``ladder kb lint``): checks the curated card files before they are seeded or merged.

Checks: the file parses and validates (required fields, valid backends/levels/vocabularies), id = file stem,
ids and titles unique, sources present, related ids resolve, symptoms present, and the kind-specific fields
(anti-signal trigger/contraindications/counterexample; invariant passes/legality/question templates whose
placeholders the L4 engine knows).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kb.cardfiles import CardFileError, load_card_file, packaged_cards_dir
from kb.errors import InvalidArgument
from kb.models import AnyCard

__all__ = ["TEMPLATE_FIELDS", "lint_cards", "lint_dir"]

#: Placeholders of invariant question templates: what the L4 engine (``optimizer.ir.l4``) fills each with from the
#: IR report. One meaning per name: a count that is not the signature's own count gets its own field.
TEMPLATE_FIELDS: dict[str, str] = {
    "kernel": "the kernel's name",
    "target": "the compile target, e.g. cuda:90",
    "signature": "the IR signature being explained",
    "count": "how many times the signature occurs (its count)",
    "stage": "the stage where the signature was detected (ttgir, ptx ...)",
    "pass": "the pass that introduced or governs the signature",
    "source_line": "file:line and code of the signature's first source line",
    "op": "the IR op the signature is about (tt.reduce, tt.load ...)",
    "dtype": "element type of that op's tensor (f32, f16 ...)",
    "block_shape": "shape of that op's tensor (1024, 64x32), else the kernel's BLOCK constexprs",
    "operands": "number of operands of the reduce at the signature's lines (2 for value + index)",
    "input_precision": "input precision of the fp32 dots (tf32, tf32x3, ieee ...)",
    "num_warps": "num_warps the kernel was compiled with",
    "num_stages": "num_stages the kernel was compiled with",
    "maxnreg": "the maxnreg compile option (only when set)",
    "vec": "vector width a vectorization remark reports",
    "origin_vec": "vector width contiguity allowed, from the same remark",
    "fma_f32": "number of fma.rn.f32 instructions in PTX",
    "registers": "registers per thread (ptxas)",
    "spill_stores_bytes": "bytes of register spill stores (ptxas)",
    "shared_bytes": "bytes of shared memory the kernel uses",
    "barriers": "CTA barriers ptxas reports",
    "reduce_mode": "Ascend reduce_mode of the max/min-with-index reduce",
}
_PLACEHOLDER = re.compile(r"\{([a-zA-Z_]+)\}")


def lint_cards(cards: list[tuple[str, AnyCard]]) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []

    def bad(file: str, field: str, message: str) -> None:
        problems.append({"file": file, "field": field, "message": message})

    ids: dict[str, str] = {}
    titles: dict[str, str] = {}
    for file, c in cards:
        if c.id in ids:
            bad(file, "id", f"duplicate id, also in {ids[c.id]}")
        ids.setdefault(c.id, file)
        key = c.title.strip().lower()
        if key in titles:
            bad(file, "title", f"duplicate title, also in {titles[key]}")
        titles.setdefault(key, file)
    for file, c in cards:
        if not c.sources:
            bad(file, "sources", "at least one source (public URL or compiler path@version) is required")
        if not c.symptoms.tokens():
            bad(file, "symptoms",
                "give at least one symptom (bottleneck class, profile signal, IR signature, code feature)")
        if not c.body.strip():
            bad(file, "body", "the detailed reference (markdown) is empty")
        for r in c.related:
            if r not in ids:
                bad(file, "related", f"links to {r!r}, which is no card")
            if r == c.id:
                bad(file, "related", "a card cannot relate to itself")
        if c.kind == "pattern" and c.rewrite is None:
            bad(file, "rewrite", "a pattern card needs a rewrite description")
        if c.kind == "anti_signal":
            for f in ("trigger_evidence", "contraindicated", "counterexample"):
                if not getattr(c, f):
                    bad(file, f, "required for anti-signals")
        if c.kind == "invariant":
            for f in ("passes", "legality", "question_templates"):
                if not getattr(c, f):
                    bad(file, f, "required for invariants")
            for t in c.question_templates:
                for name in _PLACEHOLDER.findall(t):
                    if name not in TEMPLATE_FIELDS:
                        bad(file, "question_templates",
                            f"unknown placeholder {{{name}}}; use {sorted(TEMPLATE_FIELDS)}")
    return problems


def lint_dir(root: Path | None = None) -> tuple[list[dict[str, Any]], int]:
    """Lint every ``*.yaml`` under ``root`` (default: the packaged cards). Returns (problems, number of files)."""
    root = Path(root) if root else packaged_cards_dir()
    try:
        is_dir = root.is_dir()
    except OSError as e:  # e.g. a name too long for the filesystem
        raise InvalidArgument(f"cannot use {str(root)[:200]!r} as a cards directory: {e.strerror}", field="path") from e
    if not is_dir:
        raise InvalidArgument(f"{root} is not a directory of card files (<kind>s/<id>.yaml)", field="path")
    files = sorted(root.rglob("*.yaml"))
    loaded: list[tuple[str, AnyCard]] = []
    problems: list[dict[str, Any]] = []
    for f in files:
        rel = str(f.relative_to(root))
        try:
            loaded.append((rel, load_card_file(f)))
        except CardFileError as e:
            problems.append({"file": rel, "field": e.field or "", "message": e.message})
    return problems + lint_cards(loaded), len(files)
