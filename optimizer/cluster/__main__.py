"""``python -m optimizer.cluster``: the fan-out without Typer (for images that lack it, e.g. the lent GPU).

    python -m optimizer.cluster --cluster local --resource CPU --server 127.0.0.1:50551 P1 P2   # Ray
    LADDER_SNAPSHOT=snap python -m optimizer.cluster --devices 0,1 --rounds 3 benchmarks/suite/softmax ...  # no Ray
"""

from __future__ import annotations

import argparse
import json
import sys

from kb.errors import LadderError
from optimizer.cluster.runner import check_outbox, launch, print_progress, print_results
from optimizer.cluster.spec import new_campaign_id


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m optimizer.cluster", description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="+", help="problem files/folders; a folder of problem folders expands")
    ap.add_argument("--cluster", default=None, help="Ray address: local | auto | ray://HOST:10001 (default auto)")
    ap.add_argument("--devices", default=None, help="no Ray: one process slot per device, e.g. 0,1")
    ap.add_argument("--server", default=None, help="central KB HOST:PORT (default: LADDER_SNAPSHOT outbox)")
    ap.add_argument("--token", default=None, help="KB token (default: LADDER_TOKEN)")
    ap.add_argument("--resource", default="GPU", choices=["GPU", "NPU", "CPU"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--backend", default=None, help="cuda | ascend | interpreter (default: from --resource)")
    ap.add_argument("--proposer", default="offline")
    ap.add_argument("--max-retries", type=int, default=2)
    ap.add_argument("--campaign", default=None, help="campaign id (trajectory ids derive from it); reuse to resume")
    ap.add_argument("--out", default=None, help="folder for the sessions' outputs")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of a --cluster local Ray instance")
    ap.add_argument("--settings", default="{}", help='LadderSettings overrides as JSON, e.g. \'{"validation_seeds": [0]}\'')
    ap.add_argument("--json", action="store_true", help="results as JSON on stdout")
    a = ap.parse_args(argv)
    campaign = a.campaign or new_campaign_id()
    try:
        results = launch(a.problems, cluster=a.cluster, devices=a.devices.split(",") if a.devices else None,
                         server=a.server, token=a.token, resource=a.resource, rounds=a.rounds, backend=a.backend,
                         proposer=a.proposer, max_retries=a.max_retries, campaign=campaign, out_root=a.out,
                         num_cpus=a.num_cpus, settings=json.loads(a.settings), progress=print_progress())
    except LadderError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    print_results(results, as_json=a.json)
    ok = all(r.status == "ok" for r in results)
    if not a.server:  # snapshot mode: the outbox is the central KB's stand-in
        from kb.settings import Settings

        outbox_ok, line = check_outbox(results, Settings().home / "outbox", campaign)
        sys.stderr.write(line + "\n")
        ok = ok and outbox_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
