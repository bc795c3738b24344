"""``python -m optimizer.cluster``: ``ladder optimize-cluster`` under another name (the same Typer command,
``optimizer.cli.cluster``); ``--help`` lists its options. benchmarks/suite/device_run.sh calls it this way."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command on ``argv`` (default: the process arguments); return its exit status."""
    from optimizer.cli.cluster import cluster_app

    try:
        cluster_app(args=argv, prog_name="python -m optimizer.cluster")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
