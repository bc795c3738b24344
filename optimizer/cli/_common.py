"""Shared CLI helpers: settings, output, error reporting."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from kb.errors import LadderError, log_error
from kb.sanitize import terminal_text
from kb.settings import Settings

log = logging.getLogger(__name__)


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
P = ParamSpec("P")
R = TypeVar("R")

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


def _say_error(code: str, message: str) -> None:
    err_console.print(f"[bold red]error[/] ({code}): {escape(one_line(message))}", soft_wrap=True)


def attach_log_file(path: Path) -> logging.Handler:
    """Send this process's log records to ``path`` (appended; its folder is created): the project's own loggers
    (``kb``, ``retrieval``, ``synthesis``, ``optimizer``) from DEBUG, third-party ones from INFO, tracebacks included.
    Broad catches inside a command log what they caught, with an error id, at INFO or DEBUG; this file is where those
    ids lead (``ladder --log-file F ...``). The terminal keeps what it showed: WARNING and up on stderr."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    if not root.handlers:  # Python's last-resort stderr handler stops once the root has one: keep its behaviour
        terminal = logging.StreamHandler()
        terminal.setLevel(logging.WARNING)
        root.addHandler(terminal)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    for name in ("kb", "retrieval", "synthesis", "optimizer"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    return handler


def friendly_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """The CLI's one error path: a domain error (``LadderError``) becomes one clear line on stderr,
    ``error (code): message``, and exit status 2, instead of a traceback. Every command is wrapped in it.
    Anything else is one line too: invalid settings (a pydantic error, e.g. a malformed LADDER_TOKENS) and
    operating-system errors as exit 2, a damaged SQLite file as ``storage``, and an unexpected error as
    ``internal`` with exit 1 (``LADDER_DEBUG=1`` shows its traceback)."""

    @wraps(fn)
    def wrapper(*a: P.args, **kw: P.kwargs) -> R:
        import os
        import sqlite3

        import click
        from pydantic import ValidationError

        try:
            return fn(*a, **kw)
        except LadderError as e:
            _say_error(e.code, str(e))
            raise typer.Exit(2) from None
        except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort, click.ClickException,
                KeyboardInterrupt):  # typer's own Exit/Abort are not click's (typer >= 0.16)
            raise
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or e.title
            _say_error("invalid_argument", f"{e.title}: {where}: {err['msg']}")
            raise typer.Exit(2) from None
        except sqlite3.DatabaseError as e:
            _say_error("storage", f"the KB store is damaged ({e}); `ladder kb export --salvage DIR --home HOME` "
                       "saves every readable card")
            raise typer.Exit(2) from None
        except OSError as e:
            _say_error("os", f"{e.strerror or e}{': ' + str(e.filename) if getattr(e, 'filename', None) else ''}")
            raise typer.Exit(2) from None
        except Exception as e:  # noqa: BLE001 - CLI command boundary, the last resort: one line, never a traceback
            if os.environ.get("LADDER_DEBUG"):
                raise
            # the traceback goes to the command's log where it has one (`ladder serve`), never to the terminal
            level = logging.ERROR if logging.getLogger().handlers else logging.DEBUG
            error_id = log_error(log, e, f"command {fn.__name__}", level=level)
            _say_error("internal", f"error {error_id}: {type(e).__name__}: {e} (its traceback: run again with "
                       "LADDER_DEBUG=1, or with --log-file F / LADDER_LOG_FILE=F and look for the id in F)")
            raise typer.Exit(1) from None

    return wrapper
