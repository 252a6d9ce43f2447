"""How much of the hand-written phrasing corpus the secret guard masks, and what it misses.

Walks every keyword x separator (x owner) of ``tests/memory/secret_corpus.py`` with values,
quotes and endings taken in turn, masks each phrase and counts the phrases whose value
survived; then the ordinary sentences, counting those that were changed; with ``--chat``,
also the lines of the LoCoMo conversations (real chat, nothing to mask) it changes. Run:
``.venv/bin/python bench/secret_phrasings.py [--show N] [--chat locomo10.json]``; the last
line is ``secret phrasings: masked X/Y (P%), ordinary sentences changed A/B``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.base.guards import mask
from tests.memory import secret_corpus as c

VALUES = ("hunter22", "Tr0ub4dor&3", "s3cr3t-Pass", "correct7horse", "9f8e7d6c", "Xk29#qLm")
PINS = ("1234", "0000", "482913", "1 2 3 4", "12 34", "5-5-6-6", "97531")
CVVS = ("123", "0987", "555")
KEYS = ("3f9a8b7c6d5e4f3a2b1c", "AbCdEf0123456789xyz", "zx81qp02lm73nb64vc55ty")
CARDS = ("4111111111111111", "5500000000000004", "4012888888881881")
CARD_SEPS = ("", " ", ".", "-", " - ", "\u00a0", "/")


def _card(number: str, sep: str) -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


def phrases() -> Iterator[tuple[str, str]]:
    """(phrase, value that must not survive) for the whole corpus."""
    i = itertools.count()
    seps = (*c.SEPARATORS, *c.POSSESSIVES)
    for owner, word, sep in itertools.product(c.OWNERS, c.PASSWORD_WORDS, seps):
        n = next(i)
        q, after, value = c.QUOTES[n % 6], c.AFTER[n % 10], VALUES[n % 6]
        sep = sep.lstrip() if sep in c.POSSESSIVES else sep
        yield f"{owner}{word}{sep}{q[0]}{value}{q[1]}{after}", value
    for owner, word, sep in itertools.product(c.OWNERS_ZH, c.PASSWORD_WORDS_ZH, c.SEPARATORS_ZH):
        n = next(i)
        q, after, value = c.QUOTES[n % 6], c.AFTER[n % 10], VALUES[n % 6]
        yield f"{owner}{word}{sep}{q[0]}{value}{q[1]}{after}", value
    for owner, word, sep in itertools.product(
        c.OWNERS, (*c.PIN_WORDS, *c.PIN_WORDS_ZH), (*c.SEPARATORS, *c.BARE)
    ):
        n = next(i)
        value = PINS[n % len(PINS)]
        yield f"{owner}{word}{sep}{value}{c.AFTER[n % 10]}", value
    for word, sep in itertools.product(c.CVV_WORDS, (*c.SEPARATORS, *c.BARE)):
        n = next(i)
        yield f"{word}{sep}{CVVS[n % 3]}{c.AFTER[n % 10]}", CVVS[n % 3]
    for owner, word, sep in itertools.product(c.OWNERS, c.KEY_WORDS, c.SEPARATORS):
        n = next(i)
        q, value = c.QUOTES[n % 6], KEYS[n % 3]
        yield f"{owner}{word}{sep}{q[0]}{value}{q[1]}{c.AFTER[n % 10]}", value
    for form, value in itertools.product(c.REVERSED, VALUES):
        yield form.format(v=value), value
    for lead, number, sep in itertools.product(
        ("", "card ", "my card is ", "卡號 ", "Kartennummer: "), CARDS, CARD_SEPS
    ):
        yield f"{lead}{_card(number, sep)} exp 12/27", _card(number, sep)


def _chat_lines(path: Path) -> list[str]:
    """Every line said in the LoCoMo conversations (ordinary chat: nothing should be masked)."""
    lines = []
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        for key, turns in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                lines += [t["text"] for t in turns if "text" in t]
    return lines


def survived(phrase: str, value: str) -> bool:
    """Whether ``value`` (or, for digits, the same digits in any grouping) is still there."""
    masked = mask(phrase)
    if value in masked:
        return True
    digits = re.sub(r"\D", "", value)
    return len(digits) >= 4 and digits in re.sub(r"\D", "", masked)


def main() -> None:
    """Print the misses (up to ``--show``) and the coverage line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", type=int, default=20, help="misses to print")
    parser.add_argument(
        "--chat", type=Path, help="locomo10.json: also count its chat lines the guard changes"
    )
    args = parser.parse_args()
    if args.chat:
        lines = _chat_lines(args.chat)
        touched = [line for line in lines if mask(line) != line]
        for line in touched[: args.show]:
            print(f"chat line changed: {line!r} -> {mask(line)!r}")
        print(f"chat lines changed: {len(touched)}/{len(lines)}")
    corpus = list(phrases())
    misses = [p for p, v in corpus if survived(p, v)]
    for phrase in misses[: args.show]:
        print(f"miss: {phrase!r} -> {mask(phrase)!r}")
    changed = [s for s in c.ORDINARY if mask(s) != s]
    for sentence in changed:
        print(f"changed: {sentence!r} -> {mask(sentence)!r}")
    done = len(corpus) - len(misses)
    print(
        f"secret phrasings: masked {done}/{len(corpus)} ({100 * done / len(corpus):.2f}%), "
        f"ordinary sentences changed {len(changed)}/{len(c.ORDINARY)}"
    )


if __name__ == "__main__":
    main()
