"""The Telegram stand-in's chats: messages both ways, edits, files, and the Bot API on them."""

from __future__ import annotations

import copy
import itertools
import time
from dataclasses import dataclass
from typing import Any

from tests.fakes.telegram_wire import Upload, bad_request, find_entities

Key = tuple[str, int, int]  # (bot token, chat id, message id)
BOT_USERNAME = "TestNameBot"
BOT_USER: dict[str, Any] = {
    "id": 666,
    "is_bot": True,
    "first_name": "Test First name",
    "username": BOT_USERNAME,
    "can_join_groups": True,
    "can_read_all_group_messages": True,  # privacy mode off: the bot sees every group message
    "supports_inline_queries": False,
}


@dataclass(slots=True)
class Sent:
    """A message the bot sent: the Message as Telegram has it and the parameters it came from."""

    token: str
    message: dict[str, Any]
    params: dict[str, Any]
    time_ms: int
    read: bool = False

    @property
    def key(self) -> Key:
        return self.token, int(self.message["chat"]["id"]), int(self.message["message_id"])

    def row(self) -> dict[str, Any]:
        """The client API's row (telegram-test-api's shape), edits applied."""
        body = {**copy.deepcopy(self.params), "message_id": self.message["message_id"]}
        return {
            "messageId": self.message["message_id"],
            "updateId": self.message["message_id"],
            "time": self.time_ms,
            "botToken": self.token,
            "isRead": self.read,
            "message": body,
        }


_ANYWAY = "allow_sending_without_reply"


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _text(text: Any) -> str:
    if text is None or not str(text).strip():
        raise bad_request("message text is empty")
    if len(str(text)) > 4096:
        raise bad_request("message is too long")
    return str(text)


def _without(message: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k not in keys}


def _date(value: Any) -> int:
    """A date in seconds (a test may pass milliseconds, as telegram-test-api took them)."""
    date = _int(value) or int(time.time())
    return date // 1000 if date > 10**11 else date


class Chats:
    """Chats seen, messages by (token, chat, id), uploaded files; one message id sequence."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._chats: dict[int, dict[str, Any]] = {}
        self._sent: dict[Key, Sent] = {}
        self._users: dict[Key, dict[str, Any]] = {}
        self._files: dict[str, Upload] = {}

    def chat(self, chat_id: int) -> dict[str, Any]:
        """The chat object users showed for ``chat_id`` (a plain one if none was seen)."""
        if chat_id in self._chats:
            return dict(self._chats[chat_id])
        if chat_id < 0:
            return {"id": chat_id, "type": "group", "title": "Test group"}
        return {"id": chat_id, "type": "private", "first_name": "TestName"}

    def _find(self, token: str, chat_id: Any, message_id: Any) -> dict[str, Any] | None:
        key = (token, _int(chat_id) or 0, _int(message_id) or 0)
        found = self._users.get(key) or (self._sent[key].message if key in self._sent else None)
        return None if found is None else _without(copy.deepcopy(found), "reply_to_message")

    # --- the bot's messages ------------------------------------------------------------------

    def _new(self, token: str, p: dict[str, Any]) -> dict[str, Any]:
        """A Message from the bot to ``p["chat_id"]``, with the message it replies to."""
        chat_id = _int(p.get("chat_id"))
        if chat_id is None:
            raise bad_request("chat not found")
        message: dict[str, Any] = {
            "message_id": next(self._ids),
            "from": dict(BOT_USER),
            "chat": self.chat(chat_id),
            "date": int(time.time()),
        }
        reply = p.get("reply_parameters") or {}
        if not reply and p.get("reply_to_message_id") is not None:
            reply = {"message_id": p["reply_to_message_id"]}
        if isinstance(reply, dict) and reply.get("message_id") is not None:
            target = self._find(token, reply.get("chat_id", chat_id), reply["message_id"])
            if target is not None:
                message["reply_to_message"] = target
            elif not (
                reply.get("allow_sending_without_reply") or p.get("allow_sending_without_reply")
            ):
                raise bad_request("message to be replied not found")
        markup = p.get("reply_markup")
        if isinstance(markup, dict) and markup.get("inline_keyboard"):
            message["reply_markup"] = markup
        return message

    def _store(self, token: str, message: dict[str, Any], params: dict[str, Any]) -> Any:
        sent = Sent(token, message, params, _now_ms())
        self._sent[sent.key] = sent
        return copy.deepcopy(message)

    def send_message(self, token: str, p: dict[str, Any]) -> Any:
        """sendMessage: the Message Telegram answers with."""
        text = _text(p.get("text"))
        message = self._new(token, p)
        message["text"] = text
        if p.get("entities"):
            message["entities"] = p["entities"]
        return self._store(token, message, dict(p))

    def edit(self, token: str, p: dict[str, Any], *, text: bool) -> Any:
        """editMessageText (``text``) or editMessageReplyMarkup: the edited Message."""
        if p.get("inline_message_id"):
            return True
        sent = self.sent(token, p.get("chat_id"), p.get("message_id"))
        if sent is None:
            raise bad_request("message to edit not found")
        before = _without(sent.message, "edit_date")
        new = dict(before)
        if text:
            if "text" not in new:
                raise bad_request("there is no text in the message to edit")
            new = _without(new, "entities") | {"text": _text(p.get("text"))}
            if p.get("entities"):
                new["entities"] = p["entities"]
        markup = p.get("reply_markup")
        if isinstance(markup, dict) and markup.get("inline_keyboard"):
            new["reply_markup"] = markup
        else:  # Telegram drops the keyboard unless it is sent again
            new.pop("reply_markup", None)
        if new == before:
            raise bad_request(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        sent.message = {**new, "edit_date": int(time.time())}
        sent.params.update(_without(p, "chat_id", "message_id"))
        if "reply_markup" not in new:
            sent.params.pop("reply_markup", None)
        return copy.deepcopy(sent.message)

    def send_document(self, token: str, p: dict[str, Any], files: dict[str, Upload]) -> Any:
        """sendDocument: an upload (kept for getFile) or the file_id of an earlier one."""
        ref = p.get("document")
        attached = isinstance(ref, str) and ref.startswith("attach://")
        name = str(ref).removeprefix("attach://") if attached else "document"
        if name in files:
            if not files[name].data:
                raise bad_request("file must be non-empty")
            file_id = f"BQACAgQAAx{len(self._files) + 1:06d}"
            self._files[file_id] = files[name]
        elif isinstance(ref, str) and ref in self._files:
            file_id = ref
        else:
            raise bad_request("there is no document in the request")
        caption = str(p.get("caption") or "")
        if len(caption) > 1024:
            raise bad_request("message caption is too long")
        message = self._new(token, p)
        message["document"] = self.document(file_id)
        if caption:
            message["caption"] = caption
        return self._store(token, message, {**p, "document": message["document"]})

    def get_file(self, file_id: str) -> dict[str, Any]:
        """getFile: the File object, whose ``file_path`` the file server answers."""
        if file_id not in self._files:
            raise bad_request("invalid file_id")
        doc = self.document(file_id)
        return {k: doc[k] for k in ("file_id", "file_unique_id", "file_size")} | {
            "file_path": f"documents/{file_id}"
        }

    def callback_message(self, token: str, given: dict[str, Any]) -> dict[str, Any]:
        """The Message under a pressed button: the stored one, else what the test gave."""
        chat_id = (given.get("chat") or {}).get("id")
        sent = self.sent(token, chat_id, given.get("message_id"))
        return copy.deepcopy(sent.message) if sent else {"date": int(time.time()), **given}

    def sent(self, token: str, chat_id: Any, message_id: Any) -> Sent | None:
        """The bot's message ``message_id`` in ``chat_id``, if it exists."""
        return self._sent.get((token, _int(chat_id) or 0, _int(message_id) or 0))

    def delete(self, token: str, chat_id: Any, message_id: Any) -> bool:
        """Delete a bot's or a user's message; whether it existed."""
        key = (token, _int(chat_id) or 0, _int(message_id) or 0)
        return (self._sent.pop(key, None) or self._users.pop(key, None)) is not None

    def unread(self, token: str, chat_id: Any) -> list[dict[str, Any]]:
        """Client rows of the bot's unread messages in ``chat_id``; they become read."""
        rows = []
        for sent in self._sent.values():
            if sent.token == token and sent.key[1] == _int(chat_id) and not sent.read:
                sent.read = True
                rows.append(sent.row())
        return rows

    def rows(self, token: str) -> list[dict[str, Any]]:
        """Client rows of every message the bot sent."""
        return [s.row() for s in self._sent.values() if s.token == token]

    # --- files -------------------------------------------------------------------------------

    def file(self, file_id: str) -> Upload | None:
        """The upload behind ``file_id``."""
        return self._files.get(file_id)

    def document(self, file_id: str) -> dict[str, Any]:
        """The Document object of a stored file."""
        upload = self._files[file_id]
        return {
            "file_id": file_id,
            "file_unique_id": f"AgAD{file_id[-6:]}",
            "file_name": upload.file_name,
            "mime_type": upload.mime_type,
            "file_size": len(upload.data),
        }

    # --- users' messages ---------------------------------------------------------------------

    def user_message(self, body: dict[str, Any]) -> dict[str, Any]:
        """A user's Message from a client ``/sendMessage`` body (kept for replies and edits)."""
        token, sender = str(body.get("botToken") or ""), body.get("from")
        if not isinstance(sender, dict) or _int(sender.get("id")) is None:
            raise bad_request("from with an id is required")
        chat = body.get("chat") or {"id": sender["id"], "type": "private"}
        chat_id = _int(chat.get("id"))
        if chat_id is None:
            raise bad_request("chat with an id is required")
        self._chats[chat_id] = dict(chat)
        message = {k: v for k, v in body.items() if k != "botToken"}
        message.update(message_id=next(self._ids), chat=dict(chat), date=_date(body.get("date")))
        text = message.get("text")
        if isinstance(text, str) and "entities" not in message and find_entities(text):
            message["entities"] = find_entities(text)
        given = body.get("reply_to_message")
        if isinstance(given, dict):
            found = self._find(token, chat_id, given.get("message_id"))
            message["reply_to_message"] = found if found is not None else given
        self._users[(token, chat_id, message["message_id"])] = message
        return message

    def user_edit(self, body: dict[str, Any]) -> dict[str, Any]:
        """The edited Message from a client ``/editMessage`` body (the sender's own message)."""
        token, sender = str(body.get("botToken") or ""), body.get("from") or {}
        chat = body.get("chat") or {"id": sender.get("id")}
        key = (token, _int(chat.get("id")) or 0, _int(body.get("message_id")) or 0)
        old = self._users.get(key)
        if old is None:
            raise bad_request("message to edit not found")
        if sender and sender.get("id") != old["from"]["id"]:
            raise bad_request("message can't be edited: it was sent by someone else")
        text = str(body.get("text") or "")
        if not text.strip() or text == old.get("text"):
            raise bad_request("message is not modified")
        new = _without(old, "entities")
        new.update(text=text, edit_date=_date(body.get("edit_date")))
        if entities := body.get("entities") or find_entities(text):
            new["entities"] = entities
        self._users[key] = new
        return new
