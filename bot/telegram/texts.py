"""Everything the bot says, in Chinese and English, plus the small text helpers around it."""

from __future__ import annotations

import re
from datetime import datetime

from agent.types import ProposalView

TELEGRAM_LIMIT = 4096
CORE_WEIGHT = 9  # seed 002 L0: a weight of 9 or more is core
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# (command, zh, en): registered with setMyCommands and shown by /help.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("start", "開始", "start"),
    ("help", "說明", "help"),
    ("memory", "列出記憶（/memory 2 看第 2 頁）", "list memories (/memory 2 for page 2)"),
    ("search", "搜尋記憶：/search 咖啡", "search memories: /search coffee"),
    ("remember", "記住一件事（會先請你確認）", "remember something (asks to confirm)"),
    ("forget", "忘記一條記憶：/forget <id>", "forget a memory: /forget <id>"),
    ("undo", "復原剛才忘記的記憶", "bring back the memory you just forgot"),
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
)

MESSAGES: dict[str, tuple[str, str]] = {
    "welcome": (
        "你好！我是 PCAI，會記得你確認過的事。直接跟我聊天，或輸入 /help 看指令。",
        "Hi! I'm PCAI, and I remember what you confirm. Just talk to me, or type /help.",
    ),
    "stranger": (
        "抱歉，這個機器人只服務它的主人。",
        "Sorry, this bot only serves its owner.",
    ),
    "text_only": ("目前只看得懂文字訊息。", "Text only for now."),
    "error": ("抱歉，我這邊出了點問題，請再試一次。", "Sorry, something went wrong on my side."),
    "group_private": (
        "記憶只在私訊中使用，請私訊我。",
        "Memories are only used in a private chat with me; please message me directly.",
    ),
    "no_memories": ("還沒有記憶。用 /remember <內容> 新增。", "No memories yet. Use /remember."),
    "usage_search": ("用法：/search <關鍵字>", "Usage: /search <query>"),
    "usage_remember": ("用法：/remember <內容>", "Usage: /remember <text>"),
    "usage_forget": ("用法：/forget <id>（id 見 /memory）", "Usage: /forget <id> (see /memory)"),
    "usage_history": ("用法：/history <主題>", "Usage: /history <topic>"),
    "usage_pin": ("用法：/pin <id>（id 見 /memory）", "Usage: /pin <id> (see /memory)"),
    "usage_unpin": ("用法：/unpin <id>（id 見 /memory）", "Usage: /unpin <id> (see /memory)"),
    "usage_edit": ("用法：/edit <id> <新內容>", "Usage: /edit <id> <new text>"),
    "usage_scope": (
        "用法：/scope <id> project:名稱 | lang:語言 | global",
        "Usage: /scope <id> project:<name> | lang:<name> | global",
    ),
    "usage_restore": (
        "用法：/restore <id>（id 見 /archived）",
        "Usage: /restore <id> (see /archived)",
    ),
    "usage_keep": ("用法：/keep <id>", "Usage: /keep <id>"),
    "pinned": ("📌 已釘選，之後每次回答都會帶入：", "📌 Pinned; it goes into every reply now: "),
    "unpinned": ("📍 已取消釘選：", "📍 Unpinned: "),
    "scoped": ("🏷 範圍改為 %s：", "🏷 Scope is now %s: "),
    "revised": ("✏️ 已修改（%s 取代 %s）：", "✏️ Edited (%s replaces %s): "),
    "kept": ("✅ 會繼續記得：", "✅ I'll keep remembering: "),
    "restored": ("♻️ 已找回：", "♻️ Restored: "),
    "no_archived": ("沒有封存的記憶。", "No archived memories."),
    "archived_head": (
        "已封存的記憶（/restore <id> 找回）：",
        "Archived memories (/restore <id> brings one back):",
    ),
    "memory_legend": (
        "📌 釘選 · 📍 取消釘選 · ✏️ 修改 · 🗑 忘記（/undo 可復原）",
        "📌 pin · 📍 unpin · ✏️ edit · 🗑 forget (/undo brings it back)",
    ),
    "revise_prompt": (
        "✏️ 請回覆這則訊息，輸入 %s 的新內容。",
        "✏️ Reply to this message with the new text for %s.",
    ),
    "replaced": ("（取代 %s）", " (replaces %s)"),
    "nothing_found": ("找不到相關記憶。", "Nothing found."),
    "no_pending": ("沒有等待確認的記憶。", "Nothing is waiting for confirmation."),
    "which_pending": (
        "有好幾條記憶等待確認，你指的是哪一條？請按該條下面的按鈕、回覆它，或輸入 /confirm <id>。",
        "Several memories are waiting; which one do you mean? Press the button under it, "
        "reply to it, or type /confirm <id>.",
    ),
    "this_pending": (
        "你是指這條等待確認的記憶嗎？請按它下面的按鈕，或回覆它。",
        "Do you mean this memory that is waiting? Press a button under it, or reply to it.",
    ),
    "no_why": ("上一個回答沒有用到任何記憶。", "No memories shaped the last reply."),
    "why_head": ("上一個回答用到的記憶：", "Memories used for the last reply:"),
    "confirmed": ("✅ 已記住：", "✅ Remembered: "),
    "rejected": ("🗑 已捨棄：", "🗑 Discarded: "),
    "expired": ("⌛ 這個提議已過期，沒有寫入。", "⌛ This proposal expired; nothing was saved."),
    "missing": ("找不到這個提議（可能已處理過）。", "That proposal is gone (already handled?)."),
    "edit_prompt": (
        "✏️ 請回覆這則訊息，輸入新的內容。",
        "✏️ Reply to this message with the new text.",
    ),
    "edited": ("已修改，請再確認一次：", "Edited; please confirm again:"),
    "propose_head": ("📝 要記住這條嗎？", "📝 Remember this?"),
    "expires": ("%s 前有效", "expires %s"),
    "export_caption": ("你的記憶（Markdown）", "Your memories (Markdown)"),
    "stats_head": ("統計", "Stats"),
    "page": ("第 %d/%d 頁，下一頁：/memory %d", "page %d/%d, next: /memory %d"),
    "needs_ollama": (
        "聊天需要 Ollama：請執行 `ollama serve` 與 `ollama pull %s`。記憶指令仍可使用（/help）。",
        "Chat needs Ollama: run `ollama serve` and `ollama pull %s`. Memory commands still "
        "work (/help).",
    ),
}

BUTTONS = {"zh": ("✅ 確認", "✏️ 修改", "🗑 捨棄"), "en": ("✅ Confirm", "✏️ Edit", "🗑 Discard")}
# A proposal that conflicts with a memory: add beside it, or replace it (seed 002 §5.2).
CONFLICT_BUTTONS = {
    "zh": ("➕ 新增", "🔁 取代", "✏️ 修改", "🗑 捨棄"),
    "en": ("➕ Add", "🔁 Replace", "✏️ Edit", "🗑 Discard"),
}
MEMORY_BUTTONS = {"pin": "📌", "unpin": "📍", "edit": "✏️", "forget": "🗑"}
KEEP_BUTTON = "✅ 保留 keep"
# The weekly fading notice names each memory and how to keep it; bilingual (no chat to read).
FADING_HEAD = (
    "🍂 這些記憶很久沒用到，一週後會封存（不再被搜尋到，可用 /restore 找回）。要保留嗎？\n"
    "These memories have not been used in a long time and will be archived in a week (no "
    "longer searched; /restore brings one back). Keep them?"
)


def detect_language(language_code: str | None, text: str = "") -> str:
    """ "zh" or "en": the client's language if it says, else whether the text has CJK."""
    code = (language_code or "").lower()
    if code.startswith("zh"):
        return "zh"
    if _CJK.search(text):
        return "zh"
    return "en" if code or text else "zh"


def say(key: str, lang: str) -> str:
    """The message ``key`` in ``lang``."""
    zh, en = MESSAGES[key]
    return zh if lang == "zh" else en


def help_text(lang: str, commands: tuple[tuple[str, str, str], ...] = COMMANDS) -> str:
    """The bilingual command list (the user's language first)."""
    lines = ["PCAI — 指令 / commands"]
    for name, zh, en in commands:
        lines.append(f"/{name} — {zh} / {en}" if lang == "zh" else f"/{name} — {en} / {zh}")
    lines.append("")
    lines.append(
        "直接輸入文字就是聊天；我提議記住的事要你確認才會寫入。"
        if lang == "zh"
        else "Plain text is a chat; what I offer to remember is saved only once you confirm."
    )
    return "\n".join(lines)


def proposal_text(p: ProposalView, lang: str, limit: int = 3000) -> str:
    """How a pending memory is shown: the text, its section, and when it expires."""
    body = p.text if len(p.text) <= limit else p.text[: limit - 1] + "…"
    when = p.expires_at.astimezone().strftime("%H:%M")
    lines = [say("propose_head", lang), "", body, ""]
    if p.conflict_note:
        lines.append(p.conflict_note)
    if p.weight:
        core = p.weight >= CORE_WEIGHT
        if lang == "zh":
            lines.append(
                f"⭐ 重要程度 {p.weight}/10" + ("（核心：每次回答都會帶入）" if core else "")
            )
        else:
            lines.append(f"⭐ weight {p.weight}/10" + (" (core: in every reply)" if core else ""))
    if p.scope and p.scope != "global":
        lines.append(f"🏷 {'範圍' if lang == 'zh' else 'scope'} {p.scope}")
    lines.append(f"[{p.section}] · {say('expires', lang) % when} · id {p.proposal_id}")
    return "\n".join(lines)


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
