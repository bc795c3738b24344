"""Fan-out of sessions against one central KB: a local Ray cluster (CPU, interpreter) and the no-Ray process
runner, both against a real KB server process. Every session's trajectory must arrive exactly once, also when
a worker is SIGKILLed mid-session and when the reply to a submission is lost (the session is re-run and
re-submits the same id)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from kb.errors import InvalidArgument
from kb.models import Trajectory
from optimizer.cluster.progress import Aggregator
from optimizer.cluster.runner import expand_problems
from optimizer.cluster.spec import make_specs, problem_key, trajectory_id

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
DATA = HERE / "data"
SUITE = ROOT / "benchmarks" / "suite"
FAST = {"validation_seeds": [0], "sandbox_timeout_s": 90, "max_inconclusive_streak": 2}


# ------------------------------------------------------------------------------------------- fixtures ---
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, seeded_home: Path):
    """A real KB server process on a copy of the seeded KB; yields (address, home)."""
    from retrieval.client import GrpcKBClient

    home = tmp_path_factory.mktemp("cluster-kb") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "LADDER_TOKENS": json.dumps({"tok-0123456789abcdef": ["contributor"]}), "HF_HUB_OFFLINE": "1"}
    log = (home.parent / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(port), "--home", str(home)],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with GrpcKBClient(f"127.0.0.1:{port}") as c:
            c.wait_ready(timeout=240)
        yield f"127.0.0.1:{port}", home
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def stored(home: Path, campaign: str) -> list[Trajectory]:
    """The trajectories of one campaign, read from the server's SQLite store (read-only, beside the server)."""
    db = sqlite3.connect(f"file:{home / 'kb.sqlite3'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT doc FROM trajectories WHERE id LIKE ?", (f"{campaign}:%",)).fetchall()
    finally:
        db.close()
    return [Trajectory.model_validate_json(r[0]) for r in rows]


class Killer:
    """A progress callback that SIGKILLs the worker running ``key`` when its first attempt starts ``at_round``."""

    def __init__(self, key: str, at_round: int = 1) -> None:
        self.key, self.at_round = key, at_round
        self.killed: list[int] = []
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        self.events.append((event, data))
        if (event == "round_start" and data["key"] == self.key and data["round"] == self.at_round
                and data["attempt"] == 1 and not self.killed):
            os.kill(data["pid"], signal.SIGKILL)
            self.killed.append(data["pid"])


# ------------------------------------------------------------------------------------------ fast units ---
def test_trajectory_ids_are_deterministic_and_valid() -> None:
    a = trajectory_id("cl-1", "softmax", "cuda")
    assert a == trajectory_id("cl-1", "softmax", "cuda") == "cl-1:softmax:cuda"
    long = trajectory_id("c" * 100, "k" * 100, "interpreter")
    assert len(long) <= 128 and long != trajectory_id("c" * 100, "k" * 99 + "j", "interpreter")
    for tid in (a, long, trajectory_id("x y/z", "p", "cuda")):
        Trajectory.model_validate({"id": tid, "problem": {"name": "p"}, "backend": "cuda"})


def test_specs_keys_candidates_and_shipped_sources() -> None:
    specs = make_specs([DATA / "softmax", SUITE / "softmax" / "problem.py"], campaign="c", backend="interpreter", rounds=1)
    assert [s.key for s in specs] == ["softmax", "softmax-2"]
    assert len({s.trajectory_id for s in specs}) == 2
    assert specs[0].candidate == str((DATA / "softmax" / "initial.py").resolve())
    assert set(specs[1].sources) >= {"problem.py", "initial.py"}
    assert problem_key("a/b/foo.py") == "foo"
    with pytest.raises(InvalidArgument):
        make_specs([DATA / "nope"], campaign="c", backend="cuda", rounds=1)


def test_suite_folder_expands_to_its_problems() -> None:
    probs = expand_problems([str(SUITE), str(DATA / "scale")])
    assert len(probs) == len([d for d in SUITE.iterdir() if (d / "problem.py").is_file()]) + 1 >= 40
    assert probs[-1] == str(DATA / "scale")


def test_task_options_ask_for_one_accelerator() -> None:
    from optimizer.cluster.fanout import task_options

    assert task_options("GPU", 2)["num_gpus"] == 1 and task_options("GPU", 2)["max_calls"] == 1
    assert task_options("NPU", 2)["resources"] == {"NPU": 1} and "num_gpus" not in task_options("NPU", 2)
    cpu = task_options("CPU", 3)
    assert cpu["num_cpus"] == 1 and cpu["max_retries"] == 3 and "num_gpus" not in cpu and "max_calls" not in cpu
    with pytest.raises(InvalidArgument):
        task_options("TPU", 1)


def test_sessions_need_one_central_kb(monkeypatch: pytest.MonkeyPatch) -> None:
    from optimizer.cluster.task import require_central_kb

    monkeypatch.delenv("LADDER_SNAPSHOT", raising=False)
    with pytest.raises(InvalidArgument, match="--server"):
        require_central_kb(None)
    require_central_kb("127.0.0.1:1")
    monkeypatch.setenv("LADDER_SNAPSHOT", "/somewhere")
    require_central_kb(None)


def test_aggregator_counts_retries_and_best_speedup() -> None:
    specs = make_specs([DATA / "softmax", DATA / "scale"], campaign="c", backend="cuda", rounds=2)
    seen: list[str] = []
    agg = Aggregator(specs, lambda e, d: seen.append(e))
    agg.event("softmax", "start", {"attempt": "a", "pid": 1})
    agg.event("softmax", "round_end", {"round": 1, "speedup": 1.5, "valid": True})
    agg.event("softmax", "round_end", {"round": 2, "speedup": 9.0, "valid": False})  # invalid rounds never count
    agg.event("softmax", "start", {"attempt": "b", "pid": 2})
    agg.event("softmax", "start", {"attempt": "b", "pid": 2})  # the same attempt twice is one attempt
    agg.event("scale", "start", {"attempt": "c", "pid": 3})
    assert agg.counts() == {"total": 2, "done": 0, "failed": 0, "running": 2, "pending": 0, "retried": 1, "attempts": 3}
    res = agg.finished("softmax", {"key": "softmax", "problem": "p", "trajectory_id": "t", "status": "ok", "created": False})
    assert res.attempts == 2 and res.best_speedup == 1.5 and not res.created
    agg.failed("scale", "boom")
    assert [r.status for r in agg.results()] == ["ok", "failed"]
    assert seen.count("retry") == 1 and seen[-1] == "session_failed"


def test_the_relay_sends_the_driver_small_plain_dicts() -> None:
    """A session's typed events go to the driver as the same name and plain dict as ever (a wire format: never a whole
    round); the ladder's and the screen's summaries, the unseen flags and the session's end stay on the worker."""
    from event_samples import samples

    from optimizer.cluster.task import relay

    sent: list[tuple[str, dict[str, Any]]] = []
    on = relay(lambda e, d: sent.append((e, d)))
    for event in samples():
        on(event)
    assert sent == [
        ("baseline", {"candidate": "/p/initial.py", "backend": "interpreter"}),
        ("round_start", {"round": 2}),
        ("proposal", {"round": 2, "family": "num-warps"}),
        ("round_end", {"round": 2, "outcome": "failed", "speedup": 1.25, "valid": False}),
        ("stopped", {"reason": "2 inconclusive rounds in a row"}),
    ]
    json.dumps(sent)  # plain values only


def _stale_grpc_client() -> types.ModuleType:
    """What the lent GPU image gives: grpcio older than the generated code, which raises RuntimeError on import."""
    mod = types.ModuleType("retrieval.client")

    def __getattr__(name: str) -> object:
        raise RuntimeError("The grpc package installed is at version 1.84.0, but the generated code ... depends on "
                           "grpcio>=1.85.1")

    mod.__getattr__ = __getattr__  # type: ignore[method-assign]
    return mod


@pytest.mark.parametrize("wire", ["missing", "stale"])
def test_snapshot_outbox_gets_each_trajectory_once(tmp_path: Path, kb, monkeypatch: pytest.MonkeyPatch, wire: str) -> None:
    """The GPU-machine path: no server, a read-only snapshot; trajectories go to the outbox, once per id.
    The wire layer cannot be imported (no grpc, or one older than the generated code needs), so the snapshot
    fallback of default_connect runs."""
    from kb.snapshot import write_snapshot
    from optimizer.cluster.task import run_session

    write_snapshot(kb, tmp_path / "snap")
    monkeypatch.setenv("LADDER_SNAPSHOT", str(tmp_path / "snap"))
    monkeypatch.setenv("LADDER_HOME", str(tmp_path / "home"))
    # `from retrieval.client import ...` -> ImportError (missing) or RuntimeError (stale grpcio)
    monkeypatch.setitem(sys.modules, "retrieval.client", None if wire == "missing" else _stale_grpc_client())
    spec = make_specs([DATA / "scale"], campaign="snap", backend="interpreter", rounds=0, settings=FAST,
                      out_root=tmp_path / "runs")[0]
    first, second = run_session(spec), run_session(spec)
    assert first["created"] is True and second["created"] is False
    outbox = list((tmp_path / "home" / "outbox").glob("*.json"))
    assert [p.name for p in outbox] == [f"{spec.trajectory_id}.json"]
    assert Trajectory.model_validate_json(outbox[0].read_text()).rounds[0].outcome == "baseline"
    from optimizer.cluster.runner import check_outbox
    from optimizer.cluster.spec import ClusterResult

    res = [ClusterResult(**{k: v for k, v in second.items() if k in ClusterResult.__dataclass_fields__})]
    assert check_outbox(res, outbox[0].parent, "snap")[0]
    (outbox[0].parent / "snap:stray:interpreter.json").write_text("{}")  # a second id for the campaign
    (outbox[0].parent / "other:scale:interpreter.json").write_text("{}")  # another campaign's: not counted
    ok, line = check_outbox(res, outbox[0].parent, "snap")
    assert not ok and "EXTRA ['snap:stray:interpreter']" in line and "other" not in line


# ----------------------------------------------------------------------------- real server, many workers ---
@pytest.mark.slow
def test_ray_fanout_stores_every_trajectory_once(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    from cluster_faults import FlakySubmit

    from optimizer.cluster.fanout import run_cluster

    addr, home = server
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))  # workers import cluster_faults
    killer = Killer("softmax", at_round=1)
    problems = [DATA / "softmax", DATA / "scale", SUITE / "relu"]
    results = run_cluster(problems, address="local", num_cpus=3, server=addr, token="tok-0123456789abcdef", resource="CPU", rounds=2,
                          backend="interpreter", max_retries=2, progress=killer, campaign="ray-t", settings=FAST,
                          out_root=tmp_path, connect=FlakySubmit("scale", tmp_path))
    by = {r.key: r for r in results}
    assert [r.status for r in results] == ["ok"] * 3, [r.error for r in results]
    assert killer.killed, "the kill never happened: softmax never reached round 1"
    assert by["softmax"].attempts == 2 and by["softmax"].created is True  # killed before submitting, then re-run
    assert by["scale"].attempts == 2 and by["scale"].created is False  # stored by attempt 1, whose reply was lost
    assert (tmp_path / "scale.submitted").exists()
    assert by["relu"].attempts == 1 and by["relu"].created is True
    trajs = stored(home, "ray-t")
    assert sorted(t.id for t in trajs) == sorted(r.trajectory_id for r in results)  # each exactly once, no extras
    assert all(t.finished and len(t.rounds) >= 2 and t.rounds[0].outcome == "baseline" for t in trajs)
    counts = killer.events[-1][1]["counts"]
    assert counts["done"] == 3 and counts["retried"] == 2 and counts["attempts"] == 5
    assert any(e == "retry" and d["key"] == "softmax" for e, d in killer.events)


@pytest.mark.slow
def test_process_runner_retries_a_killed_worker(server, tmp_path: Path) -> None:
    from optimizer.cluster.procs import run_local

    addr, home = server
    killer = Killer("scale", at_round=1)
    results = run_local([DATA / "scale", SUITE / "relu"], devices=["0", "1"], resource="CPU", server=addr, token="tok-0123456789abcdef",
                        rounds=1, backend="interpreter", max_retries=1, progress=killer, campaign="procs-t",
                        settings=FAST, out_root=tmp_path)
    assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
    assert killer.killed and results[0].attempts == 2 and results[1].attempts == 1
    assert all(r.created for r in results)
    assert sorted(t.id for t in stored(home, "procs-t")) == ["procs-t:relu:interpreter", "procs-t:scale:interpreter"]


def test_commands_refuse_to_run_without_a_central_kb(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from optimizer.cli.cluster import cluster_command
    from optimizer.cluster.__main__ import main

    monkeypatch.delenv("LADDER_SNAPSHOT", raising=False)
    app = typer.Typer()
    app.command("optimize-cluster")(cluster_command)
    app.command("other")(lambda: None)
    r = CliRunner().invoke(app, ["optimize-cluster", str(DATA / "scale"), "--resource", "CPU", "--devices", "0"])
    assert r.exit_code == 2 and "--server" in r.output
    assert main([str(DATA / "scale"), "--devices", "0", "--resource", "CPU"]) == 2


def test_a_worker_without_the_drivers_files_uses_the_shipped_sources(tmp_path: Path) -> None:
    import dataclasses

    from optimizer.cluster.task import materialize

    spec = make_specs([DATA / "scale"], campaign="c", backend="interpreter", rounds=0)[0]
    here = materialize(spec, tmp_path)
    assert here == (Path(spec.problem), Path(spec.candidate))  # same file system: the driver's paths
    away = dataclasses.replace(spec, problem="/nonexistent/scale", candidate="/nonexistent/scale/initial.py")
    prob, cand = materialize(away, tmp_path)
    assert prob == tmp_path / "_problem" and (prob / "problem.py").read_text() == (DATA / "scale" / "problem.py").read_text()
    assert cand is not None and cand.read_text() == (DATA / "scale" / "initial.py").read_text()
    with pytest.raises(InvalidArgument):
        materialize(dataclasses.replace(away, sources={}), tmp_path)
