"""The person's acts on their memories: remember, answer a proposal, edit, forget, pin, restore,
undo. Each act's effect on MEMORY.md is read from the file and checked against what the act
means; the model learns the ids and the texts as the file holds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from bot.frontdesk.ports import Answer, BackendError
from tests.world import files
from tests.world.base import KEYS, Ground, diff
from tests.world.options import OFF
from tests.world.person import Kept, Memory, Person, Reminder, instant, kept_in_files
from tests.world.texts import Said, said

people = st.sampled_from(KEYS)


def on(name: str, also: Callable[[Ground], bool] | None = None) -> Callable[..., object]:
    """The rule ``name`` runs unless PCAI_WORLD_OFF names it (and ``also`` holds)."""
    return precondition(lambda self: name not in OFF and (also is None or also(self)))


def having(what: str) -> Callable[[Ground], bool]:
    """Some person has something in the model's ``what`` (memories, pending...)."""
    return lambda self: any(getattr(p, what) for p in self.people.values())


class MemoryRules(Ground):
    """Remember, propose-and-answer, edit, forget, pin, restore, undo."""

    def command(self, key: str, name: str, arg: str = "") -> Answer:
        """``/name arg`` through the person's Desk."""
        front = self.front(key)
        return self.call(f"/{name} {arg!r}", front.desk.command(key, name, arg, front.lang))

    def plant(self, person: Person, *texts: Said) -> None:
        """The secrets the person just said (to look for in every file from now on)."""
        person.secrets |= {s.secret for s in texts if s.secret}

    def pick(self, data: st.DataObject, what: str) -> Person:
        """A person who has something in ``what``."""
        keys = [k for k, p in self.people.items() if getattr(p, what)]
        return self.people[data.draw(st.sampled_from(keys), label="person")]

    @on("remember")
    @rule(key=people, s=said())
    def remember(self, key: str, s: Said) -> None:
        """``/remember <text>``: saved at once (their own act), or waiting when close to one."""
        person = self.people[key]
        self.plant(person, s)
        before, (kept, state) = self.live(key), person.before_act()
        answer = self.command(key, "remember", s.text)
        new, gone = diff(before, self.live(key))
        assert not gone, f"/remember {s.text!r} removed {gone}"
        if answer.proposals:
            assert not new, f"/remember {s.text!r} asked first but saved {new}"
            person.pending |= {p.proposal_id: p.text for p in answer.proposals}
            self.seen |= {p.proposal_id for p in answer.proposals}
            return
        assert len(new) <= 1, f"one /remember {s.text!r} made {[e.text for e in new]}"
        assert not (new and answer.error), (
            f"/remember {s.text!r} answered {answer.text!r}; MEMORY.md gained {new}"
        )
        if new:
            e = new[0]
            person.memories.append(Memory(e.id, e.text, e.is_core, [e.id]))
            person.acted(f"/remember {s.text}", kept, state)

    def _answer(self, person: Person, pid: str, yes: bool) -> None:
        key = person.key
        before, (kept, state) = self.live(key), person.before_act()
        text = person.pending.pop(pid)
        self.command(key, "confirm" if yes else "discard", pid)
        new, gone = diff(before, self.live(key))
        assert not gone, f"answering proposal {pid} ({text!r}) removed {gone}"
        assert len(new) <= (1 if yes else 0), f"answering {pid} ({text!r}) saved {new}"
        if new:
            e = new[0]
            person.memories.append(Memory(e.id, e.text, e.is_core, [e.id]))
            person.acted(f"/confirm {pid} ({text})", kept, state)

    @on("confirm", having("pending"))
    @rule(data=st.data())
    def confirm(self, data: st.DataObject) -> None:
        """The person confirms a waiting proposal."""
        person = self.pick(data, "pending")
        self._answer(person, data.draw(st.sampled_from(sorted(person.pending))), True)

    @on("refuse", having("pending"))
    @rule(data=st.data())
    def refuse(self, data: st.DataObject) -> None:
        """The person discards a waiting proposal."""
        person = self.pick(data, "pending")
        self._answer(person, data.draw(st.sampled_from(sorted(person.pending))), False)

    @on("edit_proposal", having("pending"))
    @rule(data=st.data(), s=said())
    def edit_proposal(self, data: st.DataObject, s: Said) -> None:
        """The person gives a waiting proposal a new text (the reply after ✏️)."""
        person = self.pick(data, "pending")
        pid = data.draw(st.sampled_from(sorted(person.pending)))
        self.plant(person, s)
        before = self.live(person.key)
        backend = self.proc.backend

        async def edit() -> str:
            try:
                outcome = backend.edit(person.key, pid, s.text, via="edit")
            except BackendError:  # refused, in one sentence: the proposal stays as it was
                return person.pending[pid]
            if outcome.status != "edited" or outcome.proposal is None:
                return ""
            return outcome.proposal.text

        text = self.call(f"editing proposal {pid} to {s.text!r}", edit())
        if text:
            person.pending[pid] = text
        else:
            person.pending.pop(pid)
        assert self.live(person.key) == before, "editing a proposal changed MEMORY.md"

    @on("edit", having("memories"))
    @rule(data=st.data(), s=said())
    def edit(self, data: st.DataObject, s: Said) -> None:
        """``/edit <id> <text>``: a new version replaces the memory; the old one is history."""
        person = self.pick(data, "memories")
        m = data.draw(st.sampled_from(person.memories))
        self.plant(person, s)
        before, (kept, state) = self.live(person.key), person.before_act()
        self.command(person.key, "edit", f"{m.id} {s.text}")
        new, gone = diff(before, self.live(person.key))
        if not new and not gone:
            return  # refused (a secret, nothing to keep): one sentence, nothing changed
        assert gone == [m.id] and len(new) == 1, (
            f"/edit {m.id} {s.text!r} of {m.text!r} removed {gone} and added "
            f"{[e.text for e in new]}"
        )
        m.id, m.text = new[0].id, new[0].text
        m.versions.append(m.id)
        person.acted(f"/edit {m.id} {s.text}", kept, state)

    @on("forget", having("memories"))
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        """``/forget <id>``: the memory and every version of it leave MEMORY.md."""
        person = self.pick(data, "memories")
        m = data.draw(st.sampled_from(person.memories))
        before, (kept, state) = self.live(person.key), person.before_act()
        self.command(person.key, "forget", m.id)
        new, gone = diff(before, self.live(person.key))
        assert not new, f"/forget {m.id} added {[e.text for e in new]}"
        if not gone:
            return
        assert gone == [m.id], f"/forget {m.id} ({m.text!r}) also removed {gone}"
        # The person's usual line (agent.background) may hold a forgotten line: it goes too.
        usual = self.proc.services.memory.searcher.store.line_background(person.key)
        assert usual is None, f"/forget {m.id} left the person's usual line ({usual[2]} lines)"
        person.memories.remove(m)
        person.forgotten |= set(m.versions)
        person.acted(f"/forget {m.id} ({m.text})", kept, state)
        self.sync_pending(person)

    @on("pin", having("memories"))
    @rule(data=st.data())
    def pin(self, data: st.DataObject) -> None:
        """``/pin`` an unpinned memory or ``/unpin`` a pinned one."""
        person = self.pick(data, "memories")
        m = data.draw(st.sampled_from(person.memories))
        before, (kept, state) = self.live(person.key), person.before_act()
        answer = self.command(person.key, "unpin" if m.pinned else "pin", m.id)
        after = self.live(person.key)
        assert set(after) == set(before), f"/pin {m.id} changed which memories exist"
        if after[m.id].is_core != m.pinned:
            m.pinned = after[m.id].is_core
            person.acted(f"/{'pin' if m.pinned else 'unpin'} {m.id}", kept, state)
        else:
            assert answer.error, f"{answer.text!r}, but {m.id} is pinned={m.pinned} still"

    @on("restore", having("memories"))
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        """``/restore <id>`` of a replaced version (it is the current one again), of the
        current one, or of a forgotten one (which never comes back)."""
        person = self.pick(data, "memories")
        m = data.draw(st.sampled_from(person.memories))
        target = data.draw(st.sampled_from([*m.versions, *sorted(person.forgotten)]))
        before, (kept, state) = self.live(person.key), person.before_act()
        answer = self.command(person.key, "restore", target)
        new, gone = diff(before, self.live(person.key))
        if not new and not gone:  # the current version is already there; else refused
            assert target == m.id or answer.error, (
                f"/restore {target} said {answer.text!r} and changed nothing"
            )
            return
        assert target in m.versions and target != m.id, (
            f"/restore {target} brought back {[e.text for e in new]}, removed {gone}"
        )
        assert gone == [m.id] and [e.id for e in new] == [target], (
            f"/restore {target} of {m.text!r} removed {gone}, added {[e.id for e in new]}"
        )
        m.id, m.text, m.pinned = target, new[0].text, new[0].is_core
        person.acted(f"/restore {target}", kept, state)

    @on("undo")
    @rule(key=people)
    def undo(self, key: str) -> None:
        """``/undo``: exactly the state before the person's last act, or nothing at all."""
        person = self.people[key]
        before = kept_in_files(self.data, key)
        answer = self.command(key, "undo")
        after = kept_in_files(self.data, key)
        if answer.error:
            assert after == before, (
                f"/undo said {answer.text!r} and still changed {before} to {after}"
            )
            return
        self.undone(person, before, after, answer.text)

    def undone(self, person: Person, before: Kept, after: Kept, said: str) -> None:
        """After an undo (chat or page) that said ``said``: exactly the person's last act was
        taken back, naming the reminder it was on, or nothing changed."""
        last = person.acts[-1] if person.acts else None
        if last is not None and after == last.before:
            if last.reminder:
                assert re.search(rf"#{last.reminder}(?!\d)", said), (
                    f"the undo of {last.what!r} said {said!r}: it names another reminder"
                )
            person.acts.pop()
            key = person.key
            person.undone(last, {i: (e.text, e.is_core) for i, e in self.live(key).items()})
            self.relearn_reminders(person, last.what)
            self.sync_pending(person, may_return=True)
            return
        assert after == before, (
            f"the undo said {said!r}; the person's last act was "
            f"{last.what if last else 'none'!r}, before which they kept "
            f"{last.before if last else '-'}; "
            f"they kept {before} and now keep {after}"
        )
        self.sync_pending(person, may_return=True)

    def relearn_reminders(self, person: Person, undone: str) -> None:
        """An undo may give a reminder back as a new row: learn its id by text and instant.
        Setting a proposed reminder taken back, the proposal waits again (as a confirmed
        memory's proposal does)."""
        every = files.reminders(self.data, person.key)
        rows = [r for r in every if r.status == "scheduled"]
        if undone.startswith("/reminders confirm "):
            rid = int(undone.split()[-1])
            for r in every:
                if r.id == rid and r.status == "proposed":
                    person.proposed[rid] = Reminder(r.id, r.text, r.due, True, r.zone)
        # A reminder keeps its number while its row still holds it; one given back as a new
        # row takes the first free row with its text and instant (two may share both).
        same = {r.id: (r.text, instant(r.due)) for r in rows}
        claimed: set[int] = set()
        kept: dict[int, Reminder] = {}
        for rid, r in person.reminders.items():
            if same.get(rid) == (r.text, instant(r.due)):
                kept[rid] = r
                claimed.add(rid)
        for rid, r in person.reminders.items():
            if rid in kept and kept[rid] is r:
                continue
            free = [
                i for i, tw in same.items() if i not in claimed and tw == (r.text, instant(r.due))
            ]
            new_id = free[0] if free else rid
            claimed.add(new_id)
            kept[new_id] = r
        person.reminders = kept
        moved = {r.id: rid for rid, r in person.reminders.items() if r.id != rid}
        for rid, r in person.reminders.items():
            r.id = rid
        # The older acts on a reminder given back as a new row are on its new number now.
        person.acts = [replace(a, reminder=moved.get(a.reminder, a.reminder)) for a in person.acts]
