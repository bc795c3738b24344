"""``ladder review list|show|approve|reject|edit|merge`` and ``ladder synthesize``: the curation queue.

Each command talks to a running server (``--server HOST:PORT``, decisions need a reviewer token in
``LADDER_TOKEN`` or ``--token``) or opens the embedded KB (``--home``). Both go through
``retrieval.client.review.connect_review``.
"""

from __future__ import annotations

import getpass
import json
import sys
from pathlib import Path
from typing import Any

import click
import typer
import yaml
from pydantic import ValidationError
from rich.columns import Columns
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kb.errors import InvalidArgument, NotFound, PermissionDenied, field_error
from kb.models import AnyCard, Trajectory, parse_card
from optimizer.cli._common import (
    HomeOpt,
    JsonOpt,
    ServerOpt,
    TokenOpt,
    console,
    emit_json,
    err_console,
    friendly_errors,
    say_kb,
    settings_for,
)

review_app = typer.Typer(help="Review synthesized proposals and card edits (the curation queue).",
                         no_args_is_help=True)
ReviewerOpt = typer.Option(None, "--reviewer", help="name recorded on a decision in an embedded KB (default: your "
                           "login name); a server records the name its token has in LADDER_TOKENS")
ReasonOpt = typer.Option("", "--reason", "-m", help="note recorded with the decision")


def _queue(server: str | None, home: Path | None, token: str | None, *, write: bool = False):  # noqa: ANN202
    """The queue of ``--server``, else of the embedded KB (read-only while a server owns it, unless ``write``)."""
    from retrieval.client.review import connect_review

    if server:
        say_kb(f"server {server}")
        return connect_review(server, settings=settings_for(home), token=token)
    from optimizer.cli.kbcmds import open_kb

    return connect_review(kb=open_kb(home, create=home is None, readonly=False if write else None))


def _reviewer(name: str | None) -> str:
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no login name in some containers (no pwd entry for the uid)
        return "reviewer"


# ---------------------------------------------------------------------------- output
def _best(p: Any) -> str:
    vals = [e.speedup for e in p.evidence if e.speedup is not None]
    return f"{max(vals):.2f}x" if vals else "-"


def _print_item(item: Any, full: bool = False) -> None:
    from retrieval.client.review import card_fields, collapse_evidence

    p, near = item.proposal, item.nearest
    console.print(
        Text.assemble((p.id, "bold"), f"  {p.kind}, {p.status}, confidence {p.confidence:.2f}, by {p.author}")
    )
    if p.reason:
        console.print(Text(p.reason, style="dim"))
    if p.reviewer:
        console.print(Text(f"decided by {p.reviewer}: {p.reviewer_notes or '-'}"))
    if p.cause is not None:  # a new_cause proposal: the cause, then its family card below
        c = p.cause
        console.print(Text.assemble(("new cause ", "bold"), (c.id, "yellow"), f": {c.title}\n{c.description}\n",
                                    f"explains {', '.join(c.explains)}; families {', '.join(c.families) or '-'}; "
                                    f"class {c.bottleneck_class}"))
        for e in c.evidence[: None if full else 5]:
            console.print(Text(f"  {e.source}: {e.text}", style="dim"))
    mine, theirs = card_fields(p.card), card_fields(near) if near else {}
    table = Table(show_lines=True, expand=True)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("proposed", overflow="fold", ratio=1)
    table.add_column(f"nearest family: {near.id}" if near else "nearest family: none", overflow="fold", ratio=1)
    hidden = 0
    for key in dict.fromkeys([*mine, *theirs]):
        a, b = mine.get(key, ""), theirs.get(key, "")
        if near is not None and a == b and key not in ("id", "title") and not full:
            hidden += bool(a)
        elif a or b:
            table.add_row(key, Text(a, style="yellow" if near and a != b else ""), Text(b))
    console.print(table)
    if hidden:
        console.print(Text(f"{hidden} fields are the same in both and hidden (--full shows them)", style="dim"))
    if near is not None and near.body == p.card.body:
        console.print(Panel(Text(p.card.body or "(no body)"), title="body (same in both)"))
    else:
        bodies = [Panel(Text(p.card.body or "(no body)"), title="proposed body")]
        if near is not None:
            bodies.append(Panel(Text(near.body or "(no body)"), title=f"{near.id} body"))
        console.print(Columns(bodies, equal=True, expand=True))
    rows = collapse_evidence(p.evidence)  # identical rounds: one row with their count
    ev = Table(title=f"evidence: {len(p.evidence)} rounds" + (f", {len(rows)} distinct" if len(rows) < len(p.evidence)
                                                              else ""))
    for col in ("round", "copies", "problem", "backend", "outcome", "speedup", "lift", "confidence", "note"):
        ev.add_column(col, overflow="fold")
    f = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    for e, n in rows:
        ev.add_row(Text(e.round_ref), str(n), Text(e.problem), Text(e.backend), Text(e.outcome), f(e.speedup, ".3f"),
                   f(e.lift, ".3f"), f(e.confidence, ".2f"), Text(e.note))
    console.print(ev)
    if p.nearest:
        console.print("nearest families: " + ", ".join(f"{c.family_id} ({c.score:.3f})" for c in p.nearest))


def _done(item: Any, json_out: bool, verb: str) -> None:
    if json_out:
        emit_json(item.to_json())
        return
    p = item.proposal
    console.print(Text(f"{verb} {p.id}: now {p.status}" + (f" (card {p.card.id})" if p.status != "pending" else "")))


# ---------------------------------------------------------------------------- commands
@review_app.command("list")
@friendly_errors
def review_list(status: str = typer.Option("pending", "--status", help="pending | approved | rejected | merged | all"),
                server: str | None = ServerOpt, home: Path | None = HomeOpt, token: str | None = TokenOpt,
                json_out: bool = JsonOpt) -> None:
    """The queue: proposals with their kind, nearest family, confidence and best measured speedup."""
    with _queue(server, home, token) as q:
        props = q.proposals(status)
    if json_out:
        emit_json([p.model_dump(mode="json") for p in props])
        return
    table = Table(title=f"{len(props)} {status} proposals")
    table.add_column("id", no_wrap=True, min_width=max([len(p.id) for p in props] + [2]))  # copyable ids
    for col in ("kind", "status", "title", "nearest family", "conf", "rounds", "best speedup"):
        table.add_column(col, overflow="fold")
    for p in props:
        table.add_row(p.id, p.kind, p.status, Text(p.card.title), p.target_family or "-", f"{p.confidence:.2f}",
                      str(len(p.evidence)), _best(p))
    console.print(table)


@review_app.command("show")
@friendly_errors
def review_show(proposal_id: str = typer.Argument(..., help="proposal id (see `ladder review list`)"),
                full: bool = typer.Option(False, "--full", help="also show the fields that did not change"),
                server: str | None = ServerOpt, home: Path | None = HomeOpt, token: str | None = TokenOpt,
                json_out: bool = JsonOpt) -> None:
    """A proposal beside its nearest existing family, with the evidence rounds and speedups."""
    with _queue(server, home, token) as q:
        item = q.get(proposal_id)
    if json_out:
        emit_json(item.to_json())
    else:
        _print_item(item, full)


def _decide(proposal_id: str, action: str, server: str | None, home: Path | None, token: str | None,
            json_out: bool, verb: str, **kw: Any) -> None:
    with _queue(server, home, token, write=True) as q:
        item = q.review(proposal_id, action, **kw)
    _done(item, json_out, verb)


@review_app.command("approve")
@friendly_errors
def review_approve(proposal_id: str = typer.Argument(...), reason: str = ReasonOpt,
                   reviewer: str | None = ReviewerOpt, server: str | None = ServerOpt,
                   home: Path | None = HomeOpt, token: str | None = TokenOpt, json_out: bool = JsonOpt) -> None:
    """Approve: the card becomes active and quick-match serves it at once."""
    _decide(proposal_id, "approve", server, home, token, json_out, "approved", reviewer=_reviewer(reviewer),
            reason=reason)


@review_app.command("reject")
@friendly_errors
def review_reject(proposal_id: str = typer.Argument(...),
                  reason: str = typer.Option(..., "--reason", "-m", help="why (the author sees it)"),
                  reviewer: str | None = ReviewerOpt, server: str | None = ServerOpt,
                  home: Path | None = HomeOpt, token: str | None = TokenOpt, json_out: bool = JsonOpt) -> None:
    """Reject with a reason."""
    _decide(proposal_id, "reject", server, home, token, json_out, "rejected", reviewer=_reviewer(reviewer),
            reason=reason)


@review_app.command("merge")
@friendly_errors
def review_merge(proposal_id: str = typer.Argument(...),
                 into: str | None = typer.Option(None, "--into", help="family id (default: the nearest family)"),
                 reason: str = ReasonOpt, reviewer: str | None = ReviewerOpt, server: str | None = ServerOpt,
                 home: Path | None = HomeOpt, token: str | None = TokenOpt, json_out: bool = JsonOpt) -> None:
    """Fold the proposal's evidence into an existing family (a new version of that family)."""
    with _queue(server, home, token, write=True) as q:
        target = into or q.get(proposal_id).proposal.target_family
        if not target:
            raise InvalidArgument("this proposal has no nearest family: name one with --into", field="merge_into")
        item = q.review(proposal_id, "merge", reviewer=_reviewer(reviewer), reason=reason, merge_into=target)
    _done(item, json_out, f"merged into {target}:")


def _read_card(path: Path) -> AnyCard:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise InvalidArgument(f"cannot read {path}: {e}", field="file") from e
    return parse_card_data(data, str(path))


def parse_card_data(data: Any, where: str) -> AnyCard:
    if not isinstance(data, dict):
        raise InvalidArgument(f"{where}: a card is one YAML/JSON mapping", field="file")
    try:
        return parse_card(data)
    except ValidationError as e:
        at = field_error(e)
        raise InvalidArgument(f"{where}: {at.field or 'card'}: {at.message}", field="card") from e


def _edit_interactively(card: AnyCard) -> AnyCard:
    from kb.cardfiles import dump_card

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InvalidArgument("not a terminal: pass the edited card with --file CARD.yaml", field="file")
    before = dump_card(card)
    after = click.edit(before, extension=".yaml")  # typer has no edit of its own
    if after is None or after.strip() == before.strip():
        raise InvalidArgument("no changes made in the editor; nothing was submitted", field="card")
    return parse_card_data(yaml.safe_load(after), "edited card")


@review_app.command("edit")
@friendly_errors
def review_edit(target: str = typer.Argument(..., help="a pending proposal id, or the id of a served card"),
                file: Path | None = typer.Option(None, "--file", "-f", help="edited card as YAML or JSON "
                                                    "(default: open $EDITOR on the current text)"),
                reason: str = ReasonOpt, reviewer: str | None = ReviewerOpt, server: str | None = ServerOpt,
                home: Path | None = HomeOpt, token: str | None = TokenOpt, json_out: bool = JsonOpt) -> None:
    """Edit a proposal's draft, or propose a new version of a served card (the old version stays served until
    the edit is approved)."""
    with _queue(server, home, token, write=True) as q:
        try:
            current, is_card = q.get(target).proposal.card, False
        except NotFound:
            current, is_card = q.get_card(target), True
        card = _read_card(file) if file else _edit_interactively(current)
        if is_card:
            if card.id != target:
                raise InvalidArgument(f"the edited card's id is {card.id!r}; it must stay {target!r}", field="id")
            item = q.propose_edit(card, author=_reviewer(reviewer), reason=reason)
        else:
            item = q.review(target, "edit", reviewer=_reviewer(reviewer), reason=reason, card=card)
    verb = f"queued an edit of {target} as" if is_card else "updated the draft of"
    _done(item, json_out, verb)


@friendly_errors
def synthesize_command(
    trajectories: list[Path] | None = typer.Argument(None, help="trajectory JSON files to submit first"),
    all_: bool = typer.Option(False, "--all", help="re-mine every stored trajectory, not only new ones"),
    timeout: float = typer.Option(600.0, "--timeout", help="seconds to wait for a server-side job"),
    server: str | None = ServerOpt, home: Path | None = HomeOpt, token: str | None = TokenOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Submit trajectories (kb.models.Trajectory JSON) and run one synthesis batch; prints the report."""
    parsed: list[Trajectory] = []
    for path in trajectories or []:
        try:
            parsed.append(Trajectory.model_validate_json(path.read_text(encoding="utf-8")))
        except OSError as e:
            raise InvalidArgument(f"cannot read {path}: {e}", field="trajectory") from e
        except ValidationError as e:
            at = field_error(e)
            raise InvalidArgument(f"{path}: {at.field or 'trajectory'}: {at.message}", field="trajectory") from e
    skipped = ""
    with _queue(server, home, token, write=True) as q:
        submitted = {t.id: q.submit(t) for t in parsed}
        try:
            report: dict[str, Any] | None = q.synthesize(only_new=not all_, timeout=timeout)
        except PermissionDenied as e:
            if not submitted:
                raise
            # the trajectories are stored; mining them is a reviewer's step, not a failure of this submission
            report, skipped = None, f"not run: {e.message}; a reviewer runs `ladder synthesize` to mine them"
    if json_out:
        emit_json({"submitted": submitted, "report": report} | ({"synthesis": skipped} if skipped else {}))
        return
    for tid, created in submitted.items():
        console.print(Text(f"submitted: {tid}" if created else f"already stored: {tid} (same id or same content)"))
    if report is None:
        err_console.print(Text(f"synthesis {skipped}", style="yellow"))
        return
    table = Table(title="synthesis report")
    table.add_column("what")
    table.add_column("value", overflow="fold")
    for k, v in report.items():
        table.add_row(k, Text(v if isinstance(v, str) else json.dumps(v)))
    console.print(table)
    if report.get("new_proposals"):
        console.print("review them with `ladder review list`")
