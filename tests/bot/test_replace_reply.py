"""A reply of 取代 / replace to a conflicting proposal supersedes the old memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.app import Services
from bot.frontdesk.backend import backend_for, classify_words

USER = "telegram_4242"
TOPIC = {"canonical_topic": "drink:morning"}


def test_reply_words_are_read_by_the_write_path() -> None:
    assert classify_words("取代") == "replace" and classify_words("Replace!") == "replace"
    assert classify_words("新增") == "confirm" and classify_words("確認") == "confirm"
    assert classify_words("取消") == "reject" and classify_words("我想取代它因為") is None


def test_replace_supersedes_and_confirm_keeps_both(services: Services) -> None:
    backend = backend_for(services)
    now = datetime.now(UTC)
    first = services.confirm.propose(USER, "我每天早上喝烏龍茶，不加糖", now=now, fields=TOPIC)
    assert backend.decide(USER, first.id, "confirm", via="button").status == "confirmed"

    second = services.confirm.propose(
        USER, "我現在每天早上改喝黑咖啡", now=now + timedelta(seconds=1), fields=TOPIC
    )
    assert second.conflicts_shown  # the same topic: add or replace?
    assert backend.decide(
        USER, second.id, classify_words("取代") or "reject", via="reply"
    ).status == ("confirmed")

    chain = services.governance.archaeology(USER, "drink:morning")
    assert [e.text for e in chain] == ["我每天早上喝烏龍茶，不加糖", "我現在每天早上改喝黑咖啡"]
    assert [e.status for e in chain] == ["deprecated", "active"]
    assert chain[0].id in chain[1].supersedes

    third = services.confirm.propose(
        USER, "週末早上有時候也喝抹茶拿鐵", now=now + timedelta(seconds=2), fields=TOPIC
    )
    assert backend.decide(USER, third.id, "confirm", via="button").status == "confirmed"
    statuses = {e.text: e.status for e in services.memory.entries(USER)}
    assert statuses["我現在每天早上改喝黑咖啡"] == "active"  # a plain confirm adds beside it
    assert statuses["週末早上有時候也喝抹茶拿鐵"] == "active"
