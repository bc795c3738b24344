"""Package layering (DESIGN "Names"): kb imports nothing of ours and never grpc; synthesis -> kb;
retrieval -> kb, synthesis; optimizer's core -> kb only (the CLI composition root may use retrieval)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = {"kb", "synthesis", "retrieval", "optimizer"}
ALLOWED = {"kb": {"kb"}, "synthesis": {"kb", "synthesis"}, "retrieval": {"kb", "synthesis", "retrieval"},
           "optimizer": {"kb", "optimizer"}}
#: composition roots and transport adapters inside optimizer that may reach the retrieval layer
OPTIMIZER_ROOTS = ("optimizer/cli/", "optimizer/commands.py", "optimizer/cluster", "optimizer/mcp")


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
