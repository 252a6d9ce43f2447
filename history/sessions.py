"""JSON sessions (docs/conversations.md, "Sessions"): one file a user under ``history/``.

A session file ``telegram_<id>.json`` / ``cli_<name>.json`` reads::

    {"id": "telegram_42",
     "messages": [{"role": "user", "content": "...", "time": "2026-02-08T12:00:00+08:00",
                   "summary": "Goal: ...; Decision: ...; Todo: ...; Facts: ..."}],
     "last_update": "2026-02-08T12:00:05+08:00",
     "idle_summarized_through": "", "compactions": 0, "window_from": 0}

Writes are atomic and each session has an asyncio lock and a lock file, so two messages of one
user that arrive together (in this process or another) are handled one after the other and
neither turn is lost. A file that cannot be parsed is moved aside as ``<name>.corrupt-<time>``
(kept for the user) and replaced by a fresh session; the caller gets one sentence to show, once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from history.errors import SessionError
from memory.base.fsutil import atomic_write_text
from memory.base.guards import mask, secrets_in
from memory.base.locks import FileLock, file_lock

log = logging.getLogger(__name__)

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_GROUP_SESSION = re.compile(r"^[a-z]+_group_-?\d+$")

LOCKS_KEPT = 1024  # sessions whose asyncio lock is kept while idle
ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLE_SYSTEM = "system"
ROLE_TOOL = "tool"
KIND_COMPACTION = "compaction"  # the one message that stands for compacted history


def group_session_id(transport: str, chat_id: int | str) -> str:
    """The session of one group chat (``telegram_group_-100123``): nobody's private session."""
    return check_session_id(f"{transport}_group_{chat_id}")


def is_group_session(session_id: str) -> bool:
    """Whether ``session_id`` names a group chat's session (no user's files belong to it)."""
    return bool(_GROUP_SESSION.match(session_id))


def check_session_id(session_id: str) -> str:
    """Return ``session_id`` if it is safe as a file name, else raise :class:`SessionError`."""
    if not _SESSION_ID.match(session_id) or ".." in session_id:
        raise SessionError(f"not a valid session id: {session_id!r}")
    return session_id


def parse_time(raw: str) -> datetime:
    """Parse an ISO time; naive values are taken as UTC."""
    when = datetime.fromisoformat(raw)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def utc_now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation."""

    role: str  # user | assistant | system | tool
    content: str
    time: datetime
    summary: str = ""  # the structured summary of the short-term window, once made
    id: str = ""  # the transport's message id (daily-log ref)
    kind: str = ""  # "" or KIND_COMPACTION

    def to_json(self, known: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The message as JSON data (empty optional fields left out), secrets masked.

        ``known``: secrets found elsewhere in the conversation, masked here even without
        their context (a reply that repeats the password the user typed).
        """
        data: dict[str, Any] = {
            "role": self.role,
            "content": mask(self.content, known),
            "time": self.time.isoformat(),
        }
        if self.summary:
            data["summary"] = mask(self.summary, known)
        for name in ("id", "kind"):
            value = getattr(self, name)
            if value:
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: Any) -> Message:
        """Read one message; raises on a malformed one."""
        if not isinstance(data, dict):
            raise SessionError("a message must be an object")
        role, content = data.get("role"), data.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise SessionError("a message needs a role and a content")
        return cls(
            role=role,
            content=content,
            time=parse_time(str(data.get("time") or "1970-01-01T00:00:00+00:00")),
            summary=str(data.get("summary") or ""),
            id=str(data.get("id") or ""),
            kind=str(data.get("kind") or ""),
        )


@dataclass(slots=True)
class Session:
    """One user's conversation: what is sent back to the model as short-term context."""

    id: str
    messages: list[Message] = field(default_factory=list)
    last_update: datetime = field(default_factory=utc_now)
    idle_summarized_through: datetime | None = None  # end of the last idle-summarised stretch
    compactions: int = 0
    # How many messages (compaction notes aside) the prompt's window was last rebuilt at
    # (history.context.stepped_window): between rebuilds the prompt only appends.
    window_from: int = 0
    # Not saved: the name the stored file was kept as when it could not be read ("" if it was
    # fine); the edge decides what to tell the user.
    kept_as: str = ""

    def append(
        self,
        role: str,
        content: str,
        when: datetime | None = None,
        *,
        msg_id: str = "",
        kind: str = "",
    ) -> Message:
        """Add a message at the end and return it."""
        message = Message(role, content, when or utc_now(), id=msg_id, kind=kind)
        self.messages.append(message)
        self.last_update = max(self.last_update, message.time)
        return message

    @property
    def user_turns(self) -> int:
        """How many user messages the session holds (compaction's turn count)."""
        return sum(1 for m in self.messages if m.role == ROLE_USER)

    @property
    def last_message_time(self) -> datetime | None:
        """When the newest user or assistant message was written."""
        times = [m.time for m in self.messages if m.kind != KIND_COMPACTION]
        return max(times) if times else None

    def to_json(self) -> dict[str, Any]:
        """The session as JSON data, secrets masked.

        Masking here, where a session becomes a file, covers every path that puts text in a
        session (a reply, a compaction note, a file written before masking existed).
        """
        known = secrets_in(*(m.content for m in self.messages))
        return {
            "id": self.id,
            "messages": [m.to_json(known) for m in self.messages],
            "last_update": self.last_update.isoformat(),
            "idle_summarized_through": (
                self.idle_summarized_through.isoformat() if self.idle_summarized_through else ""
            ),
            "compactions": self.compactions,
            "window_from": self.window_from,
        }

    @classmethod
    def from_json(cls, data: Any) -> Session:
        """Read a session; raises on anything malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise SessionError("a session must be an object with an id")
        raw_messages = data.get("messages", [])
        if not isinstance(raw_messages, list):
            raise SessionError("messages must be a list")
        messages = [Message.from_json(m) for m in raw_messages]
        last = data.get("last_update")
        idle = data.get("idle_summarized_through")
        return cls(
            id=data["id"],
            messages=messages,
            last_update=parse_time(last) if isinstance(last, str) and last else utc_now(),
            idle_summarized_through=parse_time(idle) if isinstance(idle, str) and idle else None,
            compactions=int(data.get("compactions") or 0),
            window_from=_count(data.get("window_from")),
        )


def _count(raw: Any) -> int:
    """A stored count, 0 for anything that is not a non-negative whole number."""
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 0


class SessionStore:
    """Loads and saves sessions as ``<sessions_dir>/<id>.json``, one lock per session."""

    def __init__(self, sessions_dir: Path) -> None:
        self.dir = sessions_dir
        # Past LOCKS_KEPT, idle locks go (oldest first): a session's lock is made again when
        # next wanted. Safe because every caller takes the lock it gets with no await between
        # (``async with self.lock(...)``): no other coroutine can hold a dropped one unlocked.
        self._locks: OrderedDict[str, asyncio.Lock] = OrderedDict()

    def path(self, session_id: str) -> Path:
        """The file of one session."""
        return self.dir / f"{check_session_id(session_id)}.json"

    def exists(self, session_id: str) -> bool:
        """Whether the session has a file."""
        return self.path(session_id).exists()

    def load(self, session_id: str) -> Session:
        """Load a session, a fresh one if it has no file or its file is unreadable."""
        path = self.path(session_id)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Session(session_id)
        except (OSError, UnicodeDecodeError) as exc:
            return self._quarantine(session_id, path, exc)
        try:
            session = Session.from_json(json.loads(raw))
        except (ValueError, TypeError, KeyError) as exc:
            return self._quarantine(session_id, path, exc)
        if session.id != session_id:
            session.id = session_id  # a renamed file belongs to the name it now has
        return session

    def save(self, session: Session) -> None:
        """Write the session atomically."""
        text = json.dumps(session.to_json(), ensure_ascii=False, indent=1)
        atomic_write_text(self.path(session.id), text + "\n")

    def session_ids(self) -> list[str]:
        """Every stored session id, sorted."""
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.json") if _SESSION_ID.match(p.stem))

    def load_latest(self, prefix: str = "") -> Session | None:
        """The most recently updated session (``LoadLatestSession``), optionally by id prefix."""
        candidates = (
            [
                p
                for p in self.dir.glob(f"{prefix}*.json")
                if _SESSION_ID.match(p.stem) and p.is_file()
            ]
            if self.dir.is_dir()
            else []
        )
        if not candidates:
            return None
        newest = max(candidates, key=lambda p: (p.stat().st_mtime_ns, p.name))
        return self.load(newest.stem)

    def lock(self, session_id: str) -> asyncio.Lock:
        """The lock that serialises work on one session."""
        check_session_id(session_id)
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
            if len(self._locks) > LOCKS_KEPT:
                self._drop_idle_locks(keep=session_id)
        self._locks.move_to_end(session_id)
        return lock

    def _drop_idle_locks(self, keep: str) -> None:
        """Drop the oldest locks nobody holds or waits for, down to :data:`LOCKS_KEPT`
        (never ``keep``'s, just handed out)."""
        for sid, lock in list(self._locks.items()):
            if len(self._locks) <= LOCKS_KEPT:
                return
            if sid == keep:
                continue
            # Just released, a lock is unlocked while the waiter it woke has yet to run: that
            # waiter is still in its queue, so it counts as wanted (asyncio has no public way
            # to ask).
            if not lock.locked() and not getattr(lock, "_waiters", None):
                del self._locks[sid]

    @asynccontextmanager
    async def locked(self, session_id: str) -> AsyncIterator[Session]:
        """Hold the session's lock, yield the loaded session, and save it on the way out.

        The session is saved even when the body raises, so a user message appended before a
        failure (say, the LLM being down) is kept. An unchanged session is not rewritten, so
        background jobs do not make an idle session look recently used. The session's lock
        file is held too, so another process (the terminal chat beside the service, a job)
        never saves over this turn.
        """
        async with self.lock(session_id), self.file_lock(session_id).hold():
            session = await asyncio.to_thread(self.load, session_id)
            before = session.to_json()
            try:
                yield session
            finally:
                if session.to_json() != before:
                    await asyncio.to_thread(self.save, session)

    def file_lock(self, session_id: str) -> FileLock:
        """The session's OS lock (``history/<id>.lock``), for writers in other processes."""
        return file_lock(self.dir / f"{check_session_id(session_id)}.lock")

    def _quarantine(self, session_id: str, path: Path, exc: BaseException) -> Session:
        stamp = utc_now().strftime("%Y%m%dT%H%M%S%fZ")
        aside = path.with_name(f"{path.name}.corrupt-{stamp}")
        try:
            path.replace(aside)
        except OSError:
            log.exception("cannot move the unreadable session %s aside", path)
            aside = path
        log.warning("session %s was unreadable (%s); kept as %s", session_id, exc, aside.name)
        return Session(session_id, kept_as=aside.name)
