"""The wiring of the reminder desk (agent/reminders/desk.py) over the bot's composition root."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from agent.reminders.desk import ReminderDesk, Seal, Via
from agent.reminders.morning import BriefingWriter
from memory.write.consent import UserAct, UserActMint

if TYPE_CHECKING:
    from bot.app import Services


def reminder_desk_for(services: Services) -> ReminderDesk | None:
    """The desk over the composition root's reminder service (None when there is none)."""
    from agent.reminders.briefing import BriefingBuilder
    from memory.state.short_term import ShortTermStore

    service = services.reminders
    if service is None:
        return None
    builder = BriefingBuilder(
        service,
        services.sessions,
        ShortTermStore(services.state),
        services.memory,
        services.access,
        services.settings.lifecycle,
    )
    llm = services.agent.llm if services.agent is not None else None
    writer, forgetter = BriefingWriter(builder, llm), services.forgetter
    desk = ReminderDesk(
        service,
        _sealer(services.user_acts),
        services.memory,
        writer,
        forgetter.note_made,
        forgetter.note_act,
    )
    languages = services.languages
    if languages is not None:  # alerts, their buttons and the scheduled briefing
        desk.language_of = service.language_of = writer.language_of = languages.spoken
    return desk


def _sealer(mint: UserActMint) -> Seal:
    """The desk's seal: a press or a typed answer is the person's own act, minted here."""

    def seal(user_key: str, rid: int, yes: bool, via: Via) -> UserAct:
        action: Literal["confirm", "reject"] = "confirm" if yes else "reject"
        return mint.act(user_key, str(rid), action, via=via, kind="reminder")

    return seal
