"""The secrets each person said in the conversation so far, held in memory only, never stored.

A session keeps each message masked, so a later turn cannot find in it what the person
said; a reply that echoes it without its keyword ("Noted. correct horse battery staple")
must still be masked, and never streamed (:mod:`agent.streaming`). The values live in this
process only, for the conversations seen lately, and ``/new`` drops them with the session.
"""

from __future__ import annotations

from collections import OrderedDict

from memory.base.guards import secrets_in

MAX_SESSIONS = 256  # conversations remembered: the ones seen lately
MAX_VALUES = 64  # secrets per conversation: the ones said lately


class SaidSecrets:
    """Per conversation (session id), the secret values its people's messages held."""

    def __init__(self, sessions: int = MAX_SESSIONS, values: int = MAX_VALUES) -> None:
        self.sessions = sessions
        self.values = values
        self._said: OrderedDict[str, tuple[str, ...]] = OrderedDict()

    def add(self, session_id: str, text: str) -> frozenset[str]:
        """Add the secrets ``text`` holds; every secret said in ``session_id`` so far."""
        found = secrets_in(text)
        said = self._said.pop(session_id, ())
        said = (*(v for v in said if v not in found), *sorted(found))[-self.values :]
        self._said[session_id] = said
        while len(self._said) > self.sessions:
            self._said.popitem(last=False)
        return frozenset(said)

    def of(self, session_id: str) -> frozenset[str]:
        """Every secret said in ``session_id`` so far (none once forgotten or unseen)."""
        return frozenset(self._said.get(session_id, ()))

    def forget(self, session_id: str) -> None:
        """The conversation starts afresh (``/new``): what was said in it is dropped."""
        self._said.pop(session_id, None)
