"""Preparation step: launches that pass their arguments through ``*args`` / ``**kwargs`` spelled out at the launch.

Real launchers build the argument list first and launch with ``kernel[grid](*args, **kwargs)``; the transforms read
(and edit) a launch's arguments by parameter, so such a launch is refused ("the launch passes *args / **kwargs").
``inline_launch_args`` rewrites it into the form they read when the packing is plain data:

- ``kw = dict(BLOCK=1024, num_warps=4)`` or ``kw = {"BLOCK": 1024}`` and ``args = (x, y, n)`` / ``[x, y, n]``,
- each assigned exactly once in the launching function, read by that launch only (never mutated, never passed on),

becoming ``kernel[grid](x, y, n, BLOCK=1024, num_warps=4)`` with the packing statement removed. Anything else (a
packing built in a loop, updated with ``kw[...] = ..``, shared by two launches, or a parameter of the launcher) is
left alone and the transform's refusal stands. ``optimizer.rewrite.registry`` runs it before every structural
transform that refused for that reason (``engine.prepared_first``): one rewrite, one diff against the candidate.
"""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import CstLaunch, Tree, call_name, walk

__all__ = ["TRIGGER", "inline_launch_args"]

#: the refusal text (``common.single_site_reasons``) this preparation answers
TRIGGER = "passes *args / **kwargs"
_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _packed(tree: Tree, site: CstLaunch, name: str, star: str) -> tuple[cst.Assign, list[cst.Arg]] | None:
    f = site.function
    if f is None:
        return None
    assigns = tree.assignments(f, name)
    uses = [n for n in walk(f) if isinstance(n, cst.Name) and n.value == name]
    if len(assigns) != 1 or len(uses) != 2:  # the assignment's target and this launch
        return None
    v = assigns[0].value
    if star == "**":
        # (value, key) of each `"key": value` entry whose key is an identifier; all of them: the dict is all such
        keyed = [(e.value, key) for e in v.elements
                 if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                 and isinstance(key := e.key.evaluated_value, str) and key.isidentifier()
                 ] if isinstance(v, cst.Dict) else []
        if isinstance(v, cst.Dict) and len(keyed) == len(v.elements):
            return assigns[0], [cst.Arg(value, keyword=cst.Name(key), equal=_EQ) for value, key in keyed]
        if isinstance(v, cst.Call) and call_name(v) == "dict" and all(a.keyword is not None for a in v.args):
            return assigns[0], [cst.Arg(a.value, keyword=a.keyword, equal=_EQ) for a in v.args]
        return None
    if isinstance(v, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) for e in v.elements):
        return assigns[0], [cst.Arg(e.value) for e in v.elements]
    return None


def inline_launch_args(source: str) -> tuple[str, str]:
    """(new source, description); raises ``NotApplicable`` when no launch's packing can be spelled out."""
    tree = Tree(source)
    done: list[str] = []
    for site in tree.launches:
        stars = [a for a in site.call.args if a.star]
        if not stars:
            continue
        plan: list[tuple[cst.Arg, cst.Assign, list[cst.Arg]]] = []
        for a in stars:
            got = _packed(tree, site, a.value.value, a.star) if isinstance(a.value, cst.Name) else None
            if got is None:
                plan = []
                break
            plan.append((a, *got))
        if not plan:
            continue
        by_arg = {id(a): args for a, _assign, args in plan}

        def spell(c: cst.CSTNode, by_arg: dict[int, list[cst.Arg]] = by_arg, orig: cst.Call = site.call) -> cst.CSTNode:
            assert isinstance(c, cst.Call)
            out: list[cst.Arg] = []
            for old, new in zip(orig.args, c.args, strict=True):
                out += by_arg.get(id(old), [new])
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            out = [x.with_changes(comma=comma) for x in out[:-1]] + (
                [out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)] if out else []
            )
            return c.with_changes(args=out)

        tree.edit(site.call, spell)
        assert site.function is not None  # _packed found each packing assignment in it
        for _a, assign, _args in plan:
            stmt = tree.statement_of(site.function, assign)
            if stmt is not None:
                tree.remove(stmt)
        done.append(f"{site.kernel}: {', '.join(a.star + tree.code(a.value) for a, _s, _g in plan)}")
    if not done:
        raise NotApplicable("no launch's *args / **kwargs is a packing assigned once and read only by it")
    return tree.render(), "launch arguments spelled out (" + "; ".join(done) + ")"
