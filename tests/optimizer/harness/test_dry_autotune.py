"""A dry launch record (static diagnosis on CPU) of an autotuned kernel keeps the autotuner's FIRST config: no
kernel runs, so any timing is noise, and a noise-picked config made L3 compile a different specialization on
every run."""

from __future__ import annotations

import shutil
from pathlib import Path

from optimizer.harness.evaluation import record_launches
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data"

PROBLEM = '''
import torch
import torch.nn as nn

CASES = [{"N": 1 << 20}]
SMOKE_CASES = [{"N": 3000}]


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


def get_inputs(N=4096):
    return [torch.randn(N)]


def get_init_inputs(**case):
    return []
'''


def test_dry_records_keep_the_first_autotune_config(tmp_path: Path) -> None:
    (tmp_path / "problem.py").write_text(PROBLEM)
    shutil.copy(DATA / "autotuned_silu" / "candidate.py", tmp_path / "initial.py")
    prob = load_problem(tmp_path)
    picks = []
    for _ in range(3):
        launches, note, _case = record_launches(prob, tmp_path / "initial.py", LadderSettings())
        assert launches, note
        chosen = max(launches, key=lambda r: r["launches"])  # benchmarked once each; the chosen one also ran
        picks.append((chosen["constexprs"].get("BLOCK_SIZE"), chosen["launches"]))
    assert picks == [(512, 2)] * 3, picks
