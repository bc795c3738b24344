"""Assemble the ``ladder`` Typer app from the command modules."""

from __future__ import annotations

import typer

from optimizer.cli import kbcmds
from optimizer.cli.bench import bench_app

app = typer.Typer(help="Kernel Ladder: a KB-centred retrieval service and four-level diagnosis ladder for "
                       "Triton kernels.", no_args_is_help=True, pretty_exceptions_enable=False)
app.command("serve")(kbcmds.serve_command)
app.command("query")(kbcmds.query_command)
app.command("health")(kbcmds.health_command)
app.add_typer(kbcmds.kb_app, name="kb")
app.add_typer(bench_app, name="bench")


def main() -> None:
    app()
