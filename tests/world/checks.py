"""The invariants of the person's world, as lists of what is wrong (empty: all holds).

Each reads the files (or what the process showed) and compares them with the model:

- every memory the person confirmed and did not remove is in MEMORY.md once, current, with
  the text it has and pinned as they left it; nothing else is current; no version of a
  forgotten memory is anywhere in the file, and no memory holds the forget marker;
- each reminder they set is scheduled once, at the instant they meant; nothing else rings;
  the proposals waiting are the ones the model knows; the zone is the one they chose;
- the proposals waiting for them are the ones they were shown and did not answer;
- each message they sent is in the day's log once, and no two records share an id;
- no secret they said is in any file of the data folder, the SQLite ``-wal`` included;
- nothing the process showed holds such a secret, or is the apology a person gets when a
  step failed inside.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agent.texts import say
from bot.app import Services
from memory.base.guards import FORGOTTEN
from memory.base.users import UserPaths
from tests.world import files
from tests.world.person import Person, instant

# What a person reads when something failed inside (the scripted model never fails; it
# refuses a round as too long on purpose, so ``context_full`` is an answer, not a failure).
APOLOGIES = tuple(
    say(key, lang) for key in ("error", "failed", "garbage", "down") for lang in ("en", "zh")
)


def memory_problems(data_dir: Path, person: Person) -> list[str]:
    """MEMORY.md against the memories the person keeps."""
    key, out = person.key, []
    live = files.live(data_dir, key)
    want = Counter((m.text, m.pinned) for m in person.memories)
    got = Counter((e.text, e.is_core) for e in live.values())
    if want != got:
        out.append(
            f"{key}: MEMORY.md keeps {sorted((got - want).elements())} that the person did not "
            f"keep, and lacks {sorted((want - got).elements())} that they kept"
        )
    for m in person.memories:
        if m.id not in live:
            out.append(f"{key}: {m.text!r} is not current as {m.id} in MEMORY.md")
    marked = sorted(e.text for e in live.values() if FORGOTTEN in e.text)
    if marked:  # a proposal a forget blanked was confirmed: a memory of a forgotten one
        out.append(f"{key}: memories hold the forget marker: {marked}")
    back = {e.id for e in files.entries(data_dir, key)} & person.forgotten
    if back:
        out.append(f"{key}: forgotten versions {sorted(back)} are in MEMORY.md again")
    stray = files.stray_views(data_dir, key)
    if stray:
        out.append(f"{key}: the index keeps views of chunks that are no memory: {stray}")
    return out


def reminder_problems(data_dir: Path, person: Person) -> list[str]:
    """pcai.db's reminders and zone against what the person set."""
    key, out = person.key, []
    rows = files.reminders(data_dir, key)
    ringing = {r.id: r for r in rows if r.status == "scheduled"}
    meant = person.reminders
    for rid in sorted(set(ringing) - set(meant)):
        out.append(f"{key}: reminder #{rid} {ringing[rid].text!r} rings; the person set no such")
    for rid in sorted(set(meant) - set(ringing)):
        out.append(f"{key}: reminder #{rid} {meant[rid].text!r} will never ring")
    for rid in sorted(set(meant) & set(ringing)):
        if instant(ringing[rid].due) != instant(meant[rid].due):
            out.append(
                f"{key}: reminder #{rid} {meant[rid].text!r} rings at {instant(ringing[rid].due)};"
                f" the person meant {instant(meant[rid].due)}"
            )
    waiting = {r.id for r in rows if r.status == "proposed"}
    if waiting != set(person.proposed):
        out.append(
            f"{key}: reminder proposals {sorted(waiting)}, "
            f"the person has {sorted(person.proposed)}"
        )
    zone = files.zone(data_dir, key)
    if zone != person.zone:
        out.append(f"{key}: the zone is {zone!r}; the person chose {person.zone!r}")
    return out


def pending_problems(person: Person, waiting: dict[str, str]) -> list[str]:
    """The proposals waiting against the ones the person was shown and did not answer."""
    if set(waiting) == set(person.pending):
        return []
    extra = {p: waiting[p] for p in set(waiting) - set(person.pending)}
    lost = {p: person.pending[p] for p in set(person.pending) - set(waiting)}
    return [f"{person.key}: proposals {extra} wait unasked-for; {lost} are gone unanswered"]


def log_problems(data_dir: Path, person: Person) -> list[str]:
    """Each message the person sent is in the day's log once."""
    refs = Counter(files.user_refs(data_dir, person.key))
    out = [
        f"{person.key}: message {mid} is in the day's log {refs[mid]} times"
        for mid in dict.fromkeys(person.sent)
        if refs[mid] != 1
    ]
    out += [
        f"{person.key}: {n} records of the day's log share the id {ref}"
        for ref, n in refs.items()
        if n > 1 and ref not in person.sent
    ]
    return out


class SecretScan:
    """Looks for secrets in the folder's files, reading a file again only when it changed."""

    def __init__(self) -> None:
        # path -> (mtime, size, the secrets looked for, the ones found)
        self._seen: dict[Path, tuple[int, int, frozenset[str], frozenset[str]]] = {}

    def problems(self, data_dir: Path, secrets: set[str]) -> list[str]:
        """One line for each secret some file of the folder holds."""
        out, wanted = [], frozenset(secrets)
        for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
            try:
                stat = path.stat()
                old = self._seen.get(path)
                if old is None or old[:3] != (stat.st_mtime_ns, stat.st_size, wanted):
                    data = path.read_bytes()
                    found = frozenset(s for s in wanted if s.encode() in data)
                    self._seen[path] = (stat.st_mtime_ns, stat.st_size, wanted, found)
            except OSError:  # gone meanwhile
                continue
            out += [
                f"the secret {s!r} is stored in {path.relative_to(data_dir)}"
                for s in sorted(self._seen[path][3])
            ]
        return out


def screen_problems(lines: list[str], secrets: set[str]) -> list[str]:
    """What the process showed: never a secret, never the apology of a failed step."""
    out = []
    for line in lines:
        out += [f"the screen showed the secret {s!r}: {line!r}" for s in secrets if s in line]
        out += [f"a person was told {line!r}" for a in APOLOGIES if a in line]
    return out


def telling(texts: set[str]) -> set[str]:
    """The texts long enough that finding one means it was kept (a short one, "茶" or an
    emoji, is found in anything)."""
    return {t for t in texts if len(t.strip()) >= 8}


def forgotten_problems(
    data_dir: Path, services: Services, user_key: str, texts: set[str]
) -> list[str]:
    """After Delete all: MEMORY.md has no entry, no MEMORY*.md holds a text of theirs, the
    index holds nothing of MEMORY.md nor any of the texts, and a search for each finds none."""
    out = []
    root = UserPaths.of(data_dir, user_key).root
    for path in sorted(root.glob("MEMORY*.md")):
        data = path.read_text(encoding="utf-8")
        out += [f"{user_key}: {path.name} still holds {t!r}" for t in telling(texts) if t in data]
    if files.entries(data_dir, user_key):
        out.append(f"{user_key}: MEMORY.md still has entries")
    for source, text in files.index_texts(data_dir, user_key):
        if source == "MEMORY.md":  # (MEMORY_FULL.md holds the conversations' summaries)
            out.append(f"{user_key}: the index still holds {source}: {text!r}")
        out += [
            f"{user_key}: the index holds {t!r} in {source}" for t in telling(texts) if t in text
        ]
    for t in sorted(telling(texts))[:3]:
        hits = services.memory.search(user_key, t)
        out += [
            f"{user_key}: a search for {t!r} found {h.chunk.path}: {h.chunk.text!r}"
            for h in hits
            if h.chunk.path == "MEMORY.md" or t in h.chunk.text
        ]
    return out


def prompt_problems(requests: list[dict[str, object]], texts: set[str]) -> list[str]:
    """The model's requests of a turn hold none of ``texts``."""
    sent = "\n".join(_strings(requests))
    return [f"the model was sent the deleted memory {t!r}" for t in telling(texts) if t in sent]


def _strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
