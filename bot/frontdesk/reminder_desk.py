"""The wiring of the reminder desk (agent/reminders/desk.py) over the bot's composition root."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.reminders.desk import ReminderDesk
from agent.reminders.morning import BriefingWriter

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
        services.user_acts,
        services.memory,
        writer,
        forgetter.note_made,
        forgetter.note_act,
    )
    languages = services.languages
    if languages is not None:  # alerts, their buttons and the scheduled briefing
        desk.language_of = service.language_of = writer.language_of = languages.spoken
    return desk
