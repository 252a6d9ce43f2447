"""The composition root builds working services on an empty data folder."""

from bot.app import Services


def test_remember_then_search_finds_it(services: Services) -> None:
    entry = services.memory.remember("cli_alice", "我每天早上喝咖啡，不加糖")
    hits = services.memory.search("cli_alice", "咖啡")
    assert hits and hits[0].chunk.unit_id == entry.id
