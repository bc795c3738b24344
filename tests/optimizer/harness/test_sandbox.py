"""The sandbox's claims on this platform (issue 32), each tested with a hostile candidate that fails before the fix.

``tests/optimizer/data/hostile/``: ``patch_compare.py`` (a wrong kernel that replaces the validator's comparison at
import), ``spy.py`` (a correct kernel that tries to read secrets and another KB home, write outside its folder, open
sockets and leave a process behind, and prints what worked). The isolated level (namespaces) is what this machine
provides as root; the basic level (``LADDER_SANDBOX_ISOLATE=0``, what a platform without namespaces gets) is tested
for the claims it keeps. README "Sandbox" states the same table.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optimizer.harness import jail
from optimizer.harness.contracts import EvaluateRequest
from optimizer.harness.evaluation import evaluate
from optimizer.harness.judge import run_judged
from optimizer.harness.problem import load_problem
from optimizer.harness.sandbox import SandboxLimits
from optimizer.settings import LadderSettings

DATA = Path(__file__).parents[1] / "data" / "hostile"
SECRETS = {"LADDER_TOKEN": "tok-red-team", "LADDER_TOKENS": '{"tok-red-team": ["reviewer"]}',
           "LADDER_LLM_API_KEY": "sk-red-team", "GITHUB_TOKEN": "ghp-red-team", "OPENAI_API_KEY": "sk-red-team"}
HOME = Path("/tmp/ladder-hostile-home")
ESCAPE = Path("/tmp/ladder-hostile-escape")
ISOLATED = jail.probe()["isolate"]


def _orphans() -> list[int]:
    out = []
    for p in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"ladder-hostile-orphan" in p.read_bytes():
                out.append(int(p.parent.name))
        except OSError:
            continue
    return out


@pytest.fixture
def red_team(monkeypatch, tmp_path: Path):
    """Secrets in the environment (and in a process's /proc environ), another KB home, a listening host socket."""
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    HOME.mkdir(exist_ok=True)
    (HOME / "kb.sqlite3").write_bytes(b"SQLite format 3\x00 another home's cards")
    holder = subprocess.Popen(["sleep", "60"], env={**SECRETS, "PATH": os.environ["PATH"]})
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", 47391))
    except OSError:
        pytest.skip("port 47391 is busy")
    server.listen(8)
    server.settimeout(0.1)
    yield server
    server.close()
    holder.kill()
    holder.wait()
    import shutil

    shutil.rmtree(HOME, ignore_errors=True)
    shutil.rmtree(ESCAPE, ignore_errors=True)
    (DATA / "escaped.txt").unlink(missing_ok=True)
    Path("/tmp/ladder-hostile-escape.txt").unlink(missing_ok=True)
    for pid in _orphans():
        os.kill(pid, 9)


def _run_spy() -> tuple[dict, object]:
    problem = load_problem(DATA)
    req = EvaluateRequest(problem=str(problem.path), candidate=str(DATA / "spy.py"), backend="interpreter",
                          cases=problem.smoke_cases, seeds=[0, 1])
    res = run_judged(req, limits=SandboxLimits(120, 8192), interpreter=True, use_zygote=True)
    line = next((ln for ln in res.stdout_tail.splitlines() if ln.startswith("LADDER_HOSTILE_REPORT ")), None)
    assert line is not None, (res.reason, res.stdout_tail, res.stderr_tail)
    return json.loads(line.split(" ", 1)[1]), res


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
        conn.close()
        return True
    except OSError:
        return False


def test_problem_new_reports_the_comparison_patch_as_a_mismatch(tmp_path: Path) -> None:
    """The red team's exact path: `ladder problem new` on the patching kernel said "passed"."""
    from typer.testing import CliRunner

    from optimizer.cli.app import app

    res = CliRunner().invoke(app, ["problem", "new", str(DATA / "patch_compare.py"), "--reference",
                                   str(DATA / "problem.py"), "--out", str(tmp_path / "p"), "--json"])
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    assert not report["passed"] and [r["kind"] for r in report["failed_rules"]] == ["mismatch"]


def test_a_wrong_kernel_that_patches_the_comparison_fails() -> None:
    """Before: `ladder problem new` reported x+x against x+y "passed" (the comparison ran in the candidate's process)."""
    problem = load_problem(DATA)
    ev = evaluate(problem, DATA / "patch_compare.py", backend="interpreter", settings=LadderSettings())
    assert not ev.passed and ev.failure_kind == "mismatch", ev.reason
    assert evaluate(problem, DATA / "honest.py", backend="interpreter", settings=LadderSettings()).passed


@pytest.mark.skipif(not ISOLATED, reason=f"no namespaces here: {jail.probe()['why']}")
def test_the_isolated_jail_contains_a_hostile_candidate(red_team) -> None:
    report, res = _run_spy()
    assert res.ok and res.isolation == "namespaces"
    assert res.payload["validation"]["passed"], res.payload["validation"]  # the correct kernel still validates
    assert report["env"] == [], "secrets reached the worker's environment"
    assert report["proc_environ"] == [], "another process's environment was readable"
    assert report["home"] is False, "another KB home's kb.sqlite3 was readable"
    assert str(DATA / "escaped.txt") not in report["wrote"] and not (DATA / "escaped.txt").exists()
    assert not (ESCAPE / "written.txt").exists()  # its /tmp is private: nothing reached the host's
    assert report["socket"] == [] and not _accepted(red_team), "a socket reached the host"
    assert report["cwd"].startswith("/tmp/ladder_sbx_")  # a private working directory
    time.sleep(0.5)
    assert _orphans() == [], "a process started in forward() outlived the check"


def test_the_basic_level_scrubs_the_environment_and_leaves_no_process(red_team, monkeypatch) -> None:
    """Without namespaces (a platform that has none): secrets, working directory and orphans are still handled;
    file system and network are NOT contained there (README "Sandbox")."""
    monkeypatch.setenv("LADDER_SANDBOX_ISOLATE", "0")
    monkeypatch.setattr(jail, "_PROBED", None)
    try:
        report, res = _run_spy()
    finally:
        monkeypatch.setattr(jail, "_PROBED", None)
    assert res.isolation.startswith("basic")
    assert report["env"] == []
    assert report["proc_environ"] == []  # no capabilities: another root process's environ is refused
    assert report["cwd"].startswith("/tmp/ladder_sbx_")
    time.sleep(0.5)
    assert _orphans() == []


def test_secrets_are_scrubbed_by_name() -> None:
    env = {"LADDER_TOKEN": "x", "LADDER_HOME": "/h", "PATH": "/bin", "TRITON_INTERPRET": "1", "HF_TOKEN": "x",
           "CUDA_VISIBLE_DEVICES": "0", "TRITON_API_KEY": "x", "AWS_SECRET_ACCESS_KEY": "x", "HOME": "/root"}
    out = jail.scrub_env(env)
    assert set(out) == {"PATH", "TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES", "PYTHONDONTWRITEBYTECODE"}


_INSIDE = r"""
import json, os, resource, socket
out = {"cap_eff": [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0],
       "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
       "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0], "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
       "as": resource.getrlimit(resource.RLIMIT_AS)[0], "cwd": os.getcwd(), "root": sorted(os.listdir("/"))}
try:
    open("/usr/ladder-jail-test", "w"); out["usr_writable"] = True
except OSError as e:
    out["usr_writable"] = e.errno
try:
    os.system("mount -o remount,rw /usr 2>/dev/null"); open("/usr/ladder-jail-test", "w"); out["remount"] = True
except OSError:
    out["remount"] = False
try:
    open("big", "wb").write(b"x" * (3 << 20)); out["big_file"] = True
except OSError:
    out["big_file"] = False
s = socket.socket(); s.settimeout(1)
try:
    s.connect(("127.0.0.1", 22)); out["net"] = "connected"
except OSError as e:
    out["net"] = e.errno
print(json.dumps(out))
"""


@pytest.mark.skipif(not ISOLATED, reason=f"no namespaces here: {jail.probe()['why']}")
def test_jail_limits_namespaces_and_privileges(tmp_path: Path) -> None:
    import errno

    spec = {"scratch": str(tmp_path), "isolate": True, "readable": jail.default_readable(), "memory_mb": 4096,
            "limit_as": True, "fsize_mb": 2, "cpu_s": 30, "nproc": 64}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = jail.scrub_env(dict(os.environ), tmp_path) | {"PYTHONPATH": str(Path(__file__).parents[3])}
    proc = subprocess.Popen([sys.executable, "-m", "optimizer.harness.jail", str(tmp_path / "spec.json"), "--",
                             sys.executable, "-c", _INSIDE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    stdout, _ = proc.communicate(timeout=60)
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["cap_eff"] == "0000000000000000"  # no capabilities: root cannot remount, unmount or leave
    assert len(out["pids"]) <= 4  # a PID namespace: the host's processes are out of sight
    assert out["usr_writable"] == errno.EROFS and out["remount"] is False
    assert out["fsize"] == 2 << 20 and out["big_file"] is False
    assert out["cpu"] == 30 and out["as"] == 4096 << 20
    assert out["net"] == errno.ENETUNREACH
    assert out["cwd"] == str(tmp_path)
    assert set(out["root"]) < set(os.listdir("/")) | {"proc", "dev", "tmp"}  # a minimal root, not the host's
    cg = Path("/sys/fs/cgroup/pids")
    if cg.exists():  # the per-jail pids cgroup is removed when the jail ends
        assert not (cg / f"ladder-jail-{proc.pid}").exists()


def test_a_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    """A worker that starts a new-session child and hangs: at the deadline both are gone (basic and isolated)."""
    from optimizer.harness.contracts import RunRequest, to_wire
    from optimizer.harness.sandbox import run_worker

    cand = tmp_path / "hang.py"
    cand.write_text("import subprocess, sys, time\n"
                    "subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: time.sleep(0.2)', "
                    "'ladder-hostile-orphan'], start_new_session=True)\n"
                    "time.sleep(600)\n")
    req = RunRequest(problem=str(DATA / "problem.py"), candidate=str(cand), backend="interpreter", cases=[{}])
    res = run_worker(to_wire(req), limits=SandboxLimits(timeout_s=6), interpreter=True, use_zygote=True)
    assert res.status == "timeout", res.reason
    time.sleep(0.5)
    assert _orphans() == []


def test_ir_capture_runs_in_the_jail(red_team, tmp_path: Path) -> None:
    """Before: the capture worker imported the kernel file with the full environment, no memory limit, and a
    timeout that killed only the direct child (`diagnose --backend interpreter` reaches it through L3)."""
    from optimizer.ir.capture import capture_kernel

    cap = capture_kernel(f"{DATA / 'capture_spy.py'}::copy_kernel", "cuda:90", ["X=*fp32", "Y=*fp32", "n=4096",
                                                                                "BLOCK=1024"],
                         workdir=tmp_path / "cap", per_pass=False)
    assert "ttir" in cap.stages
    line = next(ln for ln in (tmp_path / "cap" / "stdout.txt").read_text().splitlines()
                if ln.startswith("LADDER_HOSTILE_REPORT "))
    report = json.loads(line.split(" ", 1)[1])
    assert report["env"] == [] and report["home"] is False and report["socket"] == []
    if ISOLATED:  # its /tmp is a private tmpfs: a write there never reaches the host's
        assert report["proc_environ"] == [] and str(DATA / "escaped.txt") not in report["wrote"]
        assert not (DATA / "escaped.txt").exists() and not Path("/tmp/ladder-hostile-escape.txt").exists()
    time.sleep(0.5)
    assert _orphans() == []


def test_ir_capture_timeout_kills_the_whole_tree(red_team, monkeypatch, tmp_path: Path) -> None:
    from kb.errors import ToolchainError
    from optimizer.ir.capture import capture_kernel

    monkeypatch.setenv("TRITON_HOSTILE_HANG", "1")  # a TRITON_* name: kept by the jail's scrub
    t0 = time.monotonic()
    with pytest.raises(ToolchainError, match="timed out"):
        capture_kernel(f"{DATA / 'capture_spy.py'}::copy_kernel", "cuda:90", ["X=*fp32", "Y=*fp32", "n=64", "BLOCK=64"],
                       workdir=tmp_path / "cap", per_pass=False, timeout_s=8)
    assert time.monotonic() - t0 < 30
    time.sleep(0.5)
    assert _orphans() == []


def test_a_profiler_prefix_installed_outside_usr_runs_in_the_jail(tmp_path: Path) -> None:
    """ncu lives under /opt/nvidia/nsight-compute on the GPU image: the prefix command's tree is bound read-only."""
    from optimizer.harness.contracts import RunRequest, to_wire
    from optimizer.harness.sandbox import run_worker

    tool = tmp_path / "nsight" / "bin" / "fakeprof"
    tool.parent.mkdir(parents=True)
    tool.write_text('#!/bin/sh\necho "profiling $*" >&2\nexec "$@"\n')
    tool.chmod(0o755)
    req = RunRequest(problem=str(DATA / "problem.py"), candidate=str(DATA / "honest.py"), backend="interpreter",
                     cases=[{}], iters=1)
    res = run_worker(to_wire(req), limits=SandboxLimits(timeout_s=120), interpreter=True, prefix_cmd=[str(tool)])
    assert res.ok, (res.reason, res.stderr_tail)
    assert "profiling" in res.stderr_tail


def test_forged_verdicts_do_not_pass_a_wrong_kernel(monkeypatch) -> None:
    """A candidate that writes its own "continue" verdicts and runs through: the parent judges every case anyway."""
    from optimizer.harness import judge

    problem = load_problem(DATA)
    ev = evaluate(problem, DATA / "forge_verdict.py", backend="interpreter", settings=LadderSettings())
    assert not ev.passed and ev.failure_kind in ("mismatch", "no_result"), ev.reason
    calls: list[str] = []
    real = judge.run_worker
    monkeypatch.setattr(judge, "run_worker", lambda req, **kw: calls.append(req["task"]) or real(req, **kw))
    assert evaluate(problem, DATA / "honest.py", backend="interpreter", settings=LadderSettings()).passed
    # the reference's outputs were computed once, for the first candidate; one judge process for the evaluation,
    # started with the candidate (so in either order)
    assert sorted(calls) == ["evaluate", "judge_run"]
