"""How well the extractive message summaries catch what a person would write.

Usage::

    .venv/bin/python bench/summaries.py [--gold PATH] [--raw] [--show] [--json]

Reads the hand-written gold set (``tests/history/data/summary_gold.json``: 30 messages in
Chinese, English and both, each with the Goal / Decision / Todo / Facts a person would write)
and summarises every message with the extractive rules (``history.summarize``; no model), as
the pipeline does for each message of the short-term context. Scored per field by key-phrase
matching:

* recall: a gold item is caught when all its key phrases are in the field;
* precision: a piece of the field (the rules join sentences with "；") is right when it
  holds all key phrases of one gold item of that field.

By default the rendered summary is scored (``Goal: … | Decision: … | Todo: … | Facts: …``
within 280 characters: what the model is shown); ``--raw`` scores the fields before the cut.
``--show`` prints each message's summary and what it missed; ``--json`` prints the figures
as JSON (the test in tests/history/test_summary_quality.py reads it). The last line of the
table is ``overall: recall … precision … F1 …`` (micro-averaged over the four fields).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from history.sessions import Message
from history.summarize import FIELDS, extract_structured, parse_structured, render_structured

GOLD = Path(__file__).resolve().parents[1] / "tests" / "history" / "data" / "summary_gold.json"
# The gold file's names for the structured summary's fields.
GOLD_FIELDS = {"Goal": "goal", "Decision": "decisions", "Todo": "todos", "Facts": "facts"}
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub("", text).lower()


def caught(keys: list[str], text: str) -> bool:
    """Whether every key phrase (``a|b``: either) is in ``text`` (case and spaces ignored)."""
    body = _norm(text)
    return all(any(_norm(alt) in body for alt in key.split("|")) for key in keys)


def pieces(value: str) -> list[str]:
    """The parts of one summary field ("-" is empty)."""
    value = value.strip()
    if value in ("", "-"):
        return []
    return [p.strip() for p in value.split("；") if p.strip()]


@dataclass
class Score:
    """Counts for one field."""

    gold: int = 0
    caught: int = 0
    pieces: int = 0
    right: int = 0
    missed: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Share of the gold items the field caught."""
        return self.caught / self.gold if self.gold else 1.0

    @property
    def precision(self) -> float:
        """Share of the field's pieces that hold a gold item."""
        return self.right / self.pieces if self.pieces else 1.0


def summarise(message: dict[str, Any], raw: bool) -> dict[str, str]:
    """The extractive summary's four fields for one gold message."""
    msg = Message(message["role"], message["text"], datetime(2026, 1, 1, tzinfo=UTC))
    fields = extract_structured(msg)
    if raw:
        return {f: fields.get(f, "") for f in FIELDS}
    return parse_structured(render_structured(fields, 280)) or {}


def score(
    messages: list[dict[str, Any]], raw: bool = False, show: bool = False
) -> dict[str, Score]:
    """Per-field scores over the gold messages."""
    scores = {f: Score() for f in FIELDS}
    for message in messages:
        made = summarise(message, raw)
        if show:
            print(f"\n[{message['id']}] " + " | ".join(f"{f}: {made.get(f, '-')}" for f in FIELDS))
        for name in FIELDS:
            items = message[GOLD_FIELDS[name]]
            value, s = made.get(name, ""), scores[name]
            s.gold += len(items)
            for note, *keys in items:
                if caught(keys, value):
                    s.caught += 1
                else:
                    s.missed.append(f"{message['id']}: {note}")
                    if show:
                        print(f"    missed {name}: {note}")
            parts = pieces(value)
            s.pieces += len(parts)
            s.right += sum(1 for p in parts if any(caught(keys, p) for _, *keys in items))
    return scores


def overall(scores: dict[str, Score]) -> tuple[float, float, float]:
    """Micro-averaged recall, precision and F1 over the fields."""
    gold = sum(s.gold for s in scores.values())
    got = sum(s.caught for s in scores.values())
    parts = sum(s.pieces for s in scores.values())
    right = sum(s.right for s in scores.values())
    recall = got / gold if gold else 1.0
    precision = right / parts if parts else 1.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return recall, precision, f1


def main() -> None:
    """Score the gold set and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--gold", type=Path, default=GOLD)
    parser.add_argument("--raw", action="store_true", help="score the fields before the cut")
    parser.add_argument("--show", action="store_true", help="print summaries and misses")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    messages = json.loads(args.gold.read_text(encoding="utf-8"))["messages"]
    scores = score(messages, raw=args.raw, show=args.show and not args.json)
    recall, precision, f1 = overall(scores)
    if args.json:
        out: dict[str, Any] = {
            name: {"recall": round(s.recall, 3), "precision": round(s.precision, 3)}
            for name, s in scores.items()
        }
        out["overall"] = {
            "recall": round(recall, 3),
            "precision": round(precision, 3),
            "f1": round(f1, 3),
        }
        out["messages"] = len(messages)
        print(json.dumps(out))
        return
    what = "fields before the 280-character cut" if args.raw else "rendered, 280 characters"
    print(f"\nextractive structured summaries, {len(messages)} messages ({what})")
    print(f"{'field':<9} {'gold':>5} {'caught':>7} {'recall':>7} {'pieces':>7} {'right':>6} "
          f"{'precision':>9}")  # fmt: skip
    for name, s in scores.items():
        print(
            f"{name:<9} {s.gold:>5} {s.caught:>7} {s.recall:>7.3f} {s.pieces:>7} {s.right:>6} "
            f"{s.precision:>9.3f}"
        )
    print(f"overall: recall {recall:.3f} precision {precision:.3f} F1 {f1:.3f}")


if __name__ == "__main__":
    main()
