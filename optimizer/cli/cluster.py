"""``ladder optimize-cluster``: fan optimization sessions out over Ray or local devices (``optimizer.cluster``).

``python -m optimizer.cluster`` runs this same command (``optimizer/cluster/__main__.py``)::

    python -m optimizer.cluster --cluster local --resource CPU --server 127.0.0.1:50551 P1 P2   # Ray
    LADDER_SNAPSHOT=snap python -m optimizer.cluster --devices 0,1 --rounds 3 benchmarks/suite/softmax ...  # no Ray
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from optimizer.backend import parse_backend
from optimizer.cli._common import friendly_errors
from optimizer.cluster.runner import check_outbox, launch, print_progress, print_results
from optimizer.cluster.spec import new_campaign_id

__all__ = ["cluster_app", "cluster_command"]


@friendly_errors
def cluster_command(
    problems: Annotated[
        list[str],
        typer.Argument(help="problem files or folders; a folder of problem folders (benchmarks/suite) expands"),
    ],
    cluster: Annotated[
        str, typer.Option("--cluster", help="Ray address: local (start one here), auto, ray://HOST:10001")
    ] = "auto",
    devices: Annotated[
        str | None, typer.Option("--devices", help="no Ray: one process slot per local device, e.g. 0,1")
    ] = None,
    server: Annotated[
        str | None, typer.Option("--server", help="central KB HOST:PORT (without it: LADDER_SNAPSHOT and its outbox)")
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="KB token with the contributor role (default LADDER_TOKEN)")
    ] = None,
    resource: Annotated[str, typer.Option("--resource", help="what each session asks for: GPU, NPU or CPU")] = "GPU",
    rounds: Annotated[int, typer.Option("--rounds", min=0, help="rounds per session after the baseline")] = 15,
    backend: Annotated[
        str | None, typer.Option("--backend", help="cuda | ascend | interpreter (default: from --resource)")
    ] = None,
    proposer: Annotated[
        str, typer.Option("--proposer", help="offline or llm (LADDER_LLM_* set on the workers)")
    ] = "offline",
    max_retries: Annotated[
        int,
        typer.Option("--max-retries", min=0, help="re-runs of a session whose worker died or hit a transient KB error"),
    ] = 2,
    campaign: Annotated[
        str | None,
        typer.Option("--campaign", help="campaign id; trajectory ids derive from it, so reusing it never duplicates"),
    ] = None,
    out: Annotated[str | None, typer.Option("--out", help="folder for the sessions' outputs (on each worker)")] = None,
    num_cpus: Annotated[int | None, typer.Option("--num-cpus", help="CPUs of a --cluster local instance")] = None,
    settings: Annotated[
        str, typer.Option("--settings", help='LadderSettings overrides as JSON, e.g. {"validation_seeds": [0]}')
    ] = "{}",
    json_out: Annotated[bool, typer.Option("--json", help="print the per-session results as JSON")] = False,
) -> None:
    """Fan optimization sessions out over a Ray cluster (one task per accelerator) against one central KB."""
    campaign = campaign or new_campaign_id()
    results = launch(problems, cluster=cluster, devices=devices.split(",") if devices else None, server=server,
                     token=token, resource=resource, rounds=rounds,
                     backend=parse_backend(backend) if backend else None, proposer=proposer,
                     max_retries=max_retries, campaign=campaign, out_root=out, num_cpus=num_cpus,
                     settings=json.loads(settings), progress=print_progress())
    print_results(results, as_json=json_out)
    ok = all(r.status == "ok" for r in results)
    if not server:  # snapshot mode: the outbox stands in for the central KB
        from kb.settings import Settings

        outbox_ok, line = check_outbox(results, Settings().home / "outbox", campaign)
        typer.echo(line, err=True)
        ok = ok and outbox_ok
    if not ok:
        raise typer.Exit(1)


#: the command alone, as ``python -m optimizer.cluster`` runs it
cluster_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
cluster_app.command()(cluster_command)
