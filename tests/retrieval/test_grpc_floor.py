"""The generated stubs and the client side of the CLI work with the oldest grpcio the project declares.

The lent GPU image carries grpcio 1.84 while grpcio-tools 1.85 writes a guard that refuses anything older than
itself; scripts/gen_protos.py lowers that guard to MIN_GRPCIO, and this file checks both the guard and a real
import of the CLI against that grpcio (installed once into pytest's cache with ``pip install --target``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _gen_protos():
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def test_generated_guard_is_at_the_declared_floor():
    floor = _gen_protos().MIN_GRPCIO
    guard = re.findall(r"^GRPC_GENERATED_VERSION = '([^']+)'", (ROOT / "retrieval/v1/ladder_pb2_grpc.py").read_text(),
                       re.MULTILINE)
    assert guard == [floor]
    assert _version(floor) <= (1, 66, 0)
    assert f'"grpcio>={floor}"' in (ROOT / "pyproject.toml").read_text(), "pyproject's grpcio floor must match scripts/gen_protos.py MIN_GRPCIO"


def test_relax_version_guard_refuses_an_unknown_shape():
    with pytest.raises(SystemExit, match="changed shape"):
        _gen_protos().relax_version_guard("import grpc\n")


@pytest.fixture(scope="module")
def old_grpcio(request) -> Path:
    floor = _gen_protos().MIN_GRPCIO
    target = request.config.cache.mkdir(f"grpcio-{floor}")
    if not (target / "grpc" / "__init__.py").exists():
        done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:",
                               "--target", str(target), f"grpcio=={floor}"], check=False, capture_output=True,
                              text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot install grpcio=={floor} (no index reachable?): {done.stderr.strip()[-300:]}")
    return target


def test_cli_imports_and_builds_stubs_on_the_oldest_grpcio(old_grpcio: Path):
    probe = (
        "import sys, grpc\n"
        "import optimizer.cli\n"
        "from retrieval.v1 import ladder_pb2_grpc\n"
        "ladder_pb2_grpc.KnowledgeServiceStub(grpc.insecure_channel('127.0.0.1:1'))\n"
        "print(grpc.__version__, 'retrieval.server' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": f"{old_grpcio}:{ROOT}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    version, server_loaded = done.stdout.split()
    assert version == _gen_protos().MIN_GRPCIO
    assert server_loaded == "False", "client-only use must not import retrieval.server (retrieval/__init__.py)"
