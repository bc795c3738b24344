"""The zygote's guarantee that multiprocessing's forkserver lacks (see ``optimizer.harness.zygote``): when the parent
goes away, every worker it forked is killed, hung ones included."""

from __future__ import annotations

import os
import time
from pathlib import Path

from optimizer.harness.zygote_client import ZygoteClient

ROOT = Path(__file__).resolve().parents[3]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_hung_worker_dies_with_its_parent(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1")
    zygote = ZygoteClient(env)
    fifo = tmp_path / "request.json"
    os.mkfifo(fifo)  # no writer ever opens it: the worker blocks reading its request, like a hang
    from optimizer.harness.sandbox import SandboxLimits, jail_spec

    spec = jail_spec(tmp_path, SandboxLimits(memory_mb=None), readable=[])
    pending = zygote.spawn({"req": str(fifo), "res": str(tmp_path / "result.json"), "token": "t",
                            "stdout": str(tmp_path / "out.txt"), "stderr": str(tmp_path / "err.txt"),
                            "cwd": str(tmp_path), "jail": spec, "env": {}})
    assert pending.pid is not None
    time.sleep(0.5)
    assert _alive(pending.pid) and not pending.done.is_set()
    assert zygote._proc.stdin is not None
    zygote._proc.stdin.close()  # what the zygote sees when the session process dies: EOF on its stdin
    zygote._proc.wait(timeout=30)
    assert pending.done.wait(5) and pending.returncode == -9  # SIGKILL to the worker's process group
    assert not _alive(pending.pid)


# A candidate that fails the way a device runtime fails in a forked child whose parent initialised it, but only
# when its parent is a zygote: spawned, it imports fine.
_FORK_SENSITIVE = '''
import os
if "optimizer.harness.zygote" in open(f"/proc/{os.getppid()}/cmdline").read().replace("\\\\0", " "):
    raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, ...")
from benchmarks.suite.softmax.initial import ModelNew  # noqa: F401
'''


def test_a_device_worker_that_cannot_fork_runs_again_spawned_and_its_environment_stops_forking(tmp_path: Path) -> None:
    from optimizer.harness import sandbox
    from optimizer.harness.contracts import EvaluateRequest, to_wire

    cand = tmp_path / "candidate.py"
    cand.write_text(_FORK_SENSITIVE)
    req = to_wire(EvaluateRequest(problem=str(ROOT / "benchmarks/suite/softmax/problem.py"), candidate=str(cand),
                                  backend="interpreter", cases=[{"M": 2, "N": 8}], seeds=[0]))
    # an environment of its own (a variable the jail's scrub keeps: LADDER_* never reaches a worker)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHON_TEST_FORK_KEY=str(tmp_path))
    try:
        res = sandbox.run_worker(req, env=env, interpreter=False, use_zygote=True)
        # the forked attempt raised the marker; the spawned one imported the candidate and went on (whatever the
        # outcome without TRITON_INTERPRET, it is not the fork failure)
        assert "re-initialize CUDA" not in res.reason, res.reason
        from optimizer.harness.jail import scrub_env

        child_env = dict(scrub_env(env), PYTHONPATH=os.pathsep.join([str(sandbox._REPO_ROOT), env["PYTHONPATH"]]))
        child_env.pop("TRITON_INTERPRET", None)
        key = sandbox._zygote_key(child_env, False)
        assert key in sandbox._NO_FORK
        assert sandbox._zygote(child_env, False) is None  # later workers of that environment spawn
    finally:
        sandbox._NO_FORK.clear()
