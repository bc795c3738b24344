"""The suite runner on the CPU interpreter: sessions over two operators, the time budget, resuming, packing.

One module fixture drives three invocations over the same result dir: (1) a 1-second budget, so the first
operator's session is cut after its first round and the second is not started; (2) no budget: the first is
skipped as complete and the second runs its two rounds; (3) nothing left to do. The KB is an empty in-memory
client (every round is inconclusive), which keeps the test to the runner's own logic plus real sessions.
"""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from kb.errors import NotFound
from kb.models.search import CardPage

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "suite"
sys.path.insert(0, str(SUITE))

import runner  # noqa: E402
from _results import read_json, read_jsonl  # noqa: E402

OPS = ["relu", "softmax"]


class EmptyKB:
    """A KBClient with no cards: quick-match and search find nothing; trajectories are kept."""

    def __init__(self) -> None:
        self.trajectories: list[Any] = []

    def search(self, query: Any) -> list[Any]:
        return []

    def quick_match(self, query: Any) -> list[Any]:
        return []

    def get_invariants(self, query: Any) -> list[Any]:
        return []

    def get_card(self, card_id: str, version: int | None = None) -> Any:
        raise NotFound(f"no card {card_id}")

    def list_cards(self, filter: Any, page_size: int = 50, cursor: str = "") -> CardPage:
        return CardPage(cards=[], total=0)

    def upsert_card(self, card: Any) -> Any:
        return card

    def set_card_status(self, card_id: str, status: str, reason: str = "") -> Any:
        raise NotFound(card_id)

    def submit_trajectory(self, trajectory: Any) -> bool:
        self.trajectories.append(trajectory)
        return True

    def close(self) -> None:
        pass


def _invoke(out: Path, *extra: str) -> tuple[int, list[str]]:
    from optimizer.settings import LadderSettings

    logs: list[str] = []
    settings = LadderSettings(validation_seeds=[0], sandbox_timeout_s=120)
    rc = runner.main(["--backend", "interpreter", "--ops", *OPS, "--rounds", "2", "--out", str(out), *extra],
                     kb=EmptyKB(), settings=settings, log=logs.append)
    return rc, logs


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("suite")
    pack = out.parent / "suite-pack.tar.gz"
    first = _invoke(out, "--budget-s", "1", "--pack", str(pack))
    after_first = {op: read_json(out / op / "result.json") for op in OPS}
    second = _invoke(out)
    after_second = {op: read_json(out / op / "result.json") for op in OPS}
    third = _invoke(out)
    return {"out": out, "pack": pack, "logs": [first[1], second[1], third[1]], "rcs": [first[0], second[0], third[0]],
            "after_first": after_first, "after_second": after_second,
            "after_third": {op: read_json(out / op / "result.json") for op in OPS}}


@pytest.mark.slow
def test_budget_cuts_the_session_and_stops_before_the_next_operator(three_runs) -> None:
    first = three_runs["after_first"]
    relu = first["relu"]
    assert three_runs["rcs"][0] == 0
    assert relu["status"] == "done" and relu["backend"] == "interpreter"
    assert relu["session"]["truncated"] and relu["session"]["rounds_run"] == 1  # round 2 did not fit the budget
    assert relu["session"]["best_round"] == 0 and relu["session"]["baseline_passed"]
    assert (three_runs["out"] / "relu" / "session" / "best.py.txt").is_file()  # sources stored as data
    assert first["softmax"] is None  # never started
    assert any(line.startswith("budget:") for line in three_runs["logs"][0])


@pytest.mark.slow
def test_resume_runs_what_is_left_and_skips_what_is_done(three_runs) -> None:
    second, out = three_runs["after_second"], three_runs["out"]
    assert second["relu"]["updated"] == three_runs["after_first"]["relu"]["updated"]  # untouched
    soft = second["softmax"]
    assert soft["status"] == "done" and not soft["session"]["truncated"]
    assert soft["session"]["rounds_run"] == 2 and [r["index"] for r in soft["session"]["rounds"]] == [0, 1, 2]
    assert soft["session"]["max_level"] == "L4"  # an empty KB: every round climbs the whole ladder, inconclusive
    traj = json.loads((out / "softmax" / "session" / "trajectory.json").read_text())
    assert traj["finished"] and traj["backend"] == "interpreter" and len(traj["rounds"]) == 3
    # the interpreter checks correctness only: no case carries a time
    assert all("eager_ms" not in c and c["flops"] and c["bytes"] for c in soft["cases"])
    assert len(soft["cases"]) == 2  # the SMOKE_CASES
    assert any("1 complete, 1 to run" in line for line in three_runs["logs"][1])
    assert three_runs["after_third"] == second
    assert any("2 complete, 0 to run" in line for line in three_runs["logs"][2])
    starts = [r for r in read_jsonl(out / "runs.jsonl") if r["event"] == "start"]
    assert len(starts) == 3 and all(r["provenance"]["versions"] for r in starts)


@pytest.mark.slow
def test_pack_holds_the_results_and_unpacks_elsewhere(three_runs, tmp_path: Path) -> None:
    with tarfile.open(three_runs["pack"]) as tar:
        names = tar.getnames()
    assert "relu/result.json" in names and "relu/session/trajectory.json" in names and "runs.jsonl" in names
    assert not any("/ir/" in n or n.endswith(".tmp") for n in names)
    dest = tmp_path / "restored"
    assert runner.main(["--unpack", str(three_runs["pack"]), "--out", str(dest), "--no-run"]) == 0
    assert read_json(dest / "relu" / "result.json") == three_runs["after_first"]["relu"]


def _result(tmp: Path, op: str, **fields: Any) -> None:
    d = tmp / op
    d.mkdir(parents=True, exist_ok=True)
    (d / "result.json").write_text(json.dumps({"op": op, **fields}))


def test_todo_decides_what_a_run_resumes(tmp_path: Path) -> None:
    args = runner.parse_args(["--backend", "cuda", "--out", str(tmp_path)])
    r = runner.Runner(args, log=lambda _m: None)
    _result(tmp_path, "a", status="done", backend="cuda", attempts=1, compile={"status": "ok"})
    _result(tmp_path, "b", status="running", backend="cuda", attempts=1)  # killed mid-session
    _result(tmp_path, "c", status="running", backend="cuda", attempts=2)  # killed twice: given up
    _result(tmp_path, "d", status="done", backend="interpreter", attempts=1)
    _result(tmp_path, "e", status="done", backend="cuda", attempts=1, compile={"status": "timeout", "attempts": 1})
    _result(tmp_path, "f", status="failed", backend="cuda", attempts=1)
    assert r.todo("a") is None and r.todo("c") is None
    assert r.todo("b") == "running before" and r.todo("f") == "failed before"
    assert r.todo("d").startswith("backend interpreter") and r.todo("e") == "torch.compile missing"
    assert r.todo("new-op") == "new" and r.todo("a", redo=True) == "redo"
    r.a.compile = False
    assert r.todo("e") is None


def test_unpack_refuses_members_outside_the_dir(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    payload = tmp_path / "x.txt"
    payload.write_text("x")
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(payload, arcname="../escaped.txt")
    with pytest.raises(tarfile.TarError):
        runner.unpack(evil, tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()


def test_unpacking_parallel_runs_merges_their_logs(tmp_path: Path) -> None:
    """Two GPUs, two packs: operator folders from both, and both runs' provenance lines in runs.jsonl."""
    packs = []
    for gpu, op in ((0, "relu"), (1, "softmax")):
        d = tmp_path / f"gpu{gpu}"
        (d / op).mkdir(parents=True)
        (d / op / "result.json").write_text(json.dumps({"status": "done"}))
        (d / "runs.jsonl").write_text('{"run": "first"}\n' + json.dumps({"run": f"gpu{gpu}"}) + "\n")
        packs.append(runner.pack(d, tmp_path / f"gpu{gpu}.tar.gz"))
    dest = tmp_path / "merged"
    for pk in packs:
        runner.unpack(pk, dest)
    assert (dest / "relu" / "result.json").exists() and (dest / "softmax" / "result.json").exists()
    runs = [json.loads(ln)["run"] for ln in (dest / "runs.jsonl").read_text().splitlines()]
    assert runs == ["first", "gpu0", "gpu1"]


@pytest.mark.parametrize(("op_s", "started"), [(80.0, ["relu"]), (500.0, ["relu", "softmax"])])
def test_budget_waits_for_a_fresh_run_only_when_a_whole_operator_fits_one(tmp_path: Path, monkeypatch, op_s: float,
                                                                        started: list[str]) -> None:
    """Budget 100 s, 50 s left after the first operator: an operator of 80 s waits for the next invocation; one
    of 500 s fits no invocation, so it starts as soon as its minimum (baseline, one round, measurements) fits."""
    args = runner.parse_args(["--backend", "interpreter", "--ops", *OPS, "--out", str(tmp_path), "--budget-s", "100"])
    r = runner.Runner(args, log=lambda _m: None)
    ran: list[str] = []

    def fake_op(op: str) -> dict[str, Any]:
        ran.append(op)
        r.deadline = runner.time.time() + 50
        return {"status": "done"}

    monkeypatch.setattr(r, "run_op", fake_op)
    monkeypatch.setattr(r, "estimates", lambda: {"op": op_s, "minimum": 30.0})
    assert r.run() == 0
    assert ran == started


def test_measurements_merge_into_cases_and_name_what_is_missing() -> None:
    from _measure import merge_compile, merge_times

    cases = [{"label": "N=1", "case": {"N": 1}}, {"label": "N=2", "case": {"N": 2}}]
    stats = {"median_ms": 0.5}
    recs = [{"kind": "device", "device": "NVIDIA H200"},
            {"label": "N=1", "what": "eager", "status": "ok", "stats": stats},
            {"label": "N=1", "what": "initial", "status": "ok",
             "stats": {"median_ms": 2.0, "method": "cudagraph", "host": {"wall_ms": 2.5, "launch_ms": 0.02}}},
            {"label": "N=1", "what": "best", "status": "ok", "stats": {"median_ms": 1.0}},
            {"label": "N=2", "what": "eager", "status": "ok", "stats": stats},
            {"label": "N=2", "what": "initial", "status": "ok", "stats": stats},
            {"label": "N=2", "what": "best", "status": "mismatch", "message": "3 elements differ"}]
    session = {"best_round": 1, "rounds": [{"index": 0, "case_ms": {"N=1": 2.1}}, {"index": 1, "case_ms": {"N=1": 0.9}}]}
    missing, fatal = merge_times(cases, recs, ["initial", "best"], session)
    assert (cases[0]["initial_ms"], cases[0]["best_ms"], cases[0]["eager_ms"]) == (2.0, 1.0, 0.5)
    assert (cases[0]["session_initial_ms"], cases[0]["session_best_ms"]) == (2.1, 0.9)
    assert (cases[0]["initial_method"], cases[0]["initial_host_ms"], cases[0]["best_method"]) == ("cudagraph", 2.5, "do_bench")
    assert cases[1]["best_ms"] is None and cases[1]["best_status"] == "mismatch"
    assert missing == ["N=2 best: mismatch 3 elements differ"] and fatal == []
    comp = [{"label": "N=1", "what": "compile", "status": "ok", "stats": stats, "compile_s": 9.0, "check": {"ok": True}}]
    status, msgs = merge_compile(cases, comp, -9)  # killed at its time box before the second case
    assert status == "timeout" and cases[0]["compile_ms"] == 0.5 and cases[1]["compile_status"] == "missing"
    assert msgs == ["N=2: missing "]


def test_measure_worker_reports_a_missing_gpu(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this checks the no-GPU path")
    from _measure import spawn

    rc, recs = spawn({"task": "ceilings", "timing": {}}, tmp_path / "c.jsonl", 120, ROOT)
    assert rc == 2 and recs == [{"kind": "device", "status": "error", "message": "no CUDA device"}]


@pytest.mark.gpu
def test_measure_worker_times_eager_candidates_and_compile_on_gpu(tmp_path: Path) -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from _measure import spawn

    case = {"M": 8192, "N": 8192, "dtype": "float32"}
    timing = {"warmup_ms": 5, "rep_ms": 20, "flush_bytes": 256 << 20}
    req = {"problem": str(SUITE / "relu" / "problem.py"), "cases": [case], "timing": timing, "seed": 0}
    rc, recs = spawn({**req, "task": "times", "candidates": {"initial": str(SUITE / "relu" / "initial.py")}},
                     tmp_path / "t.jsonl", 300, ROOT)
    got = {r["what"]: r for r in recs if r.get("label")}
    assert rc == 0 and got["eager"]["status"] == "ok" and got["initial"]["status"] == "ok", recs
    assert got["initial"]["check"]["ok"] and 0 < got["initial"]["stats"]["median_ms"] < 100
    rc, recs = spawn({**req, "task": "compile"}, tmp_path / "c.jsonl", 300, ROOT)
    comp = [r for r in recs if r.get("what") == "compile"]
    assert rc == 0 and comp[0]["status"] == "ok" and comp[0]["check"]["ok"], recs


def test_naive_set_has_its_own_dir_and_never_mixes(tmp_path: Path) -> None:
    assert Path(runner.parse_args(["--initial", "naive"]).out) == runner.DEFAULT_OUTS["naive"]
    assert Path(runner.parse_args([]).out) == runner.DEFAULT_OUT
    naive = runner.Runner(runner.parse_args(["--initial", "naive", "--out", str(tmp_path)]), log=lambda _m: None)
    assert naive.initial_file("relu") == SUITE / "relu" / "naive.py"
    _result(tmp_path, "relu", status="done", backend="cuda", attempts=1)  # predates the field: the initial set
    with pytest.raises(SystemExit, match="another set than suite naive.py"):
        runner.main(["--initial", "naive", "--backend", "interpreter", "--out", str(tmp_path)])
    assert not (tmp_path / "runs.jsonl").exists()  # refused before anything ran


def test_realistic_set_runs_the_real_kernels_in_their_own_dir(tmp_path: Path) -> None:
    real = ROOT / "benchmarks" / "realistic"
    args = runner.parse_args(["--set", "realistic"])
    assert Path(args.out) == runner.REALISTIC_OUT
    r = runner.Runner(runner.parse_args(["--set", "realistic", "--out", str(tmp_path)]), log=lambda _m: None)
    assert r.initial_file("liger_rope") == real / "liger_rope" / "initial.py"
    assert "liger_rope" in r.select_ops() and "relu" not in r.select_ops()
    with pytest.raises(SystemExit, match="unknown operator.*relu.*benchmarks/realistic"):
        runner.Runner(runner.parse_args(["--set", "realistic", "--ops", "relu", "--out", str(tmp_path)]), log=print).select_ops()
    with pytest.raises(SystemExit):  # the published code is the starting point: no naive set there
        runner.parse_args(["--set", "realistic", "--initial", "naive"])
    _result(tmp_path, "liger_rope", status="done", backend="cuda", attempts=1)  # a suite result (no set field)
    with pytest.raises(SystemExit, match="another set than realistic initial.py.*results/realistic/campaign"):
        runner.main(["--set", "realistic", "--backend", "interpreter", "--out", str(tmp_path)])


def test_diagnosis_set_runs_one_half_and_times_the_reference_fix_beside_the_best(tmp_path: Path, monkeypatch) -> None:
    from benchmarks.diagnosis.dataset import load_items

    assert Path(runner.parse_args(["--set", "diagnosis"]).out) == runner.DIAGNOSIS_OUT
    r = runner.Runner(runner.parse_args(["--set", "diagnosis", "--split", "eval", "--out", str(tmp_path)]), log=lambda _m: None)
    assert r.select_ops() == sorted(i.name for i in load_items("eval"))
    assert not set(r.select_ops()) & {i.name for i in load_items("tune")}
    with pytest.raises(SystemExit):  # a half of the labelled set means nothing elsewhere
        runner.parse_args(["--split", "eval"])
    seen: dict = {}

    def worker(req, res, timeout):
        seen.update(req)
        return 0, []

    monkeypatch.setattr(r, "_worker", worker)
    r.measure_times("axpby", {"cases": [], "session": {"rounds": []}})
    assert seen["candidates"]["fix"].endswith("benchmarks/diagnosis/axpby/fix.py")
    assert seen["candidates"]["initial"].endswith("benchmarks/diagnosis/axpby/initial.py")
    suite = runner.Runner(runner.parse_args(["--out", str(tmp_path / "s")]), log=lambda _m: None)
    monkeypatch.setattr(suite, "_worker", worker)
    suite.measure_times("relu", {"cases": [], "session": {"rounds": []}})
    assert "fix" not in seen["candidates"]  # only the labelled set has reference fixes


@pytest.mark.slow
def test_naive_session_starts_from_naive_py(tmp_path: Path) -> None:
    from optimizer.settings import LadderSettings

    out = tmp_path / "naive"
    settings = LadderSettings(validation_seeds=[0], sandbox_timeout_s=120)
    rc = runner.main(["--backend", "interpreter", "--initial", "naive", "--ops", "relu", "--rounds", "0", "--out", str(out)],
                     kb=EmptyKB(), settings=settings, log=lambda _m: None)
    r = read_json(out / "relu" / "result.json")
    assert rc == 0 and r["status"] == "done" and r["initial"] == "naive" and r["session"]["baseline_passed"]
    assert (out / "relu" / "session" / "round_00.py.txt").read_text() == (SUITE / "relu" / "naive.py").read_text()
    assert read_jsonl(out / "runs.jsonl")[0]["args"]["initial"] == "naive"
    with pytest.raises(SystemExit, match="another set"):
        runner.main(["--backend", "interpreter", "--ops", "relu", "--rounds", "0", "--out", str(out)],
                    kb=EmptyKB(), settings=settings, log=lambda _m: None)


def test_unpacked_candidate_sources_are_data_and_turn_back_into_code(tmp_path: Path) -> None:
    """Round files come out of a pack as ``.py.txt`` (results, not code) and go back to ``.py`` for a resume."""
    src = tmp_path / "gpu0"
    (src / "relu" / "session").mkdir(parents=True)
    (src / "relu" / "session" / "round_00.py").write_text("x = 1\n")
    (src / "relu" / "session" / "best.py").write_text("x = 2\n")
    (src / "relu" / "result.json").write_text("{}")
    (src / "cluster" / "sessions" / "relu").mkdir(parents=True)
    (src / "cluster" / "sessions" / "relu" / "round_01.py").write_text("x = 3\n")
    dest = tmp_path / "restored"
    runner.unpack(runner.pack(src, tmp_path / "p.tar.gz"), dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.py*")) == [
        "cluster/sessions/relu/round_01.py.txt", "relu/session/best.py.txt", "relu/session/round_00.py.txt"]
    assert runner.sources_as_code(dest) == 3
    assert (dest / "relu" / "session" / "best.py").read_text() == "x = 2\n"
    assert runner.sources_as_data(dest) == 3 and not list(dest.rglob("*.py"))


def test_a_packed_result_dir_resumes_where_it_stood(tmp_path: Path) -> None:
    import _data

    args = runner.parse_args(["--backend", "cuda", "--out", str(tmp_path)])
    r = runner.Runner(args, log=lambda _m: None)
    _result(tmp_path, "a", status="done", backend="cuda", attempts=1, compile={"status": "ok"})
    _result(tmp_path, "b", status="running", backend="cuda", attempts=1)
    (tmp_path / "b" / "session").mkdir()
    (tmp_path / "b" / "session" / "round_00.py.txt").write_text("x = 0\n")
    (tmp_path / "runs.jsonl").write_text('{"run": "old"}\n')
    _data.fold(tmp_path)  # committed form: one archive
    assert not (tmp_path / "a").exists() and r.todo("a") is None and r.todo("b") == "running before"
    r.unpack_for_work(["b"])  # what the run works on is written out; finished operators stay packed
    assert (tmp_path / "b" / "session" / "round_00.py").read_text() == "x = 0\n" and not (tmp_path / "a").exists()
    assert (tmp_path / "runs.jsonl").read_text() == '{"run": "old"}\n'  # appended to, never replaced
    runner.sources_as_data(tmp_path)
    _data.fold(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in _data.files(tmp_path)) == [
        "a/result.json", "b/result.json", "b/session/round_00.py.txt", "runs.jsonl"]


def test_committed_results_hold_no_python_files() -> None:
    import _data  # packed campaigns too (benchmarks/_data.py)

    results = _data.files(ROOT / "benchmarks" / "results")
    stray = sorted(p.relative_to(ROOT).as_posix() for p in results if p.suffix == ".py")
    assert not stray, f"candidate sources under benchmarks/results must be data (.py.txt): {stray[:5]}"


def test_estimate_follows_how_long_finished_sessions_really_took(tmp_path: Path) -> None:
    r = runner.Runner(runner.parse_args(["--backend", "cuda", "--rounds", "15", "--out", str(tmp_path)]), log=lambda _m: None)
    rounds = [{"duration_s": 20.0}] + [{"duration_s": 30.0}] * 6 + [{"duration_s": 0.1}] * 3  # stopped after 9 rounds
    _result(tmp_path, "a", status="done", backend="cuda", rounds_requested=15, session={"rounds": rounds, "wall_s": 210.0},
            measure={"wall_s": 20.0}, compile={"wall_s": 40.0, "status": "ok"})
    est = r.estimates()
    assert est["session"] == 210.0 and est["op"] == 270.0  # not baseline + 15 x the mean round
    short = runner.Runner(runner.parse_args(["--backend", "cuda", "--rounds", "2", "--out", str(tmp_path)]), log=lambda _m: None)
    assert short.estimates()["session"] < 210.0  # fewer rounds asked for: the rounds bound the estimate


def test_a_redo_cut_by_the_budget_says_which_operators_it_did_not_redo(tmp_path: Path, monkeypatch) -> None:
    """With --redo every selected operator may already be complete from an earlier run: the closing line must not
    call them complete for this run when the budget stopped before them (session 11's call said "3/3 complete")."""
    args = runner.parse_args(["--backend", "interpreter", "--ops", *OPS, "--out", str(tmp_path), "--budget-s", "100", "--redo"])
    lines: list[str] = []
    r = runner.Runner(args, log=lines.append)

    def fake_op(op: str) -> dict[str, Any]:
        r.deadline = runner.time.time() + 50
        return {"status": "done"}

    monkeypatch.setattr(r, "run_op", fake_op)
    monkeypatch.setattr(r, "estimates", lambda: {"op": 80.0, "minimum": 30.0})
    monkeypatch.setattr(r, "todo", lambda op, redo=False: "redo" if redo else None)  # complete from an earlier run
    assert r.run() == 0
    assert lines[-1].endswith(f"; not redone (budget): {' '.join(OPS[1:])}"), lines[-1]


def test_the_report_pass_times_each_case_with_the_sessions_method(tmp_path: Path, monkeypatch) -> None:
    """One timing truth: the measurement pass behind the report reads the session's per-case methods."""
    r = runner.Runner(runner.parse_args(["--out", str(tmp_path)]), log=lambda _m: None)
    sess = tmp_path / "relu" / "session"
    sess.mkdir(parents=True)
    (sess / "trajectory.json").write_text(json.dumps({"timing_methods": {
        "N=1": {"method": "cudagraph", "decided_ms": 0.004}, "N=2": {"method": "do_bench", "decided_ms": 0.3}}}))
    seen: dict = {}

    def worker(req, res, timeout):
        seen.update(req)
        return 0, []

    monkeypatch.setattr(r, "_worker", worker)
    r.measure_times("relu", {"cases": [], "session": {"rounds": []}})
    assert seen["methods"] == {"N=1": "cudagraph", "N=2": "do_bench"}
    (sess / "trajectory.json").write_text("{not json")
    r.measure_times("relu", {"cases": [], "session": {"rounds": []}})
    assert seen["methods"] == {}  # an unreadable trajectory: every case decided as before, never a crash
