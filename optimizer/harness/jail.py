"""The jail every process that imports candidate or reference code runs in (standard library only).

``enter(spec)`` runs in a fresh child before any untrusted code is imported (the zygote's forked child, or
``python -m optimizer.harness.jail SPEC.json -- CMD ...`` for spawned workers and IR capture) and applies, in
this order:

1. **Its own session** (``setsid``): the parent kills the whole process group at the deadline.
2. **Resource limits**: ``RLIMIT_CORE`` 0; ``RLIMIT_AS`` (address space, CPU backends only: CUDA/NPU runtimes
   reserve huge virtual ranges, so there the parent's RSS watchdog enforces the memory limit); ``RLIMIT_FSIZE``
   (largest file it may write); ``RLIMIT_CPU`` (CPU seconds, a backstop behind the wall-clock deadline);
   processes: a ``pids`` cgroup (``pids.max``) where ``/sys/fs/cgroup`` is writable, else ``RLIMIT_NPROC`` set
   to the number of tasks the user already runs plus the allowance (a per-user count: weaker, said so).
3. **Namespaces** (``isolate``; Linux as root with CAP_SYS_ADMIN; user namespaces are not used, so a non-root
   user gets the basic level): a new network namespace (only a loopback
   interface, down: no socket reaches any host), a new PID namespace whose init is a reaper with the worker as its
   child (when the worker ends or is killed, the init exits and the kernel kills every process in the namespace,
   ``setsid``/double-forked ones included), a new IPC
   namespace and a new mount namespace in which the worker sees a **minimal root**: the system and Python
   directories, the repository and the problem/candidate folders read-only, its scratch directory read-write,
   a private ``/tmp`` and ``/dev/shm`` (tmpfs), a fresh ``/proc`` (its own processes only: the parent's
   ``/proc/PID/environ`` is out of sight), ``/dev`` with null/zero/urandom and the GPU/NPU device nodes. Nothing
   else of the host file system is visible: another KB home, ``~/.ladder``, the user's files.
4. **No privileges**: every capability dropped (bounding, ambient, effective, permitted) and ``no_new_privs``,
   so a root worker cannot remount, unmount, leave the namespaces or read files by capability.

Where namespaces are unavailable (not Linux, no privilege, a container's seccomp profile) ``probe()`` says so
and the jail degrades to steps 1, 2 and 4 plus what the parent always does (a scrubbed environment, a private
working directory, ``HOME``/``TMPDIR`` inside the scratch directory, the process group killed at the deadline)
and a subreaper that kills what the worker left behind; files and network are then not contained. At both levels
the session's Triton cache stays writable (``sandbox.triton_cache``); ``SandboxResult.isolation`` and
``benchmarks/sandbox_check.py`` report which level ran. README "Sandbox" has the table per platform.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import glob
import json
import os
import platform
import resource
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SECRET_MARKERS", "SETUP_FAILED", "default_readable", "enter", "private_env", "probe", "scrub_env"]

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE = 1024, 2048, 4096, 16384, 1 << 18
MS_RELATIME, MS_STRICTATIME = 1 << 21, 1 << 24
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 24, 38, 36
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())

#: Environment variables a worker keeps (prefixes); everything else is dropped, and so is any kept name that
#: looks like a secret (``SECRET_MARKERS``). LADDER_* never passes: tokens and the LLM key live there.
_KEEP_PREFIXES = ("PATH", "LANG", "LANGUAGE", "LC_", "TZ", "TERM", "PYTHON", "TRITON_", "CUDA_", "NVIDIA_",
                  "LD_LIBRARY_PATH", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "TORCH_", "PYTORCH_", "ASCEND_", "NPU_",
                  "HCCL_", "MLIR_", "LLVM_", "CUBLAS", "CUDNN_", "NCCL_", "TOOLCHAIN_HOME", "CC", "CXX")
SECRET_MARKERS = ("TOKEN", "SECRET", "KEY", "PASSW", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
_DEVICE_GLOBS = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime", "hosts",
        "alternatives", "os-release", "mime.types", "ssl")
#: the exit status of a child whose jail could not be set up (fail closed: no untrusted code ran)
SETUP_FAILED = 121


def scrub_env(env: dict[str, str], scratch: str | Path | None = None) -> dict[str, str]:
    """``env`` without secrets (allow-list by prefix, then a deny-list on the name; no ``LADDER_*``), plus, given
    ``scratch``, ``private_env(scratch)``."""
    out = {
        k: v
        for k, v in env.items()
        if k.startswith(_KEEP_PREFIXES)
        and not k.startswith("LADDER_")
        and not any(m in k.upper() for m in SECRET_MARKERS)
    }
    out.update(PYTHONDONTWRITEBYTECODE="1")
    return out | (private_env(scratch) if scratch is not None else {})


def private_env(scratch: str | Path, triton_cache: str | Path | None = None) -> dict[str, str]:
    """HOME, TMPDIR and the XDG cache inside ``scratch`` (created), and the Triton cache: ``triton_cache`` when given
    (the session's shared one, where workers share autotuning decisions), else inside ``scratch`` too."""
    s = Path(scratch)
    out = {"HOME": str(s / "home"), "TMPDIR": str(s / "tmp"),
           "TRITON_CACHE_DIR": str(triton_cache or s / "triton-cache"), "XDG_CACHE_HOME": str(s / "cache")}
    for d in out.values():
        Path(d).mkdir(parents=True, exist_ok=True)
    return out


def default_readable(python: str | Path | None = None) -> list[str]:
    """What a worker must read: system directories, the Python installations and every ``sys.path`` entry of this
    interpreter (and of ``python``), and the repository (the harness itself)."""
    repo = Path(__file__).resolve().parents[2]
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", str(repo),
             sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parents[1])]
    paths += [f"/etc/{e}" for e in _ETC]
    prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    paths += [p for p in sys.path if p and os.path.isabs(p) and (  # libraries, not the script's folder or the cwd
        p.startswith(prefixes) or "site-packages" in p or "dist-packages" in p)]
    if python is not None:
        paths.append(str(Path(python).absolute().parents[1]))
        paths.append(str(Path(python).resolve().parents[1]))
    paths += _toolchain_paths(os.environ)
    return list(dict.fromkeys(p for p in paths if os.path.exists(p)))


def _toolchain_paths(env: Mapping[str, str]) -> list[str]:
    """What the worker's compiler steps and imports need outside the system directories: every absolute
    ``PYTHONPATH`` entry (wheels unpacked beside the interpreter, e.g. /tmp/site on the lent GPU image), and the
    install tree of the C compiler Triton builds its launcher with and of any tool a ``TRITON_*`` variable names
    (``CC=/opt/gcc/bin/gcc`` -> /opt/gcc: gcc needs its lib/ and libexec/ too). Found on the H200 image, where a jail
    without them failed every compile with FileNotFoundError for /opt/gcc/bin/gcc and every import of pydantic."""
    out = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    tools = [env.get("CC", ""), env.get("CXX", "")] + [
        v for k, v in env.items() if k.startswith("TRITON_") and k.endswith("_PATH")
    ]
    for tool in tools:
        if tool and os.path.isabs(tool) and os.path.exists(tool):
            real = Path(tool).resolve()
            out.append(str(real.parents[1] if real.parent.name == "bin" else real.parent))
    return out


#: never bound whole: a bind of one of these would expose every user's files (or the jail's own mounts)
_NEVER = frozenset(
    {"/", "/tmp", "/var", "/var/tmp", "/home", "/root", "/dev", "/proc", "/run", "/mnt", "/media", "/srv"}
)


def _roots(paths: list[str]) -> list[str]:
    """Distinct paths with any path below another one dropped (a bind of the parent covers it)."""
    out: list[str] = []
    for p in sorted({os.path.realpath(p) for p in paths} - _NEVER, key=len):
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out


# ------------------------------------------------------------------------------------------- syscalls
_libc: Any = None


def _lib() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def _check(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_lib().mount(src and src.encode(), target.encode(), fstype and fstype.encode(), ctypes.c_ulong(flags),
                        data and data.encode()), f"mount {src} -> {target}")


def _unshare(flags: int) -> None:
    _check(_lib().unshare(ctypes.c_int(flags)), "unshare")


def _prctl(option: int, arg: int = 0) -> int:
    return int(_lib().prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                            ctypes.c_ulong(0)))


# ------------------------------------------------------------------------------------------- limits
def _limits(spec: dict[str, Any]) -> list[str]:
    """Apply the resource limits; returns what was applied (for the probe and the check script)."""
    applied = []
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec.get("memory_mb") and spec.get("limit_as"):
        n = int(spec["memory_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (n, n))
        applied.append("RLIMIT_AS")
    if spec.get("fsize_mb"):
        n = int(spec["fsize_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        applied.append("RLIMIT_FSIZE")
    if spec.get("cpu_s"):
        n = int(spec["cpu_s"])
        resource.setrlimit(resource.RLIMIT_CPU, (n, n + 5))
        applied.append("RLIMIT_CPU")
    if spec.get("nproc"):
        applied.append(_process_limit(int(spec["nproc"])))
    return applied


def _cgroup_pids_root() -> Path | None:
    for root in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
        if (root / "cgroup.procs").exists() and os.access(root, os.W_OK) and (
                root.name == "pids" or "pids" in _read(root / "cgroup.controllers")):
            return root
    return None


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""


_CGROUP: list[Path] = []


def _process_limit(n: int) -> str:
    """A pids cgroup holding this process (children inherit it), else RLIMIT_NPROC over the user's current tasks."""
    root = _cgroup_pids_root()
    if root is not None:
        for stale in root.glob("ladder-jail-*"):  # left by a supervisor killed outright: removable once empty
            try:
                stale.rmdir()
            except OSError:
                pass
        cg = root / f"ladder-jail-{os.getpid()}"
        try:
            cg.mkdir(exist_ok=True)
            (cg / "pids.max").write_text(str(n))
            (cg / "cgroup.procs").write_text(str(os.getpid()))
            _CGROUP.append(cg)
            return "pids cgroup"
        except OSError:
            try:
                cg.rmdir()
            except OSError:
                pass
    uid = os.getuid()
    tasks = 0
    for st in glob.glob("/proc/[0-9]*/task/*/status"):
        try:
            if any(line.startswith("Uid:") and line.split()[1] == str(uid) for line in open(st)):
                tasks += 1
        except OSError:
            continue
    resource.setrlimit(resource.RLIMIT_NPROC, (tasks + n, tasks + n))
    return "RLIMIT_NPROC"


def _leave_cgroup() -> None:
    for cg in _CGROUP:
        try:
            (cg.parent / "cgroup.procs").write_text(str(os.getpid()))
            for _ in range(50):
                try:
                    cg.rmdir()
                    break
                except OSError:
                    import time

                    time.sleep(0.02)
        except OSError:
            pass
    _CGROUP.clear()


# ------------------------------------------------------------------------------------------- the root
def _mountinfo() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of this mount namespace, octal escapes decoded."""
    out = []
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        out.append((f[4].encode().decode("unicode_escape"), f[5]))
    return out


_OPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
              "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}


def _remount_ro(target: str, extra: int = MS_NOSUID) -> None:
    """Make ``target`` and every mount below it read-only (keeping the flags each mount had)."""
    t = target.rstrip("/")
    for point, opts in _mountinfo():
        if point == t or point.startswith(t + "/"):
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | extra
            for o in opts.split(","):
                flags |= _OPT_FLAGS.get(o, 0)
            _mount(None, point, None, flags)


def _bind(src: str, root: str, *, writable: bool = False, dev: bool = False) -> None:
    dst = root + src
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            open(dst, "w").close()
    _mount(src, dst, None, MS_BIND | MS_REC)
    if not writable:
        _remount_ro(dst, MS_NOSUID | (0 if dev else MS_NODEV))


def _build_root(spec: dict[str, Any]) -> None:
    scratch = os.path.realpath(spec["scratch"])
    root = os.path.join(scratch, ".jailroot")
    os.makedirs(root, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=16m")
    for d, size in (("/tmp", "1g"), ("/dev", "1m"), ("/dev/shm", "1g")):  # before the binds, which may lie below
        os.makedirs(root + d, exist_ok=True)
        _mount("tmpfs", root + d, "tmpfs", MS_NOSUID | (MS_NODEV if d != "/dev" else 0),
               f"mode={'755' if d == '/dev' else '1777'},size={size}")
    readable = [p for p in spec.get("readable", []) if os.path.exists(p)]
    for p in _roots(readable):
        _bind(p, root)
    for p in readable:  # symlinked entries (/lib -> usr/lib, a venv's python): the link itself, beside its target
        for link in (Path(p), *Path(p).parents):
            if link.is_symlink() and not os.path.lexists(root + str(link)):
                os.makedirs(root + str(link.parent), exist_ok=True)
                os.symlink(os.readlink(link), root + str(link))
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        if os.path.exists(f"/dev/{name}"):
            _bind(f"/dev/{name}", root, writable=True, dev=True)
    if spec.get("devices"):
        for pattern in _DEVICE_GLOBS:
            for dev in glob.glob(pattern):
                _bind(dev, root, writable=True, dev=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for w in [scratch, *spec.get("writable", [])]:
        _bind(os.path.realpath(w), root, writable=True)
    os.chdir(root)
    if _SYS_PIVOT_ROOT is not None:
        _check(_lib().syscall(ctypes.c_long(_SYS_PIVOT_ROOT), b".", b"."), "pivot_root")
        _check(_lib().umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")
    else:  # pragma: no cover - other architectures: chroot (escaping it needs CAP_SYS_CHROOT, dropped below)
        os.chroot(".")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _drop_privileges() -> None:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() == errno.EINVAL:
            break
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    hdr, data = Header(0x20080522, 0), (Data * 2)()
    if _SYS_CAPSET is not None:
        _check(_lib().syscall(ctypes.c_long(_SYS_CAPSET), ctypes.byref(hdr), ctypes.byref(data)), "capset")


# ------------------------------------------------------------------------------------------- enter
def enter(spec: dict[str, Any]) -> None:
    """Jail this process; returns in the process that must run the untrusted work.

    With ``isolate`` the calling process becomes a supervisor outside the new PID namespace and never returns: it
    waits for the worker (the namespace's init) and exits with its status (a signal death is re-raised). Without,
    this process becomes a child subreaper and forks the worker the same way, killing whatever the worker left
    behind when it ends. On a setup failure the process exits with ``SETUP_FAILED`` before any untrusted import.
    """
    try:
        if os.getpid() != os.getsid(0):
            os.setsid()
        _limits(spec)
        if spec.get("isolate"):
            _unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC)  # the mount namespace is the child's alone
        else:
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
    except BaseException as exc:  # noqa: BLE001 - process boundary (the supervisor, before any untrusted import):
        _die(f"sandbox setup failed: {type(exc).__name__}: {exc}")  # exits SETUP_FAILED, the parent reads stderr
    isolate = bool(spec.get("isolate"))
    r, w = os.pipe()  # the worker's wait status, from the namespace's init to the supervisor
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if isolate:  # a mount namespace of its own (the supervisor keeps the host's view, for the cgroup)
                _unshare(CLONE_NEWNS)
                _mount(None, "/", None, MS_REC | MS_PRIVATE)
                _build_root(spec)
            os.chdir(spec["scratch"])
            if not spec.get("keep_caps"):
                _drop_privileges()
        except BaseException as exc:  # noqa: BLE001 - process boundary (the forked worker, before any untrusted import)
            _die(f"sandbox setup failed: {type(exc).__name__}: {exc}")
        if not isolate:
            os.close(w)
            return
        # pid 1 of the namespace: signals it sends itself would be ignored there, so the worker is its child
        worker = os.fork()
        if worker == 0:
            os.close(w)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            return
        _init(worker, w)
    os.close(w)
    _supervise(pid, r, isolate=isolate)


def _init(worker: int, w: int) -> None:
    """The PID namespace's init: reap everything, report the worker's status, exit (the kernel then kills the rest)."""
    def stop(_signum: int, _frame: Any) -> None:
        os.kill(worker, signal.SIGKILL)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    while True:
        try:
            got, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if got == worker:
            os.write(w, str(status).encode())
            os._exit(0)


def _die(msg: str) -> None:
    try:
        os.write(2, (msg + "\n").encode())
    finally:
        os._exit(SETUP_FAILED)


def _supervise(pid: int, r: int, *, isolate: bool) -> None:
    """Wait for the worker (or the namespace's init); kill every leftover descendant; exit with the worker's status
    (a signal death is re-raised). Never returns."""
    def forward(signum: int, _frame: Any) -> None:
        _kill_all(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        _leave_cgroup()
        os._exit(128 + signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    status = 0
    while True:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if got == pid:
            status = st
            if isolate:
                break  # the namespace's init is gone: the kernel killed the rest
            _kill_all(None)
    reported = b""
    while isolate and (chunk := os.read(r, 64)):
        reported += chunk
    if reported.strip():
        status = int(reported)
    _leave_cgroup()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _kill_all(pid: int | None) -> None:
    """Kill the worker (``pid``) and every process reparented to this subreaper."""
    me = str(os.getpid())
    for _ in range(20):
        kids = [int(p.split("/")[2]) for p in glob.glob("/proc/[0-9]*/stat")
                if _read(Path(p)).rsplit(")", 1)[-1].split()[1:2] == [me]]
        if pid is not None and pid not in kids:
            kids.append(pid)
        if not kids:
            return
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        for _k in kids:
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
        pid = None


# ------------------------------------------------------------------------------------------- probe
_PROBED: dict[str, Any] | None = None


def probe(refresh: bool = False) -> dict[str, Any]:
    """What this platform provides, found by jailing a throwaway child: ``{"isolate": bool, "why": str}``.

    ``isolate`` is True when namespaces, the minimal root and the capability drop all worked; ``why`` says what
    failed otherwise. ``LADDER_SANDBOX_ISOLATE=0`` turns isolation off (the weaker level, stated in results)."""
    global _PROBED
    if _PROBED is not None and not refresh:
        return _PROBED
    if os.environ.get("LADDER_SANDBOX_ISOLATE", "1") == "0":
        _PROBED = {"isolate": False, "why": "turned off by LADDER_SANDBOX_ISOLATE=0"}
        return _PROBED
    if not sys.platform.startswith("linux"):
        _PROBED = {"isolate": False, "why": f"namespaces are Linux-only (platform {sys.platform})"}
        return _PROBED
    import shutil
    import subprocess
    import tempfile

    scratch = tempfile.mkdtemp(prefix="ladder_jail_probe_")
    spec_path = Path(scratch) / "spec.json"
    spec_path.write_text(json.dumps({"scratch": scratch, "isolate": True, "readable": default_readable()}))
    check = ("import os, socket; s = socket.socket(); s.settimeout(1); "
             "print('OK' if sum(p.isdigit() for p in os.listdir('/proc')) < 5 else 'FAIL')")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "optimizer.harness.jail", str(spec_path), "--", sys.executable, "-S", "-c", check],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        text = (proc.stdout + proc.stderr).strip()
    except (OSError, subprocess.SubprocessError) as exc:
        text = f"probe failed: {exc}"
    shutil.rmtree(scratch, ignore_errors=True)
    ok = text.endswith("OK")
    _PROBED = {"isolate": ok, "why": "" if ok else text[-500:] or "unknown"}
    return _PROBED


def main(argv: list[str]) -> int:
    """``python -m optimizer.harness.jail SPEC.json -- CMD ARGS...``: jail, then exec CMD in the jail."""
    if "--" not in argv or argv.index("--") != 1:
        sys.stderr.write("usage: python -m optimizer.harness.jail SPEC.json -- CMD [ARGS...]\n")
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    cmd = argv[2:]
    enter(spec)
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        sys.stderr.write(f"cannot run {cmd[0]}: {exc}\n")
        return 127
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
