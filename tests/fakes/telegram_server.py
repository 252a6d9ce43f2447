"""A Telegram Bot API stand-in on 127.0.0.1: python-telegram-bot 22 polls it or takes its
webhook posts, tests play users.

Bot side, ``/bot<token>/<method>`` (GET or POST; JSON, form or multipart bodies), answering as
Telegram does: ``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code",
"description"}``; dates in seconds; method names case-insensitive:

- getMe (bot 666, @TestNameBot, reads every group message, i.e. privacy mode off);
- getUpdates: long polling up to ``timeout`` seconds; an update is handed out again until a
  later call's ``offset`` is above its ``update_id`` (a negative offset keeps only the last
  ``-offset``); ``limit``; ``allowed_updates``; 409 while a webhook is set;
- sendMessage (``reply_markup``, ``reply_parameters`` / ``reply_to_message_id``: 400 when the
  replied message does not exist unless ``allow_sending_without_reply``; 400 for empty text or
  more than 4,096 characters), editMessageText and editMessageReplyMarkup (the keyboard goes
  when not resent; 400 "message is not modified"), deleteMessage, answerCallbackQuery (known
  query ids only), sendChatAction, sendMessageDraft (private chats only, a non-zero
  ``draft_id``; ``draft_retry_after`` makes the next one a 429 with ``retry_after``),
  sendDocument (multipart; the bytes are kept: getFile and
  ``GET /file/bot<token>/<file_path>`` give them back), set/get/deleteMyCommands (per scope
  and language, validated like Telegram), getWebhookInfo (``last_error_message`` of the last
  failed post), setWebhook (``url``, ``secret_token`` checked as Telegram does,
  ``allowed_updates``, ``drop_pending_updates``; an http:// address is taken too, since no
  TLS is served here), deleteWebhook (``drop_pending_updates``), setChatMenuButton,
  setMyDescription, setMyShortDescription, setMyName, setMessageReaction, logOut, close.
  Anything else: 400 "method X is not supported". ``parse_mode`` is not interpreted.

Client side (POST JSON; the shape of telegram-test-api's, which the tests used before):

- ``/sendMessage`` ``{"botToken", "from", "chat", "date", "text", "entities"?,
  "reply_to_message"?: {"message_id"}}``: a user writes (any ``chat``: private, group or
  supergroup; entities for /commands and @mentions are found when none are given; a reply
  carries the stored message it answers). Answers the Message the bot will see.
- ``/editMessage`` ``{"botToken", "from", "chat", "message_id", "text"}``: the user edits an
  earlier message of theirs, which the bot gets as an ``edited_message`` update.
- ``/sendCallback`` ``{"botToken", "from", "data", "message": {"message_id", "chat"}}``: the user
  presses an inline button under a bot message.
- ``/getUpdates`` ``{"token", "chatId"}``: the bot's unread messages in that chat, each
  ``{"messageId", "updateId", "time" (ms), "botToken", "isRead", "message": <the parameters the
  bot sent, edits applied, plus "message_id" and "document">}``; marks them read.
- ``/getUpdatesHistory`` ``{"token"}``: every bot message and user update, oldest first.
- ``/getBotCalls`` ``{"token"?, "since"?, "method"?}``: every Bot API call with its
  parameters, ``seq`` above ``since``. ``/reset`` ``{}``: forget messages, updates, files, calls.

While a webhook is set, each update is POSTed to it, oldest first, as Telegram does
(``tests/fakes/telegram_webhook.py``): with the secret token's header, kept until the bot
answers 2xx, tried again after a refusal or a failed connection.

In tests: ``server = FakeTelegram()`` (a thread; ``server.url``, ``server.stop()``). As a
process: ``python -m tests.fakes.telegram_server [PORT]`` prints "listening on <url>".
"""

from __future__ import annotations

import bisect
import copy
import itertools
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from tests.fakes.telegram_chats import BOT_USER, BOT_USERNAME, Chats
from tests.fakes.telegram_webhook import RETRY_SECONDS, SECRET_TOKEN, Hook, post_update
from tests.fakes.telegram_wire import ApiError, Upload, bad_request, make_handler

__all__ = ["BOT_USER", "BOT_USERNAME", "FakeTelegram", "main"]

LONG_POLL_MAX = 50.0  # Telegram's own ceiling on getUpdates' timeout
_TOKEN = re.compile(r"\d+:[A-Za-z0-9_-]+")
_COMMAND = re.compile(r"[a-z0-9_]{1,32}")
_NO_RESULT = (
    "setchatmenubutton",
    "setmydescription",
    "setmyshortdescription",
    "setmyname",
    "setmydefaultadministratorrights",
    "setmessagereaction",
    "logout",
    "close",
)
Method = Callable[[str, dict[str, Any], dict[str, Upload]], Any]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _file_meta(upload: Upload) -> dict[str, Any]:
    return {"file_name": upload.file_name, "mime_type": upload.mime_type, "size": len(upload.data)}


class FakeTelegram:
    """The stand-in, serving on a free port of 127.0.0.1 (or ``port``) in a background thread."""

    def __init__(self, port: int = 0) -> None:
        self._cond = threading.Condition()  # one lock for all state; long polls wait on it
        self._update_ids = itertools.count(1)
        self._call_seq = itertools.count(1)
        self._query_ids = itertools.count(1)
        self._closing = False
        self.chats = Chats()
        self.calls: list[dict[str, Any]] = []
        self._updates: list[tuple[str, dict[str, Any]]] = []  # (token, update) not confirmed
        self._history: list[dict[str, Any]] = []
        self._queries: set[str] = set()
        self._commands: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._webhooks: dict[str, Hook] = {}
        self._webhook_errors: dict[str, tuple[int, str]] = {}  # token: (date, message)
        self._sender: threading.Thread | None = None  # posts to the webhooks once one is set
        self._allowed: dict[str, list[str]] = {}
        self.draft_retry_after = 0  # set: the next sendMessageDraft gets 429 with this wait
        self._methods: dict[str, Method] = {
            "getme": lambda t, p, f: dict(BOT_USER),
            "getupdates": self._get_updates,
            "sendmessage": lambda t, p, f: self.chats.send_message(t, p),
            "editmessagetext": lambda t, p, f: self.chats.edit(t, p, text=True),
            "editmessagereplymarkup": lambda t, p, f: self.chats.edit(t, p, text=False),
            "deletemessage": self._delete_message,
            "answercallbackquery": self._answer_callback_query,
            "sendchataction": self._send_chat_action,
            "sendmessagedraft": self._send_message_draft,
            "senddocument": lambda t, p, f: self.chats.send_document(t, p, f),
            "getfile": lambda t, p, f: self.chats.get_file(str(p.get("file_id", ""))),
            "setmycommands": self._set_my_commands,
            "getmycommands": lambda t, p, f: self._commands.get(self._scope(t, p), []),
            "deletemycommands": self._delete_my_commands,
            "getwebhookinfo": self._get_webhook_info,
            "setwebhook": self._set_webhook,
            "deletewebhook": self._delete_webhook,
        }
        self._methods.update({name: lambda t, p, f: True for name in _NO_RESULT})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``; the bot's base URL is ``<url>/bot``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        """Answer waiting long polls, stop serving and free the port."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        if self._sender is not None:
            self._sender.join(timeout=15)

    def __enter__(self) -> FakeTelegram:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the Bot API -------------------------------------------------------------------------

    def bot_api(
        self, token: str, method: str, params: dict[str, Any], files: dict[str, Upload]
    ) -> tuple[int, bytes]:
        """The status and JSON body Telegram gives for one call (serialised under the lock)."""
        with self._cond:
            try:
                if not _TOKEN.fullmatch(token):
                    raise ApiError(401, "Unauthorized")
                logged = {**params, **{k: _file_meta(u) for k, u in files.items()}}
                call = {"seq": next(self._call_seq), "time": _now_ms(), "token": token}
                self.calls.append(call | {"method": method, "params": logged})
                handler = self._methods.get(method.lower())
                if handler is None:
                    raise bad_request(f"method {method} is not supported")
                status, body = 200, {"ok": True, "result": handler(token, params, files)}
            except ApiError as exc:
                status, body = exc.code, exc.body()
            return status, json.dumps(body, ensure_ascii=False).encode()

    def file_bytes(self, token: str, file_path: str) -> bytes | None:
        """The bytes at ``file_path`` (``documents/<file_id>``), as Telegram's file server."""
        with self._cond:
            upload = self.chats.file(file_path.removeprefix("documents/"))
            return None if upload is None or not _TOKEN.fullmatch(token) else upload.data

    def _pending(self, token: str) -> list[dict[str, Any]]:
        allowed = self._allowed.get(token) or []
        return [
            u for t, u in self._updates if t == token and (not allowed or u.keys() & set(allowed))
        ]

    def _confirm(self, token: str, offset: int) -> None:
        """Forget the updates ``offset`` confirms (below it; or all but the last ``-offset``)."""
        mine = [u["update_id"] for t, u in self._updates if t == token]
        if offset == 0:
            return
        gone = set(mine[:offset]) if offset < 0 else {i for i in mine if i < offset}
        self._updates = [
            (t, u) for t, u in self._updates if t != token or u["update_id"] not in gone
        ]

    def _get_updates(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        if token in self._webhooks:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        limit = min(max(int(p.get("limit") or 100), 1), 100)
        deadline = time.monotonic() + min(max(float(p.get("timeout") or 0), 0.0), LONG_POLL_MAX)
        self._set_allowed(token, p)
        self._confirm(token, int(p.get("offset") or 0))
        while True:
            pending = self._pending(token)
            left = deadline - time.monotonic()
            if pending or left <= 0 or self._closing:
                return copy.deepcopy(pending[:limit])
            self._cond.wait(left)

    def _delete_message(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        if not self.chats.delete(token, p.get("chat_id"), p.get("message_id")):
            raise bad_request("message to delete not found")
        return True

    def _answer_callback_query(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        if str(p.get("callback_query_id", "")) not in self._queries:
            raise bad_request(
                "query is too old and response timeout expired or query ID is invalid"
            )
        return True

    def _send_chat_action(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        if p.get("chat_id") is None or not p.get("action"):
            raise bad_request("chat_id and action are required")
        return True

    def _send_message_draft(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        chat_id, draft_id = p.get("chat_id"), p.get("draft_id")
        if not isinstance(chat_id, int) or not isinstance(draft_id, int) or not draft_id:
            raise bad_request("chat_id and a non-zero draft_id are required")
        if chat_id < 0:  # group chats have negative ids: drafts are for private chats only
            raise bad_request("TEXTDRAFT_PEER_INVALID")
        if len(str(p.get("text") or "")) > 4096:
            raise bad_request("message is too long")
        with self._cond:
            if self.draft_retry_after:  # the next draft hits flood control once
                seconds, self.draft_retry_after = self.draft_retry_after, 0
                raise ApiError(
                    429,
                    f"Too Many Requests: retry after {seconds}",
                    {"retry_after": seconds},
                )
        return True

    def _scope(self, token: str, p: dict[str, Any]) -> tuple[str, str, str]:
        scope = json.dumps(p.get("scope") or {"type": "default"}, sort_keys=True)
        return token, scope, str(p.get("language_code") or "")

    def _set_my_commands(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        commands = p.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise bad_request("commands must be a list of at most 100 BotCommand")
        for cmd in commands:
            if not _COMMAND.fullmatch(str(cmd.get("command", ""))):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(str(cmd.get("description", "")).strip()) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self._commands[self._scope(token, p)] = [
            {"command": c["command"], "description": c["description"]} for c in commands
        ]
        return True

    def _delete_my_commands(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        self._commands.pop(self._scope(token, p), None)
        return True

    def _set_allowed(self, token: str, p: dict[str, Any]) -> None:
        if isinstance(p.get("allowed_updates"), list):
            self._allowed[token] = [str(k) for k in p["allowed_updates"]]

    def _get_webhook_info(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        hook, pending = self._webhooks.get(token), len(self._pending(token))
        info = {
            "url": hook.url if hook else "",
            "has_custom_certificate": False,
            "pending_update_count": pending,
        }
        if hook and token in self._webhook_errors:
            date, message = self._webhook_errors[token]
            info |= {"last_error_date": date, "last_error_message": message}
        return info

    def _set_webhook(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        url, secret = str(p.get("url") or ""), str(p.get("secret_token") or "")
        if not url:  # Telegram: an empty url removes the webhook
            return self._delete_webhook(token, p, f)
        if not url.startswith(("http://", "https://")):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        if secret and not SECRET_TOKEN.fullmatch(secret):
            raise bad_request("secret token contains unallowed characters")
        self._set_allowed(token, p)
        if p.get("drop_pending_updates"):
            self._updates = [(t, u) for t, u in self._updates if t != token]
        self._webhooks[token] = Hook(url, secret)
        self._webhook_errors.pop(token, None)
        if self._sender is None:
            self._sender = threading.Thread(target=self._post_updates, daemon=True)
            self._sender.start()
        self._cond.notify_all()
        return True

    def _delete_webhook(self, token: str, p: dict[str, Any], f: dict[str, Upload]) -> Any:
        self._webhooks.pop(token, None)
        self._webhook_errors.pop(token, None)
        if p.get("drop_pending_updates"):
            self._updates = [(t, u) for t, u in self._updates if t != token]
        return True

    def _next_post(self) -> tuple[str, Hook, dict[str, Any]] | None:
        """The oldest update of a bot with a webhook (under the lock), or None."""
        for token, hook in self._webhooks.items():
            pending = self._pending(token)
            if pending:
                return token, hook, copy.deepcopy(pending[0])
        return None

    def _post_updates(self) -> None:
        """Post each update to its bot's webhook, one at a time, until the stand-in stops."""
        while True:
            with self._cond:
                post = self._next_post()
                while post is None and not self._closing:
                    self._cond.wait(1.0)
                    post = self._next_post()
                if self._closing:
                    return
            assert post is not None
            token, hook, update = post
            error = post_update(hook, update)  # outside the lock: the bot calls back meanwhile
            with self._cond:
                if not error:
                    self._updates = [
                        (t, u)
                        for t, u in self._updates
                        if t != token or u["update_id"] != update["update_id"]
                    ]
                    continue
                if self._webhooks.get(token) == hook:
                    self._webhook_errors[token] = (int(time.time()), error)
                self._cond.wait(RETRY_SECONDS)  # kept; tried again, as Telegram does

    # --- the client API (tests playing users) --------------------------------------------------

    def client(self, path: str, body: dict[str, Any]) -> Any:
        """The ``result`` of one client call (raises :class:`ApiError` for a bad body)."""
        with self._cond:
            route, token = path.strip("/"), str(body.get("token") or "")
            if route in ("sendMessage", "sendCommand"):
                return self._user_update(body, "message", self.chats.user_message(body))
            if route == "editMessage":
                return self._user_update(body, "edited_message", self.chats.user_edit(body))
            if route == "sendCallback":
                return self._user_update(body, "callback_query", self._callback(body))
            if route == "getUpdates":
                return self.chats.unread(token, body.get("chatId"))
            if route == "getUpdatesHistory":
                rows = self.chats.rows(token) + [
                    h for h in self._history if h["botToken"] == token
                ]
                return sorted(rows, key=lambda r: (r["time"], r["updateId"]))
            if route == "getBotCalls":
                since, method = int(body.get("since") or 0), body.get("method")
                start = bisect.bisect_right(self.calls, since, key=lambda c: int(c["seq"]))
                return [
                    c
                    for c in self.calls[start:]
                    if (not method or c["method"] == method) and (not token or c["token"] == token)
                ]
            if route == "reset":
                self.chats = Chats()
                self.calls, self._updates, self._history = [], [], []
                self._queries.clear()
                self._webhooks.clear()
                self._webhook_errors.clear()
                return True
            raise ApiError(404, f"Not Found: no client route {path}")

    def _callback(self, body: dict[str, Any]) -> dict[str, Any]:
        sender, given = body.get("from") or {}, dict(body.get("message") or {})
        given.setdefault("chat", {"id": sender.get("id"), "type": "private"})
        message = self.chats.callback_message(str(body.get("botToken")), given)
        query_id = str(next(self._query_ids))
        self._queries.add(query_id)
        return {
            "id": query_id,
            "from": sender,
            "message": message,
            "chat_instance": str(body.get("chat_instance") or message["chat"]["id"]),
            "data": str(body.get("data", "")),
        }

    def _user_update(self, body: dict[str, Any], kind: str, payload: dict[str, Any]) -> Any:
        token = str(body.get("botToken") or "")
        if not token:
            raise bad_request("botToken is required")
        update = {"update_id": next(self._update_ids), kind: payload}
        self._updates.append((token, update))
        row = {"time": _now_ms(), "botToken": token, "updateId": update["update_id"]}
        self._history.append(row | {"messageId": payload.get("message_id"), kind: payload})
        self._cond.notify_all()
        return copy.deepcopy(payload)


def main(argv: list[str]) -> int:
    """Serve on ``argv[1]`` (0 or nothing: a free port) until SIGTERM or SIGINT."""
    server = FakeTelegram(int(argv[1]) if len(argv) > 1 else 0)
    print(f"telegram stand-in listening on {server.url}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
