"""A content-addressed timing cache: a candidate already evaluated on this GPU in this run is not evaluated again.

Opt-in (``LadderSettings.timing_cache``: a JSON-lines file; default None = off, sessions unchanged). The ablation
(issue 34) runs five ladder policies over the same problems: they share the baseline's A/A timing and many first
rounds, and each such evaluation costs a sandboxed compile, validation and interleaved timing on the GPU.

Key (sha256 of a canonical JSON document): what was called (``evaluate`` with timing, or ``retime``), the sha256 of
the candidate's source, the problem (name and sha256 of its file), the cases, the backend, the GPU (name and UUID
from ``nvidia-smi``; ``cpu`` on the interpreter), the timing method (the session's fixed per-case methods and every
timing option: warm-up, rep, blocks, CUDA-graph threshold, L2 flush), the sha256 of every comparison kernel by role
(``against``: the initial candidate, the round's base) and whether an A/A copy was timed, the validation seeds and
the Triton used. Value: the ``Evaluation`` (validation, timing cases with their interleaved blocks, protocol,
device ...) and the seconds it cost. Only evaluations that passed are stored: a failure may be the machine's.

A hit returns the stored evaluation for the new candidate path with ``duration_s`` 0 and no phases (nothing ran);
``stats`` counts hits, misses and the seconds saved, so a cost measure can charge what a hit would have cost.
Safe for one writer per file with any number of readers: lines are appended whole under an exclusive ``flock``, a
torn last line (a killed writer) is skipped, and a reader picks up lines other processes appended before a miss.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.models import TimingProtocol, Validation
from optimizer.harness.contracts import timing_request
from optimizer.harness.hacks import HackFinding
from optimizer.harness.outcome import Evaluation

if TYPE_CHECKING:
    from optimizer.backend import Backend

__all__ = ["CacheStats", "TimingCache", "cached", "gpu_identity", "open_cache"]

_VERSION = 1


@dataclasses.dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    stores: int = 0
    saved_s: float = 0.0

    def copy(self) -> CacheStats:
        return dataclasses.replace(self)


class TimingCache:
    """One JSON-lines file of ``{"key", "kind", "problem", "gpu", "cost_s", "evaluation"}`` records."""

    def __init__(self, path: str | Path, *, gpu: str | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.gpu = gpu
        self.stats = CacheStats()
        self._entries: dict[str, dict[str, Any]] = {}
        self._offset = 0
        self._lock = threading.Lock()
        self._refresh()

    def __len__(self) -> int:
        return len(self._entries)

    def _refresh(self) -> None:
        """Read the lines appended since the last read (by this or another process); a torn last line waits."""
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line torn by a killed writer and then followed by others: skipped
            if isinstance(rec, dict) and rec.get("v") == _VERSION and "key" in rec:
                self._entries[rec["key"]] = rec
        self._offset += end

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            rec = self._entries.get(key)
            if rec is None:
                self._refresh()
                rec = self._entries.get(key)
            if rec is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
            self.stats.saved_s += float(rec.get("cost_s") or 0.0)
            return rec

    def put(self, key: str, record: dict[str, Any]) -> None:
        rec = {"v": _VERSION, "key": key, **record}
        line = (json.dumps(rec, sort_keys=True, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as f:
                try:
                    import fcntl

                    fcntl.flock(f, fcntl.LOCK_EX)
                except (ImportError, OSError):  # no flock (another OS or file system): one writer is the contract
                    pass
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            self._entries[key] = rec
            self.stats.stores += 1

    def gpu_for(self, backend: Backend) -> str:
        if self.gpu is None:
            self.gpu = gpu_identity(backend)
        return self.gpu


_OPEN: dict[Path, TimingCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | Path, *, gpu: str | None = None) -> TimingCache:
    """The process's one ``TimingCache`` for ``path`` (its stats accumulate over every evaluation that used it)."""
    p = Path(path).expanduser().resolve()
    with _OPEN_LOCK:
        cache = _OPEN.get(p)
        if cache is None:
            cache = _OPEN[p] = TimingCache(p, gpu=gpu)
        elif gpu is not None:
            cache.gpu = gpu
        return cache


@functools.lru_cache(maxsize=4)
def gpu_identity(backend: Backend) -> str:
    """``NAME|UUID`` of the CUDA device this process's ``cuda:0`` names (``nvidia-smi``, honouring
    CUDA_VISIBLE_DEVICES), ``cpu`` on the interpreter, ``npu0`` on Ascend. No CUDA context is created here."""
    if backend == "interpreter":
        return "cpu"
    if backend != "cuda":
        return f"{backend}0"
    dev = (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0].strip()
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20, check=True).stdout
            for line in out.strip().splitlines():
                idx, uuid, name = (x.strip() for x in line.split(",", 2))
                if dev in (idx, uuid):
                    return f"{name}|{uuid}"
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
    try:  # without nvidia-smi: torch (creates a context in this process; only reached on odd images)
        import torch

        return f"{torch.cuda.get_device_name(0)}|cuda:{dev}"
    except (ImportError, OSError, RuntimeError, AssertionError):  # no torch, a broken CUDA library, no device, a CPU
        # build (torch asserts "not compiled with CUDA"): the index names the device
        return f"cuda:{dev}"


def _sha(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cache_key(kind: str, a: dict[str, Any], cache: TimingCache) -> str:
    """The key of one ``evaluate``/``retime`` call from its bound arguments (see the module docstring)."""
    problem, settings, backend = a["problem"], a["settings"], a["backend"]
    cases = a.get("cases")
    cases = cases if cases is not None else problem.cases_for(backend)
    against = a.get("against") or {}
    opts = timing_request(settings, None, bool(a.get("aa")), a.get("methods")).model_dump(mode="json")
    if kind == "retime":
        opts.update(reference=False, blocks=a.get("blocks") or settings.timing_blocks)
    doc = {
        "kind": kind, "candidate": _sha(a["candidate"]), "problem": [problem.name, problem.sha256],
        "cases": cases, "backend": backend, "gpu": cache.gpu_for(backend), "timing": opts,
        "against": {role: _sha(p) for role, p in sorted(against.items())},
        "seeds": list(settings.validation_seeds) if kind == "evaluate" else [],
        "triton": settings.triton_python or "",
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def _dump(ev: Any) -> dict[str, Any]:
    def plain(x: Any) -> Any:
        if hasattr(x, "model_dump"):
            return x.model_dump(mode="json")
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return dataclasses.asdict(x)
        return x

    out = {}
    for f in dataclasses.fields(ev):
        v = getattr(ev, f.name)
        if f.name != "candidate":
            out[f.name] = [plain(x) for x in v] if isinstance(v, list) else plain(v)
    return out


def _rebase_launches(launches: Any, candidate: Path, stored: str | None) -> list[Any]:
    """The stored launch records with the kernel file moved to ``candidate``: a hit is the same source under another
    path (another arm's session folder, possibly deleted since), and L3/L4 compile the kernel from ``file``. Records
    of a file other than the stored candidate (a module the candidate imports) keep theirs. An entry written before
    the stored path was recorded (``stored`` None) moves only files that no longer exist."""
    out = []
    for r in launches or []:
        f = r.get("file") if isinstance(r, dict) else None
        if f and (f == stored if stored is not None else not Path(f).exists()):
            r = {**r, "file": str(candidate)}
        out.append(r)
    return out


def _load(data: dict[str, Any], candidate: Path, stored: str | None = None) -> Evaluation:
    d = dict(data)
    d["launches"] = _rebase_launches(d.get("launches"), candidate, stored)
    d["validation"] = Validation.model_validate(d["validation"])
    d["protocol"] = TimingProtocol.model_validate(d["protocol"]) if d.get("protocol") else None
    d["findings"] = [HackFinding(**f) for f in d.get("findings") or []]
    d["duration_s"], d["phase_s"] = 0.0, {}  # nothing ran
    return Evaluation(candidate=candidate, **d)


def cached(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate ``evaluate`` (``kind="evaluate"``; only calls that time) or ``retime``: with ``settings.timing_cache``
    set, a call whose key is in the cache returns the stored evaluation without running anything."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            a = bound.arguments
            path = getattr(a.get("settings"), "timing_cache", None)
            if not path or (kind == "evaluate" and (not a.get("timing") or not a.get("static_gate", True))):
                return fn(*args, **kwargs)
            cache = open_cache(path)
            cand = Path(a["candidate"]).resolve()
            try:
                key = cache_key(kind, a, cache)
            except OSError:  # an unreadable candidate or comparison file: the call reports it
                return fn(*args, **kwargs)
            rec = cache.get(key)
            if rec is not None:
                return _load(rec["evaluation"], cand, rec.get("candidate_path"))
            ev = fn(*args, **kwargs)
            if ev.passed and ev.status == "ok":
                cache.put(key, {"kind": kind, "problem": a["problem"].name, "gpu": cache.gpu_for(a["backend"]),
                                "candidate_path": str(cand),
                                "cost_s": round(float(ev.duration_s), 3), "evaluation": _dump(ev)})
            return ev

        return run

    return wrap
