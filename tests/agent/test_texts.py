"""The sentence catalogue: every key in both languages, every error code said in both."""

from __future__ import annotations

import string
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.texts import CATALOGUES, LANGUAGES, error_text, say
from history.errors import HistoryError, SessionError
from memory import errors as me
from memory.base.guards import SECRET_KINDS, scan
from memory.base.markdown import MEMORY_CLASSES

FAKE_OPENAI = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
WHEN = datetime(2026, 11, 22, 10, 5, tzinfo=UTC)

# One real instance of every error memory/ and history/ raise, built as their raisers build
# them; the edge must be able to say each in every language.
EXAMPLES: list[me.MemoryStoreError | HistoryError] = [
    me.MemoryStoreError("boom"),
    me.StorageUnavailableError("cannot load sqlite-vec"),
    me.EmbedderUnavailableError("Ollama is not reachable"),
    me.DataDirBusyError(Path("/data"), "4242"),
    me.InvalidUserKeyError("../etc"),
    me.EntryNotFoundError("m-1"),
    me.EntryNotLiveError("m-1", archived=True),
    me.EntryNotLiveError("m-1", archived=False, newer="m-2"),
    me.EntryNotLiveError("m-1", archived=False),
    me.NotTheUsersActError("no seal"),
    me.UnreadableFileError(Path("/u/MEMORY.md"), "cannot be read (Permission denied)"),
    me.CorruptFileError(Path("/u/MEMORY.md"), 17, 3),
    me.ProposalError("unusable", "p-1"),
    me.ProposalNotFoundError("p-1"),
    me.ProposalExpiredError("p-1", WHEN),
    me.ProposalExpiredError("p-1"),
    me.ProposalResolvedError("p-1", "confirmed"),
    me.ProposalRefusedError("refused"),
    me.SensitiveDataError(("password",)),
    me.NoiseError("greeting"),
    me.DuplicateMemoryError("m-1"),
    me.ForgottenTextError(),
    me.InvalidProposalError("refused_too_long", length=2500, limit=2000),
    me.InvalidProposalError("refused_field", field="colour"),
    me.InvalidProposalError("refused_class", allowed=tuple(map(str, MEMORY_CLASSES))),
    me.InvalidProposalError("refused_enforcement"),
    me.InvalidProposalError("refused_scope"),
    me.ReminderNotFoundError(7),
    me.StateDamagedError("malformed"),
    me.StateTooNewError(Path("/data/pcai.db"), ("m900_future",)),
    me.StateSchemaError(Path("/data/pcai.db"), "pending_memories", ("status",)),
    HistoryError("boom"),
    SessionError("not a valid session id: '..'"),
]
EDGE_FIELDS = {"topic": "MEMORY.md"}  # what only the edge knows (the file as its owner names it)


def _subclasses(cls: type) -> set[type]:
    return {cls} | {s for c in cls.__subclasses__() for s in _subclasses(c)}


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_key_is_in_both_languages() -> None:
    assert set(LANGUAGES) == set(CATALOGUES)
    zh, en = CATALOGUES["zh"], CATALOGUES["en"]
    assert sorted(set(zh) ^ set(en)) == []
    for key in zh:
        assert zh[key].strip() and en[key].strip() and zh[key] != en[key], key  # translated
        _fields(zh[key]), _fields(en[key])  # both are format strings (a stray brace raises)


def test_every_error_memory_and_history_raise_has_an_example_here() -> None:
    shown = {type(e) for e in EXAMPLES}
    assert _subclasses(me.MemoryStoreError) | _subclasses(HistoryError) == shown


@pytest.mark.parametrize("exc", EXAMPLES, ids=lambda e: f"{type(e).__name__}-{e.code}")
def test_every_error_is_said_in_both_languages(exc: me.MemoryStoreError | HistoryError) -> None:
    zh, en = error_text(exc, "zh", **EDGE_FIELDS), error_text(exc, "en", **EDGE_FIELDS)
    assert zh and en and zh != en
    assert "{" not in zh + en  # every placeholder was filled


def test_every_secret_kind_has_a_name_in_both_languages() -> None:
    for kind in SECRET_KINDS:
        assert say(f"secret_{kind}", "zh") != say(f"secret_{kind}", "en")


def test_several_secrets_are_named_in_the_readers_language() -> None:
    text = f"密碼：abc12345，卡號 4111111111111111，key {FAKE_OPENAI}"
    refused = me.SensitiveDataError(tuple(dict.fromkeys(f.kind for f in scan(text))))
    en, zh = error_text(refused, "en"), error_text(refused, "zh")
    assert en.startswith("Not saved") and zh.startswith("不會記住")
    assert "password" in en and "card" in en and "API key" in en
    assert "密碼" in zh and "信用卡號" in zh and "金鑰" in zh
    assert "abc12345" not in en + zh and FAKE_OPENAI not in en + zh


def test_a_proposal_that_expired_now_says_when() -> None:
    assert "10:05" in error_text(me.ProposalExpiredError("p-1", WHEN), "en")
    assert "10:05" not in error_text(me.ProposalExpiredError("p-1"), "en")
