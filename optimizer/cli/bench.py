"""``ladder bench ...``: benchmark runners. They live in the source checkout's ``benchmarks/`` (not shipped in the
wheel), so these commands run from a checkout: the folder is found from the current directory upwards, or via
``$LADDER_REPO``."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import typer

from kb.errors import ToolchainError
from optimizer.cli._common import friendly_errors

bench_app = typer.Typer(help="Benchmark runners (results go to benchmarks/results/ with provenance).",
                        no_args_is_help=True)

#: command name -> (module path relative to benchmarks/, help)
RUNNERS: dict[str, tuple[str, str]] = {
    "retrieval": ("retrieval/latency.py", "Search p50/p99 with the embedding, beside bare embed + bare index query."),
    "retrieval-quality": ("retrieval/quality.py", "Recall@1/5, MRR@10, nDCG@10 for dense, BM25 and hybrid."),
    "ir-capture": ("ir_capture.py", "Full IR capture vs a plain triton.compile, side by side."),
    "synthesis": ("synthesis/bench.py", "Family-assignment accuracy, new-family precision, throughput."),
    "suite": ("suite/runner.py", "Run optimizer sessions across the operator suite (resumable)."),
    "report": (
        "reports.py",
        "Regenerate the committed campaign reports (tables, figures) from the packed results; "
        "--check compares with the committed ones; --out DIR: one runner result dir's report.",
    ),
    "pack": ("pack_results.py", "Fold campaign folders' loose result files into their archives (packed.jsonl.gz)."),
    "results": ("_data.py", "Committed results, packed or not: ls DIR | cat PATH | unpack DIR DEST."),
    "load": ("load.py", "32 concurrent clients mixing RPCs against a real server."),
    "writes": ("kb_writes.py", "Consecutive single-card writes on an embedded KB, then the first search."),
    "diagnosis": ("diagnosis_bench.py", "Cause / class / family accuracy of the ladder on the labelled diagnosis set."),
    "rounds": ("rounds.py", "Per-phase median/p90 and round wall time over trajectories (default: the suite's)."),
    "aa": ("aa.py", "A/A: identical-kernel comparisons through the session's verdict (GPU), fraction called improved."),
    "coverage": (
        "coverage/coverage.py",
        "Per kernel of a set: cause, family, rewrite made or refused and the refusal's "
        "category; per family applies/refuses; the top refusal reasons (--set NAME, or --from a dry round).",
    ),
    "ablation": (
        "ablation/ablation.py",
        "Ladder policies (arms) x the fixed problem list of issue 34, resumable; --report "
        "writes the per-arm table, the speedup figure and the cost-vs-quality scatter.",
    ),
}


def benchmarks_dir() -> Path:
    cands = [Path(os.environ["LADDER_REPO"]) / "benchmarks"] if os.environ.get("LADDER_REPO") else []
    here = Path.cwd().resolve()
    cands += [p / "benchmarks" for p in (here, *here.parents)]
    for c in cands:
        if (c / "_provenance.py").exists():
            return c
    raise ToolchainError("`ladder bench` runs from a source checkout: cd into the kernel-ladder repo "
                         "(or set LADDER_REPO to it); benchmarks/ is not part of the installed wheel")


def _run(rel: str, argv: list[str]) -> int:
    path = benchmarks_dir() / rel
    if not path.exists():
        raise ToolchainError(f"{path} is missing from this checkout")
    spec = importlib.util.spec_from_file_location(f"ladder_bench_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ToolchainError(f"{path} cannot be imported as a module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return int(mod.main(argv) or 0)


def _make(name: str, rel: str, help_: str) -> None:
    @bench_app.command(name, help=help_ + " Extra arguments are passed to the runner (try -- --help).",
                       context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    @friendly_errors
    def _cmd(ctx: typer.Context) -> None:
        raise typer.Exit(_run(rel, list(ctx.args)))


for _name, (_rel, _help) in RUNNERS.items():
    _make(_name, _rel, _help)
