"""Assemble the ``ladder`` Typer app: one module of ``optimizer.cli`` per command group.

=================================  ==================================
``serve``, ``query``, ``health``,   ``kbcmds``
``kb ...``
``optimize``, ``diagnose``          ``optimize``
``optimize-cluster``                ``cluster`` (also ``python -m optimizer.cluster``)
``ir``                              ``ir``
``review ...``, ``synthesize``      ``review``
``problem ...``                     ``problemcmd``
``bench ...``                       ``bench``
``mcp``                             ``mcpcmd``
=================================  ==================================

Every command reports domain errors through ``_common.friendly_errors`` (one line, exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli import kbcmds
from optimizer.cli._common import attach_log_file
from optimizer.cli.bench import bench_app
from optimizer.cli.cluster import cluster_command
from optimizer.cli.ir import ir_command
from optimizer.cli.mcpcmd import mcp_command
from optimizer.cli.optimize import diagnose_command, optimize_command
from optimizer.cli.problemcmd import problem_app
from optimizer.cli.review import review_app, synthesize_command

app = typer.Typer(help="Kernel Ladder: a KB-centred retrieval service and four-level diagnosis ladder for "
                       "Triton kernels.", no_args_is_help=True, pretty_exceptions_enable=False)


@app.callback()
def global_options(
    log_file: Annotated[
        Path | None,
        typer.Option("--log-file", envvar="LADDER_LOG_FILE",
                     help="append every log record (DEBUG and up, with tracebacks) to this file: an error id a "
                          "command prints (\"error 3f9c...\") is found there"),
    ] = None,
) -> None:
    if log_file is not None:
        attach_log_file(log_file)
app.command("serve")(kbcmds.serve_command)
app.command("query")(kbcmds.query_command)
app.command("health")(kbcmds.health_command)
app.add_typer(kbcmds.kb_app, name="kb")
app.add_typer(bench_app, name="bench")
app.command("ir")(ir_command)
app.command("synthesize")(synthesize_command)
app.add_typer(review_app, name="review")
app.command("mcp")(mcp_command)
app.command("optimize")(optimize_command)
app.command("diagnose")(diagnose_command)
app.command("optimize-cluster")(cluster_command)
app.add_typer(problem_app, name="problem")


def main() -> None:
    app()
