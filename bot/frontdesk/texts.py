"""The bot's command list and the small text helpers around what it says.

The sentences themselves are in the catalogue :mod:`agent.texts` (``say`` is re-exported
here for the bot's modules).
"""

from __future__ import annotations

from datetime import datetime

from agent.selection import fallback_groups
from agent.texts import CATALOGUES, LANGUAGES, conflict_note, say
from agent.types import ProposalView
from bot.frontdesk.ports import Button, MemoryLine
from memory.base.sections import section_halves

TELEGRAM_LIMIT = 4096
CORE_WEIGHT = 9  # L0: a weight of 9 or more is core

# The commands registered with setMyCommands and shown by /help; each one's line is the
# catalogue's ``command_<name>``.
COMMAND_NAMES: tuple[str, ...] = (
    "start",
    "help",
    "memory",
    "search",
    "remember",
    "forget",
    "undo",
    "pin",
    "unpin",
    "edit",
    "scope",
    "archived",
    "restore",
    "keep",
    "pending",
    "confirm",
    "discard",
    "why",
    "history",
    "new",
    "export",
    "stats",
    "remind",
    "reminders",
    "tz",
    "briefing",
    "web",
    "lang",
)
# (command, zh, en), read from the catalogue: the menus of both languages and /help.
COMMANDS: tuple[tuple[str, str, str], ...] = tuple(
    (name, say(f"command_{name}", "zh"), say(f"command_{name}", "en")) for name in COMMAND_NAMES
)

BUTTONS = {
    lang: (say("button_confirm", lang), say("button_edit", lang), say("button_discard", lang))
    for lang in LANGUAGES
}
# A proposal that conflicts with a memory: add beside it, or replace it.
CONFLICT_BUTTONS = {
    lang: (
        say("button_add", lang),
        say("button_replace", lang),
        say("button_edit", lang),
        say("button_discard", lang),
    )
    for lang in LANGUAGES
}
MEMORY_BUTTONS = {"pin": "📌", "unpin": "📍", "edit": "✏️", "forget": "🗑"}


# A section named in both languages ("偏好 Preferences") shows the reader's half.
SECTION_ZH = {"General": "一般"}


def section_label(section: str, lang: str) -> str:
    """How a section's name reads in ``lang``: ``偏好`` / ``Preferences``; others as named."""
    halves = section_halves(section)
    if halves:
        return halves[0] if lang == "zh" else halves[1]
    return SECTION_ZH.get(section, section) if lang == "zh" else section


def overview_text(text: str, lang: str) -> str:
    """The memory overview a reply was given (``## section`` headings, ``- `` bullets) as the
    chat shows it: each section under its name in ``lang``, its memories below."""
    lines: list[str] = []
    for section, items in fallback_groups(text):
        if section:
            lines.append(f"{section_label(section, lang)}:")
        lines += ["- " + item.replace("\n", "\n  ") for item in items]
    return "\n".join(lines)


def detect_language(language_code: str | None, text: str = "") -> str:
    """ "zh" or "en" where the person is not at hand (nothing stored): what the text is
    written in, else the client's language, else English (bot/frontdesk/language.py)."""
    from bot.frontdesk.language import client_language, written_language

    return written_language(text) or client_language(language_code) or "en"


def help_text(lang: str, commands: tuple[str, ...] = COMMAND_NAMES) -> str:
    """The command list in the reader's language."""
    lines = [say("help_head", lang)]
    for name in commands:
        lines.append(f"/{name} — {say(f'command_{name}', lang)}")
    lines.append("")
    lines.append(say("help_footer", lang))
    return "\n".join(lines)


def proposal_text(p: ProposalView, lang: str, limit: int = 3000, *, typed: bool = False) -> str:
    """How a pending memory is shown: the text, its section, and when it expires; one close
    to a kept memory says what each answer does and how to give it (``typed``: the terminal's
    words, else the buttons)."""
    body = p.text if len(p.text) <= limit else p.text[: limit - 1] + "…"
    when = p.expires_at.astimezone().strftime("%H:%M")
    lines = [say("propose_head", lang), "", body, ""]
    if p.conflicts_shown:
        lines.append(conflict_note(p.conflicts_shown, lang))
        how = "conflict_typed" if typed else "conflict_buttons"
        lines.append(say(how, lang, id=p.proposal_id))
    if p.weight:
        core = say("proposal_core", lang) if p.weight >= CORE_WEIGHT else ""
        lines.append(say("proposal_weight", lang, weight=p.weight) + core)
    if p.scope and p.scope != "global":
        lines.append(say("proposal_scope", lang, scope=p.scope))
    section = section_label(p.section, lang)
    lines.append(f"[{section}] · {say('expires', lang, time=when)} · id {p.proposal_id}")
    return "\n".join(lines)


def memory_line(m: MemoryLine, lang: str = "en") -> str:
    """One memory in a list: its id, marks (📌 pinned, ⭐ weight, 🏷 scope), section, text."""
    marks = "📌 " if m.core else ""
    marks += f"⭐{m.weight} " if m.weight != 5 else ""
    marks += f"🏷{m.scope} " if m.scope != "global" else ""
    return f"{m.id}  {marks}[{section_label(m.section, lang)}] {m.text}"


def memory_buttons(n: int, m: MemoryLine) -> tuple[Button, ...]:
    """📌 (or 📍 when pinned) / ✏️ / 🗑 for memory number ``n`` (data ``mm:<p|u|e|f>:<id>``)."""
    pin = ("u", MEMORY_BUTTONS["unpin"]) if m.core else ("p", MEMORY_BUTTONS["pin"])
    codes = (pin, ("e", MEMORY_BUTTONS["edit"]), ("f", MEMORY_BUTTONS["forget"]))
    return tuple((f"{label} {n}", f"mm:{code}:{m.id}") for code, label in codes)


def is_expired(p: ProposalView, now: datetime) -> bool:
    """Whether a proposal's time is up."""
    return p.expires_at <= now


def split_text(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` characters.

    Cuts at the last paragraph break (blank line) that fits, else the last line break, else
    the last space, else hard at ``limit``; no piece is empty and nothing is lost but the
    whitespace at a cut.
    """
    text = text.strip()
    if not text:
        return []
    pieces: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        cut = -1
        for sep in ("\n\n", "\n", " "):
            cut = window.rfind(sep)
            if cut > limit // 4:
                break
            cut = -1
        if cut <= 0:
            cut = limit
        head, text = text[:cut].rstrip(), text[cut:].strip()
        if head:
            pieces.append(head)
    if text:
        pieces.append(text)
    return pieces


def named(kind: str, value: str, lang: str) -> str:
    """A status or layer as the reader's language says it (L0, or a status a person wrote by
    hand: as it is)."""
    key = f"{kind}_{value}"
    return say(key, lang) if key in CATALOGUES["en"] else value


# /stats rows (the backend names them in English) and their catalogue keys.
STATS_KEYS: dict[str, str] = {
    "memories": "stats_row_memories",
    "pending": "stats_row_pending",
    "pending reminders": "stats_row_pending_reminders",
    "daily logs": "stats_row_daily_logs",
    "indexed chunks": "stats_row_indexed_chunks",
    "older versions": "stats_row_older_versions",
    "idle_summaries": "stats_row_idle_summaries",
    "index": "stats_row_index",
    "pending_expiry": "stats_row_pending_expiry",
    "forget_undo": "stats_row_forget_undo",
    "lifecycle": "stats_row_lifecycle",
    "fading": "stats_row_fading",
}
# Each row's label by language, read from the catalogue (what the language check reads).
STATS_LABELS: dict[str, dict[str, str]] = {
    row: {lang: say(key, lang) for lang in LANGUAGES} for row, key in STATS_KEYS.items()
}
