"""The Telegram stand-in keeps the Bot API promises python-telegram-bot 22 relies on."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, MessageEntity
from telegram.error import BadRequest

from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram

TOKEN = "123456:TEST"
ALICE = {"id": 1001, "is_bot": False, "first_name": "Alice"}
TEAM = {"id": -1001234, "type": "supergroup", "title": "Team"}


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as server:
        yield server


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return dict(json.loads(resp.read()))
    except urllib.error.HTTPError as err:  # Telegram's errors carry a JSON body too
        return dict(json.loads(err.read()))


def api(tg: FakeTelegram, method: str, **params: Any) -> dict[str, Any]:
    """One Bot API call, as the bot makes it; the whole answer."""
    return _post(f"{tg.url}/bot{TOKEN}/{method}", params)


def say(tg: FakeTelegram, text: str, chat: dict[str, Any] | None = None) -> dict[str, Any]:
    """Alice writes ``text`` (in her private chat unless ``chat``); the Message the bot gets."""
    body = {"botToken": TOKEN, "from": ALICE, "text": text, "date": int(time.time())}
    body["chat"] = chat or {"id": ALICE["id"], "type": "private", "first_name": "Alice"}
    return dict(_post(f"{tg.url}/sendMessage", body)["result"])


def texts(answer: dict[str, Any]) -> list[str]:
    assert answer["ok"] is True, answer
    return [u["message"]["text"] for u in answer["result"]]


def test_an_update_is_handed_out_until_a_later_offset_confirms_it(tg: FakeTelegram) -> None:
    say(tg, "one")
    say(tg, "two")
    first = api(tg, "getUpdates")
    assert texts(first) == ["one", "two"]
    # Reading does not confirm: a poll loop that crashed gets the same updates again.
    assert texts(api(tg, "getUpdates", offset=0)) == ["one", "two"]
    one, two = (u["update_id"] for u in first["result"])
    assert two > one
    assert texts(api(tg, "getUpdates", offset=one + 1)) == ["two"]
    assert texts(api(tg, "getUpdates", offset=two + 1)) == []
    # A negative offset keeps only the newest updates and forgets the rest.
    say(tg, "three")
    say(tg, "four")
    assert texts(api(tg, "getUpdates", offset=-1)) == ["four"]
    assert texts(api(tg, "getUpdates")) == ["four"]
    # deleteWebhook(drop_pending_updates) forgets what is waiting.
    assert api(tg, "deleteWebhook", drop_pending_updates=True)["result"] is True
    assert texts(api(tg, "getUpdates")) == []


def test_a_long_poll_wakes_as_soon_as_a_user_writes(tg: FakeTelegram) -> None:
    started = time.monotonic()
    assert texts(api(tg, "getUpdates", timeout=1)) == []
    assert time.monotonic() - started >= 0.9  # an empty long poll waits its timeout

    got: dict[str, Any] = {}

    def poll() -> None:
        t0 = time.monotonic()
        got["answer"] = api(tg, "getUpdates", timeout=20)
        got["seconds"] = time.monotonic() - t0

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.3)
    say(tg, "hello")
    poller.join(10)
    assert texts(got["answer"]) == ["hello"]
    assert 0.25 <= got["seconds"] < 3


def test_errors_have_telegrams_shape(tg: FakeTelegram) -> None:
    assert api(tg, "getChat", chat_id=1001) == {
        "ok": False,
        "error_code": 400,
        "description": "Bad Request: method getChat is not supported",
    }
    missing = api(tg, "editMessageText", chat_id=1001, message_id=999, text="x")
    assert missing["error_code"] == 400 and "message to edit not found" in missing["description"]
    assert _post(f"{tg.url}/botnot-a-token/getMe", {})["error_code"] == 401


async def test_python_telegram_bot_reads_users_updates(tg: FakeTelegram) -> None:
    say(tg, "/help")
    said = say(tg, f"@{BOT_USERNAME} 記住這個", chat=TEAM)
    edit = {"botToken": TOKEN, "from": ALICE, "chat": TEAM, "message_id": said["message_id"]}
    _post(f"{tg.url}/editMessage", edit | {"text": f"@{BOT_USERNAME} 記住那個"})
    bot = Bot(TOKEN, base_url=f"{tg.url}/bot", base_file_url=f"{tg.url}/file/bot")
    async with bot:
        me = await bot.get_me()
        assert me.is_bot and me.username == BOT_USERNAME
        command, group, edited = await bot.get_updates(timeout=0)

        assert command.message is not None and command.message.chat.type == "private"
        assert list(command.message.parse_entities([MessageEntity.BOT_COMMAND]).values()) == [
            "/help"
        ]
        assert group.message is not None and group.message.chat.type == "supergroup"
        assert list(group.message.parse_entities([MessageEntity.MENTION]).values()) == [
            f"@{BOT_USERNAME}"
        ]
        assert abs(group.message.date.timestamp() - time.time()) < 60  # seconds, not ms
        assert edited.edited_message is not None and edited.message is None
        assert edited.edited_message.message_id == group.message.message_id
        assert edited.edited_message.text == f"@{BOT_USERNAME} 記住那個"
        assert edited.edited_message.edit_date is not None

        # The bot replies with a button; Alice presses it; the bot answers and edits.
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("OK", callback_data="pm:c:1")]])
        reply = await bot.send_message(
            1001, "pick", reply_markup=keyboard, reply_to_message_id=command.message.message_id
        )
        assert reply.reply_to_message is not None and reply.reply_to_message.text == "/help"
        press = {"botToken": TOKEN, "from": ALICE, "data": "pm:c:1"}
        _post(f"{tg.url}/sendCallback", press | {"message": {"message_id": reply.message_id}})
        (pressed,) = await bot.get_updates(offset=edited.update_id + 1, timeout=0)
        query = pressed.callback_query
        assert query is not None and query.data == "pm:c:1" and query.chat_instance
        assert query.message is not None and query.message.reply_markup == keyboard
        assert await query.answer("done") is True
        done = await bot.edit_message_text("done", chat_id=1001, message_id=reply.message_id)
        assert isinstance(done, type(reply)) and done.text == "done" and done.reply_markup is None
        with pytest.raises(BadRequest, match="not modified"):
            await bot.edit_message_text("done", chat_id=1001, message_id=reply.message_id)


async def test_a_sent_document_can_be_read_back(tg: FakeTelegram) -> None:
    content = "# 記憶\n\n- 我最喜歡的茶是凍頂烏龍\n".encode()
    bot = Bot(TOKEN, base_url=f"{tg.url}/bot", base_file_url=f"{tg.url}/file/bot")
    async with bot:
        sent = await bot.send_document(1001, content, filename="export.md", caption="export")
        assert sent.document is not None and sent.document.file_name == "export.md"
        assert sent.caption == "export" and sent.document.file_size == len(content)
        downloaded = await (await bot.get_file(sent.document.file_id)).download_as_bytearray()
    assert bytes(downloaded) == content
    (row,) = _post(f"{tg.url}/getUpdates", {"token": TOKEN, "chatId": 1001})["result"]
    assert row["message"]["document"]["file_id"] == sent.document.file_id


class Receiver:
    """A bot's webhook on 127.0.0.1: records each post; answers ``status`` (403 refuses)."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.posts.append((dict(self.headers), body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def texts(self) -> list[str]:
        return [body["message"]["text"] for _, body in self.posts]


def _until(check: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_after_set_webhook_each_update_is_posted_with_the_secret_until_taken(
    tg: FakeTelegram,
) -> None:
    hook = Receiver()
    try:
        bad = api(tg, "setWebhook", url=hook.url, secret_token="not allowed!")
        assert bad["error_code"] == 400 and "secret token" in bad["description"]
        assert api(tg, "setWebhook", url=hook.url, secret_token="s3cret_token-1")["ok"]
        assert api(tg, "getUpdates")["error_code"] == 409  # no polling while a webhook is set
        say(tg, "one")
        say(tg, "two")
        _until(lambda: hook.texts() == ["one", "two"])  # oldest first, one post each
        headers, _ = hook.posts[0]
        assert headers["Content-Type"] == "application/json"
        assert headers["X-Telegram-Bot-Api-Secret-Token"] == "s3cret_token-1"
        assert api(tg, "getWebhookInfo")["result"]["pending_update_count"] == 0

        hook.status = 403  # refused: kept, tried again, the error shown
        say(tg, "three")
        _until(lambda: hook.texts().count("three") >= 2)
        info = api(tg, "getWebhookInfo")["result"]
        assert info["url"] == hook.url and info["pending_update_count"] == 1
        assert info["last_error_message"].startswith("Wrong response from the webhook: 403")
        hook.status = 200
        _until(lambda: api(tg, "getWebhookInfo")["result"]["pending_update_count"] == 0)
        taken = len(hook.posts)
        time.sleep(0.5)
        assert len(hook.posts) == taken  # taken once: never posted again

        assert api(tg, "deleteWebhook")["ok"]
        say(tg, "four")
        assert texts(api(tg, "getUpdates")) == ["four"]  # polled again, not posted
        assert "four" not in hook.texts()
    finally:
        hook.httpd.shutdown()
        hook.httpd.server_close()
