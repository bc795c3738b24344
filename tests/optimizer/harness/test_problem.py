"""Problem loading: KernelBench files unmodified, our extensions, candidates."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kb.errors import InvalidArgument, NotFound
from optimizer.harness.problem import case_label, load_candidate, load_problem

DATA = Path(__file__).parents[1] / "data"

KERNELBENCH_RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 64

def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]

def get_init_inputs():
    return []
'''


def test_kernelbench_file_loads_unmodified(tmp_path: Path) -> None:
    f = tmp_path / "19_ReLU.py"
    f.write_text(KERNELBENCH_RELU)
    p = load_problem(f)
    assert p.name == "19_ReLU"
    assert p.cases == [{}] and p.smoke_cases == [{}]
    (x,) = p.make_inputs({}, seed=3)
    assert x.shape == (16, 64)
    assert torch.equal(p.make_inputs({}, seed=3)[0], x)
    assert not torch.equal(p.make_inputs({}, seed=4)[0], x)
    assert p.flops({}) is None and p.bytes_moved({}) is None
    assert p.tolerance(torch.float32).rtol == pytest.approx(1e-4)
    assert p.tolerance(torch.bfloat16).rtol == pytest.approx(1e-2)
    assert p.tolerance(torch.int32).atol == 0.0


def test_extensions_and_folder() -> None:
    p = load_problem(DATA / "softmax")
    assert p.name == "softmax"
    assert p.cases[0] == {"M": 4096, "N": 1024}
    assert p.cases_for("interpreter") == p.smoke_cases
    assert p.cases_for("cuda") == p.cases
    (x,) = p.make_inputs({"M": 5, "N": 20}, seed=0)
    assert x.shape == (5, 20)
    assert p.flops({"M": 2, "N": 3}) == 30.0
    assert p.bytes_moved({"M": 2, "N": 3}) == 48.0
    assert p.tolerance("float32").atol == pytest.approx(1e-5)
    assert case_label({"N": 3, "M": 2}) == "M=2,N=3" and case_label({}) == "default"
    model = p.make_model({"M": 5, "N": 20})
    assert torch.allclose(model(x).sum(-1), torch.ones(5))


def test_candidate_and_errors(tmp_path: Path) -> None:
    cls = load_candidate(DATA / "softmax" / "initial.py")
    assert cls.__name__ == "ModelNew"
    with pytest.raises(NotFound):
        load_problem(tmp_path / "missing")
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    with pytest.raises(InvalidArgument, match="Model"):
        load_problem(bad)
    with pytest.raises(InvalidArgument, match="ModelNew"):
        load_candidate(bad)
