"""Reminders through the real Application: commands, buttons, replies, the JobQueue, offers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from agent.ollama_client import OllamaChat
from agent.reminders import store as rs
from agent.reminders.service import ReminderService
from bot.app import Services, build_agent
from bot.frontdesk.backend import backend_for
from bot.telegram.application import build_application, post_init
from bot.telegram.context import BotApp
from bot.telegram.reminders import wire_reminders
from tests.bot.conftest import FRIEND, OWNER, STRANGER
from tests.bot.offers import offer_reminder
from tests.bot.telegram_doubles import RecordingRequest, Updates, bot_message
from tests.fakes.ollama_server import FakeOllama, tool_reply

KEY = f"telegram_{OWNER}"


class Api(RecordingRequest):
    """The offline Bot API, keeping each sent message with the id Telegram gave it."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[int, dict[str, Any]]] = []

    def _result(self, name: str, params: dict[str, Any]) -> Any:
        result = super()._result(name, params)
        if name == "sendMessage":
            self.sent.append((int(result["message_id"]), params))
        return result


@dataclass
class Bot:
    """The Application with reminders wired on its (running) JobQueue."""

    app: BotApp
    api: Api
    updates: Updates
    services: Services
    model: FakeOllama | None = None

    @property
    def service(self) -> ReminderService:
        assert self.services.reminders is not None
        return self.services.reminders

    async def send(self, user: int, text: str, **kw: Any) -> None:
        kw.setdefault("lang", "en")
        await self.app.process_update(self.updates.message(self.app.bot, user, text, **kw))

    async def press(self, user: int, data: str, message_id: int, lang: str = "en") -> None:
        update = self.updates.button(self.app.bot, user, data, message_id, lang)
        await self.app.process_update(update)

    def card(self, needle: str = "") -> tuple[int, str, list[str]]:
        """(message id, text, callback data) of the last message with buttons holding needle."""
        for mid, params in reversed(self.api.sent):
            markup = params.get("reply_markup") or {}
            rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
            if rows and needle in str(params.get("text", "")):
                return mid, str(params["text"]), [b["callback_data"] for r in rows for b in r]
        raise AssertionError(f"no card with {needle!r} in {self.api.texts()}")

    async def offer_reminder(self, user: int, phrase: str, lang: str = "en") -> int:
        """The model proposes a reminder for ``user`` (:mod:`tests.bot.offers`); its id."""
        return await offer_reminder(self.app, self.services, user, phrase, lang)

    def edits(self) -> list[dict[str, Any]]:
        return self.api.named("editMessageText")

    def job(self, key: str) -> Any:
        assert self.app.job_queue is not None
        jobs = self.app.job_queue.get_jobs_by_name(key)
        return jobs[0] if jobs else None

    def count(self) -> int:
        with self.services.state.lock:
            return int(
                self.services.state.conn.execute("SELECT count(*) FROM reminders").fetchone()[0]
            )


async def _start(services: Services, model: FakeOllama | None = None, **changes: Any) -> Bot:
    """The real Application over the real backend (and, with ``model``, the real agent)."""
    if model is not None:
        build_agent(services, OllamaChat(model.url, services.settings.chat_model, timeout=10))
    settings = replace(
        services.settings,
        telegram_bot_token="123:TEST",
        allowed_users=(OWNER, FRIEND),
        **changes,
    )
    api = Api()
    app = build_application(settings, backend_for(services), request=api)
    await app.initialize()
    assert app.job_queue is not None and services.reminders is not None
    await app.job_queue.start()
    assert wire_reminders(app, services.reminders)
    bot = Bot(app, api, Updates(), services, model)
    await _until(lambda: True)  # the start job runs on the queue
    return bot


async def _stop(bot: Bot) -> None:
    assert bot.app.job_queue is not None
    await bot.app.job_queue.stop(wait=False)
    await bot.app.shutdown()


async def _until(cond: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    await asyncio.sleep(0.05)
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


@pytest.fixture
async def bot(services: Services, fake_ollama: FakeOllama) -> AsyncIterator[Bot]:
    """The bot over the real backend, reminder desk and service; the model is the fake."""
    started = await _start(services, fake_ollama)
    yield started
    await _stop(started)


async def test_a_proposed_reminder_waits_and_only_the_owners_press_schedules(bot: Bot) -> None:
    await bot.offer_reminder(OWNER, "tomorrow 9am call mom")
    mid, text, data = bot.card("Set this reminder?")
    assert "I'll remind you on" in text and "call mom" in text
    rid = int(data[0].split(":")[2])
    assert data == [f"rm:c:{rid}", f"rm:d:{rid}"]
    assert bot.service.store.get(KEY, rid).status == rs.PROPOSED
    assert bot.job(f"reminder:{rid}") is None  # nothing rings before the user says yes

    await bot.press(FRIEND, f"rm:c:{rid}", mid)
    assert bot.service.store.get(KEY, rid).status == rs.PROPOSED
    await bot.press(OWNER, f"rm:c:{rid}", mid)
    row = bot.service.store.get(KEY, rid)
    assert row.status == rs.SCHEDULED
    assert bot.job(row.key).next_t == row.due
    edit = bot.edits()[-1]
    assert edit["message_id"] == mid and edit["text"].startswith("✅ Set.")
    assert "reply_markup" not in edit  # the buttons are gone


async def test_a_reply_or_a_bare_word_answers_a_reminder_proposal(bot: Bot) -> None:
    await bot.offer_reminder(OWNER, "in 10 minutes tea")
    mid, _, data = bot.card("tea")
    first = int(data[0].split(":")[2])
    await bot.send(OWNER, "no", reply_to=bot_message(mid, OWNER))
    row = bot.service.store.get(KEY, first)
    assert row.status == rs.CANCELLED and row.last_outcome == "rejected"
    assert bot.edits()[-1]["message_id"] == mid

    await bot.send(OWNER, "/lang zh")  # one language per person: they choose Chinese
    await bot.offer_reminder(OWNER, "in 10 minutes tea", lang="zh-hant")
    _, _, data = bot.card("要設定這個提醒嗎")
    second = int(data[0].split(":")[2])
    await bot.send(OWNER, "好", lang="zh-hant")  # typed right after it: answers it
    assert bot.service.store.get(KEY, second).status == rs.SCHEDULED
    assert bot.model is not None and bot.model.chat_requests == []  # neither word went to it

    await bot.offer_reminder(OWNER, "in 10 minutes tea")
    _, _, data = bot.card("tea")
    third = int(data[0].split(":")[2])
    await bot.send(OWNER, "what time is it?")  # the bot's last word is now its answer
    await bot.send(OWNER, "yes")
    assert bot.service.store.get(KEY, third).status == rs.PROPOSED


async def test_the_models_reminder_rings_on_the_job_queue_then_snooze_and_done(bot: Bot) -> None:
    due = datetime.now(UTC) + timedelta(seconds=1.5)

    def model(body: dict[str, Any]) -> Any:
        if body["messages"][-1]["role"] == "tool":
            return "Please confirm the reminder."
        return tool_reply("reminder_create", when=due.isoformat(), text="drink water")

    assert bot.model is not None
    bot.model.chat_handler = model
    await bot.send(OWNER, "remind me to drink water in a moment")
    mid, _, data = bot.card("drink water")
    rid = int(data[0].split(":")[2])
    await bot.press(OWNER, data[0], mid)
    await _until(lambda: any("⏰ Reminder" in t for t in bot.api.texts()))
    alert_mid, alert, buttons = bot.card("⏰ Reminder")
    assert alert == "⏰ Reminder: drink water"  # the person's one language, not both
    assert buttons == [f"rm:k:{rid}", f"rm:10m:{rid}", f"rm:1h:{rid}", f"rm:tm:{rid}"]
    [markup] = [p["reply_markup"] for m, p in bot.api.sent if m == alert_mid]
    assert markup["inline_keyboard"][1][0]["text"] == "💤 10 min"  # the default
    sent = bot.service.store.get(KEY, rid)
    assert sent.status == rs.SENT and sent.message_id == str(alert_mid)
    assert sent.sent_at is not None and sent.sent_at - due < timedelta(seconds=3)

    pressed_at = datetime.now(UTC)
    await bot.press(OWNER, f"rm:10m:{rid}", alert_mid)
    snoozed = bot.service.store.get(KEY, rid)
    assert snoozed.status == rs.SCHEDULED and snoozed.snooze_count == 1
    assert abs(snoozed.due - (pressed_at + timedelta(minutes=10))) < timedelta(seconds=5)
    assert bot.job(snoozed.key).next_t == snoozed.due
    assert "snoozed until" in bot.edits()[-1]["text"]

    await bot.press(OWNER, f"rm:k:{rid}", alert_mid)
    assert bot.service.store.get(KEY, rid).status == rs.DONE
    assert bot.job(snoozed.key) is None


async def test_reminders_lists_next_times_with_cancel_buttons(bot: Bot) -> None:
    for phrase in ("every Monday 8:00 weekly report", "tomorrow 9am dentist"):
        await bot.send(OWNER, f"/remind {phrase}")  # typed: set at once
    rows = sorted((i.reminder for i in bot.service.listing(KEY)), key=lambda r: r.text)
    dentist, weekly = (r.id for r in rows)
    await bot.send(OWNER, "/reminders")
    mid, text, data = bot.card("Your reminders:")
    assert "weekly report ↻ every Monday at 08:00" in text and "dentist" in text
    assert "每週" not in text and "週" not in text  # an English speaker's dates read English
    assert sorted(data) == sorted([f"rm:x:{weekly}", f"rm:x:{dentist}"])

    await bot.press(OWNER, f"rm:x:{weekly}", mid)
    assert bot.service.store.get(KEY, weekly).status == rs.CANCELLED
    assert bot.job(f"reminder:{weekly}") is None
    edit = bot.edits()[-1]
    assert edit["message_id"] == mid and f"Cancelled #{weekly}" in edit["text"]
    assert "weekly report ↻" not in edit["text"].split("\n\n", 1)[1]
    assert [b["callback_data"] for r in edit["reply_markup"]["inline_keyboard"] for b in r] == [
        f"rm:x:{dentist}"
    ]


async def test_tz_and_the_morning_briefing(bot: Bot) -> None:
    await bot.send(OWNER, "/tz Asia/Taipei")
    assert bot.api.texts()[-1] == "🌐 Time zone set to Asia/Taipei."
    await bot.send(OWNER, "/tz Mars/Olympus")
    assert "not a time zone I know" in bot.api.texts()[-1]
    assert bot.service.zone(KEY).key == "Asia/Taipei"

    await bot.send(OWNER, "/briefing 07:30")
    assert "daily at 07:30" in bot.api.texts()[-1]
    job = bot.job(f"briefing:{KEY}")
    local = job.next_t.astimezone(ZoneInfo("Asia/Taipei"))
    assert (local.hour, local.minute) == (7, 30)
    await bot.send(OWNER, "/briefing 25:99")
    assert "is not a time" in bot.api.texts()[-1]
    await bot.send(OWNER, "/briefing now")
    assert bot.api.texts()[-1].startswith("Good morning! Your briefing for")
    await bot.send(OWNER, "/briefing off")
    assert bot.job(f"briefing:{KEY}") is None
    assert bot.service.store.users.settings(KEY).briefing_at == ""


async def test_a_stranger_or_a_group_remind_stores_nothing(services: Services) -> None:
    bot = await _start(services, groups=True)
    try:
        await bot.send(STRANGER, "/remind tomorrow 9am give me your data")
        assert bot.api.texts()[-1] == "Sorry, this bot only serves its owner."
        await bot.send(
            OWNER,
            "/remind@TestNameBot tomorrow 9am team call",
            chat_type="group",
            chat_id=-100200300,
        )
        assert "private chat" in bot.api.texts()[-1]
        await bot.press(STRANGER, "rm:c:1", 5)
        assert bot.count() == 0
    finally:
        await _stop(bot)


async def test_help_and_the_command_menu_name_the_reminder_commands(bot: Bot) -> None:
    await bot.send(OWNER, "/help")
    assert all(f"/{n} " in bot.api.texts()[-1] for n in ("remind", "reminders", "tz", "briefing"))
    await post_init(bot.app)
    menus = bot.api.named("setMyCommands")
    for menu in menus:
        names = [c["command"] for c in menu["commands"]]
        assert {"remind", "reminders", "tz", "briefing"} <= set(names)
    assert menus[1]["language_code"] == "zh"


async def test_a_confirmed_birthday_offers_the_day_before_and_the_press_sets_it(
    services: Services,
) -> None:
    bot = await _start(services)
    try:
        await bot.send(OWNER, "/tz Asia/Taipei")
        await bot.send(OWNER, "/remember 媽媽的生日是5月3日", lang="zh-hant")  # saved at once
        [entry] = services.memory.entries(KEY)
        offer_mid, offer, buttons = bot.card("前一天")
        assert "5 月 3 日" in offer and buttons == [f"rm:b:{entry.id}"]
        assert bot.count() == 0  # only an offer: nothing is stored until the user presses

        await bot.press(OWNER, f"rm:b:{entry.id}", offer_mid, "zh-hant")
        assert bot.edits()[-1]["text"].startswith("✅ 已設定。我會在")
        [item] = bot.service.listing(KEY)
        row = item.reminder
        assert row.status == rs.SCHEDULED and row.source == f"memory:{entry.id}"
        assert item.rule is not None and item.rule.describe_en().startswith("every year")
        assert (item.next_local.month, item.next_local.day, item.next_local.hour) == (5, 2, 9)
        assert bot.job(row.key).next_t == row.due
        await bot.press(OWNER, f"rm:b:{entry.id}", offer_mid)  # an English client: same person
        assert bot.edits()[-1]["text"] == "這個提醒已經設定好了。"
        assert row.text == "明天是媽媽的生日（5月3日）"  # one language when it rings
        assert len(bot.service.listing(KEY)) == 1

        sent = len(bot.api.sent)
        await bot.send(OWNER, "/remember 我喜歡藍色", lang="zh-hant")
        assert len(bot.api.sent) == sent + 1  # saved, and no date in it: no offer
    finally:
        await _stop(bot)


async def test_a_reminder_missed_while_down_rings_at_start_marked_late(services: Services) -> None:
    store = services.reminders.store if services.reminders else None
    assert store is not None
    now = datetime.now(UTC)
    missed = store.add(
        KEY,
        "take the pills",
        due=now - timedelta(minutes=30),
        zone="Asia/Taipei",
        now=now - timedelta(hours=1),
        status=rs.SCHEDULED,
    )
    bot = await _start(services)  # its start job reschedules what pcai.db holds
    try:
        await _until(lambda: any("take the pills" in t for t in bot.api.texts()))
        [alert] = [t for t in bot.api.texts() if "take the pills" in t]
        # Nobody has spoken yet: the owner's language is unknown, so the job says English
        # (one language per person; bot/frontdesk/language.py's rule ends in English).
        assert alert.startswith("⏰ Reminder (late, was due") and "提醒" not in alert
        row = store.get(KEY, missed.id)
        assert row.status == rs.SENT and row.last_outcome == "late"
    finally:
        await _stop(bot)


class Blocked(Api):
    """A Bot API for which the owner blocked the bot: every message to them is refused."""

    async def do_request(self, url: str, method: str, request_data: Any = None, **kw: Any) -> Any:
        params = dict(request_data.parameters) if request_data else {}
        if url.endswith("/sendMessage") and str(params.get("chat_id")) == str(OWNER):
            self.calls.append(("sendMessage", params))
            body = b'{"ok": false, "error_code": 403, "description": "Forbidden: bot was blocked"}'
            return 403, body
        return await super().do_request(url, method, request_data, **kw)


async def test_a_refused_send_is_retried_not_lost(services: Services) -> None:
    service = services.reminders
    assert service is not None
    row = service.propose(KEY, "call the bank", datetime.now(UTC) + timedelta(seconds=0.5))
    act = services.user_acts.act(KEY, str(row.id), "confirm", via="button", kind="reminder")
    service.confirm(act, KEY, row.id)
    settings = replace(
        services.settings, telegram_bot_token="123:TEST", allowed_users=(OWNER, FRIEND)
    )
    api = Blocked()
    app = build_application(settings, backend_for(services), request=api)
    await app.initialize()
    assert app.job_queue is not None
    await app.job_queue.start()
    assert wire_reminders(app, service)
    try:
        await _until(lambda: service.store.get(KEY, row.id).attempts == 1)
        again = service.store.get(KEY, row.id)
        # Telegram said no, so it surely did not arrive: scheduled again, a minute on
        assert again.status == rs.SCHEDULED and again.last_outcome == "retry"
        assert again.due - datetime.now(UTC) > timedelta(seconds=50)
        jobs = app.job_queue.get_jobs_by_name(again.key)
        assert [j.next_t for j in jobs] == [again.due]
    finally:
        await app.job_queue.stop(wait=False)
        await app.shutdown()
