"""What an imported file holds: PCAI's own exports, other memory tools' JSON, plain lines.

Shapes read (anything else in them is counted as skipped, never dropped without a word):

* PCAI's JSON export (a list of records with ``text``) and MEMORY.md (its entries);
* other tools' JSON: mem0's ``{"results": [{"memory": ...}]}`` and lists of records whose text
  is under ``memory``, ``text``, ``content`` or ``value``, or plain strings;
* plain text (``.txt``, or Markdown without entries): one memory per line, list markers and
  numbering dropped; a paragraph of Markdown outside the entries is one memory.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from memory.base.markdown import Entry, parse_memory
from memory.write.governance import LIVE

TEXT_KEYS = ("text", "memory", "content", "value")
_TEXT_FIELDS = ("summary", "memory_class", "scope", "canonical_topic", "section", "status")
LIST_KEYS = ("memories", "results", "data", "items")
# Fields a PCAI export carries over (the rest is derived again).
IMPORTED = ("summary", "memory_class", "scope", "canonical_topic", "is_core", "user_weight")
_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


def bad_field(record: dict[str, Any]) -> str | None:
    """The first field of ``record`` an entry cannot carry as it is (a list for a section,
    ``1e400`` for a weight: JSON reads it as infinity), or None when every field fits."""
    for name in _TEXT_FIELDS:
        if name in record and not isinstance(record[name], str):
            return name
    if "is_core" in record and not isinstance(record["is_core"], bool):
        return "is_core"
    weight = record.get("user_weight", 5)
    if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 10:
        return "user_weight"
    if "id" in record and not isinstance(record["id"], str | int):
        return "id"
    return None


def carried(record: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``record`` an imported entry keeps: those that fit (see :func:`bad_field`)."""
    fields = {k: record[k] for k in (*IMPORTED, "section", "status") if k in record}
    while (name := bad_field(fields)) is not None:
        del fields[name]  # another tool's field of another type: the text is what is imported
    return fields


@dataclass(frozen=True, slots=True)
class Read:
    """The entries a file holds, and the parts of it that are not memories (described)."""

    entries: list[Entry]
    skipped: list[str] = field(default_factory=list)


def read_file(name: str, text: str) -> Read:
    """The live entries of ``text`` (a file called ``name``); raises ValueError when the file
    is JSON that does not parse."""
    stripped = text.lstrip()
    if name.lower().endswith(".json") or stripped.startswith(("[", "{")):
        return _json(json.loads(text))
    if name.lower().endswith(".txt"):
        return Read(_plain_lines(text))
    entries = [e for e in parse_memory(text).entries if e.status in LIVE]
    return Read(entries + _paragraphs(text)) if entries else Read(_plain_lines(text))


def _json(data: Any) -> Read:
    records: Any = data
    if isinstance(data, dict):
        records = next((data[k] for k in LIST_KEYS if isinstance(data.get(k), list)), None)
        if records is None:
            records = [data]  # one record on its own
    if not isinstance(records, list):
        raise ValueError("not a list of memories")
    out: list[Entry] = []
    skipped: list[str] = []
    for r in records:
        if isinstance(r, str) and r.strip():
            out.append(Entry(id="", text=r.strip()))
            continue
        said = next((r[k] for k in TEXT_KEYS if isinstance(r, dict) and k in r), None)
        if not isinstance(said, str) or not said.strip():
            skipped.append(json.dumps(r, ensure_ascii=False)[:60])
            continue
        entry = Entry(id=str(r.get("id", "")), text=said.strip(), **carried(r))
        if entry.status in LIVE:
            out.append(entry)
    return Read(out, skipped)


def _plain_lines(text: str) -> list[Entry]:
    """One memory per non-empty line (headings and list markers are not memories)."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        said = _MARKER.sub("", line).strip()
        if said:
            out.append(Entry(id="", text=said))
    return out


def _paragraphs(text: str) -> list[Entry]:
    """Markdown paragraphs beside the entries: text at the margin that is no list item."""
    out, current = [], []
    for line in [*text.splitlines(), ""]:
        plain = line.strip() and not line.startswith((" ", "\t", "#", "-", "*", "<!--", ">"))
        if plain:
            current.append(line.strip())
        elif current:
            out.append(Entry(id="", text=" ".join(current)))
            current = []
    return out
