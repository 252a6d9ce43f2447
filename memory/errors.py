"""Every exception the memory package raises on purpose, under one base class.

Errors carry a ``code`` and the fields a sentence needs; the sentence a person reads is said
at the edge, in their language, from the catalogue in :mod:`agent.texts`. ``str(error)`` is an
English line for the log and the operator.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


class MemoryStoreError(Exception):
    """Base class of every error the memory package raises on purpose.

    ``code`` names the catalogue sentence for the error and ``fields`` fill it in.
    """

    code = "memory_error"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.fields: dict[str, object] = fields


# -- what this machine lacks ---------------------------------------------------------------
class StorageUnavailableError(MemoryStoreError):
    """SQLite cannot load sqlite-vec on this Python."""

    code = "storage_unavailable"


class EmbedderUnavailableError(MemoryStoreError):
    """The embedder cannot produce vectors (model missing, Ollama unreachable, ...)."""

    code = "embedder_unavailable"


class DataDirBusyError(MemoryStoreError):
    """Another PCAI service already runs on this data dir."""

    code = "data_dir_busy"

    def __init__(self, data_dir: Path, pid: str = "") -> None:
        who = f" (pid {pid})" if pid else ""
        super().__init__(
            f"another PCAI service{who} is already running on {data_dir}; stop it first",
            who=who,
            path=data_dir,
        )
        self.data_dir = data_dir
        self.pid = pid


# -- users and their entries ---------------------------------------------------------------
class InvalidUserKeyError(MemoryStoreError):
    """A user key that could escape its folder or is not of a known form."""

    code = "invalid_user_key"

    def __init__(self, user_key: str) -> None:
        super().__init__(f"not a valid user key: {user_key!r}", user_key=user_key)
        self.user_key = user_key


class EntryNotFoundError(MemoryStoreError):
    """No memory entry with that id belongs to that user."""

    code = "entry_missing"

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"no memory {entry_id!r} of this user", entry_id=entry_id)
        self.entry_id = entry_id


class EntryNotLiveError(MemoryStoreError):
    """The entry is archived or replaced: pinning, scoping or editing it needs the live one.

    ``code``: ``entry_archived`` (``entry_id``), ``entry_replaced`` (``entry_id``, ``newer``:
    the version that replaced it) or ``entry_superseded`` (replaced, the newer one unknown).
    """

    def __init__(self, entry_id: str, *, archived: bool, newer: str = "") -> None:
        if archived:
            code, why = "entry_archived", f"is archived; /restore {entry_id} first"
        else:
            code, why = (
                ("entry_replaced", f"was replaced by {newer}")
                if newer
                else (
                    "entry_superseded",
                    "was replaced",
                )
            )
        super().__init__(f"memory {entry_id!r} {why}", entry_id=entry_id, newer=newer)
        self.code = code
        self.entry_id = entry_id
        self.newer = newer


class NotTheUsersActError(MemoryStoreError):
    """An answer to a proposal came without a valid proof of the user's own act."""

    code = "not_the_users_act"


# -- one user's file cannot be read --------------------------------------------------------
class UnreadableFileError(MemoryStoreError):
    """One of a user's files cannot be read; only what needs that file stops.

    Raised with the fields a notice needs (which file, where, why); the sentence a person
    reads is rendered at the edge. Nothing is ever rewritten on the way.
    """

    code = "file_unreadable"

    def __init__(self, path: Path, reason: str, position: int | None = None) -> None:
        where = f" (byte {position})" if position is not None else ""
        super().__init__(
            f"{path} {reason}{where}: fix or restore it; nothing was changed",
            reason=reason,
            position=position,
        )
        self.path = path
        self.reason = reason
        self.position = position  # byte offset of the first bad byte, when known

    @property
    def stamp(self) -> str:
        """The file's mtime and size now: a problem is "the same" until the file changes."""
        try:
            st = self.path.stat()
        except OSError:
            return "missing"
        return f"{st.st_mtime_ns}:{st.st_size}"


class CorruptFileError(UnreadableFileError, ValueError):
    """A user's Markdown file cannot be read as text (not UTF-8); nothing is changed."""

    code = "file_corrupt"

    def __init__(self, path: Path, position: int, line: int) -> None:
        super().__init__(path, "is not valid UTF-8", position)
        self.line = line  # 1-based line of the first bad byte
        self.fields["line"] = line


# -- proposals -----------------------------------------------------------------------------
class ProposalError(MemoryStoreError):
    """A proposal cannot be used as asked (unknown, expired, already answered)."""

    code = "proposal_error"

    def __init__(self, message: str, proposal_id: str, **fields: object) -> None:
        super().__init__(message, proposal_id=proposal_id, **fields)
        self.proposal_id = proposal_id


class ProposalNotFoundError(ProposalError):
    """No pending memory with that id belongs to that user."""

    code = "proposal_missing"

    def __init__(self, proposal_id: str) -> None:
        super().__init__(f"no pending memory {proposal_id!r} of this user", proposal_id)


class ProposalExpiredError(ProposalError):
    """The proposal waited longer than its expiry and was dropped.

    ``expired_at`` is given when this very call found it expired (its owner learns of the
    expiry from this error, so nobody tells them again).
    """

    def __init__(self, proposal_id: str, expired_at: datetime | None = None) -> None:
        super().__init__(f"proposal {proposal_id} has expired", proposal_id, expired_at=expired_at)
        self.code = "proposal_expired_at" if expired_at is not None else "proposal_expired"
        self.expired_at = expired_at


class ProposalResolvedError(ProposalError):
    """The proposal was already confirmed or rejected."""

    code = "proposal_resolved"

    def __init__(self, proposal_id: str, status: str) -> None:
        super().__init__(
            f"proposal {proposal_id} was already {status}", proposal_id, status=status
        )
        self.status = status


class ProposalRefusedError(MemoryStoreError):
    """The text will not be proposed; the subclass and its fields say why."""

    code = "refused"


class SensitiveDataError(ProposalRefusedError):
    """The text contains a password, key, card or id number (``kinds``: what was found)."""

    code = "refused_secret"

    def __init__(self, kinds: tuple[str, ...]) -> None:
        super().__init__(f"refused: the text holds {', '.join(kinds)}", kinds=kinds)
        self.kinds = kinds


class NoiseError(ProposalRefusedError):
    """The text is a greeting, a refusal, a meta-question or too short to be a memory."""

    code = "refused_noise"

    def __init__(self, reason: str) -> None:
        what = reason.replace("_", " ")
        super().__init__(f"refused: the text reads as {what}", reason=reason, what=what)
        self.reason = reason


class DuplicateMemoryError(ProposalRefusedError):
    """The same text is already an active memory."""

    code = "refused_duplicate"

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"refused: already remembered as {entry_id}", entry_id=entry_id)
        self.entry_id = entry_id


class ForgottenTextError(ProposalRefusedError):
    """The text holds ``[forgotten]``, the marker a forget leaves where a copy was: a memory
    made of it would be made of a forgotten one, and would read as the bot's own mark."""

    code = "refused_forgotten"

    def __init__(self) -> None:
        super().__init__("refused: the text holds the forget marker")


class InvalidProposalError(ProposalRefusedError):
    """The text is too long, or a field value is not one the schema allows.

    ``code``: ``refused_too_long`` (``length``, ``limit``), ``refused_field`` and
    ``refused_value`` (``field``), ``refused_class`` (``allowed``), ``refused_enforcement``,
    ``refused_scope``.
    """

    def __init__(self, code: str, **fields: object) -> None:
        shown = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        super().__init__(f"refused ({code}){': ' + shown if shown else ''}", **fields)
        self.code = code


# -- reminders -----------------------------------------------------------------------------
class ReminderNotFoundError(MemoryStoreError):
    """No reminder with that id belongs to that user."""

    code = "reminder_missing"

    def __init__(self, reminder_id: int) -> None:
        super().__init__(f"no reminder {reminder_id} of yours", reminder_id=reminder_id)
        self.reminder_id = reminder_id


# -- pcai.db ---------------------------------------------------------------------------------
class StateDamagedError(MemoryStoreError):
    """``pcai.db`` is not a readable SQLite database (garbage, truncated, malformed)."""

    code = "state_damaged"


class StateTooNewError(MemoryStoreError):
    """``pcai.db`` records migrations this version does not know: a newer PCAI wrote it."""

    code = "state_too_new"

    def __init__(self, path: Path, unknown: tuple[str, ...]) -> None:
        names = ", ".join(unknown)
        super().__init__(
            f"{path} was written by a newer version of PCAI (it has schema migration "
            f"{names}, which this version does not know): run that version or a newer one; "
            "the file was not changed",
            path=path,
            names=names,
        )
        self.path = path
        self.unknown = unknown


class StateSchemaError(MemoryStoreError):
    """A ``pcai.db`` made before migrations has a table without a column it must have."""

    code = "state_schema"

    def __init__(self, path: Path, table: str, missing: tuple[str, ...]) -> None:
        super().__init__(
            f"{path}: table {table} lacks column {', '.join(missing)}, so this is not a "
            "pcai.db this version can adopt; the file was not changed",
            path=path,
            table=table,
        )
        self.path = path
        self.table = table
        self.missing = missing
