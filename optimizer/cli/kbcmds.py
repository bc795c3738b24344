"""``ladder serve``, ``ladder query``, ``ladder health`` and ``ladder kb rebuild|stats|causes|export|snapshot|lint``."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import typer
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from kb.models.search import CardFilter, SearchQuery
from optimizer.cli._common import (
    HomeOpt,
    JsonOpt,
    ServerOpt,
    TokenOpt,
    console,
    emit_json,
    err_console,
    friendly_errors,
    one_line,
    require_kb,
    say_kb,
    settings_for,
)

kb_app = typer.Typer(help="Maintain the knowledge base (SQLite source of truth + derived index).", no_args_is_help=True)


def _progress():  # noqa: ANN202
    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    console=err_console, transient=True)


def open_kb(home: Path | None, *, create: bool = False, readonly: bool | None = None, quiet: bool = False):  # noqa: ANN202
    """The embedded KB at ``home``: refused if it holds no KB (unless ``create``); opened read-only when a server
    owns it (``readonly=None``; read commands), and the command says which KB it used."""
    from kb.service import KnowledgeBase

    settings = settings_for(home)
    require_kb(settings, create=create)
    with _progress() as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        kb = KnowledgeBase.open(settings, progress=progress, readonly=readonly)
    if not quiet:
        say_kb(kb.opened_as)
    return kb


def _reader(server: str | None, home: Path | None, token: str | None, *, create: bool = False):  # noqa: ANN202
    """What a read command reads: the server (``--server``), else the snapshot (``LADDER_SNAPSHOT`` wins over a
    home), else the embedded KB at ``home`` (read-only while a server owns it). Says which one it is."""
    from retrieval.client import LocalKBClient, connect

    settings = settings_for(home)
    if server:
        say_kb(f"server {server}")
        return connect(server, settings=settings, token=token)
    if settings.snapshot is not None:
        client = connect(None, settings=settings)
        say_kb(getattr(client, "opened_as", "snapshot"))  # KBClient does not declare it; SnapshotKB sets it
        return client
    return LocalKBClient(kb=open_kb(home, create=create), owns=True)


def _all_cards(client) -> list:  # noqa: ANN001
    from kb.models.search import CardFilter

    out, cursor = [], ""
    while True:
        page = client.list_cards(CardFilter(statuses=[]), page_size=500, cursor=cursor)
        out += page.cards
        if not page.next_cursor:
            return out
        cursor = page.next_cursor


def _out_dir(out: Path) -> Path:
    """Check the destination before any work: a directory (created if new), never a symlink (kb.safe_io)."""
    from kb.safe_io import safe_dir

    return safe_dir(out)


@friendly_errors
def serve_command(
    home: Path | None = HomeOpt,
    port: int | None = typer.Option(None, "--port", help="port (default $LADDER_PORT or 50551; 0 = any free)"),
    host: str | None = typer.Option(None, "--host", help="bind address (default 127.0.0.1)"),
    web_port: int | None = typer.Option(None, "--web-port", help="also serve the review web page on this "
                                           "port (0 = any free port)"),
    json_out: bool = JsonOpt,
) -> None:
    """Start the gRPC server (KnowledgeService + SynthesisService + health + reflection) on the KB."""
    from kb.errors import Unavailable
    from retrieval.server.app import serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = settings_for(home, port=port, host=host)

    def ready(handle) -> None:  # noqa: ANN001
        info = {"address": f"{settings.host}:{handle.port}", "home": str(settings.home), "status": "SERVING",
                "cards": handle.kb.stats()["cards"]}
        if handle.web is not None:
            info["review_page"] = f"http://{settings.host}:{handle.web.port}/"
        if json_out:
            emit_json(info)
        else:
            console.print(f"serving {info['cards']} cards from {info['home']} on {info['address']} (Ctrl-C stops)")
            if handle.web is not None:
                console.print(f"review page: {info['review_page']}")
        import sys

        sys.stdout.flush()

    try:
        code = serve(settings, on_ready=ready, web_port=web_port)
    except OSError as e:  # the gRPC or the web port is taken (create_server says which address)
        raise Unavailable(f"cannot listen on {settings.host}:{settings.port if port is None else port}: "
                          f"{one_line(str(e))}. Stop the process using it or pick another --port "
                          "(0 = any free port)", field="port") from None
    raise typer.Exit(code)


@friendly_errors
def query_command(
    text: str = typer.Argument(..., help="question, symptom, IR snippet or counter"),
    backend: str | None = typer.Option(None, "--backend", help="cuda | ascend | amd | any"),
    kind: str | None = typer.Option(None, "--kind", help="pattern | anti_signal | invariant"),
    level: str | None = typer.Option(None, "--level", help="L1..L4"),
    top_k: int = typer.Option(5, "--top-k", min=1, max=100),
    mode: str = typer.Option("hybrid", "--mode", help="hybrid | dense | bm25"),
    server: str | None = ServerOpt,
    home: Path | None = HomeOpt,
    token: str | None = TokenOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Hybrid search over the KB (embedded by default, a snapshot with LADDER_SNAPSHOT, or --server)."""
    from pydantic import ValidationError

    from kb.errors import InvalidArgument

    try:
        # validated here, not typed: a bad --kind/--backend/--level is the pydantic error below
        flt = CardFilter.model_validate({"kinds": [kind] if kind else [], "backends": [backend] if backend else [],
                                         "levels": [level] if level else []})
        q = SearchQuery(text=text, top_k=top_k, filter=flt, mode=mode)
    except ValidationError as e:  # -> one clear line
        raise InvalidArgument(str(e).splitlines()[-2].strip() if "\n" in str(e) else str(e), field="query") from e
    client = _reader(server, home, token, create=home is None)  # the default home is seeded on first use
    with client:
        hits = client.search(q)
    if json_out:
        emit_json([{"id": h.card.id, "kind": h.card.kind, "title": h.card.title, "summary": h.card.summary,
                    "score": h.score, "backends": h.card.backends, "levels": h.card.levels,
                    "breakdown": h.breakdown, "body": h.card.body} for h in hits])
        return
    console.print(Text(f"{len(hits)} hits for: {text}", style="bold"))
    for i, h in enumerate(hits, 1):  # one block per hit: readable at any terminal width (a table column is not)
        b = h.breakdown
        meta = (f"{h.card.kind} · {', '.join(h.card.backends)} · score {h.score:.4f} "
                f"(dense {b.dense:.2f}, bm25 {b.bm25:.1f})")
        body = Text.assemble((meta, "dim"), "\n", (h.card.title, "bold"), "\n", h.card.summary)
        console.print(Panel(body, title=Text(f"{i}. {h.card.id}", style="bold cyan"), title_align="left"))


@friendly_errors
def health_command(server: str = typer.Option(..., "--server"), wait: float = typer.Option(0.0, "--wait"),
                   token: str | None = TokenOpt, json_out: bool = JsonOpt) -> None:
    """Ask a server's standard health service; with --wait, block until SERVING (or fail)."""
    from retrieval.client import GrpcKBClient

    with GrpcKBClient(server, token=token) as c:
        c.wait_ready(timeout=max(wait, 0.5))
    if json_out:
        emit_json({"server": server, "status": "SERVING"})
    else:
        console.print(f"{server}: SERVING")


@kb_app.command("rebuild")
@friendly_errors
def kb_rebuild(home: Path | None = HomeOpt, json_out: bool = JsonOpt) -> None:
    """Drop the vector index and re-derive it from the SQLite store (on the machine that holds the home, with no
    server running on it: a running server rebuilds nothing behind its own back)."""
    kb = open_kb(home, readonly=False)
    with kb, _progress() as bar:
        t = bar.add_task("re-embedding", total=None)
        n = kb.rebuild(progress=lambda s, d, tot: bar.update(t, completed=d, total=tot))
        stats = kb.stats()
    if json_out:
        emit_json({"reembedded": n, **stats})
    else:
        console.print(f"rebuilt the index: {n} cards embedded, {stats['indexed_vectors']} vectors")


@kb_app.command("stats")
@friendly_errors
def kb_stats(home: Path | None = HomeOpt, server: str | None = ServerOpt, token: str | None = TokenOpt,
             json_out: bool = JsonOpt) -> None:
    """Counts by kind and status (and, for an embedded KB, index size, trajectories and proposals). Works while a
    server owns the home (read-only), on a snapshot (LADDER_SNAPSHOT) and through --server."""
    with _reader(server, home, token) as client:
        if hasattr(client, "kb"):
            stats = client.kb.stats() | {"kb": client.kb.opened_as}
        elif hasattr(client, "stats"):
            stats = client.stats()
        else:
            cards = _all_cards(client)
            stats = {
                "kb": f"server {server}",
                "cards": len(cards),
                "by_kind": dict(Counter(c.kind for c in cards)),
                "by_status": dict(Counter(c.status for c in cards)),
            }
    if json_out:
        emit_json(stats)
        return
    table = Table(title=f"KB: {stats.get('kb', stats.get('home'))}")
    table.add_column("what")
    table.add_column("value")
    for k, v in stats.items():
        table.add_row(k, Text(str(v)))
    console.print(table)


@kb_app.command("causes")
@friendly_errors
def kb_causes(status: list[str] | None = typer.Option(None, "--status", help="only causes in this review state "
                                                         "(repeatable: draft, proposed, active, rejected, deprecated)"),
              home: Path | None = HomeOpt, server: str | None = ServerOpt, token: str | None = TokenOpt,
              json_out: bool = JsonOpt) -> None:
    """The diagnosis causes the KB knows: id, review state, bottleneck class, the families that remove each, and
    the static-account inefficiency kinds it explains. New causes enter through review (`ladder review`)."""
    with _reader(server, home, token) as client:
        causes = client.list_causes(status or [])
    if json_out:
        emit_json([c.model_dump(mode="json") for c in causes])
        return
    table = Table(title=f"{len(causes)} causes")
    for col in ("id", "status", "class", "families", "explains", "title"):
        table.add_column(col)
    for c in causes:
        table.add_row(c.id, c.status, c.bottleneck_class, Text(", ".join(c.families) or "-"),
                      Text(", ".join(c.explains) or "-"), Text(c.title))
    console.print(table)


@kb_app.command("export")
@friendly_errors
def kb_export(out: Path = typer.Argument(..., help="directory to write <kind>s/<id>.yaml into"),
              home: Path | None = HomeOpt, server: str | None = ServerOpt, token: str | None = TokenOpt,
              salvage: bool = typer.Option(False, "--salvage", help="read a damaged store row by row and save every "
                                           "card that can still be read (the home's kb.sqlite3, read-only)"),
              json_out: bool = JsonOpt) -> None:
    """Write every served card as curated YAML (the same format as the shipped card files)."""
    from kb.service import export_cards

    _out_dir(out)
    if salvage:
        from kb.errors import InvalidArgument
        from kb.store.salvage import salvage as read_damaged

        if server:
            raise InvalidArgument("--salvage reads a home's store file directly; give --home, not --server",
                                  field="server")
        settings = settings_for(home)
        say_kb(f"{settings.db_path} (salvage, read-only)")
        report = read_damaged(settings.db_path)
        n = export_cards(report.cards, out)
        if json_out:
            emit_json({"exported": n, "out": str(out), "unreadable_rows": report.unreadable_rows,
                       "method": report.method})
        else:
            console.print(Text(f"salvaged {n} cards to {out} ({report.unreadable_rows} unreadable rows skipped)"))
        return
    with _reader(server, home, token) as client:
        n = export_cards(_all_cards(client), out)
    if json_out:
        emit_json({"exported": n, "out": str(out)})
    else:
        console.print(Text(f"exported {n} cards to {out}"))


@kb_app.command("snapshot")
@friendly_errors
def kb_snapshot(out: Path = typer.Argument(..., help="directory for cards.jsonl + vectors.npy"),
                home: Path | None = HomeOpt, server: str | None = ServerOpt, token: str | None = TokenOpt,
                json_out: bool = JsonOpt) -> None:
    """Write a read-only snapshot (served cards + vectors) for machines with no route to the server
    (use it there with LADDER_SNAPSHOT=DIR). With --server the cards come from the server and are embedded
    here with the same model."""
    from kb.snapshot import write_snapshot, write_snapshot_cards

    _out_dir(out)
    with _reader(server, home, token) as client:
        if hasattr(client, "kb"):
            n = write_snapshot(client.kb, out)
        else:
            from kb.search.embedding import Embedder

            cards = _all_cards(client)
            emb = Embedder(model_path=settings_for(home).embedding_model_dir, backend=settings_for(home).embed_backend)
            n = write_snapshot_cards(cards, emb.encode([c.search_text() for c in cards]), emb.name, out,
                                     causes=client.list_causes())
    if json_out:
        emit_json({"cards": n, "out": str(out)})
    else:
        console.print(Text(f"wrote a snapshot of {n} cards to {out}"))


@kb_app.command("lint")
@friendly_errors
def kb_lint(path: Path | None = typer.Argument(None, help="cards directory (default: the packaged cards)"),
            json_out: bool = JsonOpt) -> None:
    """Check card files: required fields, valid backends/levels, links resolve, unique titles, sources present."""
    from kb.lint import lint_dir

    problems, n = lint_dir(path)
    if json_out:
        emit_json({"cards": n, "problems": problems})
    else:
        for p in problems:
            console.print(Text.assemble((str(p["file"]), "red"), f": {p['field']}: {p['message']}"))
        console.print(f"{n} cards checked, {len(problems)} problems")
    if problems:
        raise typer.Exit(1)
