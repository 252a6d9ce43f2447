"""One parse of MEMORY.md a change, for the turn and the search's signals alike."""

from __future__ import annotations

import pytest

from memory import Memory
from memory.base import parsed as parsed_module
from memory.base.markdown import MemoryDocument

USER = "cli_parse"


def test_a_cold_search_and_the_turn_share_one_parse(
    library: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person whose caches are cold (a restart, a thousand others since) has MEMORY.md
    parsed once for the turn's read and the search's weights, not once each."""
    library.service.remember(USER, "I swim on Tuesdays", user_weight=8)
    library.service.remember(USER, "My sister lives in Tainan")
    parses: list[str] = []
    real = parsed_module.parse_memory

    def counted(text: str) -> MemoryDocument:  # the real parser, its calls counted
        parses.append(text)
        return real(text)

    monkeypatch.setattr(parsed_module, "parse_memory", counted)
    for name in ("parsed_documents", "memory_weights"):
        library.caches.clear(name)
    doc = library.service.documents.get(USER).doc  # what the turn reads (agent.memory_view)
    hits = library.search(USER, "swimming on Tuesday", 5)
    assert hits and len(parses) == 1
    weights = library.service.searcher.signals.weights(USER)
    assert weights == {e.id: e.user_weight for e in doc.entries} and 8 in weights.values()

    library.service.remember(USER, "I take the train to work")  # a change: parsed again
    assert len(library.service.documents.get(USER).doc.entries) == 3 and len(parses) == 2
