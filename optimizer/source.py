"""AST views of a candidate file: Triton kernels, their launch sites, and exact text positions for edits.

The offline proposer rewrites candidate source text in place (keeping comments and layout), so every node
it touches needs character offsets; ``SourceText`` converts AST (line, byte column) positions to offsets and
applies non-overlapping edits.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["Kernel", "LaunchSite", "SourceText", "find_kernels", "find_launches", "parse_candidate"]


class SourceText:
    """A source string with AST-position -> offset conversion and batched edits."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))
        self._edits: list[tuple[int, int, str]] = []

    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self._starts[lineno - 1] + len(line.encode()[:col_bytes].decode(errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.text[a:b]

    def line_start(self, lineno: int) -> int:
        return self._starts[lineno - 1]

    def indent_of(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def replace(self, node: ast.AST, new: str) -> None:
        a, b = self.span(node)
        self._edits.append((a, b, new))

    def replace_range(self, start: int, end: int, new: str) -> None:
        self._edits.append((start, end, new))

    def insert(self, offset: int, new: str) -> None:
        self._edits.append((offset, offset, new))

    def apply(self) -> str:
        edits = sorted(self._edits, key=lambda e: (e[0], e[1]))
        for (_a1, b1, _), (a2, _b2, _) in zip(edits, edits[1:], strict=False):
            if a2 < b1:
                raise ValueError("overlapping source edits")
        out, pos = [], 0
        for a, b, new in edits:
            out.append(self.text[pos:a])
            out.append(new)
            pos = b
        out.append(self.text[pos:])
        return "".join(out)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


@dataclass
class Kernel:
    name: str
    node: ast.FunctionDef
    params: list[str]
    constexprs: list[str]
    autotuned: bool
    heuristics: bool
    decorators: list[ast.expr] = field(default_factory=list)

    def calls(self) -> list[ast.Call]:
        return [n for n in ast.walk(self.node) if isinstance(n, ast.Call)]


@dataclass
class LaunchSite:
    kernel: str
    call: ast.Call
    grid: ast.expr
    function: ast.FunctionDef | None  # the enclosing def (forward or a helper)

    def keyword(self, name: str) -> ast.keyword | None:
        return next((k for k in self.call.keywords if k.arg == name), None)

    def arg_for(self, kernel: Kernel, name: str) -> ast.expr | None:
        """The expression passed for kernel parameter ``name`` (positional or keyword)."""
        kw = self.keyword(name)
        if kw is not None:
            return kw.value
        if name in kernel.params:
            i = kernel.params.index(name)
            if i < len(self.call.args) and not any(isinstance(a, ast.Starred) for a in self.call.args[: i + 1]):
                return self.call.args[i]
        return None


def parse_candidate(text: str) -> ast.Module:
    return ast.parse(text)


def find_kernels(tree: ast.Module) -> dict[str, Kernel]:
    """Functions decorated with triton.jit (optionally under autotune / heuristics)."""
    out: dict[str, Kernel] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        names = [_dotted(d) for d in node.decorator_list]
        if not any(n.endswith("jit") for n in names):
            continue
        args = node.args.posonlyargs + node.args.args
        params = [a.arg for a in args]
        constexprs = [a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)]
        out[node.name] = Kernel(
            name=node.name, node=node, params=params, constexprs=constexprs,
            autotuned=any(n.endswith("autotune") for n in names), heuristics=any(n.endswith("heuristics") for n in names),
            decorators=list(node.decorator_list),
        )
    return out


def find_launches(tree: ast.Module, kernels: dict[str, Kernel]) -> list[LaunchSite]:
    """``kernel[grid](...)`` calls, with their enclosing function."""
    sites: list[LaunchSite] = []

    def visit(node: ast.AST, func: ast.FunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            f = child if isinstance(child, ast.FunctionDef) else func
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Subscript):
                target = _dotted(child.func.value)
                if target in kernels:
                    sites.append(LaunchSite(target, child, child.func.slice, func))
            visit(child, f)

    visit(tree, None)
    return sites


def assignments_in(func: ast.FunctionDef | None, name: str) -> list[ast.Assign]:
    """Simple ``name = ...`` assignments inside ``func`` (in source order)."""
    if func is None:
        return []
    return [
        n for n in ast.walk(func)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name
    ]


def module_constant(tree: ast.Module, name: str) -> ast.Assign | None:
    for n in tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name:
            return n
    return None
