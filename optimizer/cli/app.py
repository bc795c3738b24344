"""Assemble the ``ladder`` Typer app from the command modules."""

from __future__ import annotations

import typer

from optimizer.cli import kbcmds

app = typer.Typer(help="Kernel Ladder: a KB-centred retrieval service and four-level diagnosis ladder for "
                       "Triton kernels.", no_args_is_help=True, pretty_exceptions_enable=False)
app.command("serve")(kbcmds.serve_command)
app.command("query")(kbcmds.query_command)
app.command("health")(kbcmds.health_command)
app.add_typer(kbcmds.kb_app, name="kb")


def main() -> None:
    app()
