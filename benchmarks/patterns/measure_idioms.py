"""Micro-benchmarks behind the measurement evidence of the curated pattern cards (kb/cards/patterns).

Each experiment times a "before" and an "after" Triton kernel for one pattern card, checks that both agree with
a PyTorch reference, and prints one JSON line per variant. Run on a CUDA GPU:

    python benchmarks/patterns/measure_idioms.py [--out results.json] [--only NAME ...]

``--small`` runs tiny shapes (correctness only, no timing claims); with ``TRITON_INTERPRET=1`` it runs on CPU.
Timings are triton.testing.do_bench medians (warm L2 between repetitions), in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import triton  # noqa: E402

import exp_matmul as mm  # noqa: E402
import exp_rows as rows  # noqa: E402
from common import DEV  # noqa: E402

EXPERIMENTS = {
    "softmax_rows": rows.exp_softmax_rows,
    "top2": rows.exp_top2,
    "matmul_precision": mm.exp_matmul_precision,
    "matmul_grouping_stages": mm.exp_matmul_grouping_stages,
    "splitk": mm.exp_splitk,
    "cumsum": rows.exp_cumsum,
    "online_softmax": rows.exp_online_softmax,
    "cross_entropy": rows.exp_cross_entropy,
    "fusion": rows.exp_fusion,
    "mask_vectorization": rows.exp_mask_vectorization,
    "persistent_elementwise": rows.exp_persistent_elementwise,
    "matmul_descriptors": mm.exp_matmul_descriptors,
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="tiny shapes, correctness only")
    p.add_argument("--only", nargs="*", default=None, choices=sorted(EXPERIMENTS))
    p.add_argument("--out", default=None, help="write all records as a JSON list here")
    args = p.parse_args(argv)
    env = {"triton": triton.__version__, "torch": torch.__version__,
           "device": torch.cuda.get_device_name() if DEV == "cuda" else "cpu",
           "interpret": os.environ.get("TRITON_INTERPRET", "0")}
    print(json.dumps({"env": env}), flush=True)
    records = []
    for name in args.only or EXPERIMENTS:
        records += EXPERIMENTS[name](args.small)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"env": env, "records": records}, f, indent=1)
    return 0 if all("error" not in r and r.get("correct") for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
