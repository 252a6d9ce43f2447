"""What the front ends (Telegram and the terminal chat) need from the rest of PCAI.

This module imports no Telegram code: the terminal chat uses it too. :class:`Backend` is the
one seam; :mod:`bot.frontdesk.backend` implements it over the real services.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from agent.streaming import ReplySink
from agent.types import IncomingMessage, InjectedMemory, ProposalView, ReminderView, Reply

# The error lives in bot.errors; re-exported because every front end takes it from the ports.
from bot.errors import BackendError as BackendError
from bot.frontdesk.language import Languages

# "replace": confirm, and let the new memory supersede the one it conflicts with.
Decision = Literal["confirm", "replace", "reject"]
# The user event that answered a proposal (sealed into the user's act, kept in the log).
Via = Literal["button", "reply", "command", "word", "edit", "page"]
# An inline button: (label, callback data). The front end lays them out in rows.
Button = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of a proposal after Confirm / Discard / Edit."""

    status: Literal["confirmed", "rejected", "edited", "expired", "missing"]
    text: str = ""
    entry_id: str = ""
    proposal: ProposalView | None = None  # the new proposal after an edit
    replaced: tuple[str, ...] = ()  # the memories a Replace deprecated


@dataclass(frozen=True, slots=True)
class MemoryLine:
    """One memory as a list shows it."""

    id: str
    text: str
    section: str
    status: str = "active"
    core: bool = False  # pinned: in every prompt
    weight: int = 5
    scope: str = "global"


@dataclass(frozen=True, slots=True)
class Found:
    """One search result as a front end shows it."""

    score: float
    text: str
    source: str
    id: str = ""
    said_on: str = ""  # a daily-log line: the day it was said in conversation (not a memory)


@dataclass(frozen=True, slots=True)
class Document:
    """A file to hand the user (``/export``)."""

    filename: str
    content: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A front end's answer to one command or message, in plain data."""

    text: str
    proposals: tuple[ProposalView, ...] = ()
    document: Document | None = None
    notices: tuple[str, ...] = field(default=())
    error: bool = False
    buttons: tuple[tuple[Button, ...], ...] = ()  # rows of inline buttons under the text
    reminders: tuple[ReminderView, ...] = ()  # reminder proposals to show, each with ✅ / 🗑


class Confirmations(Protocol):
    """The pending store's front: propose, decide, edit, list, tie to messages.

    ``decide`` and ``edit`` are called only by the front ends, and only for a user event
    (``via`` names it): they turn it into the user's sealed act.
    """

    def propose(self, user_key: str, text: str, now: datetime) -> ProposalView:
        """Queue a memory for confirmation; raises BackendError when it is refused."""
        ...

    def decide(self, user_key: str, proposal_id: str, decision: Decision, *, via: Via) -> Outcome:
        """The user confirmed, replaced or rejected ``proposal_id`` through ``via``."""
        ...

    def edit(self, user_key: str, proposal_id: str, text: str, *, via: Via) -> Outcome:
        """The user gave ``text`` as the new text of a waiting proposal."""
        ...

    def pending(self, user_key: str) -> Sequence[ProposalView]:
        """Waiting proposals."""
        ...

    def attach(self, user_key: str, proposal_id: str, message_id: str) -> None:
        """Tie a transport message to a proposal."""
        ...

    def proposal_for_message(self, user_key: str, message_id: str) -> str | None:
        """The proposal a transport message shows."""
        ...


class LinkIssuer(Protocol):
    """Makes one-time login links to the memory page (the running page server)."""

    @property
    def running(self) -> bool:
        """Whether the page is being served."""
        ...

    def link(self, user_key: str, lang: str = "") -> str:
        """A new one-time link for ``user_key``."""
        ...


class Curations(Protocol):
    """The user's decisions about their confirmed memories (each turned into a sealed act).

    Called only by the front ends, for a command or a button press of that user. Each
    returns the memory as it is now, or raises BackendError with one sentence (unknown id,
    archived, a guard refusing the new text).
    """

    def pin(self, user_key: str, entry_id: str, core: bool, *, via: Via) -> MemoryLine:
        """Pin (in every prompt) or unpin one memory."""
        ...

    def set_scope(self, user_key: str, entry_id: str, scope: str, *, via: Via) -> MemoryLine:
        """Give one memory a scope: global, project:<name> or lang:<name>."""
        ...

    def revise(self, user_key: str, entry_id: str, text: str, *, via: Via) -> MemoryLine:
        """A new version of one memory, superseding it; returns the new one."""
        ...

    def keep(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Keep a fading memory."""
        ...

    def restore(self, user_key: str, entry_id: str, *, via: Via) -> MemoryLine:
        """Bring an archived memory back."""
        ...

    def archived(self, user_key: str) -> Sequence[MemoryLine]:
        """The user's archived memories, most recently archived first."""
        ...


class Backend(Confirmations, Curations, Protocol):
    """Every service a front end calls. Sync methods may block (SQLite, embeddings)."""

    languages: Languages  # each person's one language

    async def respond(self, msg: IncomingMessage, stream: ReplySink | None = None) -> Reply:
        """One user message in, the agent's reply out (``stream``: the reply as it is
        written, agent.streaming)."""
        ...

    def why(self, user_key: str) -> Sequence[InjectedMemory]:
        """The memories injected into the user's last prompt."""
        ...

    def classify(self, text: str) -> Decision | None:
        """Whether ``text`` is a confirm word (確認, 好, yes) or a reject word (取消, no)."""
        ...

    def memories(self, user_key: str) -> Sequence[MemoryLine]:
        """The user's memories in file order."""
        ...

    def search(self, user_key: str, query: str) -> Sequence[Found]:
        """Search the user's memories."""
        ...

    async def forget(self, user_key: str, memory_id: str, lang: str = "en") -> str:
        """Forget one memory; returns a one-line outcome (raises BackendError if unknown)."""
        ...

    async def undo(self, user_key: str, lang: str = "en", made: str = "") -> str:
        """Take back the last /forget, typed /remember or /remind, or the one ``made`` names
        (an Undo button); raises BackendError when there is none or it is too late."""
        ...

    def note_made(self, user_key: str, made: str) -> int:
        """A typed command did ``made`` at once (``memory:<id>``): /undo may take it back for
        the minutes returned (0: nothing here can undo it)."""
        ...

    def archaeology(self, user_key: str, topic: str, lang: str = "en") -> str:
        """How the user's memory about ``topic`` changed over time, as text in ``lang``."""
        ...

    async def new_session(self, user_key: str, lang: str = "en") -> str:
        """Summarise and close the current session; returns a one-line outcome in ``lang``."""
        ...

    def export_markdown(self, user_key: str) -> str:
        """The user's memories as Markdown."""
        ...

    def stats(self, user_key: str, lang: str = "en") -> Sequence[tuple[str, str]]:
        """Counts and last jobs as label/value pairs (the values worded in ``lang``)."""
        ...

    def chat_available(self) -> bool:
        """Whether the LLM answers (the terminal chat checks this at start)."""
        ...

    def model_down(self, lang: str) -> str:
        """The one sentence saying chat needs the configured model server, in ``lang``."""
        ...

    def web_link(self, user_key: str, lang: str) -> str:
        """A one-time login link to the memory page (raises BackendError when it is off)."""
        ...

    async def flush(self) -> None:
        """Write out sessions and pending state (shutdown)."""
        ...
