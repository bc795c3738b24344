"""Validation: the element-wise comparison, and planted faulty candidates survived in the sandbox."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from optimizer.harness.evaluation import evaluate
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings
from optimizer.harness.validate import compare_outputs

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def problem():
    return load_problem(DATA / "softmax")


def test_compare_outputs(problem) -> None:
    ref = torch.rand(4, 8) + 0.5
    assert compare_outputs(ref.clone(), ref, problem).passed
    assert compare_outputs(ref * (1 + 5e-5), ref, problem).passed  # inside rtol=1e-4
    bad = ref.clone()
    bad[3, 7] *= 1.01
    r = compare_outputs(bad, ref, problem)
    assert not r.passed and r.reason == "mismatch" and "1/32" in r.message
    nan = ref.clone()
    nan[0, 0] = float("nan")
    assert compare_outputs(nan, ref, problem).reason == "nan"
    assert compare_outputs(ref[:, :-1], ref, problem).reason == "wrong_shape"
    assert compare_outputs(ref.double(), ref, problem).reason == "wrong_dtype"
    assert compare_outputs((ref, ref), ref, problem).reason == "wrong_structure"
    half = ref.to(torch.bfloat16)
    assert compare_outputs(half * (1 + 4e-3), half, problem).passed  # bf16 tolerance ~1e-2
    inf = ref.clone()
    inf[1, 1] = float("inf")
    assert compare_outputs(inf, inf.clone(), problem).passed
    assert compare_outputs(ref, inf, problem).reason == "inf_mismatch"


#: planted candidate -> the failure kind the session must record for it
PLANTED = {
    "hang": "timeout",
    "crash_abort": "crashed",
    "crash_segv": "crashed",
    "wrong": "mismatch",
    "nan": "nan",
    "wrong_shape": "wrong_shape",
    "reference_op": "reference_op_call",
    "no_launch": "no_kernel_launch",
    "cache": "result_caching",
    "wrong_on_probe": "mismatch",
    "compile_error": "kernel_error",
    "oom": "oom",
    "side_stream": "side_stream",
    "timer_patch": "timer_patch",
    "global_patch": "global_patch",
    "input_mutation": "input_mutation",
}


def test_planted_faults_are_survived_and_named(problem) -> None:
    settings = LadderSettings(sandbox_timeout_s=8, sandbox_memory_mb=6000, validation_seeds=[0, 1])
    names = sorted(PLANTED)
    with ThreadPoolExecutor(2) as pool:
        evs = list(pool.map(lambda n: evaluate(problem, DATA / "faulty" / f"{n}.py", backend="interpreter", settings=settings), names))
    got = {n: ev.failure_kind for n, ev in zip(names, evs)}
    assert got == PLANTED
    for ev in evs:
        assert not ev.passed and ev.validation.failure_reason
    honest = evaluate(problem, DATA / "softmax" / "initial.py", backend="interpreter", settings=settings)
    assert honest.passed, honest.reason
    assert honest.launches and honest.launches[0]["kernel"] == "softmax_kernel"
    assert honest.launches[0]["constexprs"] == {"BLOCK_N": 32}


def test_kernelbench_problem_with_parameters_validates() -> None:
    """An unmodified KernelBench file (nn.Linear init from get_init_inputs): same seed, same weights."""
    problem = load_problem(DATA / "kb_gemm_relu")
    assert problem.cases == [{}] and problem.name == "kb_gemm_relu"
    ev = evaluate(problem, DATA / "kb_gemm_relu" / "initial.py", backend="interpreter",
                  settings=LadderSettings(validation_seeds=[0, 1]))
    assert ev.passed, ev.reason
    assert ev.launches[0]["kernel"] == "gemm_relu_kernel" and ev.launches[0]["grid"] == [1, 1]
