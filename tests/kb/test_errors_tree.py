"""The exception tree: one registry entry per code, subclasses that keep a parent's code never replace it."""

from __future__ import annotations

import logging
import pickle

import pytest

from kb.errors import InvalidArgument, LadderError, error_for_code, log_error


def test_a_subclass_keeping_its_parents_code_does_not_replace_the_parent() -> None:
    import kb.cardfiles  # noqa: F401  (defines CardFileError(InvalidArgument) without a code of its own)
    from optimizer.harness.contracts import ContractError

    assert error_for_code("invalid_argument") is InvalidArgument
    err = pickle.loads(pickle.dumps(InvalidArgument("bad", field="x")))
    assert type(err) is InvalidArgument and err.field == "x"
    assert issubclass(ContractError, LadderError) and issubclass(ContractError, ValueError)


def test_log_error_logs_type_and_traceback_under_the_id_it_returns(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("test.boundary")
    try:
        raise KeyError("missing")
    except KeyError as exc:
        with caplog.at_level(logging.ERROR, logger="test.boundary"):
            first = log_error(log, exc, "a test boundary")
            second = log_error(log, exc, "a test boundary")
    assert len(first) == 12 and int(first, 16) >= 0 and first != second
    rec = caplog.records[0]
    assert rec.levelno == logging.ERROR and rec.exc_info is not None
    assert rec.getMessage() == f"error {first} in a test boundary: KeyError: 'missing'"
    assert "Traceback" in caplog.text and first in caplog.text and second in caplog.text


def test_log_error_at_debug_is_quiet_at_the_default_level(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="test.quiet"):
        error_id = log_error(logging.getLogger("test.quiet"), ValueError("x"), "a thread", level=logging.DEBUG)
    assert error_id and not caplog.records
