"""``ladder mcp``: serve the KB over the Model Context Protocol on stdio (for MCP-capable agents and IDEs)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import typer

from optimizer.cli._common import HomeOpt, ServerOpt, friendly_errors


@friendly_errors
def mcp_command(
    server: str | None = ServerOpt,
    home: Path | None = HomeOpt,
    token: str | None = typer.Option(None, "--token", help="bearer token for --server (default $LADDER_TOKEN)"),
) -> None:
    """Serve search, quick-match, get-card and invariants (tools) and cards (resources) over MCP on stdio.

    Register it with an MCP client as the command `ladder mcp` (add `--server HOST:PORT` to use a running
    server instead of opening the embedded KB). stdout carries only the protocol; logs go to stderr.
    """
    from retrieval.mcp_server import serve_stdio

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    serve_stdio(server, home=str(home) if home else None, token=token)
