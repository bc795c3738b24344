"""Preparation step: a kernel launched through a variable is launched by its name, under an ``is`` guard.

Real launchers take the kernel as an argument (kernl's ``LayerNorm.forward(..., implementation)`` launches
``implementation[(M,)](...)``, its caller defaulting ``implementation=_layer_norm_fwd_fused_single_pass``), or bind it
to a module-level alias (``kernel = _fwd_impl``). The transforms read and edit launches of a named
``@triton.jit`` function, so such a file is refused ("no kernel of the candidate is launched").
``pin_indirect_launch`` rewrites each such launch into the form they read, without changing what runs::

    if implementation is _layer_norm_fwd_fused_single_pass:
        _layer_norm_fwd_fused_single_pass[(M,)](...)
    else:
        implementation[(M,)](...)

A module-level alias assigned once (``name = K``) is replaced by ``K`` at the launch (no guard: it is that kernel).

Domain: a launch ``name[grid](...)`` that is a statement of its own, where ``name`` is not a ``@triton.jit``
function and resolves to exactly one kernel ``K``: the module-level alias's value, else -- ``name`` being a
parameter of the launching function -- the one ``@triton.jit`` function that is the default value of a parameter
somewhere in the module and is launched nowhere by its name (the kernel that runs when the caller passes none; the
guard keeps every other choice on the original launch). Refused when no launch resolves (two default kernels, a
name bound in a loop, a launch inside an expression). ``optimizer.rewrite.registry`` runs it when a transform
refuses because no kernel is launched (``engine.prepared_first``): one rewrite, one diff against the candidate.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import Tree, walk

__all__ = ["TRIGGER", "pin_indirect_launch"]

#: the refusal text (``engine._select``) this preparation answers
TRIGGER = "no kernel of the candidate is launched"


def _module_alias(tree: Tree, name: str) -> str | None:
    """``K`` when the module assigns ``name = K`` exactly once at its top level (K a kernel), else None."""
    values = [
        s.value for line in tree.module.body if isinstance(line, cst.SimpleStatementLine) for s in line.body
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name)
        and s.targets[0].target.value == name
    ]
    rebinds = [n for n in walk(tree.module) if isinstance(n, (cst.AugAssign, cst.For, cst.Global))
               and name in {x.value for x in walk(n) if isinstance(x, cst.Name)}]
    if len(values) == 1 and not rebinds and isinstance(values[0], cst.Name) and values[0].value in tree.kernels:
        return values[0].value
    return None


def _default_kernels(tree: Tree) -> set[str]:
    """Kernels that are a parameter's default value somewhere in the module."""
    out: set[str] = set()
    for f in walk(tree.module):
        if isinstance(f, cst.FunctionDef):
            for p in [*f.params.params, *f.params.kwonly_params]:
                if isinstance(p.default, cst.Name) and p.default.value in tree.kernels:
                    out.add(p.default.value)
    return out


def _param_names(f: cst.FunctionDef | None) -> set[str]:
    if f is None:
        return set()
    return {p.name.value for p in [*f.params.params, *f.params.kwonly_params, *f.params.posonly_params]}


def _const(new: cst.CSTNode) -> Callable[[cst.CSTNode], cst.CSTNode]:
    return lambda _old: new


def pin_indirect_launch(source: str) -> tuple[str, str]:
    """(new source, description); raises ``NotApplicable`` when no indirect launch resolves to one kernel."""
    tree = Tree(source)
    direct = {s.kernel for s in tree.launches}
    defaults = _default_kernels(tree) - direct
    done: list[str] = []
    for node in walk(tree.module):
        if not isinstance(node, cst.SimpleStatementLine) or len(node.body) != 1:
            continue
        stmt = node.body[0]
        call = stmt.value if isinstance(stmt, cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript)
                and isinstance(call.func.value, cst.Name)):
            continue
        name = call.func.value.value
        if name in tree.kernels:
            continue
        alias = _module_alias(tree, name)
        if alias is not None:
            tree.edit(call.func.value, _const(cst.Name(alias)))
            done.append(f"{name} -> {alias}")
            continue
        func = None  # the innermost function holding the launch: the last match in walk order
        for f in walk(tree.module):
            if isinstance(f, cst.FunctionDef) and any(m is node for m in walk(f)):
                func = f
        if name not in _param_names(func) or len(defaults) != 1 or tree.assignments(func, name):
            continue
        kernel = next(iter(defaults))
        pinned = node.with_changes(body=[stmt.with_changes(value=call.with_changes(
            func=call.func.with_changes(value=cst.Name(kernel))))])
        guard = cst.If(
            test=cst.parse_expression(f"{name} is {kernel}"),
            body=cst.IndentedBlock(body=[pinned]),
            orelse=cst.Else(body=cst.IndentedBlock(body=[node.with_changes(leading_lines=())])),
            leading_lines=node.leading_lines,
        )
        tree.edit(node, _const(guard))
        done.append(f"{name} is {kernel} (its default)")
    if not done:
        raise NotApplicable("no launch through a variable resolves to one kernel (a module alias assigned once, or "
                            "the one kernel that is a parameter default and launched nowhere by name)")
    return tree.render(), "kernel launched through a variable pinned: " + ", ".join(done)
