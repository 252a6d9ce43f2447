"""The page's signing secret (a 0600 file in the data dir), signed cookies and CSRF tokens."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path

from memory.base.fsutil import atomic_write_text

log = logging.getLogger(__name__)

SECRET_FILE = "web_secret"


def load_secret(data_dir: Path) -> bytes:
    """The data dir's page secret, created on first use; readable by its owner only."""
    path = data_dir / SECRET_FILE
    try:
        raw = path.read_text(encoding="ascii").strip()
        secret = bytes.fromhex(raw)
    except FileNotFoundError:
        secret = b""
    except (UnicodeDecodeError, ValueError):
        log.warning("%s is not a hex secret: a new one replaces it (sessions end)", path)
        secret = b""
    if len(secret) < 32:
        secret = secrets.token_bytes(32)
        atomic_write_text(path, secret.hex() + "\n")  # a temp file made with mode 0600
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
    return secret


class Signer:
    """Signs cookie values and derives each session's CSRF token from its id."""

    __slots__ = ("__key",)

    def __init__(self, secret: bytes) -> None:
        self.__key = secret

    def _mac(self, purpose: str, value: str) -> str:
        msg = f"{purpose}\x00{value}".encode()
        return hmac.new(self.__key, msg, hashlib.sha256).hexdigest()

    def sign(self, value: str) -> str:
        """``value.signature`` for a cookie."""
        return f"{value}.{self._mac('cookie', value)}"

    def unsign(self, signed: str) -> str | None:
        """The value of a cookie this signer signed, else None."""
        value, _, sig = signed.rpartition(".")
        # compare_digest refuses non-ASCII str (TypeError, a 500): such a value is no signature.
        if (
            not value
            or not sig.isascii()
            or not hmac.compare_digest(sig, self._mac("cookie", value))
        ):
            return None
        return value

    def csrf(self, session_id: str) -> str:
        """The CSRF token of a session: only a page served to that session carries it."""
        return self._mac("csrf", session_id)

    def csrf_ok(self, session_id: str, token: str) -> bool:
        """Whether ``token`` is the session's CSRF token."""
        return (
            bool(token) and token.isascii() and hmac.compare_digest(token, self.csrf(session_id))
        )
