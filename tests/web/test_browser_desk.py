"""The memory page in Chromium (as tests/web/test_browser.py): forms that keep what was typed,
errors that look like errors, at desktop and phone width."""

from __future__ import annotations

from datetime import datetime

import pytest
from playwright.async_api import Browser
from playwright.async_api import Page as Tab

from tests.web.test_browser import ALICE, Live, browser, live  # noqa: F401  (fixtures)

WIDTHS = [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]


async def open_tab(live: Live, browser: Browser, width: int, lang: str = "en") -> Tab:  # noqa: F811
    """A logged-in tab ``width`` pixels wide."""
    context = await browser.new_context(viewport={"width": width, "height": 900})
    tab = await context.new_page()
    await tab.goto(live.link(ALICE, lang))
    await tab.wait_for_url(f"{live.base}/")
    return tab


@pytest.mark.parametrize("width", WIDTHS)
async def test_a_refused_edit_is_red_and_keeps_what_was_typed(
    live: Live,  # noqa: F811
    browser: Browser,  # noqa: F811
    width: int,
) -> None:
    entry = live.page.remember(ALICE, "My dentist is Dr. Lin")
    tab = await open_tab(live, browser, width)
    await tab.goto(f"{live.base}/m/{entry}")
    typed = "My dentist is Dr. Chen, api key sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    await tab.fill("textarea[name=text]", typed)
    await tab.fill("input[name=topic]", "teeth")
    await tab.click("#edit button[type=submit]")
    error = tab.locator(".flash.error[role=alert]")
    await error.wait_for()
    assert "sk-proj" not in await error.inner_text()
    color = await error.evaluate("e => getComputedStyle(e).color")
    assert color in ("rgb(180, 35, 24)", "rgb(255, 123, 114)")  # --danger, light or dark
    assert await tab.input_value("textarea[name=text]") == typed  # nothing typed is lost
    assert await tab.input_value("input[name=topic]") == "teeth"
    assert "Dr. Lin" in live.memory_md() and "sk-proj" not in live.memory_md()
    box = await error.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width  # fits the phone's width


@pytest.mark.parametrize("width", WIDTHS)
async def test_add_a_memory_on_the_page(
    live: Live,  # noqa: F811
    browser: Browser,  # noqa: F811
    width: int,
) -> None:
    tab = await open_tab(live, browser, width)
    icon = await tab.get_attribute("link[rel=icon]", "href")
    assert icon is not None and (await tab.request.get(live.base + icon)).ok  # a favicon
    await tab.fill("#add textarea[name=text]", "My bike is a green Brompton")
    await tab.click("#add button[type=submit]")
    await tab.wait_for_selector(".flash")
    assert "Remembered: My bike is a green Brompton" in await tab.inner_text(".flash")
    assert "My bike is a green Brompton" in live.memory_md()
    box = await tab.locator("#add textarea").bounding_box()
    assert box is not None and box["x"] + box["width"] <= width


async def test_pending_proposals_are_not_ticked_for_you(
    live: Live,  # noqa: F811
    browser: Browser,  # noqa: F811
) -> None:
    now = datetime.now().astimezone()
    live.page.services.confirm.propose(ALICE, "I collect stamps", "import", now=now)
    tab = await open_tab(live, browser, 390)
    await tab.goto(f"{live.base}/pending")
    boxes = tab.locator("input[type=checkbox][name=ids]")
    assert await boxes.count() == 1 and not await boxes.first.is_checked()
