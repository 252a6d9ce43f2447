"""The page runs inside the bot: started by post_init, stopped by post_shutdown, /web links."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from bot.cli import main
from bot.doctor.page import check_page
from bot.errors import DoctorWarning
from bot.frontdesk.backend import backend_for
from bot.telegram.application import build_application, post_init, post_shutdown
from bot.web.server import WebServer
from memory.base.locks import ServiceLock
from tests.bot.telegram_doubles import RecordingRequest, Updates
from tests.web.conftest import ALICE, BOB, Page

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/login\?t=[\w-]+)")


@pytest.fixture
async def server(page: Page) -> AsyncIterator[WebServer]:
    web = WebServer(page.deps)
    yield web
    await web.stop()


def _local(web: WebServer) -> str:
    return f"http://127.0.0.1:{web.port}"


async def test_the_bot_serves_the_page_in_its_loop_and_stops_it(
    page: Page, server: WebServer
) -> None:
    api = RecordingRequest()
    backend = backend_for(page.services)
    backend.web = server
    app = build_application(page.services.settings, backend, request=api, web=server)
    await app.initialize()
    await post_init(app)
    assert server.running and server.port != 0
    async with httpx.AsyncClient(base_url=_local(server)) as client:
        r = await client.get("/signin")
        assert (
            r.status_code == 200 and "default-src 'self'" in r.headers["content-security-policy"]
        )
    assert api.named("setChatMenuButton") == []  # http: no Mini App
    updates = Updates()
    await app.process_update(updates.message(app.bot, ALICE, "/web", lang="en"))
    [reply] = [t for t in api.texts() if "/login?t=" in t]
    link = LINK.search(reply)
    assert link and "opens once, within 10 minutes" in reply
    assert "to open it on your phone, set PCAI_WEB_HOST and PCAI_WEB_PUBLIC_URL" in reply
    async with httpx.AsyncClient() as browser:
        r = await browser.post(
            link.group(1).split("?")[0], data={"t": link.group(1).split("=", 1)[1]}
        )
        assert r.status_code == 303
        me = await browser.get(f"{_local(server)}/me")
        assert me.json()["user_key"] == f"telegram_{ALICE}"
    await post_shutdown(app)
    await app.shutdown()
    assert not server.running
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get(f"{_local(server)}/signin")


async def test_an_https_public_url_sets_the_mini_app_menu_button(page: Page) -> None:
    settings = replace(
        page.services.settings,
        web=replace(page.services.settings.web, public_url="https://pcai.example.org/"),
    )
    deps = replace(page.deps, config=settings.web)
    web = WebServer(deps)
    api = RecordingRequest()
    app = build_application(settings, backend_for(page.services), request=api, web=web)
    await app.initialize()
    await post_init(app)
    try:
        [call] = api.named("setChatMenuButton")
        assert '"url": "https://pcai.example.org/tg"' in str(call["menu_button"]).replace("'", '"')
        assert web.link(f"telegram_{BOB}").startswith("https://pcai.example.org/login?t=")
    finally:
        await post_shutdown(app)
        await app.shutdown()


async def test_a_taken_port_is_one_warning_and_the_bot_goes_on(
    page: Page, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        config = replace(page.deps.config, port=port)
        web = WebServer(replace(page.deps, config=config))
        with caplog.at_level(logging.WARNING):
            assert await web.start() is False
        assert not web.running
        assert f"cannot listen on 127.0.0.1:{port}" in caplog.text
    backend = backend_for(page.services)
    backend.web = web
    with pytest.raises(Exception, match="memory page is not running"):
        backend.web_link(f"telegram_{ALICE}", "en")


async def test_pcai_web_link_links_to_the_page_the_running_bot_serves(
    page: Page,
    server: WebServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data_dir = page.services.settings.data_dir
    monkeypatch.setenv("PCAI_DATA_DIR", str(data_dir))
    # No bot on this data dir: no link (it used to print one to its own settings' port).
    assert main(["web-link", "--user", "cli_alice"]) == 1
    assert (
        capsys.readouterr().err
        == f"pcai: no pcai run serves {data_dir}: start it, then ask again\n"
    )
    with ServiceLock(data_dir):  # what `pcai run` holds while it runs
        assert await server.start()
        # The service holds pcai.db open (page.services); the command opens it beside (WAL).
        assert main(["web-link", "--user", "cli_alice"]) == 0
        url = capsys.readouterr().out.strip()
        assert server.port != 8765 and url.startswith(f"{_local(server)}/login?t=")
        async with httpx.AsyncClient(base_url=_local(server)) as client:
            r = await client.post("/login", data={"t": url.split("t=", 1)[1]})
            assert r.status_code == 303
        await server.stop()
        assert main(["web-link", "--user", "cli_alice"]) == 1  # the bot runs, its page not
        assert "serves no memory page" in capsys.readouterr().err


def test_pcai_web_link_refuses_when_the_page_is_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PCAI_WEB_ENABLED", "false")
    Path(os.environ["PCAI_DATA_DIR"]).mkdir(parents=True)  # not new: nothing said about it
    assert main(["web-link", "--user", "cli_alice"]) == 1
    assert capsys.readouterr().err == "pcai: the memory page is off (PCAI_WEB_ENABLED=false)\n"


async def test_doctor_tells_the_running_pcais_page_from_another_ones(
    page: Page, server: WebServer, tmp_path: Path
) -> None:
    settings = page.services.settings
    with ServiceLock(settings.data_dir):  # what `pcai run` holds while it runs
        assert await server.start()
        here = replace(settings, web=replace(settings.web, port=server.port))
        where = f"127.0.0.1:{server.port}"
        # A blocking probe of a page served by this loop: asked from a thread.
        said = await asyncio.to_thread(check_page, here)
        assert said == f"{where} is served by the PCAI running on this data folder"
        elsewhere = replace(here, data_dir=tmp_path / "another")
        with pytest.raises(DoctorWarning) as warned:
            await asyncio.to_thread(check_page, elsewhere)
    assert str(warned.value).startswith(
        f"another PCAI (on another data folder) serves its page on {where}"
    )
