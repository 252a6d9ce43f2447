"""Proof of the user's own act: what confirming, rejecting or editing a proposal requires.

Confirmation is a capability of the user, not of the model
(docs/trust.md, "Where each promise is kept"). A :class:`UserAct` says exactly what one user
did to one proposal ("confirm", "replace", "reject", or "edit" to a given text), or decided
about one confirmed memory ("pin", "unpin", "scope" to a given scope, "revise" to a given
text, "keep", "restore"), of which kind (a memory or a reminder) and how ("button", "reply",
"command", "word", "operator"). Only a
:class:`UserActMint` makes valid ones: it seals each act with an HMAC under a secret drawn
fresh in every process. The composition root builds one mint, hands the mint to the bot layer
(Telegram, the terminal chat, the operator CLI) and only its :class:`ActCheck` to the
services (confirmation, curation, reminders), which refuse any act whose seal does not verify.
Code that holds those services (the agent and its tools) can therefore propose but never
answer or decide: it has no mint, an act it builds itself has no valid seal, and changing any
field of a real act (another proposal, "replace" instead of "confirm", other text, another
kind) breaks the seal.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

from memory.errors import NotTheUsersActError as NotTheUsersActError  # raised, and re-exported

Action = Literal[
    "confirm", "replace", "reject", "edit", "pin", "unpin", "scope", "revise", "keep", "restore"
]
ACTIONS: tuple[Action, ...] = (
    "confirm", "replace", "reject", "edit", "pin", "unpin", "scope", "revise", "keep", "restore"
)  # fmt: skip
# The acts that carry text: a proposal's or a memory's new text, a memory's new scope.
WITH_TEXT: tuple[Action, ...] = ("edit", "revise", "scope")
# What was proposed: a memory (memory/write/decisions.py) or a reminder (agent/reminders).
Kind = Literal["memory", "reminder"]
KINDS: tuple[Kind, ...] = ("memory", "reminder")


@dataclass(frozen=True, slots=True)
class UserAct:
    """One user's answer to one proposal (or decision about one memory), sealed by the mint."""

    user_key: str
    proposal_id: str  # the proposal answered, or the memory id a memory act is about
    action: Action
    via: str  # which user event: "button", "reply", "command", "word", "operator"
    text: str = ""  # the new text of an "edit" / "revise", the scope of a "scope"; else empty
    kind: Kind = "memory"  # a reminder's act never answers a memory proposal, nor back
    seal: str = ""


def _digest(key: bytes, act: UserAct) -> str:
    # Length-prefixed fields: no two different acts serialise to the same bytes.
    parts = (act.user_key, act.proposal_id, act.action, act.via, act.text, act.kind)
    payload = b"".join(
        len(b).to_bytes(4, "big") + b for b in (p.encode("utf-8", "surrogatepass") for p in parts)
    )
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


class ActCheck:
    """Verifies acts sealed by one mint; it cannot make them."""

    __slots__ = ("__key",)

    def __init__(self, key: bytes) -> None:
        self.__key = key

    def verify(self, act: object, action: tuple[Action, ...], kind: Kind = "memory") -> UserAct:
        """``act`` if it is a sealed :class:`UserAct` doing one of ``action`` to a ``kind``."""
        if not isinstance(act, UserAct):
            raise NotTheUsersActError(
                "only the user can answer a proposal (a button, a reply, /confirm)"
            )
        if act.action not in action:
            raise NotTheUsersActError(f"that act is a {act.action!r}, not {'/'.join(action)}")
        if act.kind != kind:
            raise NotTheUsersActError(f"that act answers a {act.kind}, not a {kind}")
        if not hmac.compare_digest(act.seal, _digest(self.__key, act)):
            raise NotTheUsersActError("that answer does not carry the user's own act")
        return act


class UserActMint:
    """Seals the acts the bot layer saw a user do; one per process, held by the bot layer."""

    __slots__ = ("__key", "check")

    def __init__(self) -> None:
        self.__key = secrets.token_bytes(32)
        self.check = ActCheck(self.__key)

    def act(
        self,
        user_key: str,
        proposal_id: str,
        action: Action,
        *,
        via: str,
        text: str = "",
        kind: Kind = "memory",
    ) -> UserAct:
        """The sealed act: ``user_key`` did ``action`` to ``proposal_id`` through ``via``."""
        if action not in ACTIONS:
            raise ValueError(f"unknown act {action!r}")
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        if action not in WITH_TEXT and text:
            raise ValueError(f"a {action!r} carries no text")
        unsealed = UserAct(user_key, proposal_id.strip(), action, via, text, kind)
        return UserAct(
            unsealed.user_key,
            unsealed.proposal_id,
            action,
            via,
            text,
            kind,
            seal=_digest(self.__key, unsealed),
        )
