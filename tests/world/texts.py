"""What the person says: plain sentences, the adversarial runs of tests/trust/textfuncs.py,
secrets with values planted to be looked for later, and half-typed secrets.

A drawn text is a :class:`Said`: the text, and the secret value it plants ("" for none). A
planted value is made of letters and digits no other text has, so finding its bytes in a file
means the secret was stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from bot.frontdesk.backend import classify_words
from tests.trust.textfuncs import UNITS
from tests.world.options import OFF

PLAIN = (
    "I like green tea",
    "My sister lives in Lyon",
    "I walk the dog at seven",
    "我喜歡烏龍茶",
    "我妹妹住在高雄",
    "Anna's birthday is March 3",
    "I work at the bakery on Fridays",
    "咖啡不加糖",
    "My favourite colour is teal",
    "我每天早上七點跑步",
)
# A secret keyword, a separator and the opening quote, nothing after it (issue 28, item 2).
HALF_SECRETS = (
    'my password is "',
    "密碼是「",
    'PIN: "',
    "api key = `",
    "wifi password «",
    "my password is '",
)
# How a person says a secret; the masker is meant to take each of these whole.
SECRET_FORMS = (
    'my password is "{v}"',
    "my password is {v}",
    "密碼是 {v}",
    "the wifi password is '{v}'",
    "api key = {v}",
    "my bank password: {v}",
)
REMINDER_TEXTS = ("call mom", "water the plants", "打電話給媽媽", "take the pills 💊", "買牛奶")
ZONES = (
    "Asia/Taipei",
    "Europe/Berlin",
    "America/New_York",
    "UTC",
    "Pacific/Kiritimati",
    "Pacific/Pago_Pago",
    "Asia/Kolkata",
)


@dataclass(frozen=True, slots=True)
class Said:
    """A text the person says, and the secret value it plants ("" for none)."""

    text: str
    secret: str = ""


# Eight or more letters and digits, starting "Zq": nothing else in the world reads like it.
secret_values = st.text("abcdefghkmnpqrstuvwxyz23456789", min_size=6, max_size=12).map(
    lambda s: f"Zq{s}7"
)
adversarial = st.lists(st.sampled_from(UNITS), min_size=1, max_size=6).map("".join)
plain = st.sampled_from(PLAIN)


KINDS = ("plain", "adversarial", "adversarial", "halfsecret", "halfsecret", "secret")


@st.composite
def said(draw: st.DrawFn) -> Said:
    """One thing the person says (a message, a memory, a new text)."""
    kind = draw(st.integers(0, 5))
    base = draw(plain)
    if KINDS[kind] in OFF:
        return Said(base)
    if kind == 0:
        return Said(base)
    if kind == 1:
        return Said(f"{base} {draw(adversarial)}")
    if kind == 2:
        return Said(draw(adversarial))
    if kind == 3:
        return Said(f"{base} {draw(st.sampled_from(HALF_SECRETS))}".strip())
    if kind == 4:
        return Said(draw(st.sampled_from(HALF_SECRETS)))
    value = draw(secret_values)
    form = draw(st.sampled_from(SECRET_FORMS)).format(v=value)
    return Said(f"{base}, {form}" if draw(st.booleans()) else form, value)


def as_message(s: Said) -> Said:
    """``s`` as a chat message: never empty, never a command, never a bare yes / no (those
    answer a proposal instead of reaching the model)."""
    text = s.text.lstrip("/")
    if not text.strip():
        text = f"hm {text}"
    if classify_words(text) is not None or classify_words(text.strip()) is not None:
        text = f"{text} (just saying)"
    return Said(text, s.secret)
