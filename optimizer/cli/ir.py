"""``ladder ir``: capture a kernel's stages and per-pass IR, print stage summaries, pass changes and signatures.

Example::

    ladder ir kernels.py::top2 --target cuda:90 -a X=*fp32 -a OUT=*fp32 -a n_cols=1000 -a stride=1024 \\
        -a BLOCK=256 --num-warps 1 [--explain] [--json]

Arguments follow ``NAME=VALUE[:QUALIFIER]`` (see ``optimizer.ir._specialize``): ``x=*fp32`` (16-byte aligned
pointer), ``x=*fp16:unaligned``, ``n=4096`` (int; %16 -> divisibility, ==1 -> constexpr), ``n=1000:nospec``,
``n=i32`` (unknown value), ``BLOCK=1024`` (constexpr by the kernel's annotation), ``PRECISION=ieee``.
``--explain`` (L4) opens the KB through ``retrieval.client.connect`` (``--server``, else the embedded KB); without
one, L4 uses the compiler source only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kb.client import KBClient
from kb.errors import InvalidArgument, LadderError
from optimizer.cli._common import friendly_errors, out_console
from optimizer.ir.types import IRReport, L4Account

__all__ = ["ir_command", "render_account", "render_report"]

ArgsOpt = Annotated[list[str], typer.Option("--arg", "-a", help="kernel argument NAME=VALUE[:QUALIFIER] (repeat)")]
OptionOpt = Annotated[list[str], typer.Option("--option", "-o", help="compile option KEY=VALUE, e.g. maxnreg=64")]


@friendly_errors
def ir_command(
    spec: Annotated[str, typer.Argument(help="FILE::KERNEL, e.g. kernels/softmax.py::softmax_kernel")],
    target: Annotated[
        str, typer.Option("--target", "-t", help="cuda:<cc> (e.g. cuda:90, cuda:80) or ascend")
    ] = "cuda:90",
    arg: ArgsOpt = [],  # noqa: B006 - typer needs a literal default
    json_out: Annotated[bool, typer.Option("--json", help="print the IRReport (and L4 account) as JSON")] = False,
    num_warps: Annotated[int | None, typer.Option("--num-warps", help="compile option num_warps")] = None,
    num_stages: Annotated[int | None, typer.Option("--num-stages", help="compile option num_stages")] = None,
    option: OptionOpt = [],  # noqa: B006
    launch: Annotated[
        bool, typer.Option("--launch", help="compile through the JIT on a real GPU (needs CUDA)")
    ] = False,
    grid: Annotated[str | None, typer.Option("--grid", help="launch grid, e.g. 128 or 64,2 (with --launch)")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="keep stage files, dumps and logs in this directory")
    ] = None,
    all_passes: Annotated[bool, typer.Option("--all-passes", help="list passes that changed nothing too")] = False,
    explain_: Annotated[
        bool, typer.Option("--explain", help="L4: ground the signatures in invariant cards and compiler source")
    ] = False,
    server: Annotated[str | None, typer.Option("--server", help="KB server HOST:PORT for --explain")] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="bearer token for --server (default $LADDER_TOKEN)")
    ] = None,
    compiler_source: Annotated[
        Path | None,
        typer.Option("--compiler-source", help="a compiler checkout L4 may grep when cards do not settle a question"),
    ] = None,
    triton_python: Annotated[
        Path | None,
        typer.Option(
            "--triton-python",
            help="capture with this python's Triton "
            "(e.g. .venv-triton36/bin/python from `make triton36-env`; default $LADDER_TRITON_PYTHON)",
        ),
    ] = None,
) -> None:
    """Capture per-stage and per-pass IR of a Triton kernel and attribute its structural signatures."""
    from optimizer.ir import analyze, capture_kernel, explain

    console = out_console(json_out)
    options = _parse_options(option) | {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages))
                                        if v is not None}
    grid_t = tuple(int(x) for x in grid.split(",")) if grid else None
    python = triton_python.absolute() if triton_python else None  # None: $LADDER_TRITON_PYTHON or this one
    if python is not None and not Path(python).exists():
        raise InvalidArgument(f"--triton-python {python} does not exist (make triton36-env creates "
                              ".venv-triton36/bin/python)", field="triton_python")
    capture = capture_kernel(spec, target, arg, options=options, mode="launch" if launch else "compile",
                             grid=grid_t, workdir=out, python=python)
    report = analyze(capture)
    account = None
    if explain_:
        client = _kb_client(server, console, token)
        try:
            account = explain(report, client, compiler_source=compiler_source)
        finally:
            if client is not None:
                client.close()
    if json_out:
        payload: dict[str, Any] = report.model_dump(mode="json")
        if account is not None:
            payload["l4"] = account.model_dump(mode="json")
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    render_report(report, console, all_passes=all_passes)
    if account is not None:
        render_account(account, console)


def _parse_options(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgument(f"--option {item!r}: expected KEY=VALUE, e.g. maxnreg=64", field="option")
        v = value.strip()
        out[key.strip()] = (v.lower() == "true") if v.lower() in ("true", "false") else _number(v)
    return out


def _number(v: str) -> Any:
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def open_kb(server: str | None, token: str | None) -> KBClient:
    from retrieval.client import connect

    return connect(server, token=token)


def _kb_client(server: str | None, console: Console, token: str | None = None) -> KBClient | None:
    try:
        return open_kb(server, token)
    except LadderError as e:
        console.print(f"[yellow]note[/]: KB unavailable ({escape(str(e))}); L4 uses compiler source only")
        return None


def render_report(report: IRReport, console: Console, *, all_passes: bool = False) -> None:
    """Human output: stages, pass changes and signatures as rich tables."""
    t = report.timings
    console.print(
        f"[bold]{report.kernel}[/] ({report.source_file}) -> {report.target} with {report.compiler} "
        f"{report.compiler_version}; {report.passes_total} pass snapshots; compile "
        f"{t.get('compile_s', 0):.2f} s, capture {t.get('wall_s', 0):.2f} s, analysis {t.get('analysis_s', 0):.2f} s"
    )
    spec = ", ".join(f"{a.name}:{a.type}" + (f"={a.value}" if a.type == "constexpr" else "")
                     + (" (div16)" if a.divisibility else "") + (" (folded 1)" if a.folded_to_constexpr else "")
                     for a in report.args)
    console.print(f"args: {spec}")
    stages = Table(title="Stages", show_lines=False)
    for col in ("stage", "lines", "passes", "key figures", "top ops"):
        stages.add_column(col)
    for s in report.stages:
        stages.add_row(s.stage, str(s.lines), str(s.passes), _kv(s.features), _kv(dict(list(s.ops.items())[:5])))
    console.print(stages)
    changes = Table(title="Pass changes" + ("" if all_passes else " (passes that changed the IR)"))
    for col in ("#", "stage", "pass", "added", "removed", "features"):
        changes.add_column(col)
    shown = 0
    for c in report.pass_changes:
        if not all_passes and not (c.changed and (c.added or c.removed or c.features_delta)):
            continue
        name = c.pass_name + (f" [{c.step}]" if c.step else "")
        changes.add_row(str(c.index), c.stage, name, _kv(dict(list(c.added.items())[:4])),
                        _kv(dict(list(c.removed.items())[:4])), _kv(c.features_delta, signed=True))
        shown += 1
    console.print(changes if shown else "[dim]no pass changed the op mix[/]")
    sigs = Table(title="Signatures")
    for col in ("signature", "count", "stage", "introduced by", "source lines", "detail"):
        sigs.add_column(col, overflow="fold")
    for sig in report.signatures:
        lines = ", ".join(f"{n}" for n in sig.source_lines[:6])
        sigs.add_row(sig.name, str(sig.count), sig.stage, sig.pass_introduced or "-", lines, sig.detail)
    console.print(sigs if report.signatures else "[green]no structural signature found[/]")
    for n, code in report.source_excerpt.items():
        console.print(f"  [cyan]{n:>5}[/] {code}")
    if report.resources is not None:
        r = report.resources
        console.print(f"resources ({r.source}): registers={r.registers} spill_stores={r.spill_stores_bytes} B "
                      f"barriers={r.barriers} shared={r.shared_bytes} B")
    for w in report.warnings:
        console.print(f"[yellow]warning[/]: {w}")
    console.print(f"[dim]stage files, pass dump and logs: {report.workdir}[/]")


def render_account(account: L4Account, console: Console) -> None:
    console.print(f"\n[bold]L4[/]: {account.summary}")
    for f in account.findings:
        how = ("settled by " + ", ".join(f.cards) if f.settled
               else "from compiler source" if f.source_refs else "unresolved")
        console.print(f"[bold]{f.signature}[/] ({how})")
        console.print(f"  {f.account}")
        for q in f.questions:
            unknown = f" [dim](not in the IR report: {', '.join(q.unfilled)})[/]" if q.unfilled else ""
            console.print(f"  [magenta]?[/] {escape(q.question)}{unknown}")
        for why in f.passed_over:
            console.print(f"  [dim]passed over {escape(why)}[/]")
        for r in f.source_refs[:4]:
            flag = (
                "" if r.applies is None else (" [green](applies)[/]" if r.applies else " [dim](not for this target)[/]")
            )
            console.print(f"  [dim]{r.path}:{r.line}[/] {r.code}{flag}")


def _kv(d: dict[str, int], *, signed: bool = False) -> str:
    return ", ".join(f"{k}={v:+d}" if signed else f"{k}={v}" for k, v in d.items())
