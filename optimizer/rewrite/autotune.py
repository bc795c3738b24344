"""``autotune``: put ``@triton.autotune`` over the recipe's configs on the hot kernel (card ``autotune-config-space``).

``{"configs": [{"kwargs": {...}, "num_warps": w, "num_stages": s}], "key": [...]}``. Each config's kwargs are
mapped onto the kernel's constexprs (a searched block name stands in for the kernel's only ``BLOCK*``, as in
``launch_params``); the tuned arguments and the launch options the configs set are removed from every launch, and
a grid that reads a tuned value (the host variable passed for it, or the literal passed) becomes ``lambda META``
reading ``META[...]``. The key is the recipe's key names that are integer parameters, else the parameters the
recorded launch typed as integers, else those starting with n, m or k.

Domain: the hot kernel (else the most launched, else the first launched one) that is neither autotuned nor under
``@triton.heuristics``; a kwarg is tuned only where every launch passes it by keyword as a literal (directly or
through one literal assignment) and the launcher reads that host variable nowhere else. Refused: no configs; no
such kernel; fewer than two distinct configs once the untunable kwargs are dropped (a block that also sizes
host-side work, e.g. ``torch.empty(triton.cdiv(n, BLOCK_SIZE))``, is named: the autotuner would run the kernel with
the tuned block while the host keeps the old one, the kl_div failure of the H200 campaign); a tuned argument passed
first (nothing to remove it after); a grid that spells a tuned value off its first line.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.launch_knobs import NOT_LITERAL, Knob, alias, find_knob, grid_expr, literal_value
from optimizer.rewrite.tree import CstLaunch, Tree, skip_ids, walk

__all__ = ["Autotune"]

_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _config_text(cfg: dict[str, Any]) -> str:
    kw = ", ".join(f"{k}={cfg[k]!r}" for k in _OPTIONS if k in cfg)
    return f"triton.Config({cfg.get('kwargs', {})!r}" + (f", {kw})" if kw else ")")


def _host_uses_elsewhere(tree: Tree, site: CstLaunch, real: str) -> bool:
    """Whether the host variable passed as ``real`` is read outside the grid and the launch itself."""
    kw = site.keyword(real)
    if kw is None or not isinstance(kw.value, cst.Name) or site.function is None:
        return False
    name = kw.value.value
    grid, grid_assign = grid_expr(tree, site)
    skip = {id(n) for part in (site.call, grid, grid_assign) if part is not None for n in walk(part)}
    return any(isinstance(n, cst.Name) and n.value == name and id(n) not in skip and tree.is_load(n)
               for n in walk(site.function))


def _configs(params: dict[str, Any]) -> list[dict[str, Any]]:
    configs = list(params.get("configs") or [])
    if not configs:
        raise NotApplicable("autotune needs 'configs'")
    return configs


class _Plan:
    """The recipe's configs mapped onto one kernel: what is tuned, what was dropped and why."""

    def __init__(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> None:
        k, sites = t.kernel, t.sites
        self.dropped: set[str] = set()
        self.host_sized: set[str] = set()
        self.tuned: dict[str, Knob] = {}
        mapped: list[dict[str, Any]] = []
        for cfg in _configs(params):
            kwargs = {}
            for name, val in (cfg.get("kwargs") or {}).items():
                real = alias(k, name)
                knob = find_knob(t.tree, k, sites, real) if real else None
                if not real or knob is None or any(site.keyword(real) is None for site in sites):  # no real: no knob
                    self.dropped.add(name)
                    continue
                if any(_host_uses_elsewhere(t.tree, site, real) for site in sites):
                    self.host_sized.add(name)
                    continue
                self.tuned[real] = knob
                kwargs[real] = val
            mapped.append({**{o: cfg[o] for o in _OPTIONS if o in cfg}, "kwargs": kwargs})
        self.unique = list({repr(sorted((k2, repr(v)) for k2, v in c.items())): c for c in mapped}.values())
        ints = [n for n in k.params if n not in k.constexprs]
        self.key = [n for n in (params.get("key") or []) if n in ints]
        if not self.key:
            sig: dict[str, Any] = next((r.get("signature", {}) for r in ctx.launches if r.get("kernel") == k.name), {})
            self.key = ([n for n in ints if sig.get(n) in ("i32", "i64")]
                        or [n for n in ints if n.lower().startswith(("n", "m", "k"))])

    def refusal(self, kernel: str) -> str | None:
        if len(self.unique) >= 2:
            return None
        why = f"untunable: {sorted(self.dropped)}" + (
            f"; {sorted(self.host_sized)} also size host-side work (buffers, loops) that the autotuner would "
            "desynchronize" if self.host_sized else "")
        return f"fewer than two distinct configs remain for {kernel} ({why})"


def _remove_keywords(tree: Tree, call: cst.Call, names: set[str]) -> None:
    """Drop the keyword arguments ``names`` from ``call``; each takes its comma with it (a trailing one stays)."""
    present = [a for a in call.args if a.keyword is not None and a.keyword.value in names]
    if not present:
        return
    first = call.args[0].keyword
    if call.args[0] in present and first is not None:  # (in present: a keyword)
        raise NotApplicable(f"cannot remove the only argument {first.value}")

    def fn(c: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(c, cst.Call)
        args: list[cst.Arg] = []
        for a in c.args:
            if a.keyword is not None and a.keyword.value in names:
                args[-1] = args[-1].with_changes(comma=a.comma)
            else:
                args.append(a)
        return c.with_changes(args=args)
    tree.edit(call, fn)


def _meta_grid(tree: Tree, site: CstLaunch, tuned: dict[str, Knob]) -> None:
    """A grid that reads a tuned value -> ``lambda META`` reading ``META[name]`` in its place."""
    g, _assign = grid_expr(tree, site)
    if isinstance(g, cst.Lambda) or not tuned:
        return
    var_names: dict[str, str] = {}
    literal_vals: dict[Any, str] = {}
    for real in tuned:
        kw = site.keyword(real)
        v = kw.value if kw is not None else None
        if v is not None and literal_value(v) is not NOT_LITERAL:
            literal_vals[literal_value(v)] = real
        elif isinstance(v, cst.Name):
            var_names[v.value] = real
    skip = skip_ids(g)
    hits: list[tuple[cst.CSTNode, str]] = []
    for n in walk(g):
        if isinstance(n, cst.Name) and id(n) not in skip and n.value in var_names:
            hits.append((n, var_names[n.value]))
        elif (v := literal_value(n)) is not NOT_LITERAL and v in literal_vals:
            hits.append((n, literal_vals[v]))
    if not hits:
        return
    if not any(n is g for n in walk(tree.module)):  # kernel[a, b]: the grid is the subscript's elements, no node
        raise NotApplicable("grid written as kernel[a, b]: cannot rewrite it into lambda META")
    first = tree.lines(g)[0]
    if any(tree.lines(n) != (first, first) for n, _ in hits):
        raise NotApplicable("multi-line grid expression: cannot rewrite it into lambda META")
    for n, name in hits:
        tree.replace_in_parens(n, f"META[{name!r}]")
    lam = cst.ensure_type(cst.parse_expression("lambda META: 0"), cst.Lambda)
    tree.edit(g, lambda node: lam.with_changes(body=node))


class Autotune:
    """``@triton.autotune`` over the recipe's configs; the tuned arguments leave the launch, the grid reads META."""

    kind = "autotune"
    card = "autotune-config-space"

    def selects(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> bool:
        _configs(params)
        return not t.kernel.autotuned and not t.kernel.heuristics

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        t.plan = _Plan(t, ctx, params)
        why = t.plan.refusal(t.kernel.name)
        return [why] if why else []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"configs": t.plan.unique, "key": t.plan.key}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan: _Plan = t.plan
        k, tree = t.kernel, t.tree
        ind = " " * tree.column(k.node.decorators[0])  # the continuation lines follow a nested kernel's indentation
        cfg_lines = "".join(f"{ind}        {_config_text(c)},\n" for c in point["configs"])
        text = (f"@triton.autotune(\n{ind}    configs=[\n{cfg_lines}{ind}    ],\n{ind}    key={point['key']!r},\n"
                f"{ind})\n")
        deco = cst.ensure_type(cst.parse_statement(text + "def _f():\n    pass\n"), cst.FunctionDef).decorators[0]
        tree.add_decorator(k.node, deco)
        uses_options = {o for c in point["configs"] for o in _OPTIONS if o in c}
        for site in t.sites:
            _remove_keywords(tree, site.call, {*plan.tuned, *uses_options})
            _meta_grid(tree, site, plan.tuned)
        desc = f"{k.name}: @triton.autotune over {len(point['configs'])} configs keyed on {point['key']}"
        if plan.dropped:
            desc += (f"; kept {sorted(plan.dropped)} out (shape-derived, not a parameter, or a literal another block "
                     "shares in the grid)")
        if plan.host_sized:
            desc += f"; kept {sorted(plan.host_sized)} out (the host also uses them, e.g. to size a partials buffer)"
        return desc
