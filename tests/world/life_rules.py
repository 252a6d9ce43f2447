"""The rest of the person's life with the bot: chat turns (the model proposing memories and
reminders, a context error on a later round), ``/new``, an import on the memory page, a
restart, and a kill -9 between two acts or while the model is answering.

A kill -9 is the data folder copied as it is at that instant (``-wal`` and ``-shm`` with it)
while the process still runs; the next process opens the copy, heals what the composition
root heals and answers the turns Telegram's queue kept open, as a restarted ``pcai run``
does. The terminal keeps no turn open: a line in hand at the kill is logged, not answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from datetime import timedelta

from hypothesis import strategies as st
from hypothesis.stateful import rule

from bot.web.shaping import ShapeError, Shaper
from tests.world.base import now
from tests.world.bot import OWNER, TELEGRAM_KEY, kill_copy, replace_folder
from tests.world.memory_rules import on, people
from tests.world.reminder_rules import ReminderRules
from tests.world.scripted_model import Plan
from tests.world.texts import REMINDER_TEXTS, Said, as_message, said

saves = st.lists(said(), max_size=2)
asks = st.none() | st.tuples(
    st.integers(1, 3), st.integers(0, 23), st.sampled_from(REMINDER_TEXTS)
)


class LifeRules(ReminderRules):
    """Chat, /new, import, restart, kill -9."""

    def plan(self, key: str, msg: Said, made: list[Said], ask: object, echo: bool) -> Plan:
        """What the model does with this message."""
        person = self.people[key]
        self.plant(person, msg, *made)
        reminders: tuple[tuple[str, str], ...] = ()
        if isinstance(ask, tuple):
            days, hour, text = ask
            day = now().astimezone(person.tz).date() + timedelta(days=days)
            reminders = ((f"{day.isoformat()}T{hour:02d}:00:00", text),)
        reply = f"Noted: {msg.text}" if echo else "Noted."
        return Plan(reply, tuple(s.text for s in made), reminders)

    @on("chat")
    @rule(
        key=people,
        s=said(),
        made=saves,
        ask=asks,
        too_long=st.sampled_from((0, 0, 1, 2)),
        echo=st.booleans(),
    )
    def chat(
        self, key: str, s: Said, made: list[Said], ask: object, too_long: int, echo: bool
    ) -> None:
        """A chat message; the model may propose memories and a reminder, and its server may
        refuse a round as too long (the turn is asked again with half the prompt)."""
        msg = as_message(s)
        plan = replace(self.plan(key, msg, made, ask, echo), too_long_at=too_long)
        began = self.turn_began(key)
        self.model.script(plan)
        mid = self.call(f"the message {msg.text!r}", self.front(key).chat(msg.text))
        self.turn_ended(key, msg.text, plan, began, mid)

    @on("new")
    @rule(key=people)
    def new_session(self, key: str) -> None:
        """``/new``: the conversation is summarised and a fresh one starts."""
        self.command(key, "new")

    @on("import")
    @rule(
        key=people,
        lines=st.lists(said(), min_size=1, max_size=4),
        shape=st.sampled_from(("notes.txt", "memories.json", "MEMORY.md")),
        weight=st.sampled_from(("5", "1e400", "-3", '"high"')),
    )
    def import_file(self, key: str, lines: list[Said], shape: str, weight: str) -> None:
        """A file imported on the memory page: each memory in it waits as a proposal."""
        person = self.people[key]
        self.plant(person, *lines)
        if shape.endswith(".json"):
            body = ", ".join(
                f'{{"text": {json.dumps(s.text)}, "user_weight": {weight}}}' for s in lines
            )
            data = f"[{body}]"
        elif shape.endswith(".txt"):
            data = "\n".join(s.text for s in lines)
        else:
            data = "# MEMORY\n\n## General\n\n" + "".join(f"- {s.text}\n" for s in lines)
        before, waiting = self.live(key), self.pending_now(key)
        shaper = Shaper(self.proc.services)

        async def upload() -> None:
            # ShapeError is the page's one sentence: nothing proposed
            with contextlib.suppress(ShapeError):
                shaper.import_file(key, shape, data.encode(), now().astimezone())

        self.call(f"importing {shape} {data!r}", upload())
        assert self.live(key) == before, f"importing {shape} changed MEMORY.md"
        new = {p: t for p, t in self.pending_now(key).items() if p not in waiting}
        twice = sorted({t for t in new.values() if list(new.values()).count(t) > 1})
        assert not twice, f"importing {data!r} proposed {twice!r} more than once"
        person.pending |= new
        self.seen |= set(new)

    @on("restart")
    @rule()
    def restart(self) -> None:
        """The process stops as on SIGTERM and starts again on the same folder."""
        self.call("the stop", self.proc.stop())
        self.start()

    async def reached(self) -> bool:
        """Whether the turn reached the held round (False: it ended before asking it)."""
        for _ in range(2000):
            await asyncio.sleep(0.01)
            if self.model.held.is_set():
                return True
            if not self.proc.busy():
                return False
        return self.model.held.is_set()

    @on("kill")
    @rule()
    def kill(self) -> None:
        """kill -9 between two acts: the folder as it is, the process gone without a flush."""
        killed = self.dir / "killed"
        kill_copy(self.data, killed)
        self.run(self.proc.stop())  # what it writes on the way out is not in the copy
        replace_folder(self.data, killed)
        self.start()

    @on("kill")
    @rule(
        key=people,
        s=said(),
        made=saves,
        ask=asks,
        second=st.booleans(),
    )
    def kill_mid_answer(
        self, key: str, s: Said, made: list[Said], ask: object, second: bool
    ) -> None:
        """kill -9 while the model is answering (in its first round, or after the tools ran);
        the next process answers what Telegram's queue kept, once."""
        msg = as_message(s)
        plan = self.plan(key, msg, made, ask, False)
        hold = 2 if second and plan.calls() else 1
        began = self.turn_began(key)
        self.model.script(replace(plan, hold_at=hold))
        front, mid, task = self.front(key), "", None
        if key == TELEGRAM_KEY:
            mid = self.proc.send_telegram(msg.text)
        else:
            task = self.loop.create_task(front.chat(msg.text))
        held = self.run(self.reached())
        killed = self.dir / "killed"
        if held:
            kill_copy(self.data, killed)
        self.model.release()
        if task is not None:
            self.call(f"the line {msg.text!r}", task)
        self.call(f"the message {msg.text!r}", self.proc.settle())
        if not held:  # it never reached the model (said why): no kill, an ordinary turn
            self.turn_ended(key, msg.text, plan, began, mid)
            return
        self.run(self.proc.stop())
        replace_folder(self.data, killed)
        self.model.script(plan)  # the same model answers the next process
        self.start()
        self.turn_ended(key, msg.text, plan, began, mid)
        if key == TELEGRAM_KEY:
            answered = [p for n, p in self.proc.api.calls if n == "sendMessage"]
            assert any(int(p.get("chat_id", 0)) == OWNER for p in answered), (
                f"the message {msg.text!r} in hand at the kill was never answered"
            )
