"""Generate the checked-in Python code for protos/ (the single generator; tests fail when output is stale).

Usage: python scripts/gen_protos.py [OUT_DIR]   (default: the repo root, i.e. retrieval/v1/*_pb2*.py)
Proto paths mirror the import path (protos/retrieval/v1/x.proto -> retrieval/v1/x_pb2.py), so no import
rewriting is needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "protos"


def generate(out: Path) -> list[Path]:
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(PROTO_ROOT.rglob("*.proto"))
    args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *[str(p.relative_to(PROTO_ROOT)) for p in protos]]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
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
