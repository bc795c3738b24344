"""UNSEEN_CASES on the interpreter: the selected best is validated on cases the session never saw, and flagged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from optimizer.harness.problem import load_problem
from optimizer.proposers.offline import OfflineProposer
from optimizer.round.unseen import derived_unseen_cases, unseen_cases
from optimizer.session import Session
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"
SETTINGS = LadderSettings(validation_seeds=[0], sandbox_timeout_s=60)
#: smallest first: N=8 passes a 32-wide kernel, N=64 fails it, N=100 is then never run
UNSEEN = 'UNSEEN_CASES = [{"M": 7, "N": 100}, {"M": 6, "N": 64}, {"M": 2, "N": 8}]\n'


def _problem(tmp_path: Path, candidate_source: str, unseen: str = UNSEEN) -> Path:
    folder = tmp_path / "softmax"
    folder.mkdir()
    (folder / "problem.py").write_text((DATA / "softmax" / "problem.py").read_text().replace(
        'SMOKE_CASES = [{"M": 8, "N": 32}, {"M": 5, "N": 20}]', 'SMOKE_CASES = [{"M": 4, "N": 32}, {"M": 3, "N": 16}]\n' + unseen))
    (folder / "initial.py").write_text(candidate_source)
    return folder


def _run(folder: Path, tmp_path: Path):
    return Session(folder, None, kb=FakeKB(LADDER_CARDS), settings=SETTINGS, backend="interpreter", proposer=OfflineProposer(),
                   out_dir=tmp_path / "out").run(0)


def test_a_best_that_fails_unseen_cases_is_flagged(tmp_path: Path) -> None:
    fixed = (DATA / "softmax" / "initial.py").read_text().replace("BLOCK_N = triton.next_power_of_2(n_cols)", "BLOCK_N = 32")
    traj = _run(_problem(tmp_path, fixed), tmp_path)
    assert traj.rounds[0].validation.passed and traj.best_round == 0  # every seen case fits in 32 columns
    u = traj.unseen
    assert u is not None and not u.passed and u.flags == ["fails_unseen"] and "N=64" in u.failure_reason
    assert len(u.cases) == 3 and u.unseen_speedup is None
    assert [c.case for c in u.validation.cases] == ["M=2,N=8", "M=6,N=64"]  # smallest first, stopped at the failure


def test_a_general_best_passes_unseen_cases(tmp_path: Path) -> None:
    traj = _run(_problem(tmp_path, (DATA / "softmax" / "initial.py").read_text()), tmp_path)
    u = traj.unseen
    assert u is not None and u.passed and u.flags == [] and u.failure_reason == ""
    assert u.timing.protocol.method == "unavailable-interpreter"  # validated only: the interpreter does not time


def test_unseen_cases_too_large_for_the_interpreter_are_skipped(tmp_path: Path) -> None:
    big = 'UNSEEN_CASES = [{"M": 4096, "N": 4096}]\n'
    traj = _run(_problem(tmp_path, (DATA / "softmax" / "initial.py").read_text(), unseen=big), tmp_path)
    u = traj.unseen
    assert u.passed is None and u.cases == [] and u.skipped == [{"M": 4096, "N": 4096}] and "too large" in u.note
    assert u.flags == []


def test_unseen_cases_must_be_a_list_of_dicts(tmp_path: Path) -> None:
    folder = _problem(tmp_path, "", unseen='UNSEEN_CASES = {"M": 3}\n')
    with pytest.raises(Exception, match="UNSEEN_CASES must be a list of dicts"):
        unseen_cases(load_problem(folder))
    shutil.rmtree(folder)


def _small_problem(tmp_path: Path, candidate_source: str) -> Path:
    """The softmax problem with one small seen case (runnable in the interpreter) and no UNSEEN_CASES."""
    folder = _problem(tmp_path, candidate_source, unseen="")
    text = (folder / "problem.py").read_text()
    start = text.index("CASES = [")
    (folder / "problem.py").write_text(text[:start] + 'CASES = [{"M": 6, "N": 40}]' + text[text.index("\n", start):])
    return folder


def test_a_case_is_derived_from_the_largest_when_none_is_declared() -> None:
    problem = load_problem(DATA / "softmax")
    assert unseen_cases(problem) == []
    # 4096x1024 and 8192x512 move the same bytes: the first is the largest; every size >= 32 becomes odd, ~20% smaller
    assert derived_unseen_cases(problem) == [{"M": 3277, "N": 819}]


def test_a_derived_case_checks_the_best_where_the_initial_kernel_validates(tmp_path: Path) -> None:
    traj = _run(_small_problem(tmp_path, (DATA / "softmax" / "initial.py").read_text()), tmp_path)
    u = traj.unseen
    assert u is not None and u.source == "derived" and u.cases == [{"M": 6, "N": 33}]
    assert u.passed and u.flags == []


def test_a_derived_case_outside_the_initial_kernels_domain_makes_no_claim(tmp_path: Path) -> None:
    even_only = (DATA / "softmax" / "initial.py").read_text().replace(
        "BLOCK_N = triton.next_power_of_2(n_cols)", "assert n_cols % 2 == 0, 'even rows only'\n        BLOCK_N = triton.next_power_of_2(n_cols)")
    assert "even rows only" in even_only
    traj = _run(_small_problem(tmp_path, even_only), tmp_path)
    u = traj.unseen
    assert u is not None and u.source == "derived" and u.passed is None and u.flags == []
    assert "does not validate on the initial kernel" in u.note and "even rows only" in u.note
