"""Offline Telegram for handler tests: a recording Bot API, Update builders, a stand-in backend.

``RecordingRequest`` answers the Bot API methods the bot calls with the real JSON shapes, so
the real ``Application`` and ``Bot`` run unchanged. ``StandInBackend`` implements the bot's
``Backend`` port over the real ``MemoryService`` with an in-memory pending store and a
scripted agent: it exercises the Telegram layer, not the agent (the e2e tests run the real
agent).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from telegram import Update
from telegram.request import BaseRequest, RequestData

from agent.types import IncomingMessage, InjectedMemory, ProposalView, Reply
from bot.app import Services
from bot.telegram.adapters import CurationAdapter
from bot.telegram.ports import BackendError, Decision, Found, MemoryLine, Outcome, Via
from bot.telegram.reminder_desk import ReminderDesk

BOT = {"id": 666, "is_bot": True, "first_name": "PCAI", "username": "TestNameBot"}


class RecordingRequest(BaseRequest):
    """A Bot API that records every call and answers like Telegram does."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.next_id = 1000
        self.reject_html = False
        self.refuse_documents = False

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
        if name == "sendMessage" and self.reject_html and params.get("parse_mode") == "HTML":
            return 400, _err("Bad Request: can't parse entities: unclosed tag")
        if name == "sendDocument" and self.refuse_documents:
            return 400, _err("Bad Request: method sendDocument is not supported")
        return 200, json.dumps({"ok": True, "result": self._result(name, params)}).encode()

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


def _now() -> datetime:
    return datetime.now().astimezone()


def bot_message(message_id: int, chat_id: int, text: str = "...") -> dict[str, Any]:
    """A bot message as it appears inside ``reply_to_message``."""
    return {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": {"id": chat_id, "type": "private"},
        "from": BOT,
        "text": text,
    }


@dataclass
class StandInBackend:
    """The bot's Backend port over the real MemoryService, with a scripted agent."""

    services: Services
    ttl: timedelta = timedelta(minutes=30)
    agent: Callable[[IncomingMessage], Reply] | None = None
    delay: float = 0.0
    proposals: dict[str, tuple[str, ProposalView]] = field(default_factory=dict)
    shown: dict[tuple[str, str], str] = field(default_factory=dict)
    seen: list[IncomingMessage] = field(default_factory=list)
    acts: list[tuple[str, Decision, Via]] = field(default_factory=list)
    last_injected: dict[str, tuple[InjectedMemory, ...]] = field(default_factory=dict)
    flushed: int = 0
    sessions_closed: list[str] = field(default_factory=list)
    reminders: ReminderDesk | None = None  # the real reminder desk, when a test wires it

    async def respond(self, msg: IncomingMessage) -> Reply:
        """Record the message and answer it with the script (default: echo)."""
        self.seen.append(msg)
        if self.delay:
            await asyncio.sleep(self.delay)
        reply = self.agent(msg) if self.agent else Reply(f"echo: {msg.text}")
        self.last_injected[msg.user_key] = reply.injected
        return reply

    def why(self, user_key: str) -> Sequence[InjectedMemory]:
        """What the last reply used."""
        return self.last_injected.get(user_key, ())

    def propose(self, user_key: str, text: str, now: datetime) -> ProposalView:
        """Keep a proposal in memory."""
        pid = f"p{len(self.proposals) + 1}"
        view = ProposalView(pid, text, "General", now + self.ttl)
        self.proposals[pid] = (user_key, view)
        return view

    def _take(self, user_key: str, pid: str) -> ProposalView | None:
        owner, view = self.proposals.get(pid, ("", None))
        return view if owner == user_key else None

    def decide(self, user_key: str, proposal_id: str, decision: Decision, *, via: Via) -> Outcome:
        """Confirm (write MEMORY.md for real) or reject; records which user event it was."""
        self.acts.append((proposal_id, decision, via))
        view = self._take(user_key, proposal_id)
        if view is None:
            return Outcome("missing")
        del self.proposals[proposal_id]
        if view.expires_at <= datetime.now().astimezone():
            return Outcome("expired", view.text)
        if decision == "reject":
            return Outcome("rejected", view.text)
        entry = self.services.memory.remember(user_key, view.text)
        return Outcome("confirmed", view.text, entry.id)

    def edit(self, user_key: str, proposal_id: str, text: str, *, via: Via) -> Outcome:
        """Replace the text (same id, fresh expiry)."""
        view = self._take(user_key, proposal_id)
        if view is None:
            return Outcome("missing")
        new = replace(view, text=text, expires_at=datetime.now().astimezone() + self.ttl)
        self.proposals[proposal_id] = (user_key, new)
        return Outcome("edited", text, proposal=new)

    def pending(self, user_key: str) -> Sequence[ProposalView]:
        """This user's waiting proposals (not yet expired)."""
        now = datetime.now().astimezone()
        return [
            v for owner, v in self.proposals.values() if owner == user_key and v.expires_at > now
        ]

    def attach(self, user_key: str, proposal_id: str, message_id: str) -> None:
        """Tie a message to a proposal."""
        self.shown[(user_key, message_id)] = proposal_id

    def proposal_for_message(self, user_key: str, message_id: str) -> str | None:
        """The proposal a message shows."""
        return self.shown.get((user_key, message_id))

    def classify(self, text: str) -> Decision | None:
        """A few confirm/reject words."""
        word = text.strip().lower()
        if word in ("確認", "好", "yes", "ok"):
            return "confirm"
        if word in ("取消", "no"):
            return "reject"
        return None

    def memories(self, user_key: str) -> Sequence[MemoryLine]:
        """Real entries."""
        return [
            MemoryLine(e.id, e.text, e.section) for e in self.services.memory.entries(user_key)
        ]

    def search(self, user_key: str, query: str) -> Sequence[Found]:
        """Real search."""
        return [
            Found(h.score, h.chunk.text, h.chunk.path, h.chunk.unit_id)
            for h in self.services.memory.search(user_key, query)
        ]

    async def forget(self, user_key: str, memory_id: str) -> str:
        """Forget for real (MEMORY.md, index, logs), one sentence for an unknown id."""
        said = await self.services.forgetter.forget(user_key, memory_id, now=_now())
        if said.error:
            raise BackendError(said.text)
        return said.text

    async def undo(self, user_key: str) -> str:
        """Undo for real."""
        said = await self.services.forgetter.undo(user_key, now=_now())
        if said.error:
            raise BackendError(said.text)
        return said.text

    def archaeology(self, user_key: str, topic: str) -> str:
        """The entries mentioning the topic."""
        rows = [e for e in self.services.memory.entries(user_key) if topic in e.text]
        return "\n".join(f"{e.created_at} {e.text}" for e in rows) or "no history"

    async def new_session(self, user_key: str) -> str:
        """Record the call."""
        self.sessions_closed.append(user_key)
        return "New session started."

    def export_markdown(self, user_key: str) -> str:
        """Real export."""
        return self.services.memory.export_markdown(user_key)

    def _curation(self) -> CurationAdapter:
        return CurationAdapter(self.services.confirm, self.services.user_acts)

    def pin(self, user_key: str, entry_id: str, core: bool, *, via: Via) -> MemoryLine:
        """Real pin, as the user's act."""
        return self._curation().pin(user_key, entry_id, core, via=via)

    def set_scope(self, user_key: str, entry_id: str, scope: str, *, via: Via) -> MemoryLine:
        """Real scope change."""
        return self._curation().set_scope(user_key, entry_id, scope, via=via)

    def revise(self, user_key: str, entry_id: str, text: str, *, via: Via) -> MemoryLine:
        """Real edit (a superseding version)."""
        return self._curation().revise(user_key, entry_id, text, via=via)

    def keep(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Real keep."""
        return self._curation().keep(user_key, entry_id, via=via)

    def restore(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Real restore."""
        return self._curation().restore(user_key, entry_id, via=via)

    def archived(self, user_key: str) -> Sequence[MemoryLine]:
        """Real archived list."""
        return self._curation().archived(user_key)

    def stats(self, user_key: str) -> Sequence[tuple[str, str]]:
        """Counts."""
        return [("memories", str(len(self.services.memory.entries(user_key))))]

    def chat_available(self) -> bool:
        """Always."""
        return True

    async def flush(self) -> None:
        """Count flushes."""
        self.flushed += 1
