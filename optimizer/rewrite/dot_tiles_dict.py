"""``dot_tile_search`` where the tiles reach the launch through ``**config``: edit the dict literals they come from.

Real launchers (vLLM's ``fused_moe``, applied-ai's MoE kernels) keep a tile config as a dict and launch with
``kernel[grid](..., **config)``; the config is built by the caller, often one dict per regime (``config = {...}``
then ``if tiny_batch: config = {...}``), and other host code reads it too (``moe_align_block_size(ids,
config['BLOCK_SIZE_M'], E)`` pads the token list to the M tile). A tile point therefore edits the dict literals
themselves, so every reader of the config follows: the kernel, the ``lambda META`` grid and the host code sized by
the tile.

Domain: the launch passes exactly one ``**name`` and none of the dot's tile constexprs by name or position; the
grid is a function of META (it reads the tiles the launch passes); the module holds dict literals whose string keys
include the three tile names with integer values, and at least one of them holds the recorded launch's tile (the
regime the diagnosed case ran). Only those dicts are edited (the regime that ran), so a tiny-batch override with
another tile stays as written. ``num_warps`` / ``num_stages`` go into the same dicts (edited, or added as keys)
unless the launch passes them as keywords, which are edited then. Fixed points only: an autotuner would choose the
tile apart from the host code that reads it from the dict.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import walk

__all__ = ["dict_form", "dict_reasons", "dict_tile", "rewrite_dicts", "tile_dicts"]

_OPTIONS = ("num_warps", "num_stages")


def dict_form(t: Target, names: dict[str, str]) -> bool:
    """The launch passes one ``**name`` and no tile constexpr explicitly."""
    site = t.sites[0] if len(t.sites) == 1 else None
    if site is None:
        return False
    stars = [a for a in site.call.args if a.star]
    return (len(stars) == 1 and stars[0].star == "**"
            and all(site.arg_for(t.kernel, n) is None for n in names.values()))


def _entries(d: cst.Dict) -> dict[str, cst.DictElement]:
    out = {}
    for e in d.elements:
        if (
            isinstance(e, cst.DictElement)
            and isinstance(e.key, cst.SimpleString)
            and isinstance(e.key.evaluated_value, str)
        ):
            out[e.key.evaluated_value] = e
    return out


def _values(d: cst.Dict, keys: list[str]) -> dict[str, int] | None:
    ent = _entries(d)
    ints = {k: v for k in keys if k in ent and isinstance(v := ent[k].value, cst.Integer)}
    if not all(k in ints for k in keys):
        return None
    return {k: int(ints[k].value) for k in keys}


def _recorded(t: Target, ctx: RecipeContext, names: dict[str, str]) -> dict[str, int] | None:
    for rec in ctx.launches:
        if rec.get("kernel") == t.kernel.name:
            c = rec.get("constexprs") or {}
            if all(isinstance(c.get(n), int) for n in names.values()):
                return {n: int(c[n]) for n in names.values()}
    return None


def tile_dicts(t: Target, ctx: RecipeContext, names: dict[str, str]) -> list[cst.Dict]:
    """The module's dict literals holding the recorded launch's tile (every tile dict when nothing was recorded and
    they all agree)."""
    keys = list(names.values())
    found = [(d, v) for d in walk(t.tree.module) if isinstance(d, cst.Dict) and (v := _values(d, keys)) is not None]
    rec = _recorded(t, ctx, names)
    if rec is None:
        return [d for d, _v in found] if len({tuple(sorted(v.items())) for _d, v in found}) == 1 else []
    return [d for d, v in found if v == rec]


def dict_reasons(t: Target, ctx: RecipeContext, names: dict[str, str], meta: bool) -> list[str]:
    out = []
    if not meta:
        out.append("the launch takes its tiles from **config but the grid does not read them from META")
    if not tile_dicts(t, ctx, names):
        out.append(f"no dict literal in the module holds the recorded tile {sorted(names.values())} as integers")
    return out


def dict_tile(t: Target, ctx: RecipeContext, names: dict[str, str]) -> dict[str, int]:
    """The current config (roles and launch options) from the first tile dict and the launch's keywords."""
    d = tile_dicts(t, ctx, names)[0]
    vals = _values(d, list(names.values()))
    assert vals is not None
    cur: dict[str, int] = {r: vals[n] for r, n in names.items()}
    ent = _entries(d)
    for opt, default in (("num_warps", 4), ("num_stages", 3)):
        kw = t.sites[0].keyword(opt)
        if opt in ent and isinstance(v := ent[opt].value, cst.Integer):
            cur[opt] = int(v.value)
        elif kw is not None and isinstance(kw.value, cst.Integer):
            cur[opt] = int(kw.value.value)
        else:
            cur[opt] = default
    return cur


def rewrite_dicts(t: Target, ctx: RecipeContext, names: dict[str, str], point: dict[str, Any]) -> int:
    """Set ``point``'s tile (and launch options) in every tile dict; returns how many dicts were edited."""
    dicts = tile_dicts(t, ctx, names)
    site = t.sites[0]
    at_launch = {opt for opt in _OPTIONS if site.keyword(opt) is not None}
    for opt in at_launch:
        kw = site.keyword(opt)
        assert kw is not None  # at_launch: the options the launch passes
        t.tree.replace(kw.value, str(point[opt]))
    for d in dicts:
        ent = _entries(d)
        for key, v in {names[r]: point[r] for r in names}.items():
            t.tree.replace(ent[key].value, str(v))
        # the options travel with the tile in the same dict, so another regime's dict keeps its own
        opts = [opt for opt in _OPTIONS if opt not in at_launch]
        for opt in opts:
            if opt in ent:
                t.tree.replace(ent[opt].value, str(point[opt]))
        new = [opt for opt in opts if opt not in ent]
        if new:
            def add(node: cst.CSTNode, new: list[str] = new) -> cst.CSTNode:
                return _append(node, {opt: point[opt] for opt in new})
            t.tree.edit(d, add)
    return len(dicts)


def _append(node: cst.CSTNode, items: dict[str, int]) -> cst.CSTNode:
    assert isinstance(node, cst.Dict)
    old = list(node.elements)
    sep = next(
        (e.comma for e in old if isinstance(e.comma, cst.Comma)), cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    tail = old[-1].comma if old else cst.MaybeSentinel.DEFAULT
    colon = next((e.whitespace_after_colon for e in old if isinstance(e, cst.DictElement)), cst.SimpleWhitespace(" "))
    add = [cst.DictElement(cst.SimpleString(repr(k)), cst.Integer(str(v)), whitespace_after_colon=colon)
           for k, v in items.items()]
    elems = [*old, *add]
    elems = [e.with_changes(comma=sep) for e in elems[:-1]] + [elems[-1].with_changes(comma=tail)]
    return node.with_changes(elements=elems)
