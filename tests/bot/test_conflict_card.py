"""A proposal close to a kept memory says what each answer does and how to give it: the
buttons on Telegram, the words to type in the terminal, in the reader's language (issue 30)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent.types import ProposalView
from bot.chat import TerminalChat
from bot.frontdesk.texts import proposal_text
from memory.write.decisions import parse_reply

CLOSE = ProposalView(
    "p-0001",
    "I drink oolong tea now",
    "偏好 Preferences",
    datetime(2026, 11, 28, 12, tzinfo=UTC),
    conflicts_shown="m-20261101-ab12: I drink green tea",
)
# (language, what the Telegram card says, the two words the terminal asks for)
SAID = [
    (
        "en",
        ("➕ Add keeps both", "🔁 Replace puts this one in place of the old"),
        ("add", "replace"),
    ),
    ("zh", ("➕ 新增：兩則都保留", "🔁 取代：用這則換掉舊的"), ("新增", "取代")),
]


@pytest.mark.parametrize(("lang", "buttons", "words"), SAID)
def test_the_card_says_what_add_and_replace_do_and_how(
    lang: str, buttons: tuple[str, str], words: tuple[str, str]
) -> None:
    card = proposal_text(CLOSE, lang)  # under Telegram's ➕ / 🔁 / ✏️ / 🗑 buttons
    assert all(b in card for b in buttons)
    typed = TerminalChat._proposal(CLOSE, lang)  # the terminal has no buttons
    assert "➕" not in typed and "/discard p-0001" in typed
    add, replace = words
    assert f"「{add}」" in typed or f"Type {add} " in typed
    assert f"「{replace}」" in typed or f"or {replace} " in typed
    # the words the card names are the ones an answer is read by
    read_add, read_replace = parse_reply(add), parse_reply(replace)
    assert read_add is not None and read_add.replace is False
    assert read_replace is not None and read_replace.replace is True


def test_a_proposal_without_a_close_memory_keeps_its_short_card() -> None:
    plain = ProposalView("p-0002", "I like hiking", "General", CLOSE.expires_at)
    assert "Replace" not in proposal_text(plain, "en")
    assert "Type yes or /confirm p-0002" in TerminalChat._proposal(plain, "en")
