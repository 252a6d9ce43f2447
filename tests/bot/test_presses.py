"""A press whose handler fails is still answered once, with the sentence that says why."""

from __future__ import annotations

from bot.app import Services
from tests.bot.conftest import OWNER, Harness


async def test_a_press_whose_handler_fails_gets_one_answer(
    tg: Harness, services: Services
) -> None:
    """↩️ Undo under /remember when MEMORY.md can no longer be read: the undo raises inside
    its handler; the error handler answers the press (once) with what to fix."""
    await tg.send(OWNER, "/remember I like green tea")
    [sent] = [p for p in tg.api.named("sendMessage") if p.get("reply_markup")]
    [[undo]] = sent["reply_markup"]["inline_keyboard"]
    memory_md = services.memory.paths("telegram_1001").memory_md
    memory_md.write_bytes(b"\xff\xfe not utf-8 " + memory_md.read_bytes())
    await tg.press(OWNER, undo["callback_data"], 1)
    [answer] = tg.api.named("answerCallbackQuery")
    assert "MEMORY.md" in answer.get("text", ""), answer


async def test_a_press_answered_before_its_handler_failed_is_not_answered_again(
    tg: Harness, services: Services
) -> None:
    """📌 under /memory answers the press, then its message cannot be sent: the error
    handler must not answer the press a second time (Telegram takes one answer)."""
    await tg.send(OWNER, "/remember I like green tea")
    [entry] = services.memory.entries("telegram_1001")
    tg.api.refuse.add("sendMessage")
    await tg.press(OWNER, f"mm:p:{entry.id}", 1)
    assert len(tg.api.named("answerCallbackQuery")) == 1
