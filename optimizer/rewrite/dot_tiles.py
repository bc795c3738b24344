"""``dot_tile_search``: a tl.dot kernel with one hand-picked tile -> Hopper tile configs
(card ``matmul-tile-config-search``).

Domain: a kernel that calls ``tl.dot`` (never a tile search without one), not yet autotuned, launched from one
place with a tuple grid; the tile constexprs are found from the dot's operands (the arange sizes of ``a`` give M
and K, of ``b`` K and N) and must be passed as literals (or names bound to one literal) at the launch, or come
from dict literals spread with ``**config`` (``optimizer.rewrite.dot_tiles_dict``: fixed points edit the dicts).
A tile that sizes an unmasked load, store or atomic (``tl.arange(0, BLOCK_M)`` in its address) must keep dividing
the problem, so every config keeps its current value and the search varies the other tiles; a kernel whose
unmasked accesses span all three tiles is refused. Every grid
element that divides by a tile is rewritten with the tile of the program axis it feeds (``pid_m * BLOCK_M`` ties
axis 0 to BLOCK_M), so two tiles with the same starting value never get confused.

Points, timed together in one round: ``@triton.autotune`` over the whole config list (grid ``lambda META``,
launch keywords removed), then the first configs as fixed launch settings, then a persistent variant of the first
config (``for tile_id in range(pid, num_tiles, num_programs)`` over row-major output tiles, grid
``min(num_sms, tiles)``) where the grid is 2-D ``triton.cdiv`` over kernel arguments and the body neither returns
nor rebinds parameters, then a tensor-descriptor variant of the first config (``optimizer.rewrite.descriptors``:
the dot operands' loads and the output store through ``tl.make_tensor_descriptor``, ``USE_TMA`` chosen at the
launch from 16-byte alignment) where that module's domain holds; where it does not, the autotune point's
description records why. ``modes`` (e.g. ``[persistent, descriptor]``, the ``persistent-tile-loop`` card) keeps only
those points, so a session that spent the tile search can still try the persistent form. Evidence bounds the
list: with a ``register_spill`` signature (L3) no config has fewer warps or a larger M x N tile than the current one.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from optimizer.rewrite.common import grid_node, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.dot_tiles_dict import dict_form, dict_reasons, dict_tile, rewrite_dicts
from optimizer.rewrite.engine import Target
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import Tree, arg_value, body_of, call_name, dotted, expand_defs, expr, walk

__all__ = ["DotTileSearch", "literal_int_arg", "meta_grid", "pinned_tiles"]

HOPPER = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4},
]
_ROLES = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def _operand_tiles(t: Target, e: cst.CSTNode) -> list[str]:
    """Constexpr tile names an operand's values are built from: ``tl.arange`` ends (``BLOCK_N``, ``BLOCK_N // 8``
    for packed int4 columns) and ``tl.zeros`` / ``broadcast_to`` / ``reshape`` shapes, following every assignment of
    the names it reads (``b = tl.load(...)``, ``b = (b >> shifts) & 0xF``, ``b = b.to(...)``) a few levels deep."""
    defs: dict[str, list[cst.BaseExpression]] = {}
    for n in walk(t.kernel.node):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            defs.setdefault(n.targets[0].target.value, []).append(n.value)
        elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
            defs.setdefault(n.target.value, []).append(n.value)
    consts = set(t.kernel.constexprs)
    out: list[str] = []

    def add(node: cst.CSTNode | None) -> None:
        names = (
            [m.value for m in walk(node) if isinstance(m, cst.Name) and m.value in consts] if node is not None else []
        )
        if len(names) == 1 and names[0] not in out:
            out.append(names[0])

    seen: set[str] = set()
    frontier = [e]
    for _ in range(8):
        nxt: list[cst.CSTNode] = []
        for f in frontier:
            # a keyword (``mask=``) is no read of the variable that happens to share its name
            keywords = {id(m.keyword) for m in walk(f) if isinstance(m, cst.Arg) and m.keyword is not None}
            for m in walk(f):
                if id(m) in keywords:
                    continue
                if isinstance(m, cst.Call) and call_name(m) == "tl.arange":
                    add(arg_value(m, "end", 1))
                elif isinstance(m, cst.Call) and call_name(m) in (
                    "tl.zeros",
                    "tl.full",
                    "tl.broadcast_to",
                    "tl.reshape",
                ):
                    shape = arg_value(m, "shape", 0 if call_name(m) in ("tl.zeros", "tl.full") else 1)
                    for el in getattr(shape, "elements", []):
                        add(el.value)
                elif isinstance(m, cst.Name) and m.value in defs and m.value not in seen:
                    seen.add(m.value)
                    nxt += defs[m.value]
        frontier = nxt
    return out


def roles(t: Target) -> dict[str, str] | None:
    """BLOCK_M / BLOCK_N / BLOCK_K -> the kernel's constexpr names, from the first dot's operands."""
    d = t.facts.dots[0].node
    a, b = (_operand_tiles(t, x.value) for x in d.args[:2])
    k = [n for n in a if n in b]
    m, n = [x for x in a if x not in k], [x for x in b if x not in k]
    if len(k) != 1 or len(m) != 1 or len(n) != 1:
        return None
    return {"BLOCK_M": m[0], "BLOCK_N": n[0], "BLOCK_K": k[0]}


def literal_int_arg(t: Target, e: cst.BaseExpression | None) -> cst.Integer | None:
    if isinstance(e, cst.Integer):
        return e
    fn = t.sites[0].function
    if isinstance(e, cst.Name) and fn is not None:  # (a module-level launch's names are not followed)
        assigns = t.tree.assignments(fn, e.value)
        if len(assigns) == 1 and isinstance(assigns[0].value, cst.Integer):
            return assigns[0].value
        unpacked = [v.value for n in walk(fn) if isinstance(n, cst.Assign) and len(n.targets) == 1
                    and isinstance(n.targets[0].target, cst.Tuple) and isinstance(n.value, cst.Tuple)
                    and len(n.targets[0].target.elements) == len(n.value.elements)
                    for tg, v in zip(n.targets[0].target.elements, n.value.elements, strict=True)
                    if isinstance(tg.value, cst.Name) and tg.value.value == e.value]
        if not assigns and len(unpacked) == 1 and isinstance(unpacked[0], cst.Integer):  # BM, BN = 128, 64
            return unpacked[0]
        if not assigns and not unpacked:
            return _param_default(t, e.value)
    return None


def _param_default(t: Target, name: str) -> cst.Integer | None:
    """The integer default of the launching function's parameter ``name`` (``def launch(a, b, block_m=32)``) when no
    call of that function in the module passes it: the value every launch uses."""
    f = t.sites[0].function
    if f is None:
        return None
    params = [*f.params.params, *f.params.kwonly_params]
    p = next((p for p in params if p.name.value == name), None)
    if p is None or not isinstance(p.default, cst.Integer):
        return None
    pos = [q.name.value for q in f.params.params].index(name) if p in f.params.params else None
    for n in walk(t.tree.module):
        if isinstance(n, cst.Call) and dotted(n.func).split(".")[-1] == f.name.value:
            if any(a.keyword is not None and a.keyword.value == name for a in n.args) or any(a.star for a in n.args):
                return None
            if pos is not None and len([a for a in n.args if a.keyword is None]) > pos - (1 if _is_method(f) else 0):
                return None
    return p.default


def _is_method(f: cst.FunctionDef) -> bool:
    return bool(f.params.params) and f.params.params[0].name.value == "self"


def _launch_literal(t: Target, name: str) -> cst.Integer:
    """``literal_int_arg`` of the tile the launch passes for ``name``; refused, as the preconditions do, when it is
    not a literal."""
    lit = literal_int_arg(t, t.sites[0].arg_for(t.kernel, name))
    if lit is None:
        raise NotApplicable(f"{name} is not a literal at the launch (derived from shapes)")
    return lit


def _tile_node(t: Target, name: str) -> cst.BaseExpression | None:
    """The node a fixed tile point replaces: the launch's literal, the single literal the launched name is bound to,
    or -- for a launcher parameter's default -- the launch argument itself (the launch then passes the literal)."""
    arg = t.sites[0].arg_for(t.kernel, name)
    lit = literal_int_arg(t, arg)
    if lit is None:
        return None
    f = t.sites[0].function
    if f is not None and any(lit is p.default for p in [*f.params.params, *f.params.kwonly_params]):
        return arg
    return lit


def _axes_map(t: Target, names: dict[str, str]) -> bool:
    return set(_axis_roles(t, names).values()) == {names["BLOCK_M"], names["BLOCK_N"]}


def _host_bound(t: Target, names: dict[str, str]) -> bool:
    """Every tile is passed as a host name bound to one literal in the launcher (``block_m = 16`` ... ``BLOCK_M=
    block_m``): a fixed point edits that binding, and every host use of it -- the grid computed from it,
    ``triton.cdiv(m, block_m) * triton.cdiv(n, block_n)`` on a 1-D program id -- follows without a grid edit."""
    site = t.sites[0]
    host: dict[str, str] = {}  # tile -> the host name passed for it
    for name in names.values():
        arg = site.arg_for(t.kernel, name)
        node = _tile_node(t, name)
        if not isinstance(arg, cst.Name) or node is None or node is arg:
            return False
        host[name] = arg.value
    if site.function is None:
        return False
    tiles = set(host.values())
    defs: dict[str, cst.BaseExpression] = {}
    for n in walk(site.function):
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
                and n.targets[0].target.value not in tiles):
            key = n.targets[0].target.value
            defs[key] = n.value if key not in defs else cst.Name("_ambiguous_")
    grid = t.tree.code(expand_defs(site.grid, defs))
    # the grid must be computed from the M and N tiles' host names, or it would keep the old tiling
    return all(re.search(rf"\b{re.escape(host[names[r]])}\b", grid) for r in ("BLOCK_M", "BLOCK_N"))


def meta_grid(t: Target) -> cst.BaseExpression | None:
    """The body of the launch's grid when it is a function of the meta-parameters -- ``lambda META: (...)`` inline or
    bound to a name once in the launching function, or ``def grid(META): return (...)`` there or in the module --
    else None. Such a grid follows the launch's tile values by itself."""
    site = t.sites[0]
    g = site.grid
    if isinstance(g, cst.Name):
        assigns = t.tree.assignments(site.function, g.value)
        if len(assigns) == 1:
            g = assigns[0].value
        else:
            scopes = [x for x in (site.function, t.tree.module) if x is not None]
            defs = [n for sc in scopes for n in walk(sc) if isinstance(n, cst.FunctionDef) and n.name.value == g.value]
            rets = [n for n in walk(defs[0]) if isinstance(n, cst.Return)] if len(defs) == 1 else []
            if len(defs) == 1 and len(defs[0].params.params) == 1 and len(rets) == 1 and rets[0].value is not None:
                return rets[0].value
    return g.body if isinstance(g, cst.Lambda) and len(g.params.params) == 1 else None


def _meta_grid_reasons(t: Target, names: dict[str, str]) -> list[str]:
    """A META grid that also reads a tile's host value would keep the old tile when the launch passes a new one."""
    g = meta_grid(t)
    if g is None:
        return []
    text = t.tree.code(g)
    out = []
    for name in names.values():
        arg = t.sites[0].arg_for(t.kernel, name)
        if isinstance(arg, cst.Name) and re.search(rf"\b{re.escape(arg.value)}\b", text):
            out.append(f"the META grid reads the host value {arg.value} of {name} (not META[{name!r}])")
    return out


def _axis_roles(t: Target, names: dict[str, str]) -> dict[int, str]:
    """Program axis -> the tile constexpr it multiplies (``pid_m * BLOCK_M``, or inline
    ``tl.program_id(0) * BLOCK_M``)."""
    out = {}
    forms = {axis: {var} for axis, var in t.facts.pid.items()}
    for axis in (0, 1, 2):
        forms.setdefault(axis, set()).add(f"tl.program_id({axis})")
    for axis, spelled in forms.items():
        for n in walk(t.kernel.node.body):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
                sides = {t.tree.code(n.left), t.tree.code(n.right)}
                hit = [c for c in names.values() if c in sides]
                if spelled & sides and hit:
                    out[axis] = hit[0]
    return out


class DotTileSearch:
    """Hopper tile configs for a tl.dot kernel: autotune over the list, plus fixed configs as variants."""

    kind = "dot_tile_search"
    card = "matmul-tile-config-search"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        if not t.facts.dots:
            return ["no tl.dot: a tile search only applies to dot kernels"]
        if t.kernel.autotuned:
            from optimizer.rewrite.autotune_configs import config_list_reasons

            return config_list_reasons(t, ctx, params)
        out = single_site_reasons(t)
        meta = meta_grid(t) is not None
        if meta:  # `lambda META: (...)` reads the tiles the launch passes: no grid edit is needed
            out = [r for r in out if not r.startswith("grid ")]
        names = roles(t)
        if names is None:
            return [*out, "the dot's M, N, K tiles are not three distinct constexpr aranges"]
        site = t.sites[0]
        in_dict = dict_form(t, names)
        if in_dict:  # the tiles come from dict literals through **config: edit those (dot_tiles_dict)
            out = [r for r in out if "*args / **kwargs" not in r] + dict_reasons(t, ctx, names, meta)
        for role, name in names.items():
            if not in_dict and literal_int_arg(t, site.arg_for(t.kernel, name)) is None:
                out.append(f"{name} ({role}) is not a literal at the launch (derived from shapes)")
        out += _meta_grid_reasons(t, names)
        pinned = _pinned(t, names)
        if set(pinned) == set(_ROLES):
            unmasked = sorted({p for ps in pinned.values() for p in ps})
            out.append(f"unmasked accesses ({', '.join(unmasked[:3])}) span every tile: the tiles must divide the "
                       "problem sizes, which a tile search does not keep")
        if not out and not self._configs(t, ctx, params, names):
            out.append(
                "register_spill evidence: no config keeps at least the current warps and at most the current tile"
            )
        if not out and not meta and not _axes_map(t, names) and not _host_bound(t, names):
            out.append(
                "the program axes do not map one-to-one onto the M and N tiles (a 1-D program id, "
                "pid_1d_matmul) and the tiles are not host variables the grid is computed from: map the grid first"
            )
        if not out and (modes := params.get("modes")) and not self.points(t, ctx, params):
            why = _persistent_reasons(t) if "persistent" in modes else []
            out.append(f"none of the {'/'.join(modes)} points applies" + (f" ({'; '.join(why)})" if why else ""))
        return out

    def _current(self, t: Target, names: dict[str, str], ctx: RecipeContext | None = None) -> dict[str, int]:
        if ctx is not None and dict_form(t, names):
            return dict_tile(t, ctx, names)
        site = t.sites[0]
        cur = {r: int(_launch_literal(t, n).value) for r, n in names.items()}
        for opt, default in (("num_warps", 4), ("num_stages", 3)):
            kw = site.keyword(opt)
            lit = literal_int_arg(t, kw.value) if kw is not None else None
            cur[opt] = int(lit.value) if lit is not None else default
        return cur

    def _configs(
        self, t: Target, ctx: RecipeContext, params: dict[str, Any], names: dict[str, str]
    ) -> list[dict[str, int]]:
        cur = self._current(t, names, ctx)
        keep = _pinned(t, names)  # a tile sizing an unmasked access keeps its value; the others are searched
        cfgs = [dict(c) | {r: cur[r] for r in keep} for c in (params.get("configs") or HOPPER)]
        cfgs = [c for i, c in enumerate(cfgs) if c not in cfgs[:i]]
        cfgs = [c for c in cfgs if any(c[r] != cur.get(r) for r in _ROLES if r not in keep)]
        if "ir:register_spill" in ctx.evidence:  # never fewer warps or a bigger accumulator on a spilling kernel
            area = cur["BLOCK_M"] * cur["BLOCK_N"]
            cfgs = [c for c in cfgs if c["num_warps"] >= cur["num_warps"] and c["BLOCK_M"] * c["BLOCK_N"] <= area]
        return cfgs

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        if t.kernel.autotuned:
            from optimizer.rewrite.autotune_configs import config_list_points

            return config_list_points(t, ctx, params)
        names = roles(t)
        assert names is not None  # preconditions: the dot's tiles are three distinct constexprs
        cfgs = self._configs(t, ctx, params, names)
        if dict_form(t, names):
            # fixed points only: host code reads the tile from the dict too, which an autotuner would bypass
            pts: list[dict[str, Any]] = [{"mode": "fixed", **c} for c in cfgs[: int(params.get("fixed_variants", 4))]]
            return [p for p in pts if p["mode"] in modes] if (modes := params.get("modes")) else pts
        # autotuning needs a grid over META: one exists, or the axes say which grid element each tile divides
        tunable = meta_grid(t) is not None or _axes_map(t, names)
        pts = [{"mode": "autotune", "configs": cfgs}] if len(cfgs) >= 2 and tunable else []
        pts += [{"mode": "fixed", **c} for c in cfgs[: int(params.get("fixed_variants", 4))]]
        if cfgs and params.get("persistent", True) and not _persistent_reasons(t):
            pts.append({"mode": "persistent", **cfgs[0], "programs": ctx.num_sms})
        if cfgs and params.get("descriptors", True) and not self._descriptor_reasons(t, ctx, cfgs[0]):
            pts.append({"mode": "descriptor", **cfgs[0]})
        if modes := params.get("modes"):  # a card that owns some of the points (persistent-tile-loop)
            pts = [p for p in pts if p["mode"] in modes]
        return pts

    def _descriptor_reasons(self, t: Target, ctx: RecipeContext, cfg: dict[str, Any]) -> list[str]:
        from optimizer.rewrite.descriptors import descriptor_reasons

        names = roles(t)
        return descriptor_reasons(t, ctx, {names[r]: cfg[r] for r in _ROLES} if names else None)

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        if point["mode"] == "configs":
            from optimizer.rewrite.autotune_configs import rewrite_config_list

            return rewrite_config_list(t, point)
        tree, site, k = t.tree, t.sites[0], t.kernel
        names = roles(t)
        assert names is not None
        meta = meta_grid(t) is not None
        cur = self._current(t, names, ctx)
        if dict_form(t, names):
            n = rewrite_dicts(t, ctx, names, point)
            return (
                f"{k.name}: tile {cur['BLOCK_M']}x{cur['BLOCK_N']}x{cur['BLOCK_K']} w{cur['num_warps']} "
                f"s{cur['num_stages']} -> {point['BLOCK_M']}x{point['BLOCK_N']}x{point['BLOCK_K']} "
                f"w{point['num_warps']} s{point['num_stages']} in the {n} config dict(s) the launch spreads "
                f"(**); the META grid and the host code reading the dict follow"
                + (f"; kept for unmasked accesses: {', '.join(sorted(_pinned(t, names)))}" if _pinned(t, names) else "")
            )
        ax = _axis_roles(t, names)
        by_name = {v: r for r, v in names.items()}
        host = {
            n: tree.code(a)
            for n in names.values()
            if (a := site.arg_for(k, n)) is not None and not isinstance(a, cst.Integer)
        }
        grid = grid_node(site, tree)
        elems = t.launches[0].grid_elements or []
        if point["mode"] == "autotune":
            cfgs = point["configs"]
            lines = "".join(f"        triton.Config({ {names[r]: c[r] for r in _ROLES}!r}, num_warps={c['num_warps']}, "
                            f"num_stages={c['num_stages']}),\n" for c in cfgs)
            key = [p for p in k.params if p not in k.constexprs and p in ("M", "N", "K")] or \
                  [p for p in k.params if p not in k.constexprs and p.lower() in ("m", "n", "k")]
            deco = cst.Decorator(decorator=expr(f"triton.autotune(\n    configs=[\n{lines}    ],\n    key={key!r},\n)"))
            tree.add_decorator(k.node, deco)
            drop = {*names.values(), "num_warps", "num_stages"}

            def dropped(c: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(c, cst.Call)  # the launch
                return c.with_changes(args=_without(c.args, drop))
            tree.edit(site.call, dropped)
            if not meta:  # a META grid already reads the tiles the autotuner passes
                new = [_grid_elem(tree, e, cur[by_name[ax[i]]], host.get(ax[i]), f"META[{ax[i]!r}]") if i in ax
                       else tree.code(e) for i, e in enumerate(_elements(t))]
                tree.replace(grid, "lambda META: (" + ", ".join(new) + ("," if len(new) == 1 else "") + ")")
            why = self._descriptor_reasons(t, ctx, cfgs[0]) if cfgs else []
            return (
                f"{k.name}: @triton.autotune over {len(cfgs)} Hopper tile configs keyed on {key} "
                f"(from {cur['BLOCK_M']}x{cur['BLOCK_N']}x{cur['BLOCK_K']} w{cur['num_warps']} s{cur['num_stages']}); "
                f"grid over META" + (f"; no tensor-descriptor variant: {'; '.join(why)}" if why else "")
            )
        for role, name in names.items():
            node = _tile_node(t, name)
            assert node is not None  # preconditions: each tile is a literal at the launch (dict form: returned above)
            tree.replace(node, str(point[role]))
        def new_grid() -> list[str]:  # the grid elements with the new tiles (when the launch passed literals)
            return (
                []
                if meta
                else [
                    _grid_elem(tree, e, cur[by_name[ax[i]]], host.get(ax[i]), str(point[by_name[ax[i]]]))
                    if i in ax
                    else tree.code(e)
                    for i, e in enumerate(_elements(t))
                ]
            )

        extra = ""
        if point["mode"] == "persistent":
            tree.replace(grid, f"(min({point['programs']}, " + " * ".join(f"({g})" for g in new_grid()) + "),)")
            _persist(t, names, ax)
        elif any(literal_int_arg(t, site.arg_for(k, n)) is site.arg_for(k, n) for n in names.values()) and elems:
            new = new_grid()
            tree.replace(grid, "(" + ", ".join(new) + ("," if len(new) == 1 else "") + ")")
        if point["mode"] == "descriptor":
            from optimizer.rewrite.descriptors import plan_descriptors, rewrite_descriptors, unit_strides

            plan = plan_descriptors(t, unit_strides(t, ctx))
            assert not isinstance(plan, list)
            extra = "; " + rewrite_descriptors(t, plan).split(": ", 1)[1]
        for opt in ("num_warps", "num_stages"):
            kw = site.keyword(opt)
            lit = literal_int_arg(t, kw.value) if kw is not None else None
            if lit is not None:
                tree.replace(lit, str(point[opt]))
            else:
                tree.add_keyword(site.call, opt, str(point[opt]))
        return (
            f"{k.name}: tile {cur['BLOCK_M']}x{cur['BLOCK_N']}x{cur['BLOCK_K']} "
            f"w{cur['num_warps']} s{cur['num_stages']} -> "
            f"{point['BLOCK_M']}x{point['BLOCK_N']}x{point['BLOCK_K']} w{point['num_warps']} s{point['num_stages']}"
            + (
                f", persistent: {point['programs']} programs loop over the output tiles"
                if point["mode"] == "persistent"
                else ""
            )
            + extra
        )


def _pinned(t: Target, names: dict[str, str]) -> dict[str, list[str]]:
    """Role -> the unmasked loads/stores whose block a tile sizes (``tl.arange(0, BLOCK_M)`` in the address): such
    a tile must keep dividing the problem, so the search leaves it as it is. A scalar access (a per-program index)
    sizes no tile."""
    by_name = {v: r for r, v in names.items()}
    out: dict[str, list[str]] = {}
    for a in t.facts.accesses:
        if (a.op in ("tl.load", "tl.store") or a.op.startswith("tl.atomic")) and not a.mask:
            ptr = a.node.args[0].value if a.node.args else None
            for name in _operand_tiles(t, ptr) if ptr is not None else []:
                if name in by_name:
                    out.setdefault(by_name[name], []).append(a.pointer)
    return out


#: public name of ``_pinned`` for the config-list edit of autotuned kernels (``autotune_configs``)
pinned_tiles = _pinned


def _elements(t: Target) -> list[cst.BaseExpression]:
    g = t.sites[0].grid
    if isinstance(g, cst.Name):
        assigns = t.tree.assignments(t.sites[0].function, g.value)
        g = assigns[0].value if len(assigns) == 1 else g
    return [e.value for e in g.elements] if isinstance(g, (cst.Tuple, cst.List)) else []


def _grid_elem(tree: Tree, e: cst.BaseExpression, value: int, host: str | None, new: str) -> str:
    """``e`` with the tile this axis divides by (the host name passed for it, else its literal) replaced by ``new``."""
    text = tree.code(e)
    for pattern in ([rf"\b{re.escape(host)}\b"] if host and host.isidentifier() else []) + [
        rf"(?<![\w.]){value}(?![\w.])"
    ]:
        if len(re.findall(pattern, text)) == 1:
            return re.sub(pattern, new, text)
    raise NotApplicable(f"grid element {text} does not show its tile ({host or value}) exactly once")


def _without(args: Any, drop: set[str]) -> list[cst.Arg]:
    kept = [a for a in args if a.keyword is None or a.keyword.value not in drop]
    if kept and kept[-1].comma is not cst.MaybeSentinel.DEFAULT:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept


def _pid_lines(t: Target) -> list[cst.SimpleStatementLine]:
    top = body_of(t.kernel.node)
    return [s for s in top if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)
            and call_name(s.body[0].value) == "tl.program_id"]


def _pid_target(line: cst.SimpleStatementLine) -> cst.BaseAssignTargetExpression:
    """What a ``_pid_lines`` line assigns."""
    a = line.body[0]
    assert isinstance(a, cst.Assign)  # _pid_lines takes assignment lines only
    return a.targets[0].target


def _extent(t: Target, e: cst.BaseExpression, tile: str) -> str | None:
    """Kernel-side ``tl.cdiv(n, TILE)`` for a host grid element ``triton.cdiv(<host n>, <tile>)``."""
    if not (isinstance(e, cst.Call) and call_name(e) in ("triton.cdiv", "cdiv") and len(e.args) == 2):
        return None
    host = t.tree.code(e.args[0].value)
    param = next((p for p in t.kernel.params if p not in t.kernel.constexprs
                  and (a := t.sites[0].arg_for(t.kernel, p)) is not None and t.tree.code(a) == host), None)
    return f"tl.cdiv({param}, {tile})" if param else None


def _persistent_reasons(t: Target) -> list[str]:
    names = roles(t)
    ax = _axis_roles(t, names) if names else {}
    top = body_of(t.kernel.node)
    lines = _pid_lines(t)
    out = []
    if t.facts.pid_calls != 2 or len(lines) != 2 or set(t.facts.pid) != {0, 1} or len(_elements(t)) != 2:
        out.append("persistent form needs exactly pid_m / pid_n from a 2-D grid")
    elif top.index(lines[1]) != top.index(lines[0]) + 1:
        out.append("the two program ids are not read by consecutive statements")
    elif any(_extent(t, e, ax.get(i, "?")) is None for i, e in enumerate(_elements(t))):
        out.append("a grid element is not triton.cdiv(<a kernel argument>, <tile>)")
    if t.facts.rebound_params:
        out.append(f"the body rebinds parameters {t.facts.rebound_params}")
    if t.facts.early_returns:
        out.append("the body returns early (a tile loop cannot contain return)")
    return out


def _persist(t: Target, names: dict[str, str], ax: dict[int, str]) -> None:
    """Wrap the body after the program ids in a loop over output tiles strided by the number of programs."""
    import textwrap

    from optimizer.rewrite.common import fresh

    tree = t.tree
    top = body_of(t.kernel.node)
    lines = _pid_lines(t)
    rest = top[top.index(lines[1]) + 1:]
    var = {ax_: tree.code(_pid_target(ln)) for ax_, ln in zip(sorted(t.facts.pid), lines, strict=True)}
    ext = [_extent(t, e, ax[i]) for i, e in enumerate(_elements(t))]
    n0, n1, tile = fresh(t, "num_tiles_0"), fresh(t, "num_tiles_1"), fresh(t, "tile_id")
    body = "".join(textwrap.indent(tree.module.code_for_node(s), "    ") for s in rest)
    tree.remove(lines[0])
    tree.remove(lines[1])
    tree.insert_before(lines[0], f"{n0} = {ext[0]}\n{n1} = {ext[1]}\n"
                       f"for {tile} in range(tl.program_id(0), {n0} * {n1}, tl.num_programs(0)):\n"
                       f"    {var[0]} = {tile} // {n1}\n    {var[1]} = {tile} % {n1}\n{body}")
    for s in rest:
        tree.remove(s)
