"""Onboarding rules end to end in the sandbox: in-place outputs, compile-only CPU checks, Triton 3.6."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.compile_only import STATIC_ONLY
from optimizer.evaluation import evaluate
from optimizer.problem import load_problem
from optimizer.settings import LadderSettings
from optimizer.triton_env import find_triton_python

DATA = Path(__file__).parent / "data" / "onboard"


def _eval(problem: str | Path, candidate: str, **settings):
    p = load_problem(DATA / problem)
    return evaluate(p, p.path.parent / candidate, backend="interpreter", settings=LadderSettings(**settings))


def test_declared_inplace_output_is_validated_like_an_output() -> None:
    good = _eval("inplace_scale", "initial.py")
    assert good.passed, good.reason
    assert "input_mutation" not in good.validation.hack_flags
    wrong = _eval("inplace_scale", "out_of_place.py")  # right return value, input left unchanged
    assert not wrong.passed
    assert "in-place input 0" in wrong.validation.failure_reason


def test_undeclared_inplace_mutation_is_rejected_with_the_declaration_to_use() -> None:
    ev = _eval("inplace_scale/undeclared.py", "initial.py")
    assert not ev.passed and "input_mutation" in ev.validation.hack_flags
    assert "INPLACE_OUTPUTS = [0]" in ev.validation.failure_reason


def test_libdevice_kernel_is_compiled_only_on_cpu_and_says_so() -> None:
    ev = _eval("tanh_libdevice", "initial.py")
    assert ev.passed and ev.static_only, ev.reason
    assert STATIC_ONLY in ev.reason and "libdevice" in ev.reason
    assert all(STATIC_ONLY in c.message for c in ev.validation.cases)
    assert ev.versions.get("triton")  # the Triton version is part of the result


def test_block_pointers_under_triton_39_fail_with_the_env_to_create() -> None:
    import triton

    if triton.__version__.startswith("3.6"):
        pytest.skip("the main environment has Triton 3.6: block pointers run there")
    ev = _eval("blockptr_copy", "initial.py")
    assert not ev.passed and ev.static_only
    assert "triton36-env" in ev.reason


def test_block_pointers_validate_with_the_triton36_env() -> None:
    py = find_triton_python("3.6")
    if py is None:
        pytest.skip("no Triton 3.6 environment: run `make triton36-env` (about 10-70 s) to enable this test")
    ev = _eval("blockptr_copy", "initial.py", triton_python=str(py))
    assert ev.passed, ev.reason
    assert not ev.static_only  # the 3.6 interpreter executes block pointers
    assert ev.versions["triton"].startswith("3.6")
