"""Backend selection: a named backend is validated up front and an unknown one lists the valid ones."""

from __future__ import annotations

import pytest

from kb.errors import InvalidArgument
from optimizer.backend import BACKENDS, check_backend, detect_backend, parse_backend
from optimizer.proposers.factory import make_proposer
from optimizer.settings import LadderSettings


def test_an_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidArgument, match="use one of cuda, interpreter, ascend") as exc:
        check_backend("rocm")
    assert "AMD GPUs are not supported yet" in str(exc.value) and exc.value.field == "backend"
    with pytest.raises(InvalidArgument, match="unknown backend 'tpu'"):
        parse_backend("tpu")


def test_other_spellings_are_normalised_at_the_boundary() -> None:
    assert [parse_backend(n) for n in ("CUDA", " gpu", "cpu", "triton_interpret", "Interpreter", "npu")] == [
        "cuda", "cuda", "interpreter", "interpreter", "interpreter", "ascend"]
    assert check_backend("CPU") == "interpreter"
    assert BACKENDS == ("cuda", "interpreter", "ascend")


def test_no_backend_is_the_detected_one_and_the_interpreter_always_runs() -> None:
    assert check_backend(None) == detect_backend() in BACKENDS
    assert check_backend("interpreter") == "interpreter"


def test_the_proposer_factory_knows_offline_and_refuses_others() -> None:
    assert make_proposer("offline", LadderSettings()).name == "offline"
    with pytest.raises(InvalidArgument, match="use offline or llm"):
        make_proposer("gpt", LadderSettings())
