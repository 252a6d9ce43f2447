"""Every function that reads or masks user text is total: it answers on every prefix of a text.

A reply is masked while it streams, so the masker reads every prefix of it; a message can end
anywhere, a half-typed secret too (``my password is "``). On every prefix of every text drawn
here each function of ``tests/trust/textfuncs.py`` returns, or raises only the one sentence it
raises on purpose (the registry maps those to answers): no IndexError, no ValueError. The texts
are the adversarial runs of the registry, any text, and a secret's keyword, separator and an
opening quote or bracket with what may follow it (nothing, spaces, a line break, half a value),
for every keyword of the guard's lexicon and of the hand-written corpus.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory.base import secret_numbers, secret_words
from memory.base.guards import mask, scan, secrets_in
from tests.memory import secret_corpus as c
from tests.trust.textfuncs import TEXT_FUNCTIONS, UNITS

# Every keyword the guard knows, and the corpus's own (written independently of it).
_KEYWORDS = sorted(
    {w for words in secret_words.KEYWORDS.values() for w in words}
    | {*c.PASSWORD_WORDS, *c.PASSWORD_WORDS_ZH, *c.PIN_WORDS, *c.PIN_WORDS_ZH, *c.CVV_WORDS}
    | {*c.KEY_WORDS}
)
_SEPARATORS = sorted(
    {*c.SEPARATORS, *c.SEPARATORS_ZH, *c.POSSESSIVES, *c.BARE, "", "-", "_", ".", "'"}
    | {f" {w} " for w in secret_words.SEPARATOR_WORDS | secret_words.FILLER_WORDS}
    | set(secret_words.SEPARATOR_SYMBOLS)
    | {f" {s} " for s in secret_words.SEPARATOR_SYMBOLS}
    | set(secret_words.SEPARATOR_WORDS_ZH)
    | {" for gmail: ", " (work) ", " for ", " number ", " no. ", "號", " of the wifi "}
)
# Every quote and bracket that can open (or close) a value, in the languages the guard reads.
_OPENERS = tuple("\"'`“”‘’«»‹›„‚「」『』《》〈〉【】（）()[]{}<>＂＇｢｣")
_ENDINGS = ("", " ", "  ", "\n", "\u3000", "\t", "x", "1", "ab1", "12 34", "密", " \n", "'s")


@st.composite
def half_said_secrets(draw: st.DrawFn) -> str:
    """A keyword, a separator, an opening quote and what follows it: a secret cut anywhere."""
    owner = draw(st.sampled_from(("", "my ", "the ", "我的", "mein ")))
    word = draw(st.sampled_from(_KEYWORDS))
    sep = draw(st.sampled_from(_SEPARATORS))
    quotes = draw(st.lists(st.sampled_from(_OPENERS), max_size=3))
    ending = draw(st.sampled_from(_ENDINGS))
    return f"{owner}{word}{sep}{''.join(quotes)}{ending}"


_adversarial = st.lists(
    st.one_of(st.sampled_from(UNITS), st.text(max_size=3)), min_size=1, max_size=12
).map("".join)
texts = st.one_of(
    half_said_secrets(),
    st.lists(st.one_of(half_said_secrets(), _adversarial), min_size=2, max_size=3).map("".join),
    _adversarial,
    st.text(max_size=40),
)

# The cases issue 28 measured: the masker raised IndexError on each.
MEASURED = ('my password is "', "密碼是「", 'PIN: "', "api key = `", "wifi password «")


def _prefixes(text: str) -> list[str]:
    return [text[:n] for n in range(len(text) + 1)]


@pytest.mark.parametrize("name", list(TEXT_FUNCTIONS))
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=texts)
@example(text=MEASURED[0])
@example(text=MEASURED[1])
def test_every_prefix_is_answered(name: str, text: str) -> None:
    f = TEXT_FUNCTIONS[name]
    for prefix in _prefixes(text):
        f(prefix)  # raises nothing but the sentences the registry answers with


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=half_said_secrets())
def test_the_guard_answers_every_half_said_secret(text: str) -> None:
    for prefix in _prefixes(text):
        masked = mask(prefix, known=secrets_in(text))
        assert [f.start for f in scan(prefix)] == sorted(f.start for f in scan(prefix))
        assert mask(masked) == masked  # and masking what it masked changes nothing


@pytest.mark.parametrize("text", MEASURED)
def test_the_measured_texts_are_answered(text: str) -> None:
    assert mask(text) == text  # nothing follows the quote: nothing to mask, nothing lost
    assert scan(text) == []


# The checksums the guard reads numbers with are public (guards.luhn_valid, ...): total too.
# "²" and "①" are digits to str.isdigit() that int() cannot read; "４" is one it can.
_CHECKS = {
    "luhn_valid": secret_numbers.luhn_valid,
    "card_ok": secret_numbers.card_ok,
    "taiwan_id_valid": secret_numbers.taiwan_id_valid,
    "china_id_valid": secret_numbers.china_id_valid,
    "ssn_valid": secret_numbers.ssn_valid,
    "iban_valid": secret_numbers.iban_valid,
}
_DIGITISH = st.sampled_from(list("0123456789４２²³¹①٣Ⅻ-Xx AGBZ"))


@pytest.mark.parametrize("name", list(_CHECKS))
@settings(max_examples=300, deadline=None)
@given(value=st.lists(_DIGITISH, min_size=8, max_size=22).map("".join))
@example(value="4²11111111111111")
@example(value="A²23456789")
@example(value="1101051949²231002X")
@example(value="GB82WEST1234569876543²")
def test_the_number_checks_answer_every_string(name: str, value: str) -> None:
    assert _CHECKS[name](value) in (True, False)
