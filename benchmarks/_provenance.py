"""Provenance recorded with every benchmark result: machine, versions, date, command."""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def provenance(extra_packages: tuple[str, ...] = ()) -> dict[str, Any]:
    pkgs = ("kernel-ladder", "torch", "triton", "chromadb", "sentence-transformers", "bm25s", "grpcio", *extra_packages)
    versions = {}
    for p in pkgs:
        try:
            versions[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            versions[p] = None
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {"node": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]},
        "versions": versions,
    }


def write_result(name: str, payload: dict[str, Any], out_dir: Path | None = None) -> Path:
    out = (out_dir or RESULTS) / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"provenance": provenance(), **payload}, indent=2, default=str) + "\n")
    return out


def percentiles(samples_s: list[float]) -> dict[str, float]:
    import numpy as np

    a = np.asarray(samples_s) * 1000.0
    return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 3),
            "p90_ms": round(float(np.percentile(a, 90)), 3), "p99_ms": round(float(np.percentile(a, 99)), 3),
            "mean_ms": round(float(a.mean()), 3)}
