"""``ladder optimize`` and ``ladder diagnose``: thin commands over ``optimizer.session.Session`` and
``optimizer.diagnosis.diagnose`` (the backend checked by ``optimizer.backend``).

The KB client is obtained through ``retrieval.client.connect(server=..., home=...)`` (``_common.connect_kb``): the
gRPC service when ``--server`` is given, else the embedded KB. With ``--json`` only JSON goes to stdout (progress
goes to stderr); the JSON of ``diagnose`` is the ``Diagnosis`` model, holding per level the objects a round records.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kb.sanitize import terminal_text
from optimizer.cli._common import connect_kb, emit_json, friendly_errors, out_console

if TYPE_CHECKING:
    from optimizer.diagnosis import Diagnosis

__all__ = ["diagnose_command", "optimize_command"]


@friendly_errors
def optimize_command(
    problem: Annotated[str, typer.Argument(help="problem file (KernelBench format) or a folder holding problem.py")],
    candidate: Annotated[
        str | None, typer.Option("--candidate", help="initial candidate (default: initial.py next to the problem)")
    ] = None,
    rounds: Annotated[
        int | None, typer.Option("--rounds", min=0, help="rounds after the baseline (default 15)")
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="cuda | interpreter | ascend (default: detected)")
    ] = None,
    proposer: Annotated[
        str, typer.Option("--proposer", help="offline (card recipes) or llm (LADDER_LLM_* settings)")
    ] = "offline",
    out: Annotated[str | None, typer.Option("--out", help="output folder for candidates and trajectory.json")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="print the trajectory as JSON")] = False,
    server: Annotated[str | None, typer.Option("--server", help="KB service HOST:PORT (default: embedded KB)")] = None,
    home: Annotated[str | None, typer.Option("--home", help="embedded KB directory (default $LADDER_HOME)")] = None,
    submit: Annotated[
        bool | None,
        typer.Option("--submit/--no-submit", help="submit the trajectory (default: when --server is given)"),
    ] = None,
    triton: Annotated[
        str | None,
        typer.Option(
            "--triton",
            help="validate with another Triton env, e.g. 3.6 (make triton36-env; same as LADDER_TRITON_PYTHON)",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="time even if another session holds this GPU (the results say 'shared GPU')")
    ] = False,
    token: Annotated[
        str | None, typer.Option("--token", help="bearer token for --server (default $LADDER_TOKEN)")
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            help="ladder policy: hierarchical (default), l1-only, "
            "profile-first, always-deep, random-family (same as LADDER_POLICY)",
        ),
    ] = None,
) -> None:
    """Run an optimization session: baseline, then rounds of diagnosis, rewrite and validation."""
    from optimizer.backend import check_backend
    from optimizer.cli.progress import printer
    from optimizer.harness.triton_env import select_triton
    from optimizer.proposers.factory import make_proposer
    from optimizer.session import Session
    from optimizer.settings import LadderSettings

    console = out_console(json_out)
    select_triton(triton)
    settings = LadderSettings(policy=policy) if policy else LadderSettings()
    be = check_backend(backend)
    name = Path(problem).stem if Path(problem).suffix else Path(problem).name
    out_dir = Path(out) if out else Path("ladder-runs") / f"{name}-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}"
    kb = connect_kb(server, home, token)
    prop = make_proposer(proposer, settings)
    session = Session(problem, candidate, kb=kb, settings=settings, backend=be, proposer=prop, out_dir=out_dir,
                      progress=printer(console), force_shared_gpu=force)
    traj = session.run(rounds, submit=bool(server) if submit is None else submit)
    if json_out:
        sys.stdout.write(traj.model_dump_json(indent=2) + "\n")
        return
    _print_rounds(console, traj)


def _print_rounds(console: Console, traj: Any) -> None:
    table = Table(title=f"{traj.problem.name} on {traj.backend} ({traj.device or '?'})")
    for col in ("round", "levels", "family", "outcome", "speedup", "note"):
        table.add_column(col)
    for r in traj.rounds:
        sp = r.timing.geomean_speedup if r.timing and r.timing.geomean_speedup else None
        note = (
            r.validation.failure_reason
            if r.validation is not None and not r.validation.passed
            else r.next_recommendation
        )
        table.add_row(str(r.index), ">".join(r.levels_reached), r.rewrite.family if r.rewrite else "-", r.outcome,
                      f"{sp:.3f}x" if sp else "-", (note or "")[:70])
    console.print(table)
    if traj.best_round is not None:
        console.print(f"best: round {traj.best_round} ({traj.rounds[traj.best_round].candidate_path})")
    if traj.selection is not None and traj.selection.note:
        console.print(f"selection: {traj.selection.note}")
    if traj.noise_floor is not None:
        nf = traj.noise_floor
        console.print(
            f"noise floor (A/A): {nf.floor:.2%} (baseline vs itself {nf.aa.point:.3f}x, "
            f"95% [{nf.aa.lo:.3f}, {nf.aa.hi:.3f}])"
        )
    if traj.timing_env.get("shared_gpu"):
        console.print(f"[yellow]shared GPU:[/yellow] {traj.timing_env.get('note')}")
    if traj.unseen is not None:
        u = traj.unseen
        sp = (
            f", speedup seen {u.seen_speedup:.3f}x / unseen {u.unseen_speedup:.3f}x"
            if u.seen_speedup and u.unseen_speedup
            else ""
        )
        state = "not run" if u.passed is None else "passed" if u.passed else "FAILED"
        console.print(f"unseen cases ({len(u.cases)} run, {len(u.skipped)} skipped): {state}{sp}"
                      + (f"; flags {', '.join(u.flags)}" if u.flags else ""))
    if traj.rounds and traj.rounds[0].timing is not None:
        console.print(
            f"timing protocol: {traj.rounds[0].timing.protocol.method} - {traj.rounds[0].timing.protocol.note}"
        )


@friendly_errors
def diagnose_command(
    problem: Annotated[str, typer.Argument(help="problem file (KernelBench format) or a folder holding problem.py")],
    candidate: Annotated[
        str | None, typer.Option("--candidate", help="candidate to diagnose (default: initial.py next to the problem)")
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="cuda | interpreter | ascend (default: detected)")
    ] = None,
    max_level: Annotated[str, typer.Option("--max-level", help="highest level to run: L1..L4")] = "L4",
    json_out: Annotated[bool, typer.Option("--json", help="print levels as JSON")] = False,
    server: Annotated[str | None, typer.Option("--server", help="KB service HOST:PORT (default: embedded KB)")] = None,
    home: Annotated[str | None, typer.Option("--home", help="embedded KB directory (default $LADDER_HOME)")] = None,
    triton: Annotated[
        str | None,
        typer.Option(
            "--triton",
            help="validate with another Triton env, e.g. 3.6 (make triton36-env; same as LADDER_TRITON_PYTHON)",
        ),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="bearer token for --server (default $LADDER_TOKEN)")
    ] = None,
    rewrite: Annotated[
        bool,
        typer.Option(
            "--rewrite",
            help="also show the rewrite a round would make (the chosen "
            "family's first point as a diff; not validated or timed)",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="with --rewrite: write the rewritten candidate to this file (never the candidate)"),
    ] = None,
) -> None:
    """Run the evidence levels without rewriting: per level the evidence, class, matched cards and tests.

    With ``--rewrite`` the diff is printed last and unwrapped, naming the candidate on both sides: ``ladder diagnose
    ... --rewrite > fix.patch && git apply fix.patch`` (or ``patch -p1``) from the same directory applies it."""
    from kb.vocab import is_level
    from optimizer.backend import check_backend
    from optimizer.diagnosis import diagnose
    from optimizer.harness.triton_env import select_triton

    if not is_level(max_level):
        raise typer.BadParameter("--max-level must be one of L1, L2, L3, L4")
    if out is not None and not rewrite:
        raise typer.BadParameter("--out writes the rewritten candidate: add --rewrite", param_hint="--out")
    backend = check_backend(backend)
    select_triton(triton)
    result = diagnose(problem, candidate, backend=backend, max_level=max_level, kb=connect_kb(server, home, token),
                      rewrite=rewrite)
    if json_out:
        emit_json(result)
    else:
        _print_diagnosis(out_console(json_out), result)
    if out is not None and result.rewrite is not None:
        _write_rewrite(out, result, out_console(json_out))
    if not result.validation.passed:
        raise typer.Exit(1)


def _write_rewrite(out: Path, d: Diagnosis, console: Console) -> None:
    rw = d.rewrite
    if rw is None or not rw.source:
        console.print(f"--out: nothing written to {out} (no rewrite)")
        return
    if out.resolve() == Path(d.candidate).resolve():
        raise typer.BadParameter(f"{out} is the candidate itself: write the rewrite elsewhere (or apply the printed "
                                 "diff)", param_hint="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rw.source)
    console.print(f"wrote the rewritten candidate to {out}")


def _print_diagnosis(console: Console, d: Diagnosis) -> None:
    v, t = d.validation, d.timing
    console.print(f"[bold]{d.problem}[/bold] {d.candidate} on {d.backend} ({d.device or '?'})")
    console.print(f"validation: {'passed' if v.passed else 'FAILED: ' + v.failure_reason}")
    console.print(f"timing: {t.protocol.method}" + (f", geomean {t.geomean_speedup:.3f}x" if t.geomean_speedup else "")
                  + "".join(f"; {c.case} {c.ms:.4g} ms" for c in t.cases if c.ms))
    if d.error:
        console.print(f"[red]{d.error}[/red]")
        return
    for n in d.notes:
        console.print(f"[yellow]{n}[/yellow]")
    for lv in d.levels:
        tests = lv.tests
        marks = " ".join(f"{k}={'yes' if getattr(tests, k) else 'no'}"
                         for k in ("localized", "single_family", "justified"))
        console.rule(f"{lv.level}  bottleneck={lv.bottleneck}  {marks}")
        for e in lv.evidence:
            if e.kind != "escalation_tests":
                console.print(f"  [dim]{e.kind}[/dim] {e.summary[:300]}")
        for c in lv.matched_cards:
            recipe = c.recipe or {}
            applies = "applies" if c.applicable else c.applicability_note[:80]
            console.print(f"  card {c.id} score {c.score:.3f} matched {', '.join(c.matched_symptoms[:6])}"
                          + (f" recipe {recipe.get('kind')} ({applies})" if recipe else ""))
        console.print(f"  tests: {tests.notes[:500]}")
    dec = d.decision
    if dec:
        if dec.decided:
            static = ", static only" if dec.static_only else ""
            console.print(f"[bold]cause: {dec.cause}[/bold] ({dec.confidence:.2f}{static})")
            for r in dec.decided_by[:4]:
                lines = f" lines {r.source_lines[:6]}" if r.source_lines else ""
                console.print(f"  decided by {r.level} {r.kind} {r.reference}{lines}: {r.detail[:160]}")
            for o in dec.overruled[:4]:
                console.print(f"  overruled: {o}")
        else:
            console.print(f"[bold]cause: undecided[/bold] ({dec.reason})")
    console.print(f"[bold]{d.summary}[/bold]")
    rw = d.rewrite
    if rw is not None:
        if rw.refused:
            console.print(f"rewrite: none ({rw.refused[:400]})")
        else:
            console.print(f"[bold]rewrite[/bold] {rw.family} ({rw.kind}, {rw.points} point(s) a round would screen): "
                          f"{rw.description[:300]}")
            console.file.flush()
            # the diff verbatim (rich would wrap it at the console width when stdout is not a terminal): it applies
            # with `git apply` / `patch -p1`; terminal control characters cannot occur in a rewrite of Python source
            # the ladder parsed, but are stripped all the same
            typer.echo(terminal_text(rw.diff), nl=not rw.diff.endswith("\n"), file=console.file)
