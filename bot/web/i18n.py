"""The memory page's words: the catalogue's page entries (agent/texts), in one language."""

from __future__ import annotations

from agent.texts import PAGES, catalogue_language

# Each key's (zh, en), read from the catalogue: what tests/bot/test_one_language.py checks.
WORDS: dict[str, tuple[str, str]] = {
    key: (PAGES["zh"][key], PAGES["en"][key]) for key in PAGES["en"]
}


def word(key: str, lang: str) -> str:
    """The word ``key`` in ``lang`` ("zh" or "en"); the key itself when unknown."""
    return PAGES[catalogue_language(lang)].get(key, key)
