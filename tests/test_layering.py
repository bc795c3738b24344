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
