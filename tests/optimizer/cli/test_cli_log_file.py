"""``ladder --log-file F`` / ``LADDER_LOG_FILE``: where the error id an unexpected failure prints leads."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from optimizer.cli._common import friendly_errors
from optimizer.cli.app import global_options


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {n: logging.getLogger(n).level for n in ("kb", "retrieval", "synthesis", "optimizer")}
    yield
    for h in root.handlers[:]:
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    root.setLevel(level)
    for n, lv in levels.items():
        logging.getLogger(n).setLevel(lv)


def _app() -> typer.Typer:
    a = typer.Typer()
    a.callback()(global_options)

    @a.command()
    @friendly_errors
    def boom() -> None:
        logging.getLogger("optimizer.harness.x").debug("a quiet note from inside the command")
        raise RuntimeError("a bug deep in the command")

    return a


@pytest.mark.parametrize("via_env", [False, True])
def test_the_printed_error_id_is_found_in_the_log_file(tmp_path: Path, restore_logging: None, via_env: bool) -> None:
    log = tmp_path / "logs" / "ladder.log"
    args, env = (["boom"], {"LADDER_LOG_FILE": str(log)}) if via_env else (["--log-file", str(log), "boom"], {})
    res = CliRunner().invoke(_app(), args, env=env)
    assert res.exit_code == 1
    m = re.search(r"error ([0-9a-f]{12})", res.output)
    assert m and "--log-file" in res.output and "Traceback" not in res.output  # one line on the terminal
    for h in logging.getLogger().handlers:
        h.flush()
    text = log.read_text()
    assert m.group(1) in text and "Traceback" in text and "RuntimeError: a bug deep in the command" in text
    assert "a quiet note from inside the command" in text  # the project's DEBUG records reach the file


def test_without_a_log_file_nothing_is_attached(restore_logging: None) -> None:
    before = list(logging.getLogger().handlers)
    res = CliRunner().invoke(_app(), ["boom"], env={"LADDER_LOG_FILE": ""})
    assert res.exit_code == 1 and "error " in res.output
    assert logging.getLogger().handlers == before
