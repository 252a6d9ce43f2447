"""The weekly "these memories are fading: keep?" notice (docs/memory-lifecycle.md, issue 13).

Nothing is archived silently: the nightly lifecycle archives only what its owner was told
about a week before (:mod:`memory.write.lifecycle`). This job does the telling, user by user, with
a ✅ keep button per memory in Telegram (``mm:k:<id>``, answered by
:func:`bot.telegram.confirm.on_memory_button`) and a ``/keep <id>`` hint in the text for the
terminal. Each telling that reached the user is recorded in ``pcai.db``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from agent.texts import say
from bot.frontdesk.language import spoken_to
from bot.isolation import FileProblems, Notifier, each_user
from memory.base.users import list_user_keys
from memory.write.lifecycle import Fading

if TYPE_CHECKING:
    from bot.app import Services

# (user_key, text, rows of (label, callback data)): a notice with buttons the user can press;
# False when this front end cannot reach that user (then nobody was told).
Offer = Callable[[str, str, Sequence[Sequence[tuple[str, str]]]], Awaitable[bool]]
FADING_SHOWN = 10  # memories per fading notice; the rest come in the next one
FADE_EVERY = timedelta(days=7)  # settings.lifecycle.fade_every_hours


def fade_every(services: Services) -> timedelta:
    """How often the fading notice job runs (the setting, weekly by default)."""
    return timedelta(hours=services.settings.lifecycle.fade_every_hours)


def fading_notice(
    fading: Sequence[Fading], lang: str
) -> tuple[str, tuple[tuple[tuple[str, str]], ...]]:
    """The fading notice in ``lang``: the memories (with /keep <id> for a terminal) and a keep
    button each."""
    lines = [say("fading_head", lang), ""]
    for n, f in enumerate(fading, 1):
        text = f.entry.text if len(f.entry.text) <= 80 else f.entry.text[:79] + "…"
        lines.append(f"{n}. {text}  (/keep {f.entry.id})")
    keep = f"✅ {say('keep_word', lang)}"
    rows = tuple(((f"{keep} {n}", f"mm:k:{f.entry.id}"),) for n, f in enumerate(fading, 1))
    return "\n".join(lines), rows


async def fading_job(
    services: Services,
    now: datetime,
    notifier: Notifier | None = None,
    offer: Offer | None = None,
    user_key: str | None = None,
) -> str:
    """Tell each user which memories are fading, with a keep button each.

    Only what the user has not been told about (since they last kept it) is listed, at most
    ten a notice; each telling that reached the user is recorded, and the nightly lifecycle
    archives nothing it was not told about a week before. Without ``offer`` nobody can be
    told, so nothing is recorded (and nothing gets archived).
    """
    users = [user_key] if user_key else list_user_keys(services.settings.data_dir)

    async def one(user: str) -> int:
        due = await asyncio.to_thread(services.lifecycle.to_tell, user, now)
        if not due or offer is None:
            return 0
        shown = due[:FADING_SHOWN]
        text, rows = fading_notice(shown, spoken_to(services.languages, user))
        if not await offer(user, text, rows):
            return 0
        await asyncio.to_thread(services.lifecycle.told, user, [f.entry.id for f in shown], now)
        return len(shown)

    results, run = await each_user(
        FileProblems(services.memory, services.state, services.languages),
        "fading",
        users,
        one,
        notifier,
    )
    told = sum(1 for n in results if n)
    return f"{sum(results)} fading memories told to {told} users" + run.suffix()


def fading_body(
    notifier: Notifier | None, offer: Offer | None, user_key: str | None = None
) -> Callable[[Services, datetime], Awaitable[str]]:
    """The fading job as a scheduled body (over ``user_key``'s memories only, when given)."""
    return partial(fading_job, notifier=notifier, offer=offer, user_key=user_key)


def text_offer(notifier: Notifier | None) -> Offer | None:
    """Where no button can be pressed (the terminal): the notice text, with its /keep hints."""
    if notifier is None:
        return None

    async def offer(user_key: str, text: str, rows: Sequence[Sequence[tuple[str, str]]]) -> bool:
        await notifier(user_key, text)
        return True

    return offer


def telegram_offer(application: Any) -> Offer:
    """An offer that writes a notice with inline buttons to a ``telegram_<id>`` user."""

    async def offer(user_key: str, text: str, rows: Sequence[Sequence[tuple[str, str]]]) -> bool:
        from bot.telegram.context import DEPS
        from bot.telegram.sending import buttons_markup, send_text

        kind, _, ident = user_key.partition("_")
        if kind != "telegram" or not ident.isdigit():
            return False  # a terminal user: told by their own chat's jobs, not here
        if DEPS in application.bot_data:
            application.bot_data[DEPS].spoke(user_key)
        markup = buttons_markup(tuple(tuple(row) for row in rows))
        await send_text(application.bot, int(ident), text, markup=markup)
        return True

    return offer
