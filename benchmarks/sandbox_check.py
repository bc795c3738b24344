"""Check every sandbox claim (issue 32) on this machine, the GPU path included: PASS/FAIL per claim, JSON to OUTDIR.

    PYTHONPATH=. python3 benchmarks/sandbox_check.py OUTDIR        # from the repository root

On a machine with an NVIDIA GPU (``/dev/nvidiactl``) the candidates run on the ``cuda`` backend: workers forked
from the zygote (or spawned, when the device runtime refuses forked children), CUDA initialised inside the jail,
the device nodes bound into it. Elsewhere the CPU interpreter runs them (the same claims as
``tests/optimizer/harness/test_sandbox.py``). The hostile candidates are ``tests/optimizer/data/hostile/``.

Claims:
  isolation        the jail's namespaces work here (``jail.probe()``); else which basic level ran and why
  judge            a wrong kernel that replaces ``compare_outputs.__code__`` at import fails (mismatch)
  honest           the honest kernel validates (and, on the GPU, is timed) inside the jail
  secrets          no LADDER_TOKEN / LADDER_TOKENS / LADDER_LLM_API_KEY / token variable reaches the candidate
  proc_environ     no other process's environment is readable (the parent's secrets in /proc/PID/environ)
  other_home       another KB home's kb.sqlite3 is not readable
  write_outside    nothing is written next to the candidate or in the host's /tmp
  network          no connection reaches a listener on the host's loopback, nor a public address
  orphans          a new-session process started in forward() does not outlive the check
  jail_unit        in a jail: no capabilities, own PID namespace, read-only /usr, FSIZE/CPU/AS limits, no network,
                   and (GPU) CUDA works there
  timeout_tree     at the deadline the worker and a new-session child it started are both killed
  basic_level      with LADDER_SANDBOX_ISOLATE=0: secrets scrubbed, private cwd, no orphans
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "optimizer" / "data" / "hostile"
SECRETS = {"LADDER_TOKEN": "tok-red-team", "LADDER_TOKENS": '{"tok-red-team": ["reviewer"]}',
           "LADDER_LLM_API_KEY": "sk-red-team", "GITHUB_TOKEN": "ghp-red-team", "OPENAI_API_KEY": "sk-red-team"}
HOME = Path("/tmp/ladder-hostile-home")
ESCAPE = Path("/tmp/ladder-hostile-escape")
RESULTS: list[dict] = []


def claim(name: str, passed: bool, detail: object = "") -> None:
    RESULTS.append({"claim": name, "passed": bool(passed), "detail": detail})
    print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}"[:400], flush=True)


def orphans() -> list[int]:
    out = []
    for p in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"ladder-hostile-orphan" in p.read_bytes():
                out.append(int(p.parent.name))
        except OSError:
            continue
    return out


def run_spy(backend: str) -> tuple[dict | None, object]:
    from optimizer.harness.contracts import EvaluateRequest
    from optimizer.harness.judge import run_judged
    from optimizer.harness.problem import load_problem
    from optimizer.harness.sandbox import SandboxLimits

    problem = load_problem(DATA)
    req = EvaluateRequest(problem=str(problem.path), candidate=str(DATA / "spy.py"), backend=backend,  # type: ignore[arg-type]
                          cases=problem.cases_for(backend), seeds=[0, 1])
    res = run_judged(req, limits=SandboxLimits(300, 16384, address_space_limit=backend == "interpreter"),
                     interpreter=backend == "interpreter", use_zygote=True)
    line = next((ln for ln in res.stdout_tail.splitlines() if ln.startswith("LADDER_HOSTILE_REPORT ")), None)
    return (json.loads(line.split(" ", 1)[1]) if line else None), res


_INSIDE = r"""
import errno, json, os, resource, socket
out = {"cap_eff": [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0],
       "pids": len([p for p in os.listdir("/proc") if p.isdigit()]),
       "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0], "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
       "as": resource.getrlimit(resource.RLIMIT_AS)[0]}
try:
    open("/usr/ladder-jail-test", "w"); out["usr"] = "writable"
except OSError as e:
    out["usr"] = errno.errorcode.get(e.errno, str(e.errno))
s = socket.socket(); s.settimeout(2)
try:
    s.connect(("1.1.1.1", 53)); out["net"] = "connected"
except OSError as e:
    out["net"] = errno.errorcode.get(e.errno, str(e.errno))
if os.environ.get("CHECK_CUDA") == "1":
    try:
        import torch
        x = torch.arange(1024, device="cuda", dtype=torch.float32)
        out["cuda"] = float((x * 2).sum().item()) == float(2 * sum(range(1024)))
        out["device"] = torch.cuda.get_device_name()
    except Exception as e:  # noqa: BLE001
        out["cuda"] = f"{type(e).__name__}: {e}"[:300]
print(json.dumps(out))
"""


def jail_unit(gpu: bool, tmp: Path) -> None:
    from optimizer.harness import jail

    spec = {"scratch": str(tmp), "isolate": jail.probe()["isolate"], "readable": jail.default_readable(),
            "devices": gpu, "memory_mb": None if gpu else 4096, "limit_as": not gpu, "fsize_mb": 2, "cpu_s": 120,
            "nproc": 256}
    (tmp / "spec.json").write_text(json.dumps(spec))
    env = jail.scrub_env(dict(os.environ), tmp) | {"PYTHONPATH": str(ROOT), "CHECK_CUDA": "1" if gpu else "0"}
    env["CHECK_CUDA"] = "1" if gpu else "0"
    proc = subprocess.run([sys.executable, "-m", "optimizer.harness.jail", str(tmp / "spec.json"), "--",
                           sys.executable, "-c", _INSIDE], capture_output=True, text=True, env=env, timeout=300)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        claim("jail_unit", False, f"no answer: rc={proc.returncode} {proc.stderr[-600:]}")
        return
    ok = (out["cap_eff"] == "0000000000000000" and out["pids"] <= 4 and out["usr"] == "EROFS"
          and out["fsize"] == 2 << 20 and out["cpu"] == 120 and out["net"] in ("ENETUNREACH", "EHOSTUNREACH")
          and (not spec["limit_as"] or out["as"] == 4096 << 20) and (not gpu or out.get("cuda") is True))
    claim("jail_unit", ok, out)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    outdir = Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    gpu = os.path.exists("/dev/nvidiactl")
    backend = "cuda" if gpu else "interpreter"
    os.environ.update(SECRETS)  # what a session's environment holds (this process's /proc environ lacks them:
    holder = subprocess.Popen(["sleep", "600"], env={**SECRETS, "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    HOME.mkdir(exist_ok=True)  # ... so a process holding them in its exec environment stands in for the parent)
    (HOME / "kb.sqlite3").write_bytes(b"SQLite format 3\x00 another home's cards")
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 47391))
    server.listen(8)
    server.settimeout(0.2)
    t_start = time.time()
    try:
        from optimizer.harness import jail
        from optimizer.harness.evaluation import evaluate
        from optimizer.harness.problem import load_problem
        from optimizer.settings import LadderSettings

        level = jail.probe()
        claim("isolation", level["isolate"], "namespaces" if level["isolate"] else f"basic: {level['why']}")
        problem = load_problem(DATA)
        settings = LadderSettings()
        for name, file, want in (("judge", "patch_compare.py", False), ("honest", "honest.py", True)):
            try:
                t0 = time.time()
                ev = evaluate(problem, DATA / file, backend=backend, settings=settings, timing=gpu)
                ok = ev.passed == want and (want or ev.failure_kind == "mismatch")
                claim(name, ok, {"passed": ev.passed, "failure_kind": ev.failure_kind, "reason": ev.reason[:300],
                                 "timed_cases": len(ev.timing_cases), "device": ev.device, "wall_s": round(time.time() - t0, 2),
                                 "phase_s": ev.phase_s})
            except Exception:  # noqa: BLE001
                claim(name, False, traceback.format_exc()[-800:])
        try:
            report, res = run_spy(backend)
            if report is None:
                claim("spy_ran", False, {"status": res.status, "reason": res.reason, "stderr": res.stderr_tail[-800:]})
            else:
                claim("spy_validates", bool(res.payload.get("validation", {}).get("passed")), res.reason or "passed")
                claim("secrets", report["env"] == [], report["env"])
                claim("proc_environ", report["proc_environ"] == [], report["proc_environ"])
                claim("other_home", report["home"] is False, report["home"])
                wrote_host = (DATA / "escaped.txt").exists() or (ESCAPE / "written.txt").exists()
                claim("write_outside", not wrote_host and str(DATA / "escaped.txt") not in report["wrote"],
                      {"inside_view": report["wrote"], "reached_host": wrote_host})
                accepted = False
                try:
                    conn, _ = server.accept()
                    conn.close()
                    accepted = True
                except OSError:
                    pass
                claim("network", report["socket"] == [] and not accepted, {"connected": report["socket"],
                                                                           "host_listener_accepted": accepted})
                time.sleep(1.0)
                claim("orphans", orphans() == [], orphans())
        except Exception:  # noqa: BLE001
            claim("spy_ran", False, traceback.format_exc()[-800:])
        tmp = outdir / "jail_unit"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            jail_unit(gpu, tmp)
        except Exception:  # noqa: BLE001
            claim("jail_unit", False, traceback.format_exc()[-800:])
        try:
            from optimizer.harness.contracts import RunRequest, to_wire
            from optimizer.harness.sandbox import SandboxLimits, run_worker

            hang = outdir / "hang.py"
            hang.write_text("import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time\\n"
                            "while True: time.sleep(0.2)', 'ladder-hostile-orphan'], start_new_session=True)\n"
                            "time.sleep(600)\n")
            req = RunRequest(problem=str(DATA / "problem.py"), candidate=str(hang), backend=backend, cases=[{}])  # type: ignore[arg-type]
            res = run_worker(to_wire(req), limits=SandboxLimits(timeout_s=20, address_space_limit=not gpu),
                             interpreter=not gpu, use_zygote=True)
            time.sleep(1.0)
            claim("timeout_tree", res.status == "timeout" and orphans() == [], {"status": res.status,
                                                                                "orphans": orphans()})
        except Exception:  # noqa: BLE001
            claim("timeout_tree", False, traceback.format_exc()[-800:])
        try:
            os.environ["LADDER_SANDBOX_ISOLATE"] = "0"
            jail._PROBED = None
            report, res = run_spy(backend)
            time.sleep(1.0)
            ok = report is not None and report["env"] == [] and report["cwd"].startswith(("/tmp/ladder_sbx_",
                                                                                        os.environ.get("TMPDIR", "/tmp")))
            claim("basic_level", ok and orphans() == [], {"report": report, "isolation": res.isolation,
                                                          "orphans": orphans()})
        except Exception:  # noqa: BLE001
            claim("basic_level", False, traceback.format_exc()[-800:])
        finally:
            os.environ.pop("LADDER_SANDBOX_ISOLATE", None)
            jail._PROBED = None
    finally:
        server.close()
        holder.kill()
        shutil.rmtree(HOME, ignore_errors=True)
        shutil.rmtree(ESCAPE, ignore_errors=True)
        (DATA / "escaped.txt").unlink(missing_ok=True)
        for pid in orphans():
            os.kill(pid, 9)
    from optimizer.harness.sandbox import shutdown_zygotes

    shutdown_zygotes()
    failed = [r["claim"] for r in RESULTS if not r["passed"]]
    summary = {"backend": backend, "gpu": gpu, "python": sys.version.split()[0], "wall_s": round(time.time() - t_start, 1),
               "uname": os.uname().release, "euid": os.geteuid(), "claims": RESULTS, "failed": failed}
    try:
        import torch
        import triton

        summary["versions"] = {"torch": torch.__version__, "triton": triton.__version__}
    except ImportError:
        pass
    (outdir / "sandbox_check.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"{len(RESULTS) - len(failed)}/{len(RESULTS)} claims hold ({backend}); {outdir / 'sandbox_check.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
