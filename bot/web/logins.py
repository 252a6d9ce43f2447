"""One-time login links and page sessions, kept hashed in ``pcai.db``.

A link's token and a session's id are random secrets handed to the browser; the database
keeps only their SHA-256, so a copy of ``pcai.db`` opens nothing. A link is redeemed at most
once (one ``UPDATE`` that also checks the expiry decides it), and ``pcai web-link`` can issue
one from another process while the service runs: both write the same table (migration 4).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

from memory.base.users import check_user_key
from memory.state.statedb import StateDB

LINK_SECONDS = 10 * 60
SESSION_SECONDS = 7 * 24 * 3600
LANGS = ("zh", "en")

Refusal = Literal["unknown", "used", "expired"]


def digest(secret: str) -> str:
    """What the database keeps of a token or session id."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Redeemed:
    """The outcome of opening a login link: the user it logs in, or why it does not."""

    user_key: str = ""
    lang: str = ""
    refusal: Refusal | None = None


@dataclass(frozen=True, slots=True)
class PageSession:
    """A logged-in browser: whose page it shows, in which language."""

    session_id: str
    user_key: str
    lang: str


class LoginStore:
    """Issues and redeems login links; opens, finds and ends page sessions."""

    def __init__(self, state: StateDB) -> None:
        self.state = state  # its tables come from migration m004_memory_page

    # -- links ---------------------------------------------------------------------------
    def issue(self, user_key: str, now: float, lang: str = "") -> str:
        """A new one-time token for ``user_key``, valid for ten minutes from ``now``."""
        check_user_key(user_key)
        token = secrets.token_urlsafe(32)
        with self.state.transaction() as conn:
            # Spent and stale links are kept a day (to tell "used" from "unknown"), then go.
            conn.execute("DELETE FROM web_login_links WHERE expires_ts < ?", (now - 86400,))
            conn.execute(
                "INSERT INTO web_login_links (token_hash, user_key, lang, created_ts, expires_ts)"
                " VALUES (?, ?, ?, ?, ?)",
                (digest(token), user_key, _lang(lang), now, now + LINK_SECONDS),
            )
        return token

    def redeem(self, token: str, now: float) -> Redeemed:
        """Spend ``token``: the user it logs in, or ``refusal`` (unknown, used or expired)."""
        if not token or len(token) > 200:
            return Redeemed(refusal="unknown")
        key = digest(token)
        with self.state.transaction() as conn:
            spent = conn.execute(
                "UPDATE web_login_links SET used_ts = ? "
                "WHERE token_hash = ? AND used_ts IS NULL AND expires_ts > ?",
                (now, key, now),
            ).rowcount
            row = conn.execute(
                "SELECT user_key, lang, used_ts, expires_ts FROM web_login_links "
                "WHERE token_hash = ?",
                (key,),
            ).fetchone()
        if row is None:
            return Redeemed(refusal="unknown")
        if spent != 1:
            return Redeemed(refusal="used" if row[2] is not None else "expired")
        return Redeemed(str(row[0]), str(row[1]))

    def spend_init_data(self, signature: str, now: float, until: float) -> bool:
        """Use a Mini App initData (by its hash) to log in; False when it was used before.

        Kept until ``until`` (when the initData is too old to log in anyway); migration 7.
        """
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM web_initdata_spent WHERE expires_ts < ?", (now,))
            spent = conn.execute(
                "INSERT OR IGNORE INTO web_initdata_spent (hash, expires_ts) VALUES (?, ?)",
                (digest(signature), until),
            ).rowcount
        return bool(spent == 1)

    # -- sessions ------------------------------------------------------------------------
    def open_session(self, user_key: str, lang: str, now: float) -> PageSession:
        """A new session for ``user_key``; its id goes into the (signed) cookie only."""
        check_user_key(user_key)
        session_id = secrets.token_urlsafe(32)
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM web_sessions WHERE expires_ts < ?", (now,))
            conn.execute(
                "INSERT INTO web_sessions (id_hash, user_key, lang, created_ts, expires_ts) "
                "VALUES (?, ?, ?, ?, ?)",
                (digest(session_id), user_key, _lang(lang), now, now + SESSION_SECONDS),
            )
        return PageSession(session_id, user_key, _lang(lang))

    def session(self, session_id: str, now: float) -> PageSession | None:
        """The live session with this id, or None (unknown, ended or expired)."""
        with self.state.lock:
            row = self.state.conn.execute(
                "SELECT user_key, lang FROM web_sessions WHERE id_hash = ? AND expires_ts > ?",
                (digest(session_id), now),
            ).fetchone()
        return PageSession(session_id, str(row[0]), str(row[1])) if row else None

    def set_lang(self, session_id: str, lang: str) -> None:
        """Switch the session's language."""
        with self.state.transaction() as conn:
            conn.execute(
                "UPDATE web_sessions SET lang = ? WHERE id_hash = ?",
                (_lang(lang), digest(session_id)),
            )

    def end_session(self, session_id: str) -> None:
        """Log out: the cookie's id opens nothing from now on."""
        with self.state.transaction() as conn:
            conn.execute("DELETE FROM web_sessions WHERE id_hash = ?", (digest(session_id),))


def _lang(lang: str) -> str:
    return lang if lang in LANGS else ""
