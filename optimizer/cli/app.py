"""Assemble the ``ladder`` Typer app from the command modules."""

from __future__ import annotations

import typer

from optimizer.cli import kbcmds
from optimizer.cli.bench import bench_app
from optimizer.cli.mcpcmd import mcp_command
from optimizer.cli.review import review_app, synthesize_command

app = typer.Typer(help="Kernel Ladder: a KB-centred retrieval service and four-level diagnosis ladder for "
                       "Triton kernels.", no_args_is_help=True, pretty_exceptions_enable=False)
app.command("serve")(kbcmds.serve_command)
app.command("query")(kbcmds.query_command)
app.command("health")(kbcmds.health_command)
app.add_typer(kbcmds.kb_app, name="kb")
app.add_typer(bench_app, name="bench")

from optimizer.ir.cli import ir_command, set_kb_client_factory  # noqa: E402
from retrieval.client import connect  # noqa: E402

set_kb_client_factory(connect)
app.command("ir")(ir_command)
app.command("synthesize")(synthesize_command)
app.add_typer(review_app, name="review")
app.command("mcp")(mcp_command)

from optimizer.commands import diagnose_command, optimize_command  # noqa: E402

app.command("optimize")(optimize_command)
app.command("diagnose")(diagnose_command)

from optimizer.cluster.command import cluster_command  # noqa: E402

app.command("optimize-cluster")(cluster_command)

from optimizer.cli.problemcmd import problem_app  # noqa: E402

app.add_typer(problem_app, name="problem")


def main() -> None:
    app()
