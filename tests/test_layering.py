"""Package layering (DESIGN "Names"): kb imports nothing of ours and never grpc; synthesis -> kb;
retrieval -> kb, synthesis; optimizer's core -> kb only (the CLI composition root, optimizer/cli/, may use retrieval)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = {"kb", "synthesis", "retrieval", "optimizer"}
ALLOWED = {"kb": {"kb"}, "synthesis": {"kb", "synthesis"}, "retrieval": {"kb", "synthesis", "retrieval"},
           "optimizer": {"kb", "optimizer"}}
#: composition roots inside optimizer that may reach the retrieval layer: the CLI and the cluster fan-out (its workers
#: open the central KB). The transports (gRPC, web, MCP) live in retrieval.
OPTIMIZER_ROOTS = ("optimizer/cli/", "optimizer/cluster")


def _imports(path: Path) -> set[str]:
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module.split(".")[0])
    return mods


def test_layering():
    bad = []
    for pkg, allowed in ALLOWED.items():
        for f in (ROOT / pkg).rglob("*.py"):
            rel = str(f.relative_to(ROOT))
            if pkg == "optimizer" and rel.startswith(OPTIMIZER_ROOTS):
                continue
            imported = _imports(f)
            wrong = (imported & OURS) - allowed
            if pkg == "kb":
                wrong |= imported & {"grpc", "grpc_tools", "grpc_health", "grpc_reflection"}
            if wrong:
                bad.append(f"{rel} imports {sorted(wrong)}")
    assert not bad, "\n".join(bad)


def _modules(path: Path) -> set[str]:
    """Full dotted names of our modules that ``path`` imports (absolute imports, module-level or lazy)."""
    mods: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods.add(node.module)
            mods |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in mods if m.split(".")[0] in OURS}


def _importers(pkg: str, target: str) -> list[str]:
    return sorted(str(f.relative_to(ROOT)) for f in (ROOT / pkg).rglob("*.py")
                  if any(m == target or m.startswith(target + ".") for m in _modules(f)))


def test_optimizer_subpackages_layer_without_a_cycle():
    """proposers -> ladder -> rewrite (never back): the ladder dry-runs recipes, the proposers apply them; L4 reads
    the IR report from the IR package, not from L3; the levels reach the sandbox only through evaluation/measure."""
    assert _importers("optimizer/ladder", "optimizer.proposers") == []
    assert _importers("optimizer/rewrite", "optimizer.ladder") == []
    assert _importers("optimizer/rewrite", "optimizer.proposers") == []
    assert _importers("optimizer/ir", "optimizer.ladder") == []
    assert _importers("optimizer/ladder", "optimizer.ladder.l3_ir") == ["optimizer/ladder/engine.py"]
    assert _importers("optimizer/ladder", "optimizer.harness.sandbox") == []
    assert _importers("optimizer/ladder", "optimizer.harness.worker") == []
    assert _importers("optimizer/proposers", "optimizer.ladder"), "the proposers read the ladder's outcome"
    # the one kernel model (issue 29) sits below L1 and the transforms that both read it: of the rewrite package it
    # reads only the parse (rewrite.tree), and nothing that decides
    for upper in ("optimizer.ladder", "optimizer.proposers", "optimizer.round", "optimizer.session",
                  "optimizer.harness"):
        assert _importers("optimizer/kernel", upper) == [], upper
    assert {m for f in (ROOT / "optimizer/kernel").rglob("*.py") for m in _modules(f) if m.startswith("optimizer.rewrite")
            and not m.startswith("optimizer.rewrite.tree")} == set()
    # the execution harness sits below everything that decides: it never reaches up
    for upper in ("optimizer.ladder", "optimizer.proposers", "optimizer.rewrite", "optimizer.round",
                  "optimizer.session", "optimizer.cli", "optimizer.diagnosis", "optimizer.onboarding"):
        assert _importers("optimizer/harness", upper) == [], upper
    # the profilers (roofline, ncu, classification) sit below the harness that calls them (issue 33 item 4)
    assert _importers("optimizer/profile", "optimizer.harness") == []
    # compile-only checks build the parent's Evaluation from its own module, not from the evaluation module that calls them
    assert not {m for m in _modules(ROOT / "optimizer/harness/compile_only.py") if m.startswith("optimizer.harness.evaluation")}


def test_the_cli_lives_in_one_package():
    """Only optimizer/cli/ uses Typer or Rich; outside it, only the ``python -m`` shims import it."""
    shims = {"optimizer/__main__.py", "optimizer/cluster/__main__.py"}
    for pkg in OURS:
        for f in (ROOT / pkg).rglob("*.py"):
            rel = str(f.relative_to(ROOT))
            if rel.startswith("optimizer/cli/") or rel.startswith("retrieval/v1/"):
                continue
            assert not _imports(f) & {"typer", "rich"}, rel
            if rel not in shims:
                assert not any(m == "optimizer.cli" or m.startswith("optimizer.cli.") for m in _modules(f)), rel


def test_no_private_names_cross_a_module():
    """A curated API (issue 33 item 6): no module, test or benchmark imports an optimizer module's ``_private``
    name; what others need is public and listed in its module's ``__all__``."""
    bad = []
    for pkg in ("optimizer", "tests", "benchmarks"):
        for f in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text(), str(f))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("optimizer"):
                    bad += [f"{f.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------------------------ no circles
#: Import cycles not cut yet, each with its reason; a cycle found must lie inside one of these.
ALLOWED_MODULE_CYCLES: dict[frozenset[str], str] = {
    frozenset({"optimizer.rewrite.autotune_configs", "optimizer.rewrite.descriptors", "optimizer.rewrite.dot_tiles"}):
        "in-function imports inside optimizer/rewrite (tile tables shared by the three); cut by a module below them",
    frozenset({"optimizer.rewrite", "optimizer.rewrite.registry", "optimizer.rewrite.spill_relief"}):
        "spill_relief reads the registry that lists it; the package's lazy names reach spill_relief",
}
ALLOWED_PACKAGE_CYCLES: dict[frozenset[str], str] = {
    frozenset({"optimizer.kernel", "optimizer.rewrite"}):
        "the kernel model reads the parse in optimizer/rewrite/tree.py (a leaf: libcst only), whose place is below it",
}


def _import_graph() -> dict[str, set[str]]:
    """Module -> the optimizer modules it imports, at module level or inside a function (imports under
    ``if TYPE_CHECKING:`` never run and are left out). ``from pkg import mod`` is an edge to the submodule, ``from pkg
    import name`` one to the package. A ``__main__`` module is an entry point nothing imports: it is its own unit."""
    files = {".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): f
             for f in (ROOT / "optimizer").rglob("*.py")}

    def module(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for top in ast.walk(tree)
                       if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test) for n in ast.walk(top)}
        out: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                names = [s for s in subs if s in files] + ([node.module] if any(s not in files for s in subs) else [])
            else:
                continue
            out |= {m for n in names if n.startswith("optimizer") and (m := module(n)) and m != mod}
        graph[mod] = out
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = {stack.pop()}
            while v not in comp:
                comp.add(stack.pop())
            if len(comp) > 1:
                found.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _unit(mod: str) -> str:
    """The package-level unit of a module: its subpackage (``optimizer.harness``), a top-level module, or itself
    for a ``__main__`` entry point."""
    return mod if mod.endswith(".__main__") else ".".join(mod.split(".")[:2])


def _outside(found: list[set[str]], allowed: dict[frozenset[str], str]) -> list[list[str]]:
    return [sorted(c) for c in found if not any(c <= a for a in allowed)]


def test_the_graph_sees_lazy_imports():
    """The graph counts an import inside a function (``evaluation`` reaches the judge lazily) and skips one under
    ``TYPE_CHECKING`` (``timing_cache`` names the Backend type only)."""
    graph = _import_graph()
    assert "optimizer.harness.judge" in graph["optimizer.harness.evaluation"]
    assert "optimizer.backend" not in graph["optimizer.harness.timing_cache"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_module_import_cycle_in_optimizer():
    """Issue 33 item 4: no import circle between optimizer's modules, lazy imports included (a cycle held together
    by an in-function import is still a cycle); the parent and worker sides of the harness stay apart."""
    assert _outside(_cycles(_import_graph()), ALLOWED_MODULE_CYCLES) == []


def test_no_package_import_cycle_in_optimizer():
    """No circle between optimizer's subpackages and top-level modules (harness below profile's callers, profile
    below the kernel model, the CLI above the cluster fan-out)."""
    graph = _import_graph()
    units: dict[str, set[str]] = {}
    for mod, targets in graph.items():
        units.setdefault(_unit(mod), set()).update(_unit(t) for t in targets if _unit(t) != _unit(mod))
    assert _outside(_cycles(units), ALLOWED_PACKAGE_CYCLES) == []
