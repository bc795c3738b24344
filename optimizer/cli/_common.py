"""Shared CLI helpers: settings, output, error reporting."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from kb.errors import LadderError
from kb.sanitize import terminal_text
from kb.settings import Settings


class SafeConsole(Console):
    """A rich Console that never lets a control character of the *content* reach the terminal: every text
    segment goes through ``kb.sanitize.terminal_text`` after layout. Rich's own styling is added later from the
    segments' styles, so colours and tables still work; card text, ids and notes cannot clear the screen, write
    the clipboard (OSC 52) or plant links (OSC 8)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None):  # noqa: ANN201
        for seg in super().render(renderable, options):
            if seg.control is None and seg.text:
                clean = terminal_text(seg.text)
                if clean != seg.text:
                    seg = Segment(clean, seg.style)
            yield seg


console = SafeConsole(stderr=False)
err_console = SafeConsole(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])

HomeOpt = typer.Option(None, "--home", help="KB directory (default $LADDER_HOME or ~/.ladder)")
ServerOpt = typer.Option(None, "--server", help="HOST:PORT of a running `ladder serve`; default: embedded KB")
JsonOpt = typer.Option(False, "--json", help="machine-readable JSON on stdout")
TokenOpt = typer.Option(None, "--token", help="bearer token for --server (default $LADDER_TOKEN)")


def require_kb(settings: Settings, *, create: bool) -> None:
    """Refuse a home that holds no KB unless this command creates one: a typo in ``--home`` must not seed a
    fresh KB (minutes on a big card set) and then report on it."""
    if create or settings.db_path.exists():
        return
    from kb.errors import InvalidArgument

    raise InvalidArgument(f"{settings.home} holds no KB (no {settings.db_path.name}); check the path. Only "
                          f"`ladder serve --home {settings.home}` (or `ladder query` on the default home) creates "
                          "and seeds a new one", field="home")


def say_kb(description: str) -> None:
    """Tell the user which KB a command used (stderr, so --json output stays clean)."""
    err_console.print(Text(f"KB: {description}", style="dim"))


def out_console(json_out: bool) -> SafeConsole:
    """Where a command's human output goes: stdout, or stderr when ``--json`` keeps stdout for the JSON."""
    return err_console if json_out else console


def connect_kb(server: str | None, home: str | Path | None, token: str | None = None) -> Any:
    """The KB client of ``--server`` (gRPC) or the embedded KB at ``home``; says which one it is."""
    from retrieval.client import connect

    client = connect(server=server, home=home, token=token)
    say_kb(getattr(client, "opened_as", None) or f"server {server}")
    return client


def settings_for(home: Path | None = None, **overrides: Any) -> Settings:
    s = Settings()
    upd = {k: v for k, v in overrides.items() if v is not None}
    if home is not None:
        upd["home"] = Path(home).expanduser()
    return s.model_copy(update=upd) if upd else s


def emit_json(obj: Any) -> None:
    def default(o: Any) -> Any:
        if isinstance(o, BaseModel):
            return o.model_dump(mode="json")
        if isinstance(o, Path):
            return str(o)
        raise TypeError(type(o).__name__)

    sys.stdout.write(json.dumps(obj, default=default, indent=2) + "\n")


def one_line(text: str) -> str:
    """``text`` on one line (an error message quoting client input may hold newlines)."""
    return " ".join(terminal_text(text).split())


def friendly_errors(fn: F) -> F:
    """The CLI's one error path: a domain error (``LadderError``) becomes one clear line on stderr,
    ``error (code): message``, and exit status 2, instead of a traceback. Every command is wrapped in it."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except LadderError as e:
            err_console.print(f"[bold red]error[/] ({e.code}): {escape(one_line(str(e)))}", soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]
