"""HTML for the review page. Every piece of data goes through ``esc`` (``html.escape`` with quotes) before it
reaches the markup; card bodies (markdown) are shown as escaped preformatted text, never rendered as HTML.
The pages carry no script at all; the one inline ``<style>`` element carries the response's CSP nonce.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from kb.models import AnyCard
from kb.sanitize import terminal_text
from retrieval.client.review import card_fields, collapse_evidence
from synthesis.models import PROPOSAL_STATUSES, Proposal

__all__ = ["detail_page", "esc", "login_page", "message_page", "queue_page"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2125;background:#f6f7f9}
header{background:#22303c;color:#fff;padding:.6em 1.2em;display:flex;gap:1.5em;align-items:center}
header a{color:#cfe3ff}main{padding:1em 1.2em}table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #d9dde3;padding:.35em .5em;text-align:left;vertical-align:top}th{background:#eef1f5}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}.panel{background:#fff;border:1px solid #d9dde3;padding:.8em}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:.6em;max-height:32em;overflow:auto}
.v{white-space:pre-wrap;word-break:break-word}.changed{background:#fff6d6}.muted{color:#68707a}.msg{padding:.6em;border:1px solid #9ac59a;background:#eef8ee}
.err{padding:.6em;border:1px solid #d99;background:#fdeeee}form.inline{display:inline-block;margin:.3em 1em .3em 0}
.tabs a{margin-right:1em}.actions{background:#fff;border:1px solid #d9dde3;padding:.8em;margin:1em 0}
textarea{width:100%;font:12px monospace}
"""

#: flash messages the page may show after a redirect (looked up by key: nothing user-supplied is reflected)
MESSAGES = {"approve": "Approved: the card is active and the quick-match index is refreshed.",
            "reject": "Rejected.", "merge": "Merged into the existing family.", "edit": "Draft updated.",
            "login": "Signed in.", "logout": "Signed out."}


def esc(value: Any) -> str:
    """``value`` as HTML text: control and format characters removed (a right-to-left override reorders what the
    reviewer reads in a browser too; ``kb.sanitize``), then escaped with quotes."""
    return html.escape(terminal_text("" if value is None else str(value)), quote=True)


def _page(title: str, body: str, *, nonce: str, user: str | None) -> str:
    who = (f'<span>{esc(user)}</span><form class="inline" method="post" action="/logout">'
           '<button type="submit">sign out</button></form>') if user else '<a href="/login">sign in</a>'
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="referrer" content="no-referrer"><style nonce="{esc(nonce)}">{_CSS}</style></head>'
            f'<body><header><strong>Kernel Ladder review</strong><a href="/queue">queue</a>{who}</header>'
            f'<main>{body}</main></body></html>')


def _best_speedup(p: Proposal) -> str:
    vals = [e.speedup for e in p.evidence if e.speedup is not None]
    return f"{max(vals):.2f}x" if vals else "-"


def queue_page(proposals: list[Proposal], status: str, *, nonce: str, user: str | None, flash: str = "") -> str:
    tabs = " ".join(f'<a href="/queue?status={s}">{"<b>" + s + "</b>" if s == status else s}</a>'
                    for s in (*PROPOSAL_STATUSES, "all"))
    rows = "".join(
        f'<tr><td><a href="/p/{quote(p.id, safe="")}">{esc(p.id)}</a></td><td>{esc(p.kind)}</td>'
        f'<td>{esc(p.status)}</td><td>{esc(p.card.title)}</td><td>{esc(p.target_family or "-")}</td>'
        f'<td>{p.confidence:.2f}</td><td>{len(p.evidence)}</td><td>{_best_speedup(p)}</td>'
        f'<td>{esc(p.created_at.strftime("%Y-%m-%d %H:%M"))}</td></tr>' for p in proposals)
    table = ('<table><tr><th>proposal</th><th>kind</th><th>status</th><th>title</th><th>nearest family</th>'
             '<th>confidence</th><th>rounds</th><th>best speedup</th><th>created</th></tr>' + rows + '</table>'
             if proposals else f'<p class="muted">No {esc(status)} proposals.</p>')
    body = _flash(flash) + f'<p class="tabs">{tabs}</p><h2>{len(proposals)} {esc(status)} proposals</h2>{table}'
    return _page(f"review queue ({status})", body, nonce=nonce, user=user)


def _flash(key: str) -> str:
    return f'<p class="msg">{esc(MESSAGES[key])}</p>' if key in MESSAGES else ""


def _panel(heading: str, card: AnyCard | None, other: AnyCard | None) -> str:
    if card is None:
        return f'<div class="panel"><h3>{esc(heading)}</h3><p class="muted">No existing family is near.</p></div>'
    mine, theirs = card_fields(card), card_fields(other) if other else {}
    rows = "".join(f'<tr class="{"changed" if other and theirs.get(k) != v else ""}"><th>{esc(k)}</th>'
                   f'<td class="v">{esc(v)}</td></tr>' for k, v in mine.items() if v)
    body = f'<h4>body</h4><pre class="body">{esc(card.body)}</pre>' if card.body else ""
    return f'<div class="panel"><h3>{esc(heading)}</h3><table>{rows}</table>{body}</div>'


def _evidence(p: Proposal) -> str:
    if not p.evidence:
        return '<p class="muted">No round evidence.</p>'
    num = lambda v, f: "-" if v is None else format(v, f)  # noqa: E731
    rows = "".join(f"<tr><td>{esc(e.round_ref)}</td><td>{n}</td><td>{esc(e.problem)}</td><td>{esc(e.backend)}</td>"
                   f"<td>{esc(e.outcome)}</td><td>{num(e.speedup, '.3f')}</td><td>{num(e.lift, '.3f')}</td>"
                   f"<td>{num(e.confidence, '.2f')}</td><td>{esc(e.note)}</td></tr>"
                   for e, n in collapse_evidence(p.evidence))
    return ("<table><tr><th>round</th><th>copies</th><th>problem</th><th>backend</th><th>outcome</th><th>speedup</th>"
            f"<th>lift</th><th>mapping confidence</th><th>note</th></tr>{rows}</table>")


def _actions(p: Proposal, csrf: str | None, can_write: bool, card_json: str) -> str:
    if p.status != "pending":
        who = f" by {esc(p.reviewer)}" if p.reviewer else ""
        notes = f": {esc(p.reviewer_notes)}" if p.reviewer_notes else ""
        return f'<div class="actions">Decided: <b>{esc(p.status)}</b>{who}{notes}</div>'
    if not can_write:
        return '<div class="actions muted">Sign in with a reviewer token to approve, reject, merge or edit.</div>'
    hidden = f'<input type="hidden" name="csrf" value="{esc(csrf)}">' if csrf else ""
    url = f'/p/{quote(p.id, safe="")}'

    def form(action: str, inner: str, label: str) -> str:
        return (f'<form class="inline" method="post" action="{url}">{hidden}'
                f'<input type="hidden" name="action" value="{action}">{inner}'
                f'<button type="submit" name="do" value="{action}">{label}</button></form>')

    into = esc(p.target_family or "")
    return ('<div class="actions"><h3>Decision</h3>'
            + form("approve", '<input name="reason" placeholder="note (optional)">', "Approve")
            + form("reject", '<input name="reason" required placeholder="reason (required)">', "Reject")
            + form("merge", f'<input name="merge_into" required value="{into}" placeholder="family id">'
                            '<input name="reason" placeholder="note (optional)">', "Merge into")
            + '<details><summary>Edit the draft (card JSON)</summary>'
            + form("edit", f'<textarea name="card_json" rows="18">{esc(card_json)}</textarea>'
                           '<input name="reason" placeholder="note (optional)">', "Save draft")
            + '</details></div>')


def detail_page(p: Proposal, nearest: AnyCard | None, *, nonce: str, user: str | None, csrf: str | None,
                can_write: bool, flash: str = "", error: str = "") -> str:
    cands = "".join(f"<li>{esc(c.family_id)}: {c.score:.3f} (dense {c.components.dense:.2f})</li>"
                    for c in p.nearest)
    err = f'<p class="err">{esc(error)}</p>' if error else ""
    meta = (f'<p><b>{esc(p.kind)}</b> proposal, status <b>{esc(p.status)}</b>, confidence {p.confidence:.2f}, '
            f'by {esc(p.author)}{", polished" if p.polished else ""}. {esc(p.reason)}</p>')
    if p.cause is not None:  # a new_cause proposal: the cause it would add, with its evidence
        c = p.cause
        meta += (f"<h3>New cause <code>{esc(c.id)}</code>: {esc(c.title)}</h3><p>{esc(c.description)}</p>"
                 f"<p>explains {esc(', '.join(c.explains))}; families {esc(', '.join(c.families) or '-')}; class "
                 f"{esc(c.bottleneck_class)}</p><ul>"
                 + "".join(f"<li>{esc(e.source or '')}: {esc(e.text)}</li>" for e in c.evidence) + "</ul>")
    body = (_flash(flash) + err + f"<h2>{esc(p.id)}</h2>{meta}"
            + _actions(p, csrf, can_write, p.card.model_dump_json(indent=2, exclude={"stats"}))
            + f"<h3>Evidence ({len(p.evidence)} rounds)</h3>{_evidence(p)}"
            + '<h3>Proposed card beside the nearest family <span class="muted">(changed fields highlighted)</span>'
            + '</h3><div class="cols">' + _panel("proposed card", p.card, nearest)
            + _panel(f"nearest family: {nearest.id}" if nearest else "nearest family", nearest, None) + "</div>"
            + (f"<h3>Nearest families</h3><ul>{cands}</ul>" if cands else ""))
    return _page(f"proposal {p.id}", body, nonce=nonce, user=user)


def login_page(*, nonce: str, error: str = "", csrf: str = "") -> str:
    err = f'<p class="err">{esc(error)}</p>' if error else ""
    body = (f'{err}<h2>Sign in</h2><form method="post" action="/login">'
            f'<input type="hidden" name="csrf" value="{esc(csrf)}">'
            '<p><label>Token <input name="token" type="password" required autocomplete="off"></label></p>'
            '<p class="muted">A token from LADDER_TOKENS; the reviewer role is needed to decide, and decisions are '
            'recorded under the name the token is given there. It is kept on the '
            'server for this session only (the browser holds an opaque HttpOnly session cookie).</p>'
            '<button type="submit">Sign in</button></form>')
    return _page("sign in", body, nonce=nonce, user=None)


def message_page(title: str, text: str, *, nonce: str, user: str | None = None) -> str:
    return _page(title, f'<h2>{esc(title)}</h2><p class="err">{esc(text)}</p>', nonce=nonce, user=user)
