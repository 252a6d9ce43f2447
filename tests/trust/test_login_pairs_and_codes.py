"""Two secrets main kept in clear, attacked with generated phrasings (issue 28, item 10).

A login said as its name and password joined by a slash ("login: alice / hunter22") kept the
password: the value after "login" was the name, and nothing read past the slash. A one-time
code said with the plain word "code" ("code 483920 from the bank") kept its digits: "code"
alone was no keyword. Hypothesis draws the phrasings from lists written here (languages,
owners, qualifiers, separators, the slash in its widths) with values it makes up; ordinary
sentences with numbers and the same words ("room 483", "in 2024", "zip code 10001",
"account: savings / checking") must come out unchanged.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memory.base.guards import mask, scan
from tests.trust.test_secret_phrasings import grouped_digits, passwords

LOGIN_WORDS = (
    "login", "Login", "log-in", "sign-in", "bank login", "username", "user name", "User",
    "user", "帳號", "账号", "登入", "Benutzername", "identifiant", "usuario", "nome utente",
    "gebruikersnaam", "ログイン",
)  # fmt: skip
OWNERS = ("", "my ", "the ", "our ", "My ", "work ", "我的")
QUALIFIERS = ("", " for gmail", " (work)", " at the bank")
SEPARATORS = (": ", " is ", " = ", "：", "是", " : ", " ", " was ", " - ")
NAMES = ("alice", "bob.smith", "alice@example.com", "12345678", "a_lin", "Anna")
SLASHES = (" / ", "/", " | ", "|", " ／ ", "／", "  /  ")
AFTER = ("", ".", ",", " thanks", "，謝謝", "。", " (don't tell)", "\n", " and the pin is new")

CODE_FORMS = (
    "code {v} from the bank",
    "Code {v} from my bank",
    "the code from the bank is {v}",
    "the code is {v}, the bank sent it",
    "the bank sent me the code {v}",
    "{v} is the code the bank sent",
    "the code they texted me: {v}",
    "code {v} came by SMS",
    "the code I got from the bank was {v}",
    "the code the bank sent is {v}",
    "your code is {v}, don't share it",
    "enter code {v} to sign in",
    "the PayPal code {v} expires in 10 minutes",
    "the code in the bank's message is {v}",
    "銀行傳來的代碼 {v}",
    "收到簡訊，代碼是 {v}",
    "银行发来的代码 {v}",
    "Code {v} von der Bank",
    "der Code {v} kam per Nachricht",
    "code {v} de la banque",
    "código {v} del banco",
    "il codice {v} della banca",
)


def _survives(text: str, value: str) -> bool:
    masked = mask(text)
    digits = re.sub(r"\D", "", value)
    return value in masked or (len(digits) >= 4 and digits in re.sub(r"\D", "", masked))


@settings(max_examples=500, deadline=None)
@given(
    owner=st.sampled_from(OWNERS),
    word=st.sampled_from(LOGIN_WORDS),
    qualifier=st.sampled_from(QUALIFIERS),
    sep=st.sampled_from(SEPARATORS),
    name=st.sampled_from(NAMES),
    slash=st.sampled_from(SLASHES),
    value=passwords().filter(lambda v: not re.search(r"[/|]", v)),
    after=st.sampled_from(AFTER),
)
def test_a_login_and_its_password_joined_by_a_slash_is_masked(
    owner: str,
    word: str,
    qualifier: str,
    sep: str,
    name: str,
    slash: str,
    value: str,
    after: str,
) -> None:
    assume(not (qualifier and not sep.strip()))  # "login for gmail alice": no one says it
    text = f"{owner}{word}{qualifier}{sep}{name}{slash}{value}{after}"
    assert not _survives(text, value), mask(text)


@settings(max_examples=400, deadline=None)
@given(form=st.sampled_from(CODE_FORMS), code=grouped_digits(4, 8))
def test_a_one_time_code_from_a_bank_or_a_message_is_masked(form: str, code: str) -> None:
    # Said first, digits with dots or dashes read as a number, a date or an address ("12.50
    # is the price", "10.0.0.1 is the router"): a code said first is grouped by spaces.
    assume(not (form.startswith("{v}") and re.search(r"[.\-]", code)))
    text = form.format(v=code)
    assert not _survives(text, code), mask(text)


def test_the_issues_examples_are_masked() -> None:
    assert mask("login: alice / hunter22") == "login: alice / [REDACTED]"
    assert mask("code 483920 from the bank") == "code [REDACTED] from the bank"


ORDINARY = (
    "room {n} is on the left",
    "in {n} we moved to Taipei",
    "the zip code {n} is near the bank",
    "area code {n}, the bank's branch",
    "error code {n} from the bank app",
    "the order code {n} came by SMS",
    "bus {n} stops at the bank",
    "my user is alice and my account is savings",
    "account: savings / checking",
    "login: alice",
    "the login / logout buttons moved",
    "user/admin roles at the bank",
    "the code of conduct from the bank",
    "promo code SAVE{n} from the bank",
    "I wrote {n} lines of code",
    "帳號是 alice",
    "登入頁面在右上角",
    "我們在 {n} 年開了銀行帳戶",
)


@settings(max_examples=300, deadline=None)
@given(form=st.sampled_from(ORDINARY), n=st.integers(0, 99_999))
def test_ordinary_numbers_and_login_words_are_left_alone(form: str, n: int) -> None:
    text = form.format(n=n)
    assert scan(text) == [] and mask(text) == text


@pytest.mark.parametrize(
    "text", ["username: alice99", "my user is alice99", "account: 12345678", "帳號：bob2024"]
)
def test_a_user_name_is_no_secret(text: str) -> None:
    assert mask(text) == text
