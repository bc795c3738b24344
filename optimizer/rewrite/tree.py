"""The candidate as a libcst syntax tree: kernels, launch sites, and composable node edits.

libcst keeps comments and layout, so a rewrite changes only the nodes it names. Edits are keyed by the
identity of an original node and are functions of the *updated* node (its children already rewritten), so two
edits on nested nodes compose instead of colliding (the offset editor raised "overlapping source edits" when
two names aliased one block). Statements can gain neighbours before or after them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper, PositionProvider

__all__ = ["LOOP_RANGES", "CstKernel", "CstLaunch", "Edit", "Tree", "arg_value", "body_of", "call_name", "dotted",
           "expand_defs", "expr", "index_value", "is_docstring", "leading_lines", "node_code", "range_args", "skip_ids",
           "statements", "suite_statements", "walk"]

#: the iterables a kernel loop is written with: Python's range and Triton's (pipelined / unrolled) ranges
LOOP_RANGES = ("range", "tl.range", "tl.static_range", "triton.language.range", "triton.language.static_range")


def range_args(it: cst.CSTNode) -> list[cst.Arg]:
    """The positional (start, end, step) arguments of a loop range; keywords (``num_stages=``, ``loop_unroll_factor=``)
    left out. Empty when ``it`` is not a call of one of ``LOOP_RANGES``."""
    if not (isinstance(it, cst.Call) and dotted(it.func) in LOOP_RANGES):
        return []
    return [a for a in it.args if a.keyword is None and not a.star]


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def statements(text: str, indent: str = "    ") -> list[cst.BaseStatement]:
    """Statements parsed from dedented ``text`` (one or several lines)."""
    mod = cst.parse_module(text if text.endswith("\n") else text + "\n",
                           config=cst.PartialParserConfig(default_indent=indent))
    return list(mod.body)


def body_of(node: cst.FunctionDef | cst.BaseCompoundStatement | cst.Else | cst.Finally) -> list[cst.BaseStatement]:
    """The statements of ``node``'s body, as ``list(node.body.body)``.

    Every kernel, loop and branch the transforms edit has an indented block, whose entries are statements. A
    one-line body (``def f(x): return x``) holds small statements instead: they come back unchanged, typed as the
    indented block's (the callers' isinstance tests on statement kinds pass over them as they always did).
    """
    return suite_statements(node.body)


def suite_statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """``list(suite.body)``: the statements of an indented block (``body_of`` says how a one-line suite reads)."""
    return cast(list[cst.BaseStatement], list(suite.body))


def leading_lines(stmt: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """The blank lines and comments above a statement (both kinds of statement have them; their base does not say
    so)."""
    assert isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # libcst's two kinds of statement
    return stmt.leading_lines


def dotted(node: cst.CSTNode | None) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    if isinstance(node, cst.Call):
        return dotted(node.func)
    return ""


def call_name(node: cst.CSTNode) -> str:
    return dotted(node.func) if isinstance(node, cst.Call) else ""


def is_docstring(stmt: cst.CSTNode) -> bool:
    """Whether a statement is a lone string expression (a function's docstring when it comes first)."""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def node_code(node: cst.CSTNode) -> str:
    """Source text of a node outside any module (``Tree.code`` reads it from the candidate's module)."""
    return cst.Module([]).code_for_node(node).strip()


_FIELDS: dict[type, tuple[str, ...]] = {}
_SKIP = ("whitespace", "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
         "footer", "newline", "equal", "star", "colon")


def kids(n: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's child nodes in field order, without whitespace, parentheses and punctuation.

    ``CSTNode.children`` runs a visitor per call (most of the engine's time on a real candidate); the dataclass
    fields give the same nodes that matter for analysis at a fraction of the cost.
    """
    names = _FIELDS.get(type(n))
    if names is None:
        names = _FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n) if not f.name.startswith(_SKIP))
    out: list[cst.CSTNode] = []
    for name in names:
        v = getattr(n, name)
        if isinstance(v, cst.CSTNode):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(x for x in v if isinstance(x, cst.CSTNode))
    return out


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order traversal of ``node`` and every descendant (punctuation and whitespace left out)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(kids(n)))


def arg_value(call: cst.Call, name: str, pos: int | None = None) -> cst.BaseExpression | None:
    """The expression passed as keyword ``name`` or, failing that, as positional argument ``pos``."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if pos is not None and pos < len(positional) and not any(a.star for a in call.args[:pos + 1]):
        return positional[pos].value
    return None


@dataclass
class CstKernel:
    name: str
    node: cst.FunctionDef
    params: list[str]
    constexprs: list[str]
    autotuned: bool
    heuristics: bool


@dataclass
class CstLaunch:
    kernel: str
    call: cst.Call
    grid: cst.BaseExpression
    function: cst.FunctionDef | None
    statement: cst.BaseStatement | None  # the statement line of the launch, inside ``function``

    def keyword(self, name: str) -> cst.Arg | None:
        return next((a for a in self.call.args if a.keyword is not None and a.keyword.value == name), None)

    def arg_for(self, kernel: CstKernel, name: str) -> cst.BaseExpression | None:
        pos = kernel.params.index(name) if name in kernel.params else None
        return arg_value(self.call, name, pos)


class _Collector:
    """Kernels and ``kernel[grid](...)`` calls with their enclosing function and statement (one recursive pass)."""

    def __init__(self, module: cst.Module) -> None:
        self.kernels: dict[str, CstKernel] = {}
        self.calls: list[tuple[cst.Call, cst.FunctionDef | None, cst.BaseStatement | None]] = []
        self._visit(module, None, None)

    def _visit(self, node: cst.CSTNode, func: cst.FunctionDef | None, stmt: cst.BaseStatement | None) -> None:
        if isinstance(node, cst.FunctionDef):
            self._kernel(node)
            func = node
        elif isinstance(node, cst.SimpleStatementLine):
            stmt = node
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Subscript):
            self.calls.append((node, func, stmt))
        for child in kids(node):
            self._visit(child, func, stmt)

    def _kernel(self, node: cst.FunctionDef) -> None:
        names = [dotted(d.decorator) for d in node.decorators]
        if not any(n.endswith("jit") for n in names):
            return
        params = [p.name.value for p in node.params.params]
        constexprs = [
            p.name.value
            for p in node.params.params
            if p.annotation is not None and "constexpr" in cst.Module([]).code_for_node(p.annotation.annotation)
        ]
        self.kernels[node.name.value] = CstKernel(
            node.name.value, node, params, constexprs, autotuned=any(n.endswith("autotune") for n in names),
            heuristics=any(n.endswith("heuristics") for n in names))


def index_value(e: cst.SubscriptElement) -> cst.BaseExpression:
    """The expression of a subscript element ``k[e]``; a slice (``k[a:b]``) has none and fails as reading its
    ``.value`` did."""
    if isinstance(e.slice, cst.Index):
        return e.slice.value
    raise AttributeError(f"'{type(e.slice).__name__}' object has no attribute 'value'")


#: a node edit: a function of the updated node, giving its replacement (several statements: a FlattenSentinel)
Edit: TypeAlias = Callable[[cst.CSTNode], "cst.CSTNode | cst.FlattenSentinel[Any] | cst.RemovalSentinel"]


class _Apply(cst.CSTTransformer):
    def __init__(self, tree: Tree) -> None:
        self.t = tree

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        key = id(original_node)
        node: Any = updated_node  # an edit after one that flattened a statement receives its FlattenSentinel
        for fn in self.t._edits.get(key, []):
            node = fn(node)
        before, after = self.t._before.get(key, []), self.t._after.get(key, [])
        if isinstance(node, cst.FlattenSentinel):  # an edit that replaced a statement by several
            return cst.FlattenSentinel([*before, *node.nodes, *after])
        if key in self.t._removed:
            return cst.FlattenSentinel([*before, *after]) if before or after else cst.RemovalSentinel.REMOVE
        if before or after:
            return cst.FlattenSentinel([*before, node, *after])
        return node


@dataclass
class Tree:
    """A parsed candidate plus pending edits; ``render()`` applies them all at once."""

    source: str
    module: cst.Module = field(init=False)
    kernels: dict[str, CstKernel] = field(init=False)
    launches: list[CstLaunch] = field(init=False)

    def __post_init__(self) -> None:
        self.module = cst.parse_module(self.source)
        col = _Collector(self.module)
        self.kernels = col.kernels
        self.launches = []
        for call, func, stmt in col.calls:
            sub = call.func
            assert isinstance(sub, cst.Subscript)  # the collector takes calls of a subscript only
            target = dotted(sub.value)
            if target in self.kernels:
                grid = index_value(sub.slice[0]) if sub.slice else None
                if len(sub.slice) > 1:
                    grid = cst.Tuple([cst.Element(index_value(e)) for e in sub.slice])
                # a subscript always has an element: the parser gives no empty one
                self.launches.append(CstLaunch(target, call, cast(cst.BaseExpression, grid), func, stmt))
        self._edits: dict[int, list[Edit]] = {}
        self._before: dict[int, list[cst.BaseStatement]] = {}
        self._after: dict[int, list[cst.BaseStatement]] = {}
        self._removed: set[int] = set()
        self._lifted: set[int] = set()
        self._meta: dict[type, Mapping[cst.CSTNode, Any]] = {}

    # ------------------------------------------------------------------ reading
    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def _metadata(self, provider: type) -> Mapping[cst.CSTNode, Any]:
        if provider not in self._meta:  # resolved on the module itself: node identities stay the tree's
            self._meta[provider] = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(provider)
        return self._meta[provider]

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        """The first and last source line of ``node``."""
        r = self._metadata(PositionProvider)[node]
        return r.start.line, r.end.line

    def column(self, node: cst.CSTNode) -> int:
        """The column ``node`` starts at (a statement's indentation)."""
        return int(self._metadata(PositionProvider)[node].start.column)

    def is_load(self, name: cst.Name) -> bool:
        """Whether ``name`` is read there (not assigned, not an attribute or keyword name)."""
        return self._metadata(ExpressionContextProvider).get(name) is ExpressionContext.LOAD

    def launches_of(self, kernel: str) -> list[CstLaunch]:
        return [s for s in self.launches if s.kernel == kernel]

    def assignments(self, scope: cst.CSTNode | None, name: str) -> list[cst.Assign]:
        """Simple ``name = ...`` assignments inside ``scope``."""
        if scope is None:
            return []
        return [n for n in walk(scope) if isinstance(n, cst.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == name]

    def statement_of(self, scope: cst.CSTNode, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The innermost statement of ``scope`` that contains ``node``."""
        best = None
        for n in walk(scope):
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and any(m is node for m in walk(n)):
                best = n
        return best

    def enclosing_statement(self, scope: cst.CSTNode, node: cst.CSTNode) -> cst.BaseStatement:
        """``statement_of`` for a node the caller found inside ``scope``, which has one (at worst ``scope`` itself,
        a function or a compound statement); a node from elsewhere is the caller's error."""
        stmt = self.statement_of(scope, node)
        if stmt is None:
            raise ValueError(f"`{node_code(node)}` is not inside the scope it was looked up in")
        return stmt

    # ------------------------------------------------------------------ editing
    def edit(self, node: cst.CSTNode, fn: Edit) -> None:
        """Rewrite ``node``: ``fn`` receives it with its children's edits already applied."""
        self._edits.setdefault(id(node), []).append(fn)

    def replace(self, node: cst.CSTNode, new: cst.CSTNode | str) -> None:
        repl = expr(new) if isinstance(new, str) else new
        self.edit(node, lambda _old: repl)

    def insert_before(self, stmt: cst.CSTNode, new: list[cst.BaseStatement] | str) -> None:
        self._before.setdefault(id(stmt), []).extend(statements(new) if isinstance(new, str) else new)

    def insert_after(self, stmt: cst.CSTNode, new: list[cst.BaseStatement] | str) -> None:
        self._after.setdefault(id(stmt), []).extend(statements(new) if isinstance(new, str) else new)

    def insert_above(self, stmt: cst.BaseStatement, new: str) -> None:
        """Insert statements right above ``stmt``'s own first line: the blank lines and comments above it stay above
        the insertion (``insert_before`` puts it above them)."""
        head = statements(new)
        if id(stmt) not in self._lifted:  # the first insertion takes the lines above; later ones follow it
            self._lifted.add(id(stmt))
            head[0] = head[0].with_changes(leading_lines=leading_lines(stmt))
            self.edit(stmt, lambda node: node.with_changes(leading_lines=()))
        self.insert_before(stmt, head)

    def unwrap(self, compound: cst.BaseCompoundStatement, prefix: list[cst.BaseStatement] | str = "") -> None:
        """Replace a compound statement (an ``if``) by ``prefix`` and its own (already edited) body."""
        head = statements(prefix) if isinstance(prefix, str) and prefix else (prefix or [])

        def fn(node: cst.CSTNode) -> cst.FlattenSentinel[cst.BaseStatement]:
            assert isinstance(node, cst.BaseCompoundStatement)  # the compound, its children's edits applied
            return cst.FlattenSentinel([*head, *body_of(node)])
        self.edit(compound, fn)

    def replace_in_parens(self, node: cst.CSTNode, text: str) -> None:
        """Replace the expression ``node`` by ``text`` (parsed when rendered), keeping ``node``'s own parentheses."""
        def fn(old: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(old, cst.BaseExpression)
            return cst.parse_expression(text).with_changes(lpar=old.lpar, rpar=old.rpar)
        self.edit(node, fn)

    def add_decorator(self, func: cst.FunctionDef, deco: cst.Decorator) -> None:
        """Put ``deco`` above the function's other decorators."""
        def fn(f: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(f, cst.FunctionDef)
            return f.with_changes(decorators=[deco, *f.decorators])
        self.edit(func, fn)

    def remove(self, stmt: cst.CSTNode) -> None:
        self._removed.add(id(stmt))

    def add_keyword(self, call: cst.Call, name: str, value: str) -> None:
        """Append ``name=value`` to ``call`` (or replace the value of an existing ``name=``)."""
        def fn(c: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(c, cst.Call)
            new = cst.ensure_type(expr(f"f({name}={value})"), cst.Call).args[0]
            args = list(c.args)
            for i, a in enumerate(args):
                if a.keyword is not None and a.keyword.value == name:
                    args[i] = a.with_changes(value=new.value)
                    return c.with_changes(args=args)
            if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:  # a trailing comma: keep the layout
                last = args[-1].comma
                inner = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                args[-1] = args[-1].with_changes(comma=inner)
                return c.with_changes(args=[*args, new.with_changes(comma=last)])
            return c.with_changes(args=[*args, new])
        self.edit(call, fn)

    def add_params(self, func: cst.FunctionDef, texts: list[str]) -> None:
        """Add parameters (``"n_elems"``, ``"BLOCK: tl.constexpr"``) to a function definition: appended, or placed
        before the first parameter with a default (``BACKWARD: tl.constexpr = False``), since a parameter without
        one cannot follow it. Callers pass them by keyword (``add_keyword``); ``common.single_site_reasons``
        refuses a launch that passes a defaulted parameter by position, whose binding the insertion would shift."""
        def fn(f: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(f, cst.FunctionDef)
            extra = cst.ensure_type(
                cst.parse_statement(f"def _f({', '.join(texts)}):\n    pass\n"), cst.FunctionDef
            ).params.params
            params = list(f.params.params)
            first_default = next((i for i, p in enumerate(params) if p.default is not None), None)
            if first_default is not None:
                comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                ins = [e.with_changes(comma=comma) for e in extra]
                return f.with_changes(params=f.params.with_changes(params=[*params[:first_default], *ins,
                                                                           *params[first_default:]]))
            if params and params[-1].comma is not cst.MaybeSentinel.DEFAULT:  # a trailing comma: keep the layout
                extra = [*extra[:-1], extra[-1].with_changes(comma=params[-1].comma)]
                inner = params[-2].comma if len(params) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                params[-1] = params[-1].with_changes(comma=inner)
            return f.with_changes(params=f.params.with_changes(params=[*params, *extra]))
        self.edit(func, fn)

    def render(self) -> str:
        return self.module.visit(_Apply(self)).code


def skip_ids(node: cst.CSTNode) -> set[int]:
    """Name nodes that are not variables: attribute names (``x.dtype``) and keyword names (``mask=``)."""
    out: set[int] = set()
    for n in walk(node):
        if isinstance(n, cst.Attribute):
            out.add(id(n.attr))
        elif isinstance(n, cst.Arg) and n.keyword is not None:
            out.add(id(n.keyword))
    return out


def expand_defs(e: cst.BaseExpression, defs: dict[str, cst.BaseExpression], depth: int = 0) -> cst.BaseExpression:
    """``e`` with single-assignment locals replaced (recursively) by their parenthesised definitions."""
    if depth > 20:
        return e
    skip = skip_ids(e)

    class _Sub(cst.CSTTransformer):
        def leave_Name(
                self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
            if id(original_node) in skip or original_node.value not in defs:
                return updated_node
            inner = expand_defs(defs[original_node.value], defs, depth + 1)
            return inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    # _Sub replaces names by expressions only, so the visited expression stays one
    return cast(cst.BaseExpression, e.visit(_Sub()))
