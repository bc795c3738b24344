"""Generate the checked-in Python code for protos/ (the single generator; tests fail when output is stale).

Usage: python scripts/gen_protos.py [OUT_DIR]   (default: the repo root, i.e. retrieval/v1/*_pb2*.py)
Proto paths mirror the import path (protos/retrieval/v1/x.proto -> retrieval/v1/x_pb2.py), so no import
rewriting is needed.

grpcio-tools writes a guard into each *_pb2_grpc.py that refuses any grpcio older than the tools themselves
(1.85.1 here), although the code it emits only needs grpcio >= 1.66 (`_registered_method`,
`add_registered_method_handlers`). The generator replaces that guard with one at MIN_GRPCIO, the floor declared
in pyproject.toml and exercised by tests/retrieval/test_grpc_floor.py, so the CLI starts on images with an
older grpcio (the lent GPU image has 1.84).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "protos"
MIN_GRPCIO = "1.66.0"
_GUARD = re.compile(r"^GRPC_GENERATED_VERSION = '[^']+'$", re.MULTILINE)


def relax_version_guard(text: str) -> str:
    """Lower the generated grpcio version guard to MIN_GRPCIO (see the module docstring)."""
    relaxed, n = _GUARD.subn(f"GRPC_GENERATED_VERSION = '{MIN_GRPCIO}'  # lowered by scripts/gen_protos.py", text)
    if n != 1:
        raise SystemExit("gen_protos: the grpcio version guard changed shape; update relax_version_guard")
    return relaxed


def generate(out: Path) -> list[Path]:
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(PROTO_ROOT.rglob("*.proto"))
    args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *[str(p.relative_to(PROTO_ROOT)) for p in protos]]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    for grpc_file in sorted((out / "retrieval").rglob("*_pb2_grpc.py")):
        grpc_file.write_text(relax_version_guard(grpc_file.read_text()))
    for p in protos:
        pkg = out / p.parent.relative_to(PROTO_ROOT)
        init = pkg / "__init__.py"
        if not init.exists():
            init.write_text('"""Generated protobuf/gRPC code (scripts/gen_protos.py). Do not edit."""\n')
    return sorted((out / "retrieval").rglob("*_pb2*.py*"))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    for f in generate(target):
        print(f.relative_to(target))
