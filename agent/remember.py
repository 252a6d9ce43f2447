"""A "remember this" still proposes, and a reply never claims a save that did not happen.

Small local models often answer 記住… / remember that… without calling ``memory_save`` (or
with a call the tool loop could not use), then say "I've saved it". After the tool loop,
:func:`settle_reply` proposes from the user's own words after the trigger phrase, through the
same guards and noise filter as the tool (``TurnTools.save``), and makes the reply honest:
with a proposal it says the memory waits for the user's confirmation; without one, a claim of
saving gets a correction. Confirming stays the user's act (:mod:`memory.write.consent`).
"""

from __future__ import annotations

import logging
import re

from agent.texts import say
from agent.tools import NOT_TOOLS, ToolBox
from agent.turn.tools import TurnTools
from memory.base.edges import strip_tail_words

log = logging.getLogger(__name__)
MEMORY_TOOLS = frozenset({"memory_save", "memory_search", "memory_archaeology"})

# The trigger opens the message (after a filler such as 對了 / ok, and 請 / please).
_ZH_TRIGGER = re.compile(
    r"^(?:(?:好|對了|对了|那|嗯|欸|另外|還有|还有)[，,、\s]*)?"
    r"(?:請|请|麻煩|麻烦)?(?:你|幫我|帮我|替我)?(?:要|一定要|務必|务必)?"
    r"(?:記住|记住|記得|记得|記下來|记下来|記下|记下|記一下|记一下)(?:一下|喔|哦)?"
    r"(?:[：:，,、\s]+|(?=[\u4e00-\u9fffA-Za-z0-9]))(?P<rest>.+)$",
    re.DOTALL,
)
_EN_TRIGGER = re.compile(
    r"^(?:(?:hey|ok|okay|so|also|and|btw|oh)[,\s]+)?"
    r"(?P<ask>(?:please|pls|can you|could you|would you)[,\s]+)?(?:please\s+)?"
    r"(?:remember|keep in mind|don't forget|do not forget|make a note(?: of)?|note down"
    r"|take note(?: of)?)"
    r"(?:\s+(?:that|this))?[:,\s]+(?P<rest>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# "記得提醒我…" / "remember to call mom" ask for a reminder or an action, not a memory.
_NOT_A_FACT = re.compile(
    r"^(?:了|提醒|叫我|要提醒|幫我提醒|帮我提醒|去|要去|帶|带|買|买|吃|打電話|打电话)"
    r"|^(?:to\s|remind\b)",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"(?:[?？]|[嗎吗呢])\s*$|什麼|什么|哪裡|哪里|哪一|哪個|哪个|誰|谁|多少|怎麼|怎么|為什麼|为什么"
)
# Politeness and punctuation at the end of a request, stripped in one pass from the end.
_TAIL_WORDS: tuple[str, ...] = ("謝謝", "谢谢", "謝啦", "谢啦", "好嗎", "好吗", "喔", "哦", "唷")
_TAIL_WORDS += ("thanks", "thank you", "please")
_TAIL_PUNCT = "，,。.!！~～?？"

_CLAIM = re.compile(
    r"(?:已經?|已)(?:幫你|帮你|為你|为你|替你)?(?:記住|记住|記下|记下|儲存|储存|保存|存下|存好"
    r"|記錄|记录|加入記憶|加入记忆|寫入|写入)"
    r"|(?:記住|记住|記下|记下|存下|存好|儲存好|储存好|保存好|記好|记好)了"
    r"|我(?:會|会)(?:記住|记住|記得|记得|牢記|牢记)"
    r"|\bi(?:'ve|\s+have)\s+(?:now\s+|just\s+|already\s+)?(?:saved|stored|noted|remembered"
    r"|recorded|added|memori[sz]ed|kept)\b"
    r"|\bi(?:'ll|\s+will)\s+(?:remember|keep (?:that|this|it) in mind|note that)\b"
    r"|\b(?:has|have|is|are)\s+(?:now\s+)?been\s+(?:saved|stored|remembered|recorded|noted)\b"
    r"|\b(?:saved|stored|noted)\s+(?:it|that|this)\b",
    re.IGNORECASE,
)
_PENDING = re.compile(
    r"確認|确认|尚未|還沒|还没|未儲存|未储存|confirm|pending|not (?:yet )?saved|not saved yet"
    r"|await",
    re.IGNORECASE,
)


def remember_request(text: str) -> str | None:
    """What the user asked to be remembered (their words after 記住 / remember that), or None.

    A question ("你記得我…嗎？") or a reminder ("記得提醒我…", "remember to…") is not a
    request to store a fact.
    """
    text = text.strip()
    m = _ZH_TRIGGER.match(text) or _EN_TRIGGER.match(text)
    if m is None:
        return None
    asked = "ask" in m.re.groupindex and m.group("ask")
    rest = m.group("rest").strip()
    if _NOT_A_FACT.match(rest) or (_QUESTION.search(rest) and not asked):
        return None
    rest = strip_tail_words(rest, _TAIL_WORDS, _TAIL_PUNCT).strip()
    return rest or None


def claims_saved(text: str) -> bool:
    """Whether a reply says something was saved or will be remembered."""
    return bool(_CLAIM.search(text))


def says_pending(text: str) -> bool:
    """Whether a reply says the memory waits for the user's confirmation."""
    return bool(_PENDING.search(text))


def honest_text(text: str, lang: str, proposed: bool, refusal: str = "") -> str:
    """``text`` with a line added when it misstates what happened to the memory.

    With a proposal, a reply that claims a save or does not say it waits for confirmation
    gets the "not saved yet" line; without one, a stated refusal reason or a claim of saving
    gets a correction.
    """
    if proposed:
        extra = (
            "" if says_pending(text) and not claims_saved(text) else say("remember_pending", lang)
        )
    elif refusal:
        extra = say("remember_refused", lang, reason=refusal)
    else:
        extra = say("remember_nothing", lang) if claims_saved(text) else ""
    if not extra:
        return text
    return f"{text}\n\n{extra}" if text else extra.strip("（）()")


def _handled_otherwise(box: ToolBox) -> bool:
    """Whether the model answered the request with another tool (a reminder, say)."""
    return any(
        r.name not in MEMORY_TOOLS and r.name not in NOT_TOOLS and "error" not in r.result
        for r in box.records
    )


async def settle_reply(tools: TurnTools, box: ToolBox, user_text: str, reply: str) -> str:
    """Propose from the user's words when they asked to remember and no proposal exists yet.

    Returns the reply to show, made honest about what was (not) saved.
    """
    wanted = remember_request(user_text)
    refusal = ""
    if wanted and not tools.proposals and not _handled_otherwise(box):
        try:
            await tools.save({"text": wanted})
        except Exception:  # the reply still goes out; it just cannot claim a save
            log.warning("%s: proposing from their words failed", tools.user_key, exc_info=True)
        if not tools.proposals and tools.refusals:
            refusal = tools.refusals[-1]
    return honest_text(reply, tools.language, bool(tools.proposals), refusal)
