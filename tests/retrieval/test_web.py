"""The review web page: safe rendering of hostile card text, auth and CSRF on decisions, and an end-to-end
approval driven in headless Chromium (Debian's ``chromium`` package through Playwright)."""

from __future__ import annotations

import http.client
import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest

from kb.models import PatternCard
from kb.settings import Settings
from synthesis.models import EvidenceRef, Proposal

TOKENS = {"contrib-token-0123456789": ["contributor"], "review-token-0123456789": {"name": "ana", "roles": ["reviewer"]},
          "read-token-0123456789": ["reader"]}
CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = ('<script>document.title="pwned";window.__pwned=1</script>'
           '<img src=x onerror="window.__pwned=2"></pre><svg onload="window.__pwned=3">')


def _proposal(pid: str, card_id: str, body: str = "Loop over rows inside one program.") -> Proposal:
    card = PatternCard(id=card_id, title=f"Rows per program <b>{card_id}</b>", status="proposed",
                       summary="Give each program several rows so tiny rows stop leaving the grid launch bound.",
                       body=body, backends=["cuda"], levels=["L1", "L2"],
                       rewrite={"description": "Process ROWS rows per program with a constexpr loop."})
    return Proposal(id=pid, kind="new_family", card=card, confidence=0.8, target_family="rows-per-program-loop",
                    evidence=[EvidenceRef(round_ref="t1#2", problem="softmax", backend="cuda", outcome="improved",
                                          speedup=2.41, lift=2.41)])


@pytest.fixture(scope="module")
def web(tmp_path_factory, seeded_home, embedder):
    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("web") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0)
    kb = KnowledgeBase.open(settings, embedder=embedder)
    handle = create_server(settings, kb=kb, bind="127.0.0.1:0", web_port=0)
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)


def _put(handle, p: Proposal) -> None:
    handle.kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))


class Browserless:
    """A tiny cookie-keeping HTTP client for the page."""

    def __init__(self, port: int) -> None:
        self.port, self.cookies = port, {}

    def req(self, method: str, path: str, form: dict | None = None, headers: dict | None = None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        body = urlencode(form) if form is not None else None
        if body is not None:
            h["Content-Type"] = "application/x-www-form-urlencoded"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        text = r.read().decode()
        for v in r.headers.get_all("Set-Cookie") or []:
            k, _, rest = v.partition("=")
            self.cookies[k] = rest.split(";")[0]
        c.close()
        return r, text

    def login(self, token: str) -> None:
        _, page = self.req("GET", "/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        r, _ = self.req("POST", "/login", {"csrf": csrf, "token": token})
        assert r.status == 303, r.status


def test_hostile_card_text_is_escaped_and_scripts_are_forbidden(web):
    _put(web, _proposal("new-family.web-xss.0001", "web-xss-card", body=HOSTILE))
    r, page = Browserless(web.web.port).req("GET", "/p/new-family.web-xss.0001")
    assert r.status == 200
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'none'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<svg" not in page.lower()
    assert "&lt;script&gt;document.title=&quot;pwned&quot;" in page
    assert "onerror=&quot;window.__pwned=2&quot;" in page
    assert "Rows per program &lt;b&gt;web-xss-card&lt;/b&gt;" in page  # titles are escaped too
    assert "2.410" in page and "t1#2" in page  # the evidence (rounds, speedups) is shown


def test_decisions_need_reviewer_session_and_csrf(web):
    _put(web, _proposal("new-family.web-auth.0001", "web-auth-card"))
    path = "/p/new-family.web-auth.0001"
    anon = Browserless(web.web.port)
    r, _ = anon.req("POST", path, {"action": "approve"})
    assert r.status == 401
    contrib = Browserless(web.web.port)
    contrib.login("contrib-token-0123456789")
    r, page = contrib.req("GET", path)
    assert r.status == 200 and "Sign in with a reviewer token" in page
    r, _ = contrib.req("POST", path, {"action": "approve", "csrf": "x"})
    assert r.status == 403
    rev = Browserless(web.web.port)
    r, _ = rev.req("POST", "/login", {"csrf": "forged", "token": "review-token-0123456789", "name": "x"})
    assert r.status == 400  # the sign-in form's own CSRF check
    rev.login("review-token-0123456789")
    r, _ = rev.req("POST", path, {"action": "approve", "csrf": "wrong"})
    assert r.status == 403
    _, page = rev.req("GET", path)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    r, _ = rev.req("POST", path, {"action": "approve", "csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status == 403
    r, page = rev.req("POST", path, {"action": "reject", "csrf": csrf, "reason": ""})
    assert r.status == 400 and "reason" in page  # the domain's validation comes back on the page
    r, page = rev.req("POST", path, {"action": "edit", "csrf": csrf, "card_json": '{"kind": "pattern"'})
    assert r.status == 400 and "card_json" in page
    draft = web.curator.proposal("new-family.web-auth.0001").card.model_copy(update={"title": "Edited <i>title</i>"})
    r, _ = rev.req("POST", path, {"action": "edit", "csrf": csrf, "card_json": draft.model_dump_json()})
    assert r.status == 303 and web.curator.proposal("new-family.web-auth.0001").card.title == "Edited <i>title</i>"
    r, _ = rev.req("POST", path, {"action": "approve", "csrf": csrf})
    assert r.status == 303
    assert web.kb.get_card("web-auth-card").status == "active"
    assert web.curator.proposal("new-family.web-auth.0001").reviewer == "ana"
    # a script may use the bearer header instead (no session, no CSRF token)
    _put(web, _proposal("new-family.web-bearer.0001", "web-bearer-card"))
    r, _ = anon.req("POST", "/p/new-family.web-bearer.0001", {"action": "reject", "reason": "duplicate"},
                    headers={"Authorization": "Bearer review-token-0123456789"})
    assert r.status == 303 and web.curator.proposal("new-family.web-bearer.0001").status == "rejected"


def test_reads_follow_read_access(web):
    from retrieval.web import WebServer

    locked = WebServer(web.settings.model_copy(update={"read_access": "token"}), web.web.review, port=0).start()
    try:
        b = Browserless(locked.port)
        r, _ = b.req("GET", "/queue")
        assert r.status == 303 and r.headers["Location"] == "/login"
        b.login("read-token-0123456789")
        r, page = b.req("GET", "/queue")
        assert r.status == 200 and "proposals" in page
    finally:
        locked.stop()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                   "(apt-get install -y chromium)")
def test_approve_in_headless_chromium(web):
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright Python package")
    _put(web, _proposal("new-family.web-e2e.0001", "web-e2e-card", body=HOSTILE))
    base = f"http://127.0.0.1:{web.web.port}"
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=args, headless=True)
        try:
            page = browser.new_page()
            page.goto(f"{base}/login")
            page.fill("input[name=token]", "review-token-0123456789")
            page.click("button[type=submit]")
            page.click("a[href='/p/new-family.web-e2e.0001']")
            assert page.title() == "proposal new-family.web-e2e.0001"
            assert 'document.title="pwned"' in page.inner_text("pre.body")  # shown as text
            page.click("button[value=approve]")
            page.wait_for_url(re.compile(r".*msg=approve$"))
            assert "Decided: approved" in page.inner_text("main")
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert "pwned" not in page.title()
        finally:
            browser.close()
    card = web.kb.get_card("web-e2e-card")
    assert card.status == "active"
    from kb.models.search import QuickMatchQuery

    hits = web.kb.quick_match(QuickMatchQuery(text="Rows per program web-e2e-card", backend="cuda", top_k=5))
    assert "web-e2e-card" in [h.card.id for h in hits]  # served by quick-match without a restart
