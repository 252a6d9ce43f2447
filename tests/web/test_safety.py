"""Safe by construction: scoped to the session's user, CSRF on every write, CSP, escaping."""

from __future__ import annotations

import re
from datetime import datetime

from starlette.routing import Route

from bot.web.render import TEMPLATES
from tests.web.conftest import Page, csrf_of

ALICE, BOB = "telegram_111", "telegram_222"
XSS = "<script>alert('pwned')</script> 我喜歡 <b>粗體</b> 的咖啡"


def _post_routes(page: Page) -> list[Route]:
    return [r for r in page.app.routes if isinstance(r, Route) and "POST" in (r.methods or ())]


def _fill(path: str, entry_id: str, proposal_id: str) -> str:
    return (
        path.replace("{entry_id}", entry_id)
        .replace("{proposal_id}", proposal_id)
        .replace("{action}", "confirm")
    )


def test_every_route_passes_a_guard(page: Page) -> None:
    public = {"/signin", "/login", "/tg"}  # pages that show no one's data
    for route in page.app.routes:
        if not isinstance(route, Route):
            continue
        guard = getattr(route.endpoint, "guarded", None)
        if "POST" in (route.methods or ()):
            expected = {"credential"} if route.path in ("/login", "/auth/telegram") else {"write"}
            assert guard in expected, route.path
        elif route.path not in public:
            assert guard == "page", route.path


def test_a_write_without_the_csrf_token_is_refused(page: Page) -> None:
    entry_id = page.remember(ALICE, "我的貓叫做麻糬")
    now = datetime.now().astimezone()
    proposal = page.services.confirm.propose(ALICE, "我下週三要去台南出差", "chat:1", now=now)
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)
    before = page.services.memory.paths(ALICE).memory_md.read_text(encoding="utf-8")
    writes = [r for r in _post_routes(page) if getattr(r.endpoint, "guarded", "") == "write"]
    assert len(writes) >= 10
    for route in writes:
        path = _fill(route.path, entry_id, proposal.id)
        for data in ({}, {"csrf": "0" * 64}, {"csrf": token + "0"}):
            r = client.post(path, data={**data, "on": "1", "text": "x"}, follow_redirects=False)
            assert r.status_code == 403, (path, data)
    after = page.services.memory.paths(ALICE).memory_md.read_text(encoding="utf-8")
    assert after == before  # nothing forgotten, pinned or edited
    assert [p.id for p in page.services.confirm.pending(ALICE)] == [proposal.id]
    assert client.get("/me").status_code == 200  # the session survived (no logout happened)


def test_another_users_entry_answers_404(page: Page) -> None:
    bobs = page.remember(BOB, "Bob 的銀行在信義路上")
    bob_file = page.services.memory.paths(BOB).memory_md
    before = bob_file.read_text(encoding="utf-8")
    page.remember(ALICE, "Alice likes green tea in the afternoon")
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)
    assert client.get(f"/m/{bobs}").status_code == 404
    for action in ("edit", "pin", "forget", "restore"):
        r = client.post(
            f"/m/{bobs}/{action}",
            data={"csrf": token, "text": "mine now", "weight": "9", "on": "1"},
            follow_redirects=False,
        )
        assert r.status_code == 404, action
    assert bob_file.read_text(encoding="utf-8") == before
    assert "信義路" not in client.get("/?q=銀行").text


def test_another_users_proposal_answers_404(page: Page) -> None:
    now = datetime.now().astimezone()
    bobs = page.services.confirm.propose(BOB, "Bob 下個月要搬家到高雄", "chat:7", now=now)
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)
    for action in ("confirm", "replace", "discard", "edit"):
        r = client.post(f"/pending/{bobs.id}/{action}", data={"csrf": token, "text": "x y z w"})
        assert r.status_code == 404, action
    client.post("/pending/batch", data={"csrf": token, "ids": bobs.id, "action": "confirm"})
    assert [p.id for p in page.services.confirm.pending(BOB)] == [bobs.id]
    assert "高雄" not in client.get("/pending").text
    assert page.services.memory.entries(BOB) == []


def test_every_response_carries_the_csp(page: Page) -> None:
    client = page.login(ALICE)
    for path in ("/", "/pending", "/signin", "/static/style.css", "/no-such-page", "/tg"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp, path
        assert "unsafe-inline" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


def test_no_template_has_inline_script_or_handlers() -> None:
    for path in TEMPLATES.glob("*.html"):
        html = path.read_text(encoding="utf-8")
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert re.search(r'\bsrc="/static/[a-z_]+\.js"', tag), (path.name, tag)
        assert not re.search(r"<script\b[^>]*>\s*[^<\s]", html), path.name
        assert not re.search(r"\son[a-z]+\s*=", html), path.name
        assert "|safe" not in html and "autoescape false" not in html, path.name


def test_memory_text_is_always_escaped(page: Page) -> None:
    entry_id = page.remember(ALICE, XSS)
    now = datetime.now().astimezone()
    page.services.confirm.propose(ALICE, XSS.replace("咖啡", "紅茶"), "chat:9", now=now)
    client = page.login(ALICE)
    for path in ("/", f"/m/{entry_id}", "/?q=咖啡&explain=1", "/pending"):
        html = client.get(path).text
        assert "<script>alert" not in html and "<b>粗體</b>" not in html, path
        assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in html, path
