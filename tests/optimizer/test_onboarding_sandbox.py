"""Onboarding rules end to end in the sandbox: in-place outputs, compile-only CPU checks, Triton 3.6."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.harness.compile_only import STATIC_ONLY
from optimizer.harness.evaluation import evaluate
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings
from optimizer.harness.triton_env import find_triton_python

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


@pytest.mark.slow  # a fresh worker process (no zygote) per compile-only or Triton 3.6 run
def test_libdevice_kernel_is_compiled_only_on_cpu_and_says_so() -> None:
    ev = _eval("tanh_libdevice", "initial.py")
    assert ev.passed and ev.static_only, ev.reason
    assert STATIC_ONLY in ev.reason and "libdevice" in ev.reason
    assert all(STATIC_ONLY in c.message for c in ev.validation.cases)
    assert ev.versions.get("triton")  # the Triton version is part of the result


@pytest.mark.slow  # a fresh worker process (no zygote) per compile-only or Triton 3.6 run
def test_block_pointers_under_triton_39_use_the_36_env_or_say_how_to_create_it(monkeypatch) -> None:
    import triton

    import optimizer.harness.triton_env as env

    if triton.__version__.startswith("3.6"):
        pytest.skip("the main environment has Triton 3.6: block pointers run there")
    py = find_triton_python("3.6")
    if py is not None:  # detected on 3.9, then validated (executed) by the 3.6 interpreter
        ev = _eval("blockptr_copy", "initial.py")
        assert ev.passed and not ev.static_only and ev.versions["triton"].startswith("3.6")
        assert "block pointers" in ev.reason and "Triton 3.6" in ev.reason
    monkeypatch.setattr(env, "find_triton_python", lambda version=None: None)  # as on a machine without the env
    ev = _eval("blockptr_copy", "initial.py")
    assert not ev.passed and ev.static_only
    assert "triton36-env" in ev.reason


@pytest.mark.slow  # a fresh worker process (no zygote) per compile-only or Triton 3.6 run
def test_worked_example_is_compiled_only_on_cpu_as_declared() -> None:
    folder = Path(__file__).parents[2] / "benchmarks" / "realistic" / "onboard_liger_geglu"
    ev = _eval(folder, "initial.py")
    assert ev.passed and ev.static_only, ev.reason
    assert 'CPU_VALIDATION = "compile_only"' in ev.reason


@pytest.mark.slow  # a fresh worker process (no zygote) per compile-only or Triton 3.6 run
def test_block_pointers_validate_with_the_triton36_env() -> None:
    py = find_triton_python("3.6")
    if py is None:
        pytest.skip("no Triton 3.6 environment: run `make triton36-env` (about 10-70 s) to enable this test")
    ev = _eval("blockptr_copy", "initial.py", triton_python=str(py))
    assert ev.passed, ev.reason
    assert not ev.static_only  # the 3.6 interpreter executes block pointers
    assert ev.versions["triton"].startswith("3.6")
