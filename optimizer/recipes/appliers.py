"""Machine-applicable recipes: real source rewrites of a candidate file, each with its unified diff.

Kinds (``kb.models.Recipe.kind``) and their params:

- ``launch_params`` ``{"search": {name: [values]}}``: num_warps / num_stages / num_ctas / maxnreg at the launch,
  or a literal constexpr (e.g. ``BLOCK_SIZE``); one point per round, chosen next to the current one in the
  direction the bottleneck class suggests, never a point already tried.
- ``autotune`` ``{"configs": [{"kwargs": {...}, "num_warps": w, "num_stages": s}], "key": [...]}``: inserts
  ``@triton.autotune``, removes the tuned arguments from the launch and turns the grid into ``lambda META``.
- ``compiler_hints`` ``{"hints": [...], "targets": [...], "value": 16}``: ``tl.multiple_of`` / ``tl.max_contiguous``
  on block offsets, and on stride arguments that every recorded launch shows divisible.
- ``rows_per_program`` ``{"param": "ROWS_PER_PROGRAM", "values": [...], "form": "tile"|"loop"}``: a
  one-row-per-program kernel becomes a [ROWS, BLOCK] tile reduced along axis=1 (``optimizer.recipes.row_tile``)
  where the kernel is straight-line code, else a loop over several rows per program (``optimizer.rewrite.row_loop``:
  parameters the row body advances are restored per row); new constexpr, grid divided with ``triton.cdiv``.
- ``input_precision`` ``{"value": ...}`` on every tl.dot; ``care_padding_false`` (Ascend only) on masked loads.
- ``alignment_hints`` ``{}``: ``tl.multiple_of`` / ``tl.max_constancy`` on stride products and bound checks,
  guarded by an ``ALIGN`` constexpr computed at each launch (``optimizer.rewrite.alignment``).
- ``grouped_program_order`` ``{"GROUP_SIZE_M": [...]}``: the matmul tutorial's grouped tile order, remapped inside
  the kernel from the linear program index (``optimizer.rewrite.grouping``); grid and host unchanged.
- ``value_only_reduction`` ``{}``: an argmax whose index only masks the maximum becomes value masks plus a
  duplicate count (``optimizer.rewrite.value_only``).

Structural transforms of the rewrite engine (``optimizer.rewrite``: libcst tree, kernel facts, preconditions
-> rewrite; each module's docstring states its domain):

- ``block_per_program`` ``{"param", "values", "values_2d"}``: one program per element -> a masked BLOCK tile
  (or a row x column-block 2-D grid that removes per-element // and %), grid via ``triton.cdiv``.
- ``dot_precision`` ``{"tf32_min_tolerance"}``: fp32 ieee dots -> ``tf32x3``; ``tf32`` only under a loose tolerance.
- ``two_stage_reduction`` ``{"block"}``: same-address ``tl.atomic_add`` -> partials + a fixed-order second pass.
- ``privatized_histogram`` ``{"max_bins"}``: a counting ``tl.atomic_add(P + loaded_index, 1)`` (a bincount) ->
  ``tl.histogram`` of each program's block and one atomic per non-empty bin (``PRIV_BINS`` chosen at the launch,
  0 = the original atomics above ``max_bins`` bins).
- ``single_pass_fusion`` ``{}``: mean + deviation passes -> Welford; else max + sum-of-exp -> online.
- ``dot_tile_search`` ``{"configs", "fixed_variants"}``: Hopper tile configs (autotune + fixed variants).
- ``chunked_row_reduction`` / ``register_spill_relief``: a spilling whole-row block -> a CHUNK loop (needs
  ``register_spill`` evidence), else a launch search that never lowers num_warps.
- ``dot_tensor_descriptor`` ``{}``: a dot kernel's operand loads and output store -> ``tl.make_tensor_descriptor``
  (``USE_TMA`` chosen at the launch from 16-byte alignment; also the ``descriptor`` point of ``dot_tile_search``).
- ``host_setup_cache`` ``{}``: per-call host setup in the launcher (kernel warmup, device queries) memoized per
  launch signature (``optimizer.rewrite.host_setup``).
- ``inplace_output`` ``{}``: ``y = x.clone()`` rewritten in place -> ``torch.empty_like`` output the kernel writes
  while reading ``x``; a buffer copied back with ``x.copy_(buf)`` -> the kernel writes ``x`` in place.
- ``online_logsumexp`` ``{}``: a max pass and a sum-of-exp pass over the same chunks -> one online pass
  (``optimizer.rewrite.online_lse``).
- ``low_precision_operands`` ``{}``: 16-bit tiles upcast to fp32 before ``tl.dot`` -> native 16-bit operands, fp32
  accumulate.
- ``launch_loop_grid`` ``{}``: a kernel launched once per iteration of a host loop (or a nest of two) -> one launch
  with the loops as grid axes.
- ``kernel_chain_fusion`` ``{}``: consecutive launches over the same grid -> one kernel.
- ``block_scale`` ``{"values"}``: a block range too small for the GPU -> a larger one, grid and launch kept in step.
- ``producer_inline`` ``{}``: a flat element-wise kernel whose output only feeds the next kernel -> recomputed inside it.
- ``lane_accumulators`` ``{}``: a block reduction inside a column loop -> per-lane accumulators reduced once after it.
- ``row_resident`` ``{"values"}``: several loops over the same row chunks -> one register-resident row.

Kinds a pattern card may name that no engine applies (``UNSERVED_KINDS``, refused with the reason):
``persistent_grid`` (Ascend core-count grids) and ``split_k``.

``apply_recipe_variants`` returns several points of one recipe (3-8 where it has parameters) to time in one round.
Every applier raises ``NotApplicable`` with the reason when its preconditions do not hold in the source.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from kb.models import Recipe
from optimizer.recipes.base import (
    _PREF,
    NotApplicable,
    RecipeContext,
    RewriteResult,
    _alias,
    _finish,
    _grid_expr,
    _insert_keyword,
    _Knob,
    _knob,
    _parse,
    _remove_keyword,
    _target,
    next_point,
    unified_diff,
)
from optimizer.recipes.domains import check_domain, check_point
from optimizer.recipes.registry import Preparation, RecipeEntry
from optimizer.recipes.row_tile import plan_row_tile
from optimizer.rewrite import TRANSFORMS
from optimizer.rewrite.alignment import AlignmentHints
from optimizer.rewrite.dot_untie import untie_tiles
from optimizer.rewrite.effect import effect_reasons
from optimizer.rewrite.grouping import GroupedProgramOrder
from optimizer.rewrite.knobs import CarePaddingFalse, InputPrecision
from optimizer.rewrite.launch_forms import TRIGGER as LAUNCH_ARGS_TRIGGER
from optimizer.rewrite.launch_forms import inline_launch_args
from optimizer.rewrite.literal_blocks import promote_literal_blocks
from optimizer.rewrite.online_lse import OnlineLogsumexp
from optimizer.rewrite.row_loop import rows_as_loop
from optimizer.rewrite.row_regrid import regrid_row_broadcast
from optimizer.rewrite.single_pass import apply_single_pass_fusion
from optimizer.rewrite.spill_relief import apply_register_spill_relief
from optimizer.rewrite.value_only import ValueOnlyReduction
from optimizer.source import Kernel, LaunchSite, SourceText

__all__ = ["APPLIERS", "KNOB_KINDS", "REGISTRY", "UNSERVED_KINDS", "NotApplicable", "RecipeContext", "RewriteResult", "apply_recipe", "apply_recipe_variants", "can_apply",
           "unified_diff"]

_DOT_TILE_NAMES = frozenset({"BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"})


# ---------------------------------------------------------------------------------------------------- appliers
def apply_launch_params(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    search: dict[str, list[Any]] = dict(params.get("search") or {})
    if not search:
        raise NotApplicable("launch_params needs a non-empty 'search' mapping")
    p = _parse(ctx)
    k, sites = _target(p, ctx)
    knobs: dict[str, _Knob] = {}
    has_dot = "tl.dot" in ast.unparse(k.node)
    for n in sorted(search, key=lambda n: _alias(k, n) != n):  # exact names first, then aliases
        if not has_dot and n.upper() in _DOT_TILE_NAMES and _alias(k, n) != n:
            continue  # a dot-tile name never stands in for a dot-less kernel's block (domains.check_point)
        kb = _knob(p, k, sites, n)
        if kb is not None and all(other.name != kb.name for other in knobs.values()):
            knobs[n] = kb  # several searched names (BLOCK_M, BLOCK_N) may alias one block: it is searched once
    knobs = {n: knobs[n] for n in search if n in knobs}  # the recipe's own order
    if not knobs:
        raise NotApplicable(f"none of {sorted(search)} is a launch option or a literal constexpr of {k.name}")
    rec = next((r for r in ctx.launches if r.get("kernel") == k.name), {})
    for kb in knobs.values():
        if kb.heuristic:  # the heuristic's value for the recorded case
            kb.current = (rec.get("options") or {}).get(kb.name, {"num_warps": 4, "num_stages": 3}.get(kb.name))
    space = {kb.name: list(search[n]) for n, kb in knobs.items()}
    current = {kb.name: kb.current for kb in knobs.values()}
    point = next_point(space, current, ctx.tried, ctx.bottleneck)
    changes = []
    for kb in knobs.values():
        if point[kb.name] != kb.current:
            kb.set(p.st, point[kb.name])
            changes.append(f"{kb.name} {kb.current} -> {point[kb.name]}" + (" (in its @triton.heuristics, which sets it)"
                                                                              if kb.heuristic else ""))
    why = f" (direction preferred for {ctx.bottleneck})" if ctx.bottleneck in _PREF else ""
    return _finish("launch_params", ctx, p.st.apply(), f"{k.name}: " + ", ".join(changes) + why, point)


def _config_text(cfg: dict[str, Any]) -> str:
    kw = ", ".join(f"{k}={cfg[k]!r}" for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in cfg)
    return f"triton.Config({cfg.get('kwargs', {})!r}" + (f", {kw})" if kw else ")")


def apply_autotune(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    configs: list[dict[str, Any]] = list(params.get("configs") or [])
    if not configs:
        raise NotApplicable("autotune needs 'configs'")
    p = _parse(ctx)
    k, sites = _target(p, ctx, lambda k: not k.autotuned and not k.heuristics)
    dropped: set[str] = set()
    host_sized: set[str] = set()
    mapped: list[dict[str, Any]] = []
    tuned_args: dict[str, _Knob] = {}
    for cfg in configs:
        kwargs = {}
        for name, val in (cfg.get("kwargs") or {}).items():
            real = _alias(k, name)
            knob = _knob(p, k, sites, real) if real else None
            if knob is None or any(site.keyword(real) is None for site in sites):
                dropped.add(name)
                continue
            if any(_host_uses_elsewhere(site, real) for site in sites):
                host_sized.add(name)
                continue
            tuned_args[real] = knob
            kwargs[real] = val
        mapped.append({**{o: cfg[o] for o in ("num_warps", "num_stages", "num_ctas", "maxnreg") if o in cfg}, "kwargs": kwargs})
    unique = list({repr(sorted((k2, repr(v)) for k2, v in c.items())): c for c in mapped}.values())
    if len(unique) < 2:
        why = f"untunable: {sorted(dropped)}" + (f"; {sorted(host_sized)} also size host-side work (buffers, "
                                                 "loops) that the autotuner would desynchronize" if host_sized else "")
        raise NotApplicable(f"fewer than two distinct configs remain for {k.name} ({why})")
    ints = [n for n in k.params if n not in k.constexprs]
    key = [n for n in (params.get("key") or []) if n in ints]
    if not key:
        sig = next((r.get("signature", {}) for r in ctx.launches if r.get("kernel") == k.name), {})
        key = [n for n in ints if sig.get(n) in ("i32", "i64")] or [n for n in ints if n.lower().startswith(("n", "m", "k"))]
    st = p.st
    indent = st.indent_of(k.decorators[0].lineno)
    cfg_lines = "".join(f"{indent}        {_config_text(c)},\n" for c in unique)
    st.insert(st.line_start(k.decorators[0].lineno),
              f"{indent}@triton.autotune(\n{indent}    configs=[\n{cfg_lines}{indent}    ],\n{indent}    key={key!r},\n{indent})\n")
    uses_options = {o for c in unique for o in ("num_warps", "num_stages", "num_ctas", "maxnreg") if o in c}
    for site in sites:
        for name in [*tuned_args, *uses_options]:
            kw = site.keyword(name)
            if kw is not None:
                _remove_keyword(st, site.call, kw)
        _meta_grid(st, site, tuned_args)
    desc = f"{k.name}: @triton.autotune over {len(unique)} configs keyed on {key}"
    if dropped:
        desc += f"; kept {sorted(dropped)} out (shape-derived or not a parameter)"
    if host_sized:
        desc += f"; kept {sorted(host_sized)} out (the host also uses them, e.g. to size a partials buffer)"
    return _finish("autotune", ctx, st.apply(), desc, {"configs": unique, "key": key})


def _host_uses_elsewhere(site: LaunchSite, real: str) -> list[int]:
    """Lines where the host variable passed as ``real`` is read outside the grid and the launch itself.

    ``BLOCK_SIZE`` that also sizes ``torch.empty(triton.cdiv(n, BLOCK_SIZE))`` cannot be autotuned: the kernel
    would run with the tuned block while the host keeps the old one (the kl_div failure of the H200 campaign).
    """
    kw = site.keyword(real)
    if kw is None or not isinstance(kw.value, ast.Name) or site.function is None:
        return []
    name = kw.value.id
    grid, grid_assign = _grid_expr(site)
    skip = {id(n) for n in ast.walk(site.call)} | {id(n) for n in ast.walk(grid)}
    if grid_assign is not None:
        skip |= {id(n) for n in ast.walk(grid_assign)}
    return [n.lineno for n in ast.walk(site.function)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in skip]


def _meta_grid(st: SourceText, site: LaunchSite, tuned: dict[str, _Knob]) -> None:
    g, _assign = _grid_expr(site)
    if isinstance(g, ast.Lambda) or not tuned:
        return
    var_names = {}
    kws = {kw.arg: kw.value for kw in site.call.keywords}
    for real in tuned:
        v = kws.get(real)
        if isinstance(v, ast.Name):
            var_names[v.id] = real
    literal_vals = {kws[r].value: r for r in tuned if isinstance(kws.get(r), ast.Constant)}
    text = st.segment(g)
    hits = [n for n in ast.walk(g) if (isinstance(n, ast.Name) and n.id in var_names)
            or (isinstance(n, ast.Constant) and n.value in literal_vals)]
    if not hits:
        return
    base = g.col_offset
    pieces, pos = [], 0
    for n in sorted(hits, key=lambda n: n.col_offset):
        if n.lineno != g.lineno or n.end_lineno != g.lineno:
            raise NotApplicable("multi-line grid expression: cannot rewrite it into lambda META")
        a, b = n.col_offset - base, n.end_col_offset - base
        name = var_names.get(n.id) if isinstance(n, ast.Name) else literal_vals[n.value]
        pieces += [text[pos:a], f"META[{name!r}]"]
        pos = b
    pieces.append(text[pos:])
    st.replace(g, "lambda META: " + "".join(pieces))


def _arange_offsets(k: Kernel) -> list[tuple[ast.Assign, str]]:
    """Top-level ``v = [pid * B +] tl.arange(0, B)`` assignments, with the block expression B."""
    out = []
    for stmt in k.node.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        v = stmt.value
        ar = v if _is_arange(v) else None
        if ar is None and isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            for side, other in ((v.left, v.right), (v.right, v.left)):
                if _is_arange(side) and isinstance(other, ast.BinOp) and isinstance(other.op, ast.Mult):
                    if ast.unparse(side.args[1]) in {ast.unparse(other.left), ast.unparse(other.right)}:
                        ar = side
        if ar is not None and ast.unparse(ar.args[0]) == "0":
            out.append((stmt, ast.unparse(ar.args[1])))
    return out


def _is_arange(n: ast.AST) -> bool:
    return isinstance(n, ast.Call) and ast.unparse(n.func) in ("tl.arange", "triton.language.arange") and len(n.args) == 2


def apply_compiler_hints(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    hints = set(params.get("hints") or ["multiple_of", "max_contiguous"])
    targets = list(params.get("targets") or ["offsets", "strides"])
    value = int(params.get("value", 16))
    p = _parse(ctx)
    k, _sites = _target(p, ctx)
    src = ast.unparse(k.node)
    st, added = p.st, []
    constexpr_vals = next((r.get("constexprs", {}) for r in ctx.launches if r.get("kernel") == k.name), {})
    if "offsets" in targets or any(t not in ("offsets", "strides") for t in targets):
        for stmt, block in _arange_offsets(k):
            var = stmt.targets[0].id  # type: ignore[attr-defined]
            if targets != ["offsets"] and "offsets" not in targets and var not in targets:
                continue
            if f"multiple_of({var}" in src or f"max_contiguous({var}" in src:
                continue
            bval = constexpr_vals.get(block)
            v = min(value, bval) if isinstance(bval, int) and bval > 0 else value
            expr = var
            if "multiple_of" in hints:
                expr = f"tl.multiple_of({expr}, {v})"
            if "max_contiguous" in hints:
                expr = f"tl.max_contiguous({expr}, {v})"
            if expr != var:
                st.insert(st.line_start(stmt.end_lineno + 1), f"{st.indent_of(stmt.lineno)}{var} = {expr}\n")
                added.append(f"{var}: {expr}")
    if "strides" in targets and "multiple_of" in hints:
        recs = [r for r in ctx.launches if r.get("kernel") == k.name]
        body0 = k.node.body[0]
        if isinstance(body0, ast.Expr) and isinstance(body0.value, ast.Constant):  # docstring
            body0 = k.node.body[1] if len(k.node.body) > 1 else body0
        for name in k.params:
            if not name.lower().startswith("stride") or name in k.constexprs or f"multiple_of({name}" in src:
                continue
            if recs and all(name in r.get("divisible_by_16", []) for r in recs) and value <= 16:
                st.insert(st.line_start(body0.lineno), f"{st.indent_of(body0.lineno)}{name} = tl.multiple_of({name}, {value})\n")
                added.append(f"{name}: multiple_of {value} (every recorded launch had it divisible by 16)")
    if not added:
        raise NotApplicable(f"no un-hinted block offsets or always-divisible strides in {k.name}")
    return _finish("compiler_hints", ctx, st.apply(), f"{k.name}: " + "; ".join(added), {"hinted": added})


def _mentions_name(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _pid_stmt(k: Kernel) -> ast.Assign | None:
    for stmt in k.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            v = stmt.value
            if isinstance(v, ast.Call) and ast.unparse(v.func).endswith("program_id"):
                axis = v.args[0] if v.args else next((kw.value for kw in v.keywords if kw.arg == "axis"), None)
                if isinstance(axis, ast.Constant) and axis.value == 0:
                    return stmt
    return None


def apply_rows_per_program(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    param = str(params.get("param") or "ROWS_PER_PROGRAM")
    values = sorted(int(v) for v in (params.get("values") or [2, 4, 8, 16, 32]))
    p = _parse(ctx)
    has_param = [k for k in p.kernels.values() if param in k.constexprs and any(s.kernel == k.name for s in p.sites)]
    if has_param:  # already restructured: tune the count like any literal constexpr
        res = apply_launch_params({"search": {param: values}}, ctx)
        return RewriteResult("rows_per_program", res.source, res.diff, res.description, res.applied)
    k, sites = _target(p, ctx, lambda k: _pid_stmt(k) is not None)
    pid = _pid_stmt(k)
    assert pid is not None
    if any(isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.dot" for n in ast.walk(k.node)):
        raise NotApplicable(f"{k.name} is a tiled tl.dot kernel: its tiles are tuned by block sizes, not rows per program")
    if any(isinstance(n, ast.Return) for n in ast.walk(k.node)):
        raise NotApplicable(f"{k.name} returns early; a row loop cannot contain return")
    if any(isinstance(n, (ast.For, ast.While)) and pid.targets[0].id in ast.unparse(n) for n in ast.walk(k.node)):  # type: ignore[attr-defined]
        raise NotApplicable(f"{k.name} already loops over its program index")
    if len(sites) != 1:
        raise NotApplicable(f"{k.name} is launched from {len(sites)} places; rewrite needs exactly one")
    site = sites[0]
    grid, _assign = _grid_expr(site)
    body = grid.body if isinstance(grid, ast.Lambda) else grid
    if not isinstance(body, (ast.Tuple, ast.List)) or not body.elts:
        raise NotApplicable("grid is not a tuple expression")
    g0 = body.elts[0]
    g0_text = p.st.segment(g0)
    n_rows = next((name for name in k.params if (a := site.arg_for(k, name)) is not None and p.st.segment(a) == g0_text), None)
    if isinstance(grid, ast.Lambda) and not n_rows:
        meta = grid.args.args[0].arg if grid.args.args else "META"
        if _mentions_name(g0, meta):
            # the row count exists only inside the grid lambda (an autotuned block size decides it), so the host
            # cannot pass it to the kernel as a bound; grouping rows would also only re-tune that block size
            raise NotApplicable(f"{k.name}'s program count {g0_text} depends on the autotuned {meta}[...]; rows per "
                                f"program would duplicate the block-size search (tune {meta}'s block sizes instead)")
    wide = _row_block(ctx, k.name)
    if wide >= WIDE_ROW_BLOCK:
        raise NotApplicable(f"{k.name} already gives each program a {wide}-element block: rows per program is for short "
                            f"rows (blocks under {WIDE_ROW_BLOCK}); with wide rows the per-program work is not what limits")
    n_programs = next((r["grid"][0] for r in ctx.launches if r.get("kernel") == k.name and isinstance(r.get("grid"), list)), None)
    tried = {t.get(param) for t in ctx.tried}
    options = [v for v in values if v not in tried] or []
    if not options:
        raise NotApplicable(f"every {param} value was already tried on this base")
    fit = [v for v in options if n_programs and math.ceil(n_programs / v) >= 2 * ctx.num_sms]
    bound = n_rows or "n_rows_rpp"
    if params.get("form", "tile") == "tile":
        try:
            return _rows_as_tile(ctx, k, site, grid, pid, param, bound, n_rows, options, fit)
        except NotApplicable as exc:
            tile_reason = str(exc)
    else:
        tile_reason = "the recipe asks for the loop form"
    r = max(fit) if fit else min(options)
    return rows_as_loop(ctx, k.name, pid.targets[0].id, param, bound, n_rows, r, tile_reason)  # type: ignore[attr-defined]


#: elements of a row tile (ROWS x BLOCK) the first tiled point aims at; later rounds tune ROWS like any constexpr
_TILE_ELEMENTS = 2048
#: a recorded row block (largest BLOCK* constexpr of the kernel's launch) from which rows per program is refused:
#: each program already owns a wide row. On the H200 the recipe gained only with blocks up to 4096 elements
#: (1.18-8.5x) and was neutral or slower at 8192 and beyond (0.21x on a 16384-wide spilling layernorm).
WIDE_ROW_BLOCK = 8192


def _row_block(ctx: RecipeContext, kernel: str) -> int:
    consts = next((r.get("constexprs") or {} for r in ctx.launches if r.get("kernel") == kernel), {})
    return max((int(v) for n, v in consts.items() if n.upper().startswith("BLOCK") and isinstance(v, int)), default=0)


def _rows_as_tile(ctx: RecipeContext, k: Kernel, site: LaunchSite, grid: ast.expr, pid: ast.Assign,
                  param: str, bound: str, n_rows: str | None, options: list[int], fit: list[int]) -> RewriteResult:
    """The vectorized form (``optimizer.recipes.row_tile``): rows become the first axis of a 2-D tile."""
    st = SourceText(ctx.source)
    edit = plan_row_tile(st, k, pid, param, bound)
    block = _row_block(ctx, k.name)
    sized = [v for v in (fit or options) if not block or v * block <= _TILE_ELEMENTS] or [min(options)]
    r = max(sized)
    body = grid.body if isinstance(grid, ast.Lambda) else grid
    g0 = body.elts[0]  # type: ignore[attr-defined]
    g0_text = st.segment(g0)
    args = k.node.args.args
    st.insert(st.span(args[-1])[1], ("" if n_rows else ", n_rows_rpp") + f", {param}: tl.constexpr")
    if isinstance(grid, ast.Lambda):
        meta = grid.args.args[0].arg if grid.args.args else "META"
        st.replace(g0, f"triton.cdiv({g0_text}, {meta}[{param!r}])")
        _insert_keyword(st, site.call, ("" if n_rows else f"n_rows_rpp={g0_text}, ") + f"{param}={r}")
    else:
        st.replace(g0, f"triton.cdiv({g0_text}, {param})")
        _insert_keyword(st, site.call, ("" if n_rows else f"n_rows_rpp={g0_text}, ") + f"{param}={param}")
        _define_before(st, site, grid, param, r)
    desc = f"{edit.description}; {param}={r}, grid {g0_text} -> cdiv({g0_text}, {r})"
    return _finish("rows_per_program", ctx, st.apply(), desc, {param: r, "form": "tile"})


def _define_before(st: SourceText, site: LaunchSite, grid: ast.expr, param: str, value: int) -> None:
    """Define ``param = value`` in the launching function before the grid is built (grid and launch use it)."""
    anchor = grid
    for stmt in (site.function.body if site.function else []):
        if stmt.lineno <= anchor.lineno <= stmt.end_lineno:
            st.insert(st.line_start(stmt.lineno), f"{st.indent_of(stmt.lineno)}{param} = {value}\n")
            return
    raise NotApplicable("could not find the statement that builds the grid")


#: launch / compiler knobs, applied by the ast/text recipes of this package
_KNOBS = {"launch_params": apply_launch_params, "autotune": apply_autotune, "compiler_hints": apply_compiler_hints}
#: a launch packed into *args / **kwargs is spelled out before any transform reads its arguments
_SPELL_ARGS = Preparation(LAUNCH_ARGS_TRIGGER, inline_launch_args, "spelling out the launch's *args / **kwargs failed: ")
#: preparations beyond that one, per transform kind (the first runs innermost)
_PREPARE: dict[str, tuple[Preparation, ...]] = {
    # one constexpr shared by the M, N and K tiles -> BLOCK_M/N/K first
    "dot_tile_search": (Preparation("not three distinct constexpr aranges", untie_tiles,
                                    "untying a shared tile constexpr failed: "),),
    # a flat row-broadcast kernel after a row kernel -> one program per row first, so the two launch the same grid
    "kernel_chain_fusion": (Preparation("launch different grids", regrid_row_broadcast),),
    # a hard-coded block (`pid * 128 + tl.arange(0, 128)`, a 4-row loop tile) -> a named constexpr first
    "block_scale": (Preparation("does not apply", promote_literal_blocks, "naming a literal block size failed: "),),
}

#: every recipe kind with an offline applier: what applies it and with which preparations (read-only, built once)
REGISTRY: Mapping[str, RecipeEntry] = MappingProxyType({e.kind: e for e in (
    *(RecipeEntry(kind, applier=fn, structural=False) for kind, fn in _KNOBS.items()),
    *(RecipeEntry(tr.kind, transform=tr, structural=False) for tr in (InputPrecision(), CarePaddingFalse())),
    RecipeEntry("rows_per_program", applier=apply_rows_per_program),
    RecipeEntry("value_only_reduction", transform=ValueOnlyReduction()),
    RecipeEntry("online_logsumexp", transform=OnlineLogsumexp()),
    RecipeEntry("alignment_hints", transform=AlignmentHints(), structural=False),
    RecipeEntry("grouped_program_order", transform=GroupedProgramOrder()),
    *(RecipeEntry(kind, transform=tr, prepare=(*_PREPARE.get(kind, ()), _SPELL_ARGS)) for kind, tr in TRANSFORMS.items()),
    # composites: Welford, else the online max/sum; the chunk loop, else a launch search that never lowers warps
    RecipeEntry("single_pass_fusion", applier=apply_single_pass_fusion),
    RecipeEntry("register_spill_relief", applier=apply_register_spill_relief),
)})
#: the built applier of each kind (derived from ``REGISTRY``; read-only)
APPLIERS: Mapping[str, Callable[[dict[str, Any], RecipeContext], RewriteResult]] = MappingProxyType(
    {k: e.build() for k, e in REGISTRY.items()})
#: recipe kinds a pattern card may name that no engine applies yet: ``apply_recipe`` refuses them with the reason
UNSERVED_KINDS = frozenset({"persistent_grid", "split_k"})
#: recipe kinds that only change a launch or compiler option (a round's rewrite is "structural" otherwise)
KNOB_KINDS = frozenset(k for k, e in REGISTRY.items() if not e.structural)


def apply_recipe(recipe: Recipe | dict[str, Any], ctx: RecipeContext, *, compile_check: bool = True) -> RewriteResult:
    """Apply a recipe inside its domain (``optimizer.recipes.domains``); outside it, raise with the reason.

    A point that cannot change what runs is passed over (``optimizer.rewrite.effect``): always when a decorator
    overrides the launch value it sets, and with ``compile_check`` (and ``ctx.effect_target``) when it compiles to the
    base's PTX. ``can_apply`` (family selection, called for every matched card at every level) skips the compile."""
    r = recipe if isinstance(recipe, Recipe) else Recipe.model_validate(recipe)
    fn = APPLIERS.get(r.kind)
    if fn is None:
        raise NotApplicable(_no_applier(r.kind))
    check_domain(r.kind, r.params, r.requires, r.forbids, ctx)
    noop: list[str] = []
    tried = list(ctx.tried)
    for _ in range(_NOOP_RETRIES):  # a point that cannot change the kernel is passed over for the next one
        try:
            res = fn(r.params, replace(ctx, tried=tried) if noop else ctx)
        except NotApplicable:
            if not noop:
                raise
            break
        check_point(res, ctx, _current_warps(ctx), kind=r.kind, params=r.params)
        why = effect_reasons(ctx.source, res.source, ctx.launches, target=ctx.effect_target if compile_check else None)
        if not why:
            return res
        noop += why
        tried.append(res.applied)
    raise NotApplicable(f"{r.kind}: " + "; ".join(dict.fromkeys(noop)))


def _no_applier(kind: str) -> str:
    return f"no offline applier for recipe kind {kind!r} (available: {sorted(APPLIERS)})"


#: points of one recipe checked for an effect before the recipe is refused as a no-op
_NOOP_RETRIES = 3


def _current_warps(ctx: RecipeContext) -> int | None:
    for rec in ctx.launches:
        if ctx.hot_kernel is None or rec.get("kernel") == ctx.hot_kernel:
            w = (rec.get("options") or {}).get("num_warps")
            return int(w) if isinstance(w, int) else 4
    return None


def apply_recipe_variants(recipe: Recipe | dict[str, Any], ctx: RecipeContext, limit: int = 8) -> list[RewriteResult]:
    """Up to ``limit`` distinct rewrites of one recipe on one base, best first, to time together in one round.

    A structural transform enumerates its own evidence-bounded points (e.g. block sizes next to the recorded row
    length); any other applier is asked again with the points it already produced marked as tried. Raises
    ``NotApplicable`` (the applier's reason) when not even one rewrite exists.
    """
    r = recipe if isinstance(recipe, Recipe) else Recipe.model_validate(recipe)
    fn = APPLIERS.get(r.kind)
    if fn is None:
        raise NotApplicable(_no_applier(r.kind))
    check_domain(r.kind, r.params, r.requires, r.forbids, ctx)
    out = _variants(fn, r, ctx, limit)
    kept, refused = [], []
    for res in out:  # every point inside the domain, as apply_recipe checks its one point, and able to change the kernel
        try:
            check_point(res, ctx, _current_warps(ctx), kind=r.kind, params=r.params)
        except NotApplicable as exc:
            refused.append(str(exc))
            continue
        why = effect_reasons(ctx.source, res.source, ctx.launches, target=ctx.effect_target)
        if why:
            refused.append(f"{r.kind}: " + "; ".join(why))
        else:
            kept.append(res)
    if not kept:
        raise NotApplicable(refused[0] if refused else f"{r.kind}: every point was already tried on this base")
    return kept


def _variants(fn: Callable[[dict[str, Any], RecipeContext], RewriteResult], r: Recipe, ctx: RecipeContext,
              limit: int) -> list[RewriteResult]:
    if hasattr(fn, "variants"):
        out = fn.variants(r.params, ctx, limit)
    else:
        out, tried = [], list(ctx.tried)
        while len(out) < limit:
            try:
                res = fn(r.params, replace(ctx, tried=tried))
            except NotApplicable:
                if not out:
                    raise
                break
            if res.applied in tried:
                break
            out.append(res)
            tried.append(res.applied)
    return out


def can_apply(recipe: Recipe | dict[str, Any], ctx: RecipeContext) -> tuple[bool, str]:
    try:
        res = apply_recipe(recipe, ctx, compile_check=False)
    except NotApplicable as exc:
        return False, str(exc)
    return True, res.description
