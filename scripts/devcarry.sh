#!/usr/bin/env bash
# Build what a lent-GPU call carries (see benchmarks/device_call.sh and /work/.library/device):
#   .whl/       wheels the GPU image lacks (pydantic, bm25s, libcst, the gRPC health/reflection services, protobuf),
#               for CPython 3.12 manylinux x86-64. grpcio itself is left out: the image's 1.84 satisfies the stubs'
#               floor (1.66), and its wheel would push a call past the 64 MiB carry limit.
#   .devcarry/  a read-only snapshot of the KB (`ladder kb snapshot`, seeded from the packaged cards) and the
#               all-MiniLM-L6-v2 embedder saved in fp16 (45 MB instead of 90 MB), its weights xz-compressed (41 MB).
# Run it after changing cards (the snapshot is what sessions on the GPU read). Both folders are git-ignored.
# Needs .venv (bash scripts/setup-env.sh) and the package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
rm -rf .whl .devcarry/snapshot
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  "pydantic==$($PY -c 'import pydantic; print(pydantic.VERSION)')" \
  "pydantic-core==$($PY -c 'import pydantic_core; print(pydantic_core.__version__)')" \
  pydantic-settings annotated-types typing-inspection python-dotenv bm25s libcst \
  grpcio-health-checking grpcio-reflection "protobuf==$($PY -c 'import google.protobuf as p; print(p.__version__)')"
mkdir -p .devcarry
if [ ! -f .devcarry/minilm/modules.json ]; then
  $PY -c "
from kb.search.embedding import model_dir
from sentence_transformers import SentenceTransformer
m = SentenceTransformer(str(model_dir()), device='cpu'); m.half(); m.save('.devcarry/minilm')"
fi
# xz the weights (45 -> 41 MB), the tokenizer and the vocabulary (0.9 -> 0.25 MB): the tracked tree plus the carry
# must stay under the device's 64 MiB; device_call.sh unpacks every *.xz
for f in tokenizer.json vocab.txt; do
  [ ! -f ".devcarry/minilm/$f" ] || xz -T0 -6 -f ".devcarry/minilm/$f"
done
# the fp16 weights as two byte planes (high bytes: sign, exponent and two mantissa bits, which compress; low bytes,
# which hardly do), each xz'd: 38.7 MB instead of 40.8 MB, lossless; device_call.sh interleaves them back
if [ -f .devcarry/minilm/model.safetensors ]; then
  python3 - <<'PY'
import lzma, struct
from pathlib import Path
p = Path(".devcarry/minilm/model.safetensors")
raw = p.read_bytes()
n = 8 + struct.unpack("<Q", raw[:8])[0]
assert (len(raw) - n) % 2 == 0, "weights are not 2-byte elements"
body = memoryview(raw)[n:]
Path(str(p) + ".header").write_bytes(raw[:n])
Path(str(p) + ".hi.xz").write_bytes(lzma.compress(bytes(body[1::2]), preset=9 | lzma.PRESET_EXTREME))
Path(str(p) + ".lo.xz").write_bytes(lzma.compress(bytes(body[0::2]), preset=6))
p.unlink()
PY
fi
home=$(mktemp -d)
LADDER_HOME=$home .venv/bin/ladder query "warm up" --top-k 1 > /dev/null  # creates and seeds the KB
LADDER_HOME=$home .venv/bin/ladder kb snapshot .devcarry/snapshot
rm -rf "$home"
du -sh .whl .devcarry
