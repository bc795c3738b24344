"""Committed campaign data read the same way everywhere.

Trajectories under ``benchmarks/results`` are stored gzip-compressed (``trajectory.json.gz``, written by
``benchmarks/pack_results.py``): 8 MB of JSON takes 0.9 MB, which keeps the source tree small and the GPU call's
64 MiB carry within reach. A fresh run writes a plain ``trajectory.json``; readers take either, the plain file
winning when both exist (it is the newer)."""

from __future__ import annotations

import gzip
from pathlib import Path


def readable(path: Path) -> Path | None:
    """``path`` if it exists, else ``path.gz``, else None."""
    if path.is_file():
        return path
    gz = path.with_name(path.name + ".gz")
    return gz if gz.is_file() else None


def read_text(path: Path) -> str:
    """The text of ``path`` or of its ``.gz`` (FileNotFoundError naming ``path`` when neither exists)."""
    real = readable(path)
    if real is None:
        raise FileNotFoundError(f"{path} (nor {path.name}.gz)")
    return gzip.decompress(real.read_bytes()).decode() if real.suffix == ".gz" else real.read_text()


def find(root: Path, name: str = "trajectory.json") -> list[Path]:
    """Every ``name`` under ``root`` as a logical path (without .gz), sorted; read them with ``read_text``."""
    found = {p for p in root.rglob(name)} | {p.with_name(name) for p in root.rglob(name + ".gz")}
    return sorted(found)
