"""``dot_tile_search`` on a kernel that is already ``@triton.autotune``d: edit its config list, never refuse it.

The tile search of an autotuned dot kernel cannot set tiles at the launch (the autotuner overrides them, see
``optimizer.rewrite.effect``); it edits where they are decided: the ``configs=`` list of the decorator -- a list
literal there, a module variable, or the list a module function returns (the Triton tutorial's
``get_cuda_autotune_config()``). One point, ``mode="configs"``:

- **add** the Hopper configs (``dot_tiles.HOPPER``) the list lacks (same M/N/K tile, warps and stages), each
  carrying the list's other meta-parameters (``GROUP_SIZE_M``, a persistent grid's ``NUM_SM``) at the values of the
  list's config nearest in tile shape (a value the source computes, ``num_sms()``, is copied as written);
- where unmasked loads or stores span all three tiles (``dot_tiles.pinned_tiles``: the tiles must keep dividing the
  problem), add only Hopper configs whose tiles the list already holds (new warps / stages for the author's tiles:
  the autotuner already runs each of them, so every caller admits them);
- **drop** dominated configs, by two rules that need no measurement: an exact duplicate of an earlier config,
  and a config whose software pipeline cannot fit sm_90's shared memory, ``(BM*BK + BK*BN) * bytes * stages >
  232448`` (the operand element size from the recorded launch's first pointer argument, 2 bytes when unknown:
  the compiler rejects it, or the autotuner pays a failed compile for it).

Domain: the decorator's configs are ``triton.Config({...}, num_warps=.., num_stages=..)`` calls the source spells
out (a list built at run time is refused; absent warps / stages are Triton's defaults, 4 and 3; the tiles are int
literals, other meta-parameters any expression), the dot's M/N/K tiles are among their keys, and no
``@triton.heuristics`` sets a tile. Nothing else changes: the grid (a ``lambda META``) and the launch stay.
"""

from __future__ import annotations

import ast
import math
from typing import Any, cast

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import call_name, dotted, expr, walk

__all__ = ["config_list_points", "config_list_reasons", "parsed_configs", "rewrite_config_list"]

SM90_SHARED = 232448
_BYTES = {"fp8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "fp64": 8, "i8": 1, "u8": 1, "i16": 2, "i32": 4}


def _autotune(t: Target) -> cst.Call | None:
    return next((d.decorator for d in t.kernel.node.decorators if isinstance(d.decorator, cst.Call)
                 and dotted(d.decorator).endswith("autotune")), None)


def config_list(t: Target) -> cst.List | cst.ListComp | None:
    """The list node the decorator's configs come from, where the source spells it out: a list literal, or a list
    comprehension over literal values (``[Config({'BLOCK_SIZE_M': m}, num_stages=s) for m in [16, 32] for s in
    [3, 4]]``, expanded by ``_expand``)."""
    dec = _autotune(t)
    if dec is None:
        return None
    v = next((a.value for a in dec.args if a.keyword is not None and a.keyword.value == "configs"),
             dec.args[0].value if dec.args and dec.args[0].keyword is None else None)
    module = t.tree.module
    if isinstance(v, cst.Call) and not v.args:
        f = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == call_name(v)), None)
        rets = [n for n in walk(f) if isinstance(n, cst.Return)] if f is not None else []
        v = rets[0].value if len(rets) == 1 else None
    elif isinstance(v, cst.Name):
        assigns = t.tree.assignments(module, v.value)
        v = assigns[0].value if len(assigns) == 1 else None
    return v if isinstance(v, (cst.List, cst.ListComp)) else None


def _factory_defaults(t: Target) -> dict[str, str]:
    """Parameter -> default text of the module function the decorator calls with no arguments for its configs
    (``configs=element_wise_kernel_configs()`` over ``def element_wise_kernel_configs(block_name="BLOCK_SIZE")``):
    the values its list reads for them; empty for any other form."""
    dec = _autotune(t)
    v = next((a.value for a in dec.args if a.keyword is not None and a.keyword.value == "configs"),
             dec.args[0].value if dec.args and dec.args[0].keyword is None else None) if dec is not None else None
    if not (isinstance(v, cst.Call) and not v.args):
        return {}
    f = next((s for s in t.tree.module.body if isinstance(s, cst.FunctionDef) and s.name.value == call_name(v)), None)
    if f is None:
        return {}
    return {p.name.value: cst.Module([]).code_for_node(p.default) for p in f.params.params if p.default is not None}


def _literal_values(node: cst.BaseExpression) -> list[Any] | None:
    """The values a comprehension iterates: a list/tuple literal of constants, or ``range`` of literal ints."""
    text = cst.Module([]).code_for_node(node)
    try:
        if isinstance(node, cst.Call) and call_name(node) == "range":
            return list(range(*[ast.literal_eval(cst.Module([]).code_for_node(a.value)) for a in node.args]))
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError):
        return None
    return list(v) if isinstance(v, (list, tuple)) else None


def _expand(comp: cst.ListComp) -> list[dict[str, Any] | None] | None:
    """The configs a comprehension builds, evaluated over its literal loops (no code runs: each loop variable's
    values are substituted into the ``Config`` call's literal dict and options); None where a loop is not over
    literal values, has a condition, or unpacks a tuple."""
    loops: list[tuple[str, list[Any]]] = []
    f: cst.CompFor | None = comp.for_in
    while f is not None:
        vals = _literal_values(f.iter)
        if not isinstance(f.target, cst.Name) or vals is None or f.ifs:
            return None
        loops.append((f.target.value, vals))
        f = f.inner_for_in
    import itertools

    out = []
    for combo in itertools.product(*[v for _n, v in loops]):
        env = {n: repr(x) for (n, _v), x in zip(loops, combo, strict=True)}
        # _Substitute replaces names by expressions only, so the visited element stays an expression
        elt = cast(cst.BaseExpression, comp.elt.visit(_Substitute(env)))
        out.append(_parse_config(cst.Element(elt)))
    return out


class _Substitute(cst.CSTTransformer):
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:  # noqa: N802
        return expr(self.env[updated.value]) if updated.value in self.env else updated


class Code(str):
    """A config value the source computes (``'NUM_SM': num_sms()``): kept as its source text, written back verbatim
    (its ``repr`` is the text), never read as a number."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _parse_config(e: cst.BaseElement) -> dict[str, Any] | None:
    """``triton.Config({...}, num_warps=.., num_stages=..)``: a dict of string keys whose values are literals, or any
    other expression kept as ``Code`` (a meta-parameter such as ``'NUM_SM': num_sms()``; a tile spelled that way is
    refused where tiles are read); num_warps / num_stages literal or absent (Triton's defaults, 4 and 3)."""
    c = e.value
    if not (
        isinstance(c, cst.Call) and call_name(c).endswith("Config") and c.args and isinstance(c.args[0].value, cst.Dict)
    ):
        return None
    code = cst.Module([]).code_for_node
    kw: dict[str, Any] = {}
    try:
        for el in c.args[0].value.elements:
            if not isinstance(el, cst.DictElement):
                return None
            key = ast.literal_eval(code(el.key))
            try:
                kw[key] = ast.literal_eval(code(el.value))
            except (ValueError, SyntaxError):
                kw[key] = Code(code(el.value))
        opts = {a.keyword.value: ast.literal_eval(code(a.value)) for a in c.args[1:] if a.keyword is not None}
    except (ValueError, SyntaxError):
        return None
    if not all(isinstance(k, str) for k in kw):
        return None
    return {"kwargs": kw, "num_warps": opts.get("num_warps", 4), "num_stages": opts.get("num_stages", 3),
            **{k: v for k, v in opts.items() if k not in ("num_warps", "num_stages")}}


def parsed_configs(t: Target) -> list[dict[str, Any]] | None:
    """The autotuned kernel's configs as ``{"kwargs", "num_warps", "num_stages"}`` dicts, wherever the source spells
    them out (``config_list``); None when they are built at run time or one is not a literal ``Config``."""
    lst = config_list(t)
    if lst is None:
        return None
    env = _factory_defaults(t)
    if env and isinstance(lst, cst.List):  # `{block_name: 64}` in a factory called with no arguments
        lst = cast(cst.List, lst.visit(_Substitute(env)))
    cfgs = _expand(lst) if isinstance(lst, cst.ListComp) else [_parse_config(e) for e in lst.elements]
    if cfgs is None or not cfgs:
        return None
    parsed = [c for c in cfgs if c is not None]
    return parsed if len(parsed) == len(cfgs) else None


def _elem_bytes(t: Target, ctx: RecipeContext) -> int:
    rec = next((r for r in ctx.launches if r.get("kernel") == t.kernel.name), {})
    ptrs = [v for v in (rec.get("signature") or {}).values() if isinstance(v, str) and v.startswith("*")]
    if not ptrs:
        return 2
    ty = ptrs[0][1:]
    return 1 if ty.startswith("fp8") else _BYTES.get(ty, 2)  # fp8e4nv / fp8e5 operands: one byte


def _key(c: dict[str, Any], names: dict[str, str]) -> tuple[Any, ...]:
    """What makes a config distinct: tiles, warps, stages, and every other meta-parameter (``NUM_SM`` 84 and 128
    are two configs)."""
    rest = tuple(sorted((k, repr(v)) for k, v in c["kwargs"].items() if k not in names.values()))
    return (*(c["kwargs"].get(names[r]) for r in ("BLOCK_M", "BLOCK_N", "BLOCK_K")), c["num_warps"], c["num_stages"],
            rest)


def _plan(
    t: Target, ctx: RecipeContext, params: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[int], list[str], dict[str, int]]:
    """(configs to add, indices to drop, reasons it does not apply, tiles every config keeps)."""
    from optimizer.rewrite.dot_tiles import HOPPER, pinned_tiles, roles
    from optimizer.rewrite.effect import decorator_knobs

    names = roles(t)
    if names is None:
        return [], [], ["the dot's M, N, K tiles are not three distinct constexpr aranges"], {}
    heur = [
        n for n, d in decorator_knobs(t.tree, t.kernel).items() if d == "@triton.heuristics" and n in names.values()
    ]
    if heur:
        return [], [], [f"a @triton.heuristics sets the tile(s) {heur}: edit the heuristic, not the config list"], {}
    lst = config_list(t)
    if lst is None:
        return [], [], ["the autotune configs are built at run time (no list literal in the decorator, a module "
                        "variable or the module function it calls)"], {}
    cfgs = _expand(lst) if isinstance(lst, cst.ListComp) else [_parse_config(e) for e in lst.elements]
    if cfgs is None:
        return [], [], ["the autotune configs' comprehension does not loop over literal values"], {}
    if not cfgs or any(c is None for c in cfgs):
        return [], [], ["an autotune config is not triton.Config({literal dict}, num_warps=.., num_stages=..)"], {}
    known = [c for c in cfgs if c is not None]
    missing = [r for r, n in names.items() if any(n not in c["kwargs"] for c in known)]
    if missing:
        return [], [], [f"the configs do not set the dot's tile(s) {[names[r] for r in missing]}"], {}
    computed = sorted({names[r] for r in names for c in known if not isinstance(c["kwargs"][names[r]], int)})
    if computed:
        return [], [], [f"a config computes the dot's tile(s) {computed} (not an int literal)"], {}
    elem = _elem_bytes(t, ctx)
    # a tile the author never varies (every config the same BLOCK_K, when it is also a scale group) stays as it is
    fixed = {r: known[0]["kwargs"][names[r]] for r in ("BLOCK_M", "BLOCK_N", "BLOCK_K")
             if len(known) >= 2 and len({c["kwargs"][names[r]] for c in known}) == 1}
    drop, seen = [], set()
    for i, c in enumerate(known):
        bm, bn, bk = (c["kwargs"][names[r]] for r in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        k = _key(c, names)
        if k in seen or (bm * bk + bk * bn) * elem * int(c["num_stages"]) > SM90_SHARED:
            drop.append(i)
        seen.add(k)
    def nearest(h: dict[str, int]) -> dict[str, Any]:
        """The list's config whose tile is closest to ``h`` (log2 distance summed over M, N, K; the first of equals)."""
        return min(known, key=lambda c: sum(abs(math.log2(c["kwargs"][names[r]] / h[r]))
                                            for r in ("BLOCK_M", "BLOCK_N", "BLOCK_K")))

    add = []
    if isinstance(lst, cst.ListComp):
        drop = []  # a comprehension is extended, never thinned (its elements are not separate nodes)
    # a kernel whose unmasked accesses span all three tiles (no masks: the sizes must be multiples of the tiles) gets
    # only the tile combinations the list already holds (the autotuner runs every config, so the kernel's callers
    # admit each of them), with Hopper warps / stages; a partly masked kernel (``% M``-wrapped rows) is not limited
    pinned = sorted(pinned_tiles(t, names))
    pinned = pinned if len(pinned) == 3 else []
    admitted = {tuple(c["kwargs"][names[r]] for r in pinned) for c in known}
    for h in params.get("configs") or HOPPER:
        h = {**h, **fixed}
        if pinned and tuple(h[r] for r in pinned) not in admitted:
            continue
        # the other meta-parameters (GROUP_SIZE_M, a persistent grid's NUM_SM) at the nearest config's values
        extra = {k: v for k, v in nearest(h)["kwargs"].items() if k not in names.values()}
        cfg = {"kwargs": {**{names[r]: h[r] for r in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}, **extra},
               "num_warps": h["num_warps"], "num_stages": h["num_stages"]}
        if _key(cfg, names) not in seen and (h["BLOCK_M"] * h["BLOCK_K"] + h["BLOCK_K"] * h["BLOCK_N"]) * elem \
                * h["num_stages"] <= SM90_SHARED:
            add.append(cfg)
            seen.add(_key(cfg, names))
    if not add and not drop:
        return [], [], ["the config list already holds every Hopper config and none is dominated"], {}
    return add, drop, [], fixed


def config_list_reasons(t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
    return _plan(t, ctx, params)[2]


def config_list_points(t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
    add, drop, why, fixed = _plan(t, ctx, params)
    return [] if why else [{"mode": "configs", "add": add, "drop": drop, "fixed": fixed}]


def _config_text(c: dict[str, Any]) -> str:
    return f"triton.Config({c['kwargs']!r}, num_warps={c['num_warps']}, num_stages={c['num_stages']})"


def rewrite_config_list(t: Target, point: dict[str, Any]) -> str:
    lst = config_list(t)
    assert lst is not None
    drop = set(point["drop"])
    new_elems = [cst.Element(expr(_config_text(c))) for c in point["add"]]
    if isinstance(lst, cst.ListComp):  # [*(<the comprehension>), <added configs>]
        name = call_name(lst.elt) if isinstance(lst.elt, cst.Call) else "triton.Config"
        added = ", ".join(_config_text(c).replace("triton.Config", name, 1) for c in point["add"])
        t.tree.replace(lst, f"[*{cst.Module([]).code_for_node(lst)}, {added}]")
        return (f"{t.kernel.name}: autotune config comprehension extended with {len(point['add'])} Hopper config(s)"
                + (f" (kept {', '.join(f'{k}={v}' for k, v in point.get('fixed', {}).items())}: every config has it)"
                   if point.get("fixed") else "") + "; grid and launch unchanged")

    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.List)
        old = list(node.elements)
        sep = next(
            (e.comma for e in old if isinstance(e.comma, cst.Comma)),
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
        )
        tail = old[-1].comma  # a trailing comma, or none: the list's end keeps its layout
        elems = [e for i, e in enumerate(old) if i not in drop] + new_elems
        elems = [e.with_changes(comma=sep) for e in elems[:-1]] + [elems[-1].with_changes(comma=tail)]
        return node.with_changes(elements=elems)

    t.tree.edit(lst, edit)
    return (f"{t.kernel.name}: autotune config list edited in place: {len(point['add'])} Hopper config(s) added"
            + (f", {len(drop)} dominated config(s) dropped (duplicates, or a pipeline over sm_90's shared memory)"
               if drop else "") + "; grid and launch unchanged")
