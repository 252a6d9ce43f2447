"""What each user's chat last showed: the one per-user "last shown" state of every front end."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

REVISE_WINDOW = 600.0  # an edit prompt answered ten minutes later is ordinary chat again


@dataclass(slots=True)
class Shown:
    """Per user key: what a bare word may answer, and which edit prompt the next line fills.

    Telegram and the terminal keep this the same way; only Telegram has edit prompts today.
    """

    # user key -> the proposal (or r:/b: reminder answers) the bot's last message showed, if it
    # did: a bare "ok" may answer only that one.
    last: dict[str, str] = field(default_factory=dict)
    # user key -> proposal id whose new text the user's next message is (after ✏️ Edit);
    # honoured only while that proposal still waits.
    editing: dict[str, str] = field(default_factory=dict)
    # user key -> (memory id, monotonic time of the ✏️ press under /memory): the user's next
    # message is that memory's new text, if it comes within REVISE_WINDOW seconds.
    revising: dict[str, tuple[str, float]] = field(default_factory=dict)

    def note(self, key: str, answers: str) -> None:
        """The bot's last message showed ``answers`` (a proposal id or reminder answers)."""
        self.last[key] = answers

    def get(self, key: str) -> str | None:
        """What the last message showed, left in place."""
        return self.last.get(key)

    def pop(self, key: str) -> str | None:
        """What the last message showed; the next message answers it, so it is forgotten."""
        return self.last.pop(key, None)

    def spoke(self, key: str) -> None:
        """The bot told the user something else: no proposal is its last message now."""
        self.last.pop(key, None)

    def edit(self, key: str, proposal_id: str) -> None:
        """✏️ under a proposal: the next message is its new text (one edit prompt at a time)."""
        self.editing[key] = proposal_id
        self.revising.pop(key, None)

    def revise(self, key: str, entry_id: str, now: float | None = None) -> None:
        """✏️ under /memory: the next message is that memory's new text (one prompt at a time)."""
        self.revising[key] = (entry_id, time.monotonic() if now is None else now)
        self.editing.pop(key, None)

    def take_revising(self, key: str, now: float | None = None) -> str | None:
        """The memory the next message revises, if its prompt is still fresh; forgotten now."""
        entry_id, pressed = self.revising.pop(key, ("", 0.0))
        now = time.monotonic() if now is None else now
        return entry_id if entry_id and now - pressed < REVISE_WINDOW else None

    def take_editing(self, key: str) -> str | None:
        """The proposal the next message edits, if there is one; forgotten now."""
        return self.editing.pop(key, None)
