"""The page speaks the person's one language (issue 23, item 5): a login link without one opens
in theirs, and every line the page says after an act (its flash lines) is in that language alone.
"""

from __future__ import annotations

import html
import re

from starlette.testclient import TestClient

from tests.one_language import wrong_language
from tests.web.conftest import ALICE, BOB, Page, csrf_of

_FLASH = re.compile(r'<p class="flash[^"]*"[^>]*>(.*?)</p>', re.S)


def flashes(text: str) -> str:
    """The page's flash lines, unescaped, one a line."""
    return "\n".join(html.unescape(m) for m in _FLASH.findall(text))


def test_a_link_without_a_language_opens_in_the_persons_language(page: Page) -> None:
    user = f"telegram_{ALICE}"
    assert page.services.languages is not None
    page.services.languages.choose(user, "zh")  # /lang zh in the chat
    client = page.client()
    token = page.deps.logins.issue(user, page.clock())  # pcai web-link: no language
    english_browser = {"accept-language": "en-US,en;q=0.9"}
    r = client.post("/login", data={"t": token}, headers=english_browser)
    assert r.status_code == 200 and '<html lang="zh-Hant">' in r.text  # not the browser's


def _acts(page: Page, client: TestClient, user: str, texts: tuple[str, str]) -> str:
    """Forget, undo twice, add, add a secret, add a duplicate: every flash line the page said."""
    entry_id = page.remember(user, texts[0])
    token = csrf_of(client.get("/").text)
    said = [
        client.post(f"/m/{entry_id}/forget", data={"csrf": token}).text,
        client.post("/undo", data={"csrf": token}).text,
        client.post("/undo", data={"csrf": token}).text,
        client.post("/add", data={"csrf": token, "text": texts[1]}).text,
        client.post("/add", data={"csrf": token, "text": "password: hunter2-Secret!"}).text,
        client.post("/add", data={"csrf": token, "text": texts[1]}).text,
    ]
    return "\n".join(flashes(text) for text in said)


def test_what_the_page_says_after_an_act_is_in_one_language(page: Page) -> None:
    english = ("I drink black coffee every morning", "My sister Anna lives in Tainan")
    chinese = ("我每天早上喝一杯黑咖啡", "我妹妹安娜住在台南")
    for key, lang, texts in ((ALICE, "en", english), (BOB, "zh", chinese)):
        user = f"telegram_{key}"
        said = _acts(page, page.login(user, lang), user, texts)
        assert len(said.splitlines()) >= 6, said
        assert wrong_language(lang, said, texts) == [], said


def test_a_section_named_in_both_languages_shows_the_readers_half(page: Page) -> None:
    for key, lang in ((ALICE, "en"), (BOB, "zh")):
        user = f"telegram_{key}"
        entry_id = page.remember(user, "my sister Anna lives in Tainan", "個人 Personal")
        client = page.login(user, lang)
        shown = client.get("/").text + client.get(f"/m/{entry_id}").text
        name = "Personal" if lang == "en" else "個人"
        assert f"<h2>{name}</h2>" in shown and f"<dd>{name}</dd>" in shown
        assert "個人 Personal</" not in shown  # no half-translated name (the form keeps it)


def test_a_search_result_says_where_it_comes_from_in_the_readers_language(page: Page) -> None:
    user = f"telegram_{BOB}"
    page.remember(user, "我妹妹安娜住在台南", "個人 Personal")
    found = page.login(user, "zh").get("/", params={"q": "安娜住在哪裡"}).text
    [source] = re.findall(r'<span class="source">(.*?)</span>', found, re.S)
    words = html.unescape(re.sub(r"<[^>]+>", " ", source))  # the id is in a <code> tag
    assert words.startswith("記憶 · 個人") and wrong_language("zh", words) == [], words
