"""``ladder problem new|check``: thin commands over ``optimizer.onboarding`` (``scaffold``, ``check_problem``).

``ladder problem new kernels/rms.py::rms_norm --reference ref.py::RMSNorm --out benchmarks/realistic/rms``
writes ``problem.py``, ``initial.py`` and a ``SOURCE.md`` template, then validates ``initial.py`` on the CPU
interpreter, the reference in its own jailed process with a deadline. Every failed rule is reported at once, with
the declaration that states the exception when it is by design, or the change that fixes it (README "Onboarding
a kernel").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from optimizer.cli._common import friendly_errors, out_console

__all__ = ["problem_app"]

problem_app = typer.Typer(help="Onboard a kernel: build a problem folder from a kernel file and a torch reference.",
                          no_args_is_help=True)


def _render(result: dict[str, Any], console: Console) -> None:
    verdict = "[green]passed[/]" if result["passed"] else "[red]failed[/]"
    if result["passed"] and result["static_only"]:
        verdict = "[yellow]compiled only[/] (static only: not executed on CPU; validate on the GPU)"
    console.print(f"{result['problem']}: {verdict} (Triton {result['triton'] or '?'}, "
                  f"{'fp32' if result['fp32_reference'] else 'half-precision'} reference)")
    if result["reason"]:
        console.print(f"  {result['reason']}", markup=False, highlight=False)
    if result["failed_rules"]:
        console.print(f"  {len(result['failed_rules'])} rule(s) failed:", markup=False, highlight=False)
    for r in result["failed_rules"]:
        console.print(f"  rule failed: {r['kind']} ({r['rule']})", markup=False, highlight=False)
        if r.get("message") and r["message"] != result["reason"]:
            console.print(f"    {r['message']}", markup=False, highlight=False)
        if r["declare"]:
            console.print(f"    if by design, declare in problem.py: {r['declare']}", markup=False, highlight=False)
        if r.get("fix"):
            console.print(f"    fix: {r['fix']}", markup=False, highlight=False)


@problem_app.command("new")
@friendly_errors
def new_command(
    kernel: Annotated[
        str,
        typer.Argument(
            help="kernel file: FILE.py::launcher (a function, a name bound to "
            "functools.partial or Fn.apply, Fn.apply, or Class.method; called "
            "with the reference's forward arguments) or FILE.py defining ModelNew"
        ),
    ],
    reference: Annotated[
        str,
        typer.Option(
            "--reference", "-r", help="torch reference: REF.py[::ClassName] with get_inputs() and get_init_inputs()"
        ),
    ],
    out: Annotated[Path | None, typer.Option("--out", help="problem folder (default ./<kernel file stem>)")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite existing files")] = False,
    triton: Annotated[str | None, typer.Option("--triton", help="check with another Triton env, e.g. 3.6")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the check result as JSON")] = False,
) -> None:
    """Write problem.py, initial.py and SOURCE.md, then check initial.py against the reference."""
    from optimizer.harness.triton_env import select_triton
    from optimizer.onboarding import check_problem, scaffold

    console = out_console(json_out)
    select_triton(triton)
    folder = out or Path.cwd() / Path(kernel.rpartition("::")[0] or kernel).stem
    files = scaffold(kernel, reference, folder, force=force)
    console.print(f"wrote {', '.join(str(p) for p in files.values())}")
    result = check_problem(folder)
    _finish(result, console, json_out)


@problem_app.command("check")
@friendly_errors
def check_command(
    folder: Annotated[Path, typer.Argument(help="problem folder holding problem.py and initial.py")],
    triton: Annotated[str | None, typer.Option("--triton", help="check with another Triton env, e.g. 3.6")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the check result as JSON")] = False,
) -> None:
    """Check initial.py against problem.py (after editing the declarations)."""
    from optimizer.harness.triton_env import select_triton
    from optimizer.onboarding import check_problem

    console = out_console(json_out)
    select_triton(triton)
    result = check_problem(folder)
    _finish(result, console, json_out)


def _finish(result: dict[str, Any], console: Console, json_out: bool) -> None:
    if json_out:
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    else:
        _render(result, console)
    if not result["passed"]:
        raise typer.Exit(1)
