"""The person's acts on the memory page (issue 30): Delete all, the reminders' Done, Snooze and
Delete, and the page's Undo, each a real HTTP request to the page of the running process,
interleaved with everything the person does in chat.

Delete all forgets every entry by /forget's path and is final: afterwards no memory of that
person is anywhere (MEMORY*.md, the search index, a search, the next turn's prompt) and the
other person's files are byte for byte as they were. A reminder pressed on the page is the
chat's act on that person's reminder of that number, never on another person's reminder with
the same number; the page's Undo button names the act it takes back.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st
from hypothesis.stateful import rule

from tests.world import checks, files
from tests.world.base import now
from tests.world.life_rules import LifeRules
from tests.world.memory_rules import having, on, people
from tests.world.page import flashes, forget_all_count, undo_label
from tests.world.person import Person, kept_in_files
from tests.world.scripted_model import Plan

PAGE_ACTS = ("done", "delete", "10m", "1h", "tomorrow")
LISTED = re.compile(r'class="reminder[^"]*" id="r-(\d+)"')
PROBE = {"en": "What do you remember about me?", "zh": "你記得我哪些事？"}


class PageRules(LifeRules):
    """Delete all, reminders on the page, the page's Undo."""

    def other(self, key: str) -> Person:
        """The other person of the world."""
        return next(p for k, p in self.people.items() if k != key)

    @on("delete_all")
    @rule(key=people)
    def delete_all(self, key: str) -> None:
        """Delete all, confirmed with the number the page showed: every memory forgotten, for
        good; then a chat turn, whose prompt must hold none of them."""
        person, other = self.people[key], self.other(key)
        theirs = files.moment(self.data, other.key)
        page = self.proc.page(key)
        shown = self.call("the Delete-all page", page.get("/forget-all"))
        entries = files.entries(self.data, key)
        count = forget_all_count(shown)
        counted = [e for e in entries if e.status != "deprecated"]
        if count is None:
            assert not counted, f"Delete all offers no button, with {len(counted)} memories"
            return
        assert count == len(counted), f"Delete all names {count} memories; there are {counted}"
        said = self.call(
            "Delete all", page.post("/forget-all", {"count": str(count)}, back="/forget-all")
        )
        left = files.entries(self.data, key)
        assert not left, f"after Delete all ({flashes(said)}) MEMORY.md keeps {left}"
        person.forgotten |= {e.id for e in entries}
        for m in person.memories:
            person.forgotten |= set(m.versions)
        person.memories = []
        person.acts = []  # final: no /undo reaches past it
        self.sync_pending(person)
        assert files.moment(self.data, other.key) == theirs, (
            f"Delete all of {key} changed {other.key}'s files"
        )
        texts = {e.text for e in entries}
        problems = checks.forgotten_problems(self.data, self.proc.services, key, texts)
        # The next turn: the model is asked with no trace of what was deleted.
        began, plan = self.turn_began(key), Plan("ok")
        self.model.script(plan)
        asked = len(self.model.bodies())
        probe = PROBE[person.lang]
        mid = self.call(f"the message {probe!r}", self.front(key).chat(probe))
        self.turn_ended(key, probe, plan, began, mid)
        problems += checks.prompt_problems(self.model.bodies()[asked:], texts)
        assert not problems, "\n".join(problems)

    @on("page_reminder", having("reminders"))
    @rule(data=st.data(), act=st.sampled_from(PAGE_ACTS), stray=st.booleans())
    def page_reminder(self, data: st.DataObject, act: str, stray: bool) -> None:
        """Done, Snooze or Delete pressed on the page's list of the person's reminders, or a
        form forged with another person's reminder in it (nothing of anyone's changes)."""
        person = self.pick(data, "reminders")
        other = self.other(person.key)
        theirs, mine = files.moment(self.data, other.key), self.rows(person.key)
        strays = sorted(r.row for r in theirs.reminders)
        rid = 0
        if stray and strays:
            row = data.draw(st.sampled_from(strays), label="another's reminder")
        else:
            rid = data.draw(st.sampled_from(sorted(person.reminders)), label="reminder")
            row = mine[rid].row
        page = self.proc.page(person.key)
        listed = self.call("the page /reminders", page.get("/reminders"))
        assert (f'id="r-{row}"' in listed) == bool(rid), (
            f"{person.key}'s page lists reminders {LISTED.findall(listed)}; "
            f"theirs: {[r.row for r in mine.values() if r.status == 'scheduled']}"
        )
        kept, state = person.before_act()
        t0 = now()
        shown = self.call(
            f"{act} of reminder #{rid or '-'} (row {row}) on the page",
            page.post(f"/reminders/{row}", {"act": act}, back="/reminders"),
        )
        t1, said = now(), " ".join(flashes(shown))
        assert files.moment(self.data, other.key) == theirs, (
            f"{person.key} pressed {act} on row {row} ({said!r}); {other.key}'s data changed"
        )
        if not rid:
            assert self.rows(person.key) == mine, f"{act} on another's reminder changed a row"
            return
        if act in ("done", "delete"):
            self.ended(person, rid, act, said, (kept, state))
        else:
            self.snoozed(person, rid, act, (t0, t1), said, (kept, state))

    @on("page_undo")
    @rule(key=people, where=st.sampled_from(("/", "/reminders")))
    def page_undo(self, key: str, where: str) -> None:
        """The page's Undo, whose button names the act: exactly that act taken back."""
        person, page = self.people[key], self.proc.page(key)
        label = undo_label(self.call(f"the page {where}", page.get(where)))
        if not label:
            return  # nothing the page would take back: no button
        before = kept_in_files(self.data, key)
        shown = self.call(f"Undo ({label!r})", page.post("/undo", {"back": where}, back=where))
        after = kept_in_files(self.data, key)
        last = person.acts[-1] if person.acts else None
        if last is not None and last.reminder and after == last.before:
            assert re.search(rf"#{last.reminder}(?!\d)", label), (
                f"the Undo button says {label!r}; it took back {last.what!r}"
            )
        self.undone(person, before, after, " ".join(flashes(shown)))
