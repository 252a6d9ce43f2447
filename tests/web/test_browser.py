"""The memory page in a real browser: Debian's chromium driven by Playwright.

The page is served by the same :class:`WebServer` the bot starts, in the test's event loop,
over real services on a temporary data dir. ``playwright install`` cannot download browsers
here, so the system chromium is used (``make test`` installs it with apt-get when it can).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import Browser, async_playwright
from playwright.async_api import Page as Tab

from agent.reminders import store as rs
from agent.types import InjectedMemory
from agent.why import WhyLog
from bot.web.logins import LINK_SECONDS
from bot.web.server import WebServer, login_url
from memory.base.markdown import parse_memory
from tests.web.conftest import Page
from tests.web.test_initdata import fields_for, telegram_signs
from tests.web.test_reminders_page import set_reminders

ALICE, BOB = "telegram_111", "telegram_222"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "memory-page.png"


def chromium_path() -> str:
    """Debian's chromium, or a one-sentence failure saying what to install."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "The browser tests need Debian's chromium package: run `apt-get install chromium` "
            "(make test installs it when run as root).",
            pytrace=False,
        )
    return found


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A headless chromium."""
    path = chromium_path()
    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=path, args=ARGS)
        yield launched
        await launched.close()


@dataclass
class Live:
    """The page served over HTTP, and the data behind it."""

    page: Page
    server: WebServer

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def link(self, user_key: str, lang: str = "en", issued: float | None = None) -> str:
        now = self.page.clock() if issued is None else issued
        return login_url(self.base, self.page.deps.logins.issue(user_key, now, lang))

    def memory_md(self, user_key: str = ALICE) -> str:
        return self.page.services.memory.paths(user_key).memory_md.read_text(encoding="utf-8")

    async def tab(
        self, browser: Browser, user_key: str = ALICE, lang: str = "en", width: int = 412
    ) -> Tab:
        """A browser tab logged in through a one-time link (a phone's width unless told)."""
        context = await browser.new_context(viewport={"width": width, "height": 915})
        tab = await context.new_page()
        await tab.goto(self.link(user_key, lang))
        await tab.wait_for_url(f"{self.base}/")
        return tab


@pytest.fixture
async def live(page: Page) -> AsyncIterator[Live]:
    server = WebServer(page.deps)
    assert await server.start()
    yield Live(page, server)
    await server.stop()


async def test_log_in_with_a_link_and_see_memories(
    live: Live, browser: Browser, tmp_path: Path
) -> None:
    live.page.remember(ALICE, "我每天早上喝一杯黑咖啡，不加糖", "偏好 Preferences", user_weight=7)
    live.page.remember(
        ALICE, "Always answer me in Traditional Chinese", "規則 Rules", is_core=True
    )
    live.page.remember(ALICE, "The quarterly report is due every March 31", "工作 Work")
    live.page.remember(ALICE, "我女兒的生日是五月三日", "個人 Personal", canonical_topic="family")
    tab = await live.tab(browser, lang="zh")
    # a Chinese reader sees the Chinese half of each section name (issue 23, item 5)
    assert await tab.locator("h2").all_inner_texts() == ["偏好", "規則", "工作", "個人"]
    assert "我每天早上喝一杯黑咖啡" in await tab.inner_text("main")
    shot = tmp_path / "memory-page.png"
    await tab.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    # The README's picture is refreshed only on request, so a test run leaves the tree as is.
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(shot.read_bytes())


async def test_search_in_chinese_and_english(live: Live, browser: Browser) -> None:
    live.page.remember(ALICE, "我每天早上喝一杯黑咖啡，不加糖")
    live.page.remember(ALICE, "I prefer oolong tea in the afternoon")
    tab = await live.tab(browser)
    for query, expected, other in [
        ("咖啡", "黑咖啡", "oolong"),
        ("oolong", "oolong tea", "黑咖啡"),
    ]:
        await tab.fill("input[name=q]", query)
        await tab.press("input[name=q]", "Enter")
        await tab.wait_for_selector(".results")
        results = await tab.inner_text(".results")
        assert expected in results and other not in results, query


async def test_edit_an_entry_and_see_memory_md_change(live: Live, browser: Browser) -> None:
    old = live.page.remember(ALICE, "My dentist is Dr. Lin", canonical_topic="dentist")
    tab = await live.tab(browser)
    await tab.goto(f"{live.base}/m/{old}")
    await tab.fill("textarea[name=text]", "My dentist is Dr. Chen near the station")
    await tab.click("#edit button[type=submit]")
    await tab.wait_for_selector(".flash")
    entries = {e.text: e for e in parse_memory(live.memory_md()).entries}
    new = entries["My dentist is Dr. Chen near the station"]
    assert entries["My dentist is Dr. Lin"].status == "deprecated" and new.supersedes == (old,)
    assert tab.url == f"{live.base}/m/{new.id}"
    assert "My dentist is Dr. Lin" in await tab.inner_text(".timeline")


async def test_forget_and_undo(live: Live, browser: Browser) -> None:
    live.page.remember(ALICE, "我的車位在 B2 的 118 號")
    tab = await live.tab(browser)
    await tab.click("button.forget")
    await tab.wait_for_selector("#undo")
    assert "118" not in live.memory_md() and "118" not in await tab.inner_text(
        "main .section, main .empty"
    )
    await tab.click("#undo")
    await tab.wait_for_selector("li.entry")
    assert "118 號" in live.memory_md() and "118 號" in await tab.inner_text("li.entry")


async def test_restore_an_archived_entry(live: Live, browser: Browser) -> None:
    entry_id = live.page.remember(ALICE, "I used to play badminton on Fridays")
    now = datetime.now().astimezone()
    live.page.services.governance.set_status(ALICE, entry_id, "archived", now=now, reason="x")
    tab = await live.tab(browser)
    await tab.goto(f"{live.base}/?status=archived")
    await tab.click(f"#e-{entry_id} button.restore")
    await tab.wait_for_selector(".flash")
    [entry] = parse_memory(live.memory_md()).entries
    assert entry.status == "active"
    assert "restore" not in (await tab.inner_html(f"#e-{entry_id}"))


async def test_restore_a_replaced_version_from_its_timeline(live: Live, browser: Browser) -> None:
    old = live.page.remember(ALICE, "My dentist is Dr. Lin")
    tab = await live.tab(browser)
    await tab.goto(f"{live.base}/m/{old}")
    await tab.fill("textarea[name=text]", "My dentist is Dr. Chen near the station")
    await tab.click("#edit button[type=submit]")
    await tab.wait_for_selector(".flash")
    await tab.goto(f"{live.base}/")
    assert await tab.locator("li.entry p.text").all_inner_texts() == [
        "My dentist is Dr. Chen near the station"  # one memory: the old version is history
    ]
    assert await tab.locator("button.keep").count() == 0  # new, used or not: not fading
    await tab.goto(f"{live.base}/m/{old}")
    await tab.click(f"#e-{old} button.restore")
    await tab.wait_for_selector(".flash")
    status = {e.text: e.status for e in parse_memory(live.memory_md()).entries}
    assert status == {
        "My dentist is Dr. Lin": "active",
        "My dentist is Dr. Chen near the station": "deprecated",
    }
    await tab.goto(f"{live.base}/")
    assert await tab.locator("li.entry p.text").all_inner_texts() == ["My dentist is Dr. Lin"]


async def test_confirm_a_pending_proposal_made_in_chat(live: Live, browser: Browser) -> None:
    # The model's memory_save in a chat turn (a typed /remember is saved at once instead).
    now = datetime.now().astimezone()
    proposal = live.page.services.confirm.propose(
        ALICE, "我下週三要去台南出差", "chat:tg-5", now=now
    )
    tab = await live.tab(browser)
    await tab.click("nav >> text=Pending")
    card = await tab.inner_text(f"#p-{proposal.id}")
    assert "我下週三要去台南出差" in card and "from the chat" in card
    await tab.click(f"#p-{proposal.id} button.confirm")
    await tab.wait_for_selector(".flash")
    assert "Remembered" in await tab.inner_text(".flash")
    assert "我下週三要去台南出差" in live.memory_md()


async def test_a_link_opens_once(live: Live, browser: Browser) -> None:
    link = live.link(ALICE)
    first = await (await browser.new_context()).new_page()
    await first.goto(link)
    await first.wait_for_url(f"{live.base}/")
    second = await (await browser.new_context()).new_page()
    await second.goto(link)
    await second.wait_for_selector("#problem")
    assert "already used" in await second.inner_text("#problem")
    assert (await second.goto(f"{live.base}/")).url.endswith("/signin")  # type: ignore[union-attr]


async def test_an_expired_link_is_refused(live: Live, browser: Browser) -> None:
    link = live.link(ALICE, issued=live.page.clock() - LINK_SECONDS - 5)
    tab = await (await browser.new_context()).new_page()
    await tab.goto(link)
    await tab.wait_for_selector("#problem")
    assert "expired" in await tab.inner_text("#problem")


async def test_another_users_entry_is_404(live: Live, browser: Browser) -> None:
    bobs = live.page.remember(BOB, "Bob 的保險箱密碼在書桌抽屜的信封裡")
    tab = await live.tab(browser)
    response = await tab.goto(f"{live.base}/m/{bobs}")
    assert response is not None and response.status == 404
    assert "保險箱" not in await tab.content()


async def test_a_write_without_the_csrf_token_is_refused(live: Live, browser: Browser) -> None:
    live.page.remember(ALICE, "我的護照十二月到期")
    tab = await live.tab(browser)
    await tab.eval_on_selector_all("input[name=csrf]", "inputs => inputs.forEach(i => i.remove())")
    async with tab.expect_response(lambda r: r.url.endswith("/forget")) as caught:
        await tab.click("button.forget")
    assert (await caught.value).status == 403
    assert "護照" in live.memory_md()


async def test_a_script_in_a_memory_shows_as_text(live: Live, browser: Browser) -> None:
    text = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='x'\">"
    live.page.remember(ALICE, text)
    tab = await live.tab(browser)
    assert await tab.inner_text("li.entry .text") == text
    assert await tab.title() == "PCAI memory"
    assert await tab.locator("li.entry img").count() == 0


async def test_the_mini_app_logs_in_with_telegrams_init_data(live: Live, browser: Browser) -> None:
    live.page.remember(ALICE, "我住在台北市大安區")
    init = telegram_signs(fields_for(111, live.page.clock() - 10))
    tab = await (await browser.new_context()).new_page()
    # Telegram opens the Mini App with its data URL-encoded in the fragment.
    fragment = urlencode({"tgWebAppData": init, "tgWebAppVersion": "8.0"})
    await tab.goto(f"{live.base}/tg#{fragment}")
    await tab.wait_for_url(f"{live.base}/")
    assert "大安區" in await tab.inner_text("main")
    assert "記憶" in await tab.inner_text("nav")  # the Telegram client's language (zh-hant)


# What a person reads instead of PCAI's codes, in each language of the page.
PLAIN = {
    "en": {
        "L0": "always in mind",
        "L1": "when its scope comes up",
        "L2": "when the topic comes up",
        "global": "everywhere",
        "asked": "You:",
        "pcai": "PCAI:",
        "personal": "Personal",
        "log": "your log of 2026-11-21",
        "import": "from an imported file",
        "you": "you",
    },
    "zh": {
        "L0": "隨時記得",
        "L1": "提到它的範圍時",
        "L2": "話題相關時",
        "global": "所有對話",
        "asked": "你：",
        "pcai": "PCAI：",
        "personal": "個人",
        "log": "2026-11-21 的日誌",
        "import": "來自匯入的檔案",
        "you": "你",
    },
}
CODES = re.compile(r"\bL[012]\b|health|健康度|MEMORY\.md|memory/\d|\bglobal\b|\bimport\b|m-\d{8}-")


async def fits(tab: Tab, width: int) -> bool:
    """Whether the page needs no sideways scrolling at ``width`` pixels."""
    return bool(await tab.evaluate(f"document.documentElement.scrollWidth <= {width}"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "width", [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]
)
async def test_plain_words_on_every_page_and_the_codes_under_details(
    live: Live, browser: Browser, lang: str, width: int
) -> None:
    core = live.page.remember(ALICE, "Always answer me in Traditional Chinese", is_core=True)
    deploy = live.page.remember(ALICE, "Deploy PCAI with systemd", scope="project:pcai")
    tea = live.page.remember(ALICE, "I prefer oolong tea in the afternoon")
    services = live.page.services
    now = datetime.now().astimezone()
    services.confirm.propose(ALICE, "I collect stamps", "import", now=now)
    asked = datetime(2026, 11, 21, 9, 30).astimezone()
    session = services.sessions.load(ALICE)
    session.append("user", "用中文回答我好嗎？", asked)
    session.append("assistant", "好的，之後都用中文。", asked)
    services.sessions.save(session)
    overview = "## 個人 Personal\n- I walk the dog at seven"
    used = [
        InjectedMemory(core, "L0", 0.9, "Always answer me in Traditional Chinese", "MEMORY.md"),
        InjectedMemory("", "L2", 0.41, "昨天聊到泰國菜", "memory/2026-11-21.md"),
        InjectedMemory("MEMORY.md", "fallback", 0.0, overview, "MEMORY.md"),
    ]
    WhyLog(services.state).record(ALICE, used, asked)
    services.daily_log.append(ALICE, "user", "昨天聊到泰國菜", asked, "tg-1")
    words = PLAIN[lang]
    tab = await live.tab(browser, lang=lang, width=width)

    shown = await tab.inner_text("main")  # a closed <details> shows only its summary
    assert not CODES.search(shown), CODES.search(shown)
    card = f"#e-{tea}"
    assert tea not in await tab.inner_text(card)
    await tab.click(f"{card} details.more summary")  # the fields and codes, one click away
    opened = await tab.inner_text(card)
    assert tea in opened and "L2" in opened and "global" in opened
    assert words["L2"] in opened and words["global"] in opened
    for entry_id, key in ((core, "L0"), (deploy, "L1")):
        await tab.click(f"#e-{entry_id} details.more summary")
        assert words[key] in await tab.inner_text(f"#e-{entry_id}"), key
    assert await fits(tab, width)

    await tab.goto(f"{live.base}/why")
    shown = await tab.inner_text("main")
    assert f"{words['asked']} 用中文回答我好嗎？" in shown  # the exchange, each by who said it
    assert f"{words['pcai']} 好的，之後都用中文。" in shown
    assert words["personal"] in await tab.inner_text(".overview h3")  # rendered, reader's half
    assert "##" not in shown
    await tab.screenshot(path=str(SHOTS / f"i30c-why-{lang}-{width}.png"), full_page=True)
    assert words["L0"] in shown and words["log"] in shown
    assert not CODES.search(shown) and "0.90" not in shown
    await tab.click("section.reply details.tech summary")
    opened = await tab.inner_text("section.reply details.tech")
    assert "L0" in opened and "0.90" in opened and "memory/2026-11-21.md" in opened
    assert await fits(tab, width)

    await tab.goto(f"{live.base}/pending")
    shown = await tab.inner_text("main")
    assert words["import"] in shown and not CODES.search(shown)
    await tab.goto(f"{live.base}/logs/2026-11-21")
    assert await tab.locator(".records .who").all_inner_texts() == [words["you"]]


LIST_WORDS = {"en": ["Edit", "Delete", "Details"], "zh": ["修改", "刪除", "詳細"]}
SHOTS = Path("/tmp")  # screenshots of the new page items, to look at


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "width", [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]
)
async def test_the_plain_list_edits_and_deletes_a_memory(
    live: Live, browser: Browser, lang: str, width: int
) -> None:
    tea = live.page.remember(ALICE, "I prefer oolong tea in the afternoon", "偏好 Preferences")
    car = live.page.remember(ALICE, "我的車位在 B2 的 118 號", "個人 Personal")
    tab = await live.tab(browser, lang=lang, width=width)
    # each memory is its sentence with Edit and Delete; the details stay closed
    lines = (await tab.inner_text(f"#e-{car}")).split()
    assert lines == ["我的車位在", "B2", "的", "118", "號", *LIST_WORDS[lang]]
    await tab.screenshot(path=str(SHOTS / f"i30c-list-{lang}-{width}.png"), full_page=True)
    await tab.click(f"#e-{tea} details.edit-inline summary")
    await tab.fill(f"#e-{tea} textarea[name=text]", "I prefer jasmine tea now")
    await tab.click(f"#e-{tea} button.save")
    await tab.wait_for_selector(".flash")
    assert tab.url.startswith(f"{live.base}/#e-")  # back on the list
    assert "I prefer jasmine tea now" in await tab.locator("li.entry p.text").all_inner_texts()
    assert "I prefer jasmine tea now" in live.memory_md()
    await tab.click(f"#e-{car} button.forget")
    await tab.wait_for_selector("#undo")
    assert "118" not in live.memory_md()
    assert await tab.locator("li.entry p.text").all_inner_texts() == ["I prefer jasmine tea now"]
    assert await fits(tab, width)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "width", [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]
)
async def test_reminders_on_the_page_done_and_delete(
    live: Live, browser: Browser, lang: str, width: int
) -> None:
    coming, rang = await set_reminders(live.page)
    store = live.page.services.reminders.store  # type: ignore[union-attr]
    tab = await live.tab(browser, lang=lang, width=width)
    await tab.click("nav a[href='/reminders']")
    await tab.wait_for_selector(f"#r-{rang.id}")
    assert "take the pills" in await tab.inner_text(f"#r-{rang.id}")
    assert "call mom" in await tab.inner_text(f"#r-{coming.id}")
    await tab.screenshot(path=str(SHOTS / f"i30c-reminders-{lang}-{width}.png"), full_page=True)
    assert await fits(tab, width)
    await tab.click(f"#r-{rang.id} button.done")
    await tab.wait_for_selector(".flash")
    assert store.get(ALICE, rang.id).status == rs.DONE
    await tab.click(f"#r-{coming.id} button.delete")
    await tab.wait_for_selector("#undo")  # the page's Undo, naming the cancel
    assert store.get(ALICE, coming.id).status == rs.CANCELLED
    assert f"#{coming.id}" in await tab.inner_text("#undo")
    assert await tab.locator("li.reminder").count() == 0


FINAL = {"en": "It is final", "zh": "這是最終的"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "width", [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]
)
async def test_delete_all_behind_a_confirmation_that_offers_the_export(
    live: Live, browser: Browser, lang: str, width: int
) -> None:
    live.page.remember(ALICE, "I prefer oolong tea in the afternoon")
    live.page.remember(ALICE, "我的車位在 B2 的 118 號")
    tab = await live.tab(browser, lang=lang, width=width)
    await tab.click("#forget-all-link")
    await tab.wait_for_selector("#forget-all")
    assert FINAL[lang] in await tab.inner_text("#final")
    assert await tab.locator("a[href='/export.json']").count() == 1
    await tab.screenshot(path=str(SHOTS / f"i30c-delete-all-{lang}-{width}.png"), full_page=True)
    assert await fits(tab, width)
    await tab.click("#forget-all button.danger")
    await tab.wait_for_selector(".flash")
    assert await tab.locator("li.entry").count() == 0 and "118" not in live.memory_md()
    assert await tab.locator("#undo").count() == 0  # final: no Undo is offered
