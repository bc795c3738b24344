"""Backend selection: a named backend is validated up front and an unknown one lists the valid ones."""

from __future__ import annotations

import pytest

from kb.errors import InvalidArgument
from optimizer.backend import BACKENDS, check_backend, detect_backend
from optimizer.proposers.factory import make_proposer
from optimizer.settings import LadderSettings


def test_an_unknown_backend_lists_the_valid_ones_and_names_the_cpu_one() -> None:
    with pytest.raises(InvalidArgument, match="use one of cuda, interpreter, ascend") as exc:
        check_backend("cpu")
    assert "the CPU backend is called 'interpreter'" in str(exc.value)


def test_no_backend_is_the_detected_one_and_the_interpreter_always_runs() -> None:
    assert check_backend(None) == detect_backend() in BACKENDS
    assert check_backend("interpreter") == "interpreter"


def test_the_proposer_factory_knows_offline_and_refuses_others() -> None:
    assert make_proposer("offline", LadderSettings()).name == "offline"
    with pytest.raises(InvalidArgument, match="use offline or llm"):
        make_proposer("gpt", LadderSettings())
