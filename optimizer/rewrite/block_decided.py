"""``block_scale`` where a decorator decides the block: the autotune config list or the heuristic is edited.

A kernel under ``@triton.autotune`` gets its block from the config the autotuner picks, and one under
``@triton.heuristics`` from the heuristic: a block passed at the launch is overwritten at run time
(``optimizer.rewrite.effect`` refuses such a rewrite as a no-op). Their grids read the block from ``META``
(``lambda META: (cdiv(n, META["BLOCK"]),)``), so the grid already follows whatever block is decided, and
``block_scale`` changes the block where it is decided:

- **autotune**: configs with larger blocks are *added* to the kernel's decorator (``configs=[*<its list>,
  triton.Config({...}), ...]``, or appended in place when the decorator spells a list literal), each carrying the
  other meta-parameters, warps rule and stages of the list's largest-block config; the autotune ``key`` stays, so
  the autotuner times the new sizes beside the author's and keeps the best per key. A list shared with other
  kernels (a module variable, a config factory) is left as it is: only this kernel's decorator changes. Before::

      @triton.autotune(configs=element_wise_kernel_configs(), key=["size"])

  After::

      @triton.autotune(configs=[*element_wise_kernel_configs(), triton.Config({'BLOCK_SIZE': 2048},
                       num_warps=8, num_stages=3), triton.Config({'BLOCK_SIZE': 4096}, num_warps=8, num_stages=3)],
                       key=["size"])

- **heuristics**: the inline ``@triton.heuristics({"BLOCK": <h>})`` entry becomes ``lambda args: max(<h>, V)``
  (a lambda's body inlined, a function name called): rows the heuristic already sizes above ``V`` keep theirs.

Domain: the block's config values are spelled out (``autotune_configs.parsed_configs``: a list literal, a module
variable, a comprehension over literals, a config factory called without arguments, its defaults read), every
config sets the block as an int; the heuristic entry is a one-argument lambda or a function name. Refused
otherwise, with the reason; the rest of ``block_scale``'s domain (a grid dividing by ``META[block]``, masked
accesses, the recorded grid's floor) applies unchanged.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.rewrite.autotune_configs import parsed_configs
from optimizer.rewrite.effect import decorator_knobs
from optimizer.rewrite.engine import Target
from optimizer.rewrite.heuristic_rows import heuristic_entries, renamed_body
from optimizer.rewrite.tree import dotted, expr

__all__ = ["added_configs", "config_block_values", "decided_by", "edit_configs", "edit_heuristic",
           "heuristic_reason"]


def decided_by(t: Target, name: str) -> str | None:
    """``"autotune"`` / ``"heuristics"`` when that decorator of the kernel sets ``name``, else None."""
    d = decorator_knobs(t.tree, t.kernel).get(name)
    if d is None and t.kernel.autotuned and any(name in c["kwargs"] for c in parsed_configs(t) or []):
        return "autotune"  # a factory's key read from its parameter's default (`{block_name: 64}`)
    return None if d is None else ("heuristics" if d.endswith("heuristics") else "autotune")


def config_block_values(t: Target, name: str) -> tuple[list[dict[str, Any]], str]:
    """(the autotune configs, why they cannot be read) for the block ``name``."""
    cfgs = parsed_configs(t)
    if cfgs is None:
        return [], ("the autotune configs are not spelled out in the source (a list, module variable, comprehension "
                    "over literals or config factory called without arguments)")
    if not all(isinstance(c["kwargs"].get(name), int) for c in cfgs):
        return [], f"an autotune config does not set {name} as an int literal"
    return cfgs, ""


def added_configs(cfgs: list[dict[str, Any]], name: str, values: list[int], other_tile: int) -> list[dict[str, Any]]:
    """A config per value in ``values`` the list lacks, modelled on its largest-block config; ``num_warps`` 4 up to
    1024 elements of the program's tile, 8 above (``block_scale``'s rule)."""
    model = max(cfgs, key=lambda c: int(c["kwargs"][name]))
    have = {int(c["kwargs"][name]) for c in cfgs}
    return [{**model, "kwargs": {**model["kwargs"], name: v}, "num_warps": 4 if v * other_tile <= 1024 else 8}
            for v in values if v not in have]


def _config_text(c: dict[str, Any]) -> str:
    opts = ", ".join(f"{k}={c[k]!r}" for k in c if k != "kwargs")
    return f"triton.Config({c['kwargs']!r}, {opts})"


def _autotune_call(t: Target) -> cst.Call:
    call = next(d.decorator for d in t.kernel.node.decorators
                if isinstance(d.decorator, cst.Call) and dotted(d.decorator).endswith("autotune"))
    return call


def edit_configs(t: Target, new: list[dict[str, Any]]) -> str:
    """Add ``new`` to the kernel's own ``configs=``; returns how the list was edited."""
    call = _autotune_call(t)
    arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "configs"),
               call.args[0] if call.args and call.args[0].keyword is None else None)
    assert arg is not None  # parsed_configs read the configs through this argument
    texts = [_config_text(c) for c in new]
    if isinstance(arg.value, cst.List):
        old = list(arg.value.elements)
        comma = next((e.comma for e in old if isinstance(e.comma, cst.Comma)),  # the list's own layout
                     cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        added = [cst.Element(expr(x)) for x in texts]
        elems = [e.with_changes(comma=comma) for e in old] + added
        elems[-1] = elems[-1].with_changes(comma=old[-1].comma if old else cst.MaybeSentinel.DEFAULT)
        t.tree.replace(arg.value, arg.value.with_changes(elements=elems))
        return "appended to its config list"
    t.tree.replace(arg.value, f"[*{t.tree.code(arg.value)}, {', '.join(texts)}]")
    return f"added beside {t.tree.code(arg.value)} (shared lists unchanged)"


def heuristic_reason(t: Target, name: str) -> str:
    el = heuristic_entries(t).get(name)
    if el is None:
        return f"{name} is set by a @triton.heuristics that is not an inline dict literal"
    v = el.value
    if isinstance(v, cst.Name) or (isinstance(v, cst.Lambda) and len(v.params.params) == 1):
        return ""
    return f"the heuristic of {name} is neither a one-argument lambda nor a function name"


def edit_heuristic(t: Target, name: str, value: int) -> str:
    el = heuristic_entries(t)[name]
    v = el.value
    old = renamed_body(v, "args") if isinstance(v, cst.Lambda) else f"{t.tree.code(v)}(args)"
    t.tree.replace(v, f"lambda args: max({old}, {value})")
    return f"its @triton.heuristics entry now gives max(<heuristic>, {value})"
