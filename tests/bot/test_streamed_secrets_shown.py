"""Both front ends show a streamed reply without its secrets (issue 28): Telegram's drafts, as
the Telegram stand-in records them, and the terminal's scrollback.

Neither can take back what it showed: a draft is on the person's screen, a printed line in
the terminal's scrollback. So every draft must be a start of the final message, masked, and
the terminal prints the final message exactly once, nothing before it. On the code before,
both showed a quoted pass-phrase longer than the 48-character hold-back, a pass-phrase the
person said echoed bare, and a URL password with dots, in part.
"""

from __future__ import annotations

import asyncio
import io
import itertools

from hypothesis import given, settings
from telegram import Bot

from bot.chat import StreamPrinter
from bot.telegram.streaming import DraftStream
from tests.agent.secret_replies import (
    SecretReply,
    chunk_sizes,
    leaks,
    secret_replies,
    stream,
)
from tests.fakes.telegram_server import FakeTelegram

TOKEN = "123456:TEST"
ALICE = 1001


def test_no_telegram_draft_holds_a_secret_the_final_message_masks() -> None:
    draft_ids = itertools.count(1)
    with FakeTelegram() as tg:

        async def drafts_of(case: SecretReply, sizes: list[int]) -> list[str]:
            draft_id = next(draft_ids)
            base = f"{tg.url}/bot"
            async with Bot(TOKEN, base_url=base, base_file_url=f"{tg.url}/file/bot") as bot:
                drafts = DraftStream(bot, ALICE, draft_id, every=0.0)
                await stream(case, sizes, drafts)
                while drafts._task is not None and not drafts._task.done():
                    await asyncio.sleep(0.01)  # the last draft goes out
                await drafts.close()
            return [
                str(c["params"].get("text") or "")
                for c in tg.calls
                if c["method"].lower() == "sendmessagedraft"
                and int(c["params"]["draft_id"]) == draft_id
            ]

        @settings(max_examples=40, deadline=None)
        @given(case=secret_replies(), sizes=chunk_sizes)
        def check(case: SecretReply, sizes: list[int]) -> None:
            final = case.final
            for text in asyncio.run(drafts_of(case, sizes)):
                assert leaks(case, text) == [], text
                assert final.startswith(text), (text, final)

        check()


@settings(max_examples=200, deadline=None)
@given(case=secret_replies(), sizes=chunk_sizes)
def test_the_terminal_prints_the_final_message_once_and_no_secret_before_it(
    case: SecretReply, sizes: list[int]
) -> None:
    out = io.StringIO()
    printer = StreamPrinter(out)
    asyncio.run(stream(case, sizes, printer))
    streamed = out.getvalue()
    assert leaks(case, streamed) == [], streamed
    rest = printer.finish(case.final)
    if rest:  # nothing was printed while the reply was written: the final comes whole
        assert streamed == "" and rest == case.final
        return
    assert out.getvalue() == case.final + "\n"  # the scrollback is the final message
