"""Offline Telegram for handler tests: a recording Bot API and Update builders.

``RecordingRequest`` stands in for Telegram's HTTP only: it answers the Bot API methods the
bot calls with the real JSON shapes, so the real ``Application`` and ``Bot`` run unchanged over
the real backend (``bot.frontdesk.backend.backend_for``). Everything behind the bot layer is
PCAI's own code; the model is the fake Ollama (tests/fakes/ollama_server.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

from telegram import Update
from telegram.request import BaseRequest, RequestData

BOT = {"id": 666, "is_bot": True, "first_name": "PCAI", "username": "TestNameBot"}


class RecordingRequest(BaseRequest):
    """A Bot API that records every call and answers like Telegram does."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        # (method, parameters, what Telegram answered): the message ids the bot was given.
        self.answered: list[tuple[str, dict[str, Any], Any]] = []
        # (method, part name, file name, bytes) of every uploaded file (sendDocument).
        self.uploads: list[tuple[str, str, str, bytes]] = []
        self.next_id = 1000
        self.reject_html = False
        self.refuse_documents = False
        self.refuse: set[str] = set()  # methods answered with 403 (the user blocked the bot)

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    @property
    def read_timeout(self) -> float:
        """Long polling is not used offline."""
        return 1.0

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        """Record the call and answer it."""
        name = url.rsplit("/", 1)[-1]
        params = dict(request_data.parameters) if request_data else {}
        self.calls.append((name, params))
        if request_data is not None and request_data.contains_files:
            for part, (filename, content, *_) in request_data.multipart_data.items():
                data = content if isinstance(content, bytes) else content.read()
                self.uploads.append((name, part, str(filename), bytes(data)))
        if name == "sendMessage" and self.reject_html and params.get("parse_mode") == "HTML":
            return 400, _err("Bad Request: can't parse entities: unclosed tag")
        if name in self.refuse:
            return 403, _err("Forbidden: bot was blocked by the user")
        if name == "sendDocument" and self.refuse_documents:
            return 400, _err("Bad Request: method sendDocument is not supported")
        result = self._result(name, params)
        self.answered.append((name, params, result))
        return 200, json.dumps({"ok": True, "result": result}).encode()

    def _result(self, name: str, params: dict[str, Any]) -> Any:
        if name == "getMe":
            return {
                **BOT,
                "can_join_groups": True,
                "can_read_all_group_messages": False,
                "supports_inline_queries": False,
            }
        if name in ("sendMessage", "editMessageText", "sendDocument"):
            self.next_id += 1
            mid = params.get("message_id", self.next_id)
            return {
                "message_id": mid,
                "date": int(time.time()),
                "chat": {"id": int(params.get("chat_id", 0)), "type": "private"},
                "from": BOT,
                "text": params.get("text", params.get("caption", "")),
            }
        return True

    def named(self, name: str) -> list[dict[str, Any]]:
        """The parameters of every call to ``name``."""
        return [p for n, p in self.calls if n == name]

    def texts(self) -> list[str]:
        """Every text the bot sent."""
        return [str(p.get("text", "")) for p in self.named("sendMessage")]


def _err(description: str) -> bytes:
    return json.dumps({"ok": False, "error_code": 400, "description": description}).encode()


class Updates:
    """Builds the JSON Telegram sends, as ``Update`` objects."""

    def __init__(self) -> None:
        self.update_id = 1
        self.message_id = 1

    def _next(self) -> tuple[int, int]:
        self.update_id += 1
        self.message_id += 1
        return self.update_id, self.message_id

    def message(
        self,
        bot: Any,
        user_id: int,
        text: str | None = None,
        *,
        chat_type: str = "private",
        chat_id: int | None = None,
        reply_to: dict[str, Any] | None = None,
        lang: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Update:
        """A message from ``user_id`` (a command when ``text`` starts with /)."""
        uid, mid = self._next()
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": f"u{user_id}"}
        if lang:
            user["language_code"] = lang
        msg: dict[str, Any] = {
            "message_id": mid,
            "date": int(time.time()),
            "chat": {"id": chat_id or user_id, "type": chat_type},
            "from": user,
        }
        if text is not None:
            msg["text"] = text
            if text.startswith("/"):
                msg["entities"] = [
                    {"type": "bot_command", "offset": 0, "length": len(text.split()[0])}
                ]
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        msg.update(extra or {})
        return Update.de_json({"update_id": uid, "message": msg}, bot)

    def button(
        self, bot: Any, user_id: int, data: str, message_id: int, lang: str | None = None
    ) -> Update:
        """A press on an inline button of bot message ``message_id``."""
        uid, _ = self._next()
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": f"u{user_id}"}
        if lang:
            user["language_code"] = lang
        query = {
            "id": str(uid),
            "from": user,
            "chat_instance": "1",
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": {"id": user_id, "type": "private"},
                "from": BOT,
                "text": "...",
            },
        }
        return Update.de_json({"update_id": uid, "callback_query": query}, bot)


def bot_message(message_id: int, chat_id: int, text: str = "...") -> dict[str, Any]:
    """A bot message as it appears inside ``reply_to_message``."""
    return {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": {"id": chat_id, "type": "private"},
        "from": BOT,
        "text": text,
    }
