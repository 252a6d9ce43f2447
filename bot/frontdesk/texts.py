"""The bot's command list and the small text helpers around what it says.

The sentences themselves are in the catalogue :mod:`agent.texts` (``say`` is re-exported
here for the bot's modules).
"""

from __future__ import annotations

import re
from datetime import datetime

from agent.texts import CATALOGUES, LANGUAGES, conflict_note, say
from agent.types import ProposalView
from bot.frontdesk.ports import Button, MemoryLine

TELEGRAM_LIMIT = 4096
CORE_WEIGHT = 9  # L0: a weight of 9 or more is core

# (command, zh, en): registered with setMyCommands and shown by /help.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("start", "開始", "start"),
    ("help", "說明", "help"),
    ("memory", "列出記憶（/memory 2 看第 2 頁）", "list memories (/memory 2 for page 2)"),
    ("search", "搜尋記憶：/search 咖啡", "search memories: /search coffee"),
    ("remember", "記住一件事（立刻儲存，可 /undo）", "remember something (saved at once; /undo)"),
    ("forget", "忘記一條記憶：/forget <id>", "forget a memory: /forget <id>"),
    (
        "undo",
        "復原你的上一個動作（/remember、/edit、/forget、/pin、/remind……），並說明是哪一個",
        "take back your last act (/remember, /edit, /forget, /pin, /remind...), named",
    ),
    ("pin", "釘選記憶（每次回答都帶入）：/pin <id>", "pin a memory (in every reply): /pin <id>"),
    ("unpin", "取消釘選：/unpin <id>", "unpin a memory: /unpin <id>"),
    ("edit", "修改記憶：/edit <id> <新內容>", "edit a memory: /edit <id> <new text>"),
    (
        "scope",
        "設定範圍：/scope <id> project:名稱 | lang:語言 | global",
        "set a scope: /scope <id> project:x | lang:y | global",
    ),
    ("archived", "已封存的記憶", "archived memories"),
    ("restore", "找回封存的記憶：/restore <id>", "bring an archived memory back: /restore <id>"),
    ("keep", "保留正在淡出的記憶：/keep <id>", "keep a fading memory: /keep <id>"),
    ("pending", "等待確認的記憶", "memories waiting for confirmation"),
    ("confirm", "確認等待中的記憶：/confirm [id]", "confirm a pending memory: /confirm [id]"),
    ("discard", "捨棄等待中的記憶：/discard [id]", "discard a pending memory: /discard [id]"),
    ("why", "上一個回答用了哪些記憶", "which memories shaped the last reply"),
    ("history", "某主題的記憶演變：/history 咖啡", "how a topic's memory changed"),
    ("new", "開始新對話（先整理舊對話）", "start a fresh conversation"),
    ("export", "匯出你的記憶（Markdown）", "export your memories (Markdown)"),
    ("stats", "統計：數量、索引大小、排程", "stats: counts, index size, jobs"),
    (
        "remind",
        "設定提醒：/remind 明天早上九點 打電話給媽媽",
        "set a reminder: /remind 5pm water plants",
    ),
    ("reminders", "列出提醒（可取消）", "list your reminders (and cancel one)"),
    ("tz", "設定時區：/tz Asia/Taipei", "set your time zone: /tz Asia/Taipei"),
    (
        "briefing",
        "每日晨報：/briefing 07:30 或 /briefing off",
        "morning briefing: /briefing 07:30 or off",
    ),
    ("web", "記憶頁的一次性登入連結", "a one-time login link to your memory page"),
    ("lang", "設定語言：/lang zh 或 /lang en", "set your language: /lang en or /lang zh"),
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
_TWO_NAMES = re.compile(r"^([^\x00-\x7f][^\x00-\x7f ]*)\s+([\x00-\x7f]+)$")
SECTION_ZH = {"General": "一般"}


def section_label(section: str, lang: str) -> str:
    """How a section's name reads in ``lang``: ``偏好`` / ``Preferences``; others as named."""
    m = _TWO_NAMES.match(section)
    if m:
        return m.group(1) if lang == "zh" else m.group(2)
    return SECTION_ZH.get(section, section) if lang == "zh" else section


def detect_language(language_code: str | None, text: str = "") -> str:
    """ "zh" or "en" where the person is not at hand (nothing stored): what the text is
    written in, else the client's language, else English (bot/frontdesk/language.py)."""
    from bot.frontdesk.language import client_language, written_language

    return written_language(text) or client_language(language_code) or "en"


def help_text(lang: str, commands: tuple[tuple[str, str, str], ...] = COMMANDS) -> str:
    """The command list in the reader's language."""
    lines = [say("help_head", lang)]
    for name, zh, en in commands:
        lines.append(f"/{name} — {zh if lang == 'zh' else en}")
    lines.append("")
    lines.append(say("help_footer", lang))
    return "\n".join(lines)


def proposal_text(p: ProposalView, lang: str, limit: int = 3000) -> str:
    """How a pending memory is shown: the text, its section, and when it expires."""
    body = p.text if len(p.text) <= limit else p.text[: limit - 1] + "…"
    when = p.expires_at.astimezone().strftime("%H:%M")
    lines = [say("propose_head", lang), "", body, ""]
    if p.conflicts_shown:
        lines.append(conflict_note(p.conflicts_shown, lang))
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


# /stats row labels in the reader's language (the backend names rows in English).
STATS_LABELS: dict[str, dict[str, str]] = {
    "memories": {"zh": "記憶"},
    "pending": {"zh": "待確認"},
    "pending reminders": {"zh": "待確認的提醒"},
    "daily logs": {"zh": "每日日誌"},
    "indexed chunks": {"zh": "索引片段"},
    "older versions": {"zh": "較早的版本"},
    # the scheduled jobs' last runs (bot/jobs.py names them)
    "idle_summaries": {"zh": "閒置對話摘要"},
    "index": {"zh": "索引更新"},
    "pending_expiry": {"zh": "提議到期檢查"},
    "forget_undo": {"zh": "復原期限清理"},
    "lifecycle": {"zh": "夜間整理"},
    "fading": {"zh": "淡出提醒"},
}
