"""Promise 1: nothing enters long-term memory without the user's own act.

Each test is an attack on that promise: the model confirming its own proposal, code that
holds the confirmation service confirming without the user, a bare "ok" that is ambiguous
or answers something else, an ✏️ edit state that outlives its proposal. The model is the
fake Ollama; Telegram is the offline Bot API; everything else is the real write path.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app import Services, build_agent, build_services
from bot.chat import TerminalChat
from bot.frontdesk.backend import backend_for
from bot.settings import load_settings
from bot.telegram.application import build_application
from bot.telegram.context import BotApp
from memory.index.embedders import E5Embedder
from memory.write.consent import NotTheUsersActError, UserAct, UserActMint
from tests.bot.telegram_doubles import RecordingRequest, Updates, bot_message
from tests.fakes.ollama_server import ChatReply, FakeOllama, tool_reply

OWNER = 1001
KEY = f"telegram_{OWNER}"
TEA = "我最喜歡的茶是凍頂烏龍"
COFFEE = "我每天早上喝一杯黑咖啡"
TOPIC = "drink:morning"
PENDING_REPLY = "要記住嗎？確認後才會儲存。"  # the model's words after proposing


@dataclass
class World:
    """Real services and agent, the fake model, and the bot on an offline Bot API."""

    services: Services
    model: FakeOllama
    app: BotApp
    api: RecordingRequest
    updates: Updates

    async def send(self, text: str, reply_to: int | None = None) -> None:
        """The owner types ``text`` (optionally as a reply to bot message ``reply_to``)."""
        replied = bot_message(reply_to, OWNER) if reply_to is not None else None
        update = self.updates.message(self.app.bot, OWNER, text, reply_to=replied, lang="en")
        await self.app.process_update(update)

    async def press(self, data: str, message_id: int) -> None:
        """The owner presses an inline button."""
        await self.app.process_update(self.updates.button(self.app.bot, OWNER, data, message_id))

    async def offer(self, text: str) -> None:
        """The owner asks the bot to remember ``text`` in chat; the model proposes it (its
        turn shows the proposal last). A /remember typed is the user's act: saved at once."""
        self.model.queue_chat(tool_reply("memory_save", text=text), PENDING_REPLY)
        await self.send(f"記住：{text}")

    def shown(self) -> list[tuple[int, str]]:
        """(message id, proposal id) of every proposal message the bot sent, in order."""
        out = []
        for params, mid in self.api.sent:
            markup = params.get("reply_markup") or {}
            rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
            if rows:
                out.append((mid, str(rows[0][0]["callback_data"]).split(":")[2]))
        return out

    def texts(self) -> list[str]:
        """Every text the bot sent."""
        return self.api.texts()

    def memory_md(self) -> str:
        """The owner's MEMORY.md as it is on disk."""
        path = self.services.settings.data_dir / "users" / KEY / "MEMORY.md"
        return path.read_text(encoding="utf-8") if path.exists() else ""


class SentRecorder(RecordingRequest):
    """The offline Bot API, also keeping each sent message with the id it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[dict[str, Any], int]] = []

    def _result(self, name: str, params: dict[str, Any]) -> Any:
        result = super()._result(name, params)
        if name == "sendMessage":
            self.sent.append((params, int(result["message_id"])))
        return result


@pytest.fixture
async def world(
    tmp_path: Path, fake_ollama: FakeOllama, embedder: E5Embedder
) -> AsyncIterator[World]:
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "OLLAMA_HOST": fake_ollama.url,
            "TELEGRAM_BOT_TOKEN": "123:TEST",
            "PCAI_ALLOWED_USERS": str(OWNER),
        }
    )
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    build_agent(services)
    api = SentRecorder()
    app = build_application(settings, backend_for(services), request=api)
    await app.initialize()
    yield World(services, fake_ollama, app, api, Updates())
    await app.shutdown()
    services.close()


def _now() -> datetime:
    return datetime.now().astimezone()


def _confirm_after_save(ref: Callable[[str], str]) -> Callable[[dict[str, Any]], ChatReply]:
    """A model that proposes COFFEE, then calls memory_confirm(ref(proposal id)) itself."""

    def script(body: dict[str, Any]) -> ChatReply:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools:
            return tool_reply("memory_save", text=COFFEE, topic=TOPIC)
        if len(tools) == 1:
            pid = str(json.loads(tools[0]["content"]).get("proposal_id", ""))
            return tool_reply("memory_confirm", proposal_id=ref(pid))
        return "已經幫你記住了。"

    return script


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


# -- the model proposes; it never confirms -------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [lambda pid: "yes", lambda pid: "好", lambda pid: f"{pid} now", lambda pid: "replace"],
    ids=["yes", "好", "id-now", "replace"],
)
async def test_the_model_cannot_confirm_its_own_proposal_in_the_same_turn(
    world: World, ref: Callable[[str], str]
) -> None:
    older = world.services.memory.remember(KEY, "我每天早上喝一杯熱拿鐵", canonical_topic=TOPIC)
    world.model.chat_handler = _confirm_after_save(ref)
    await world.send("記住：我現在早上改喝黑咖啡了")

    assert COFFEE not in world.memory_md()
    entries = world.services.memory.entries(KEY)
    assert [(e.id, e.status) for e in entries] == [(older.id, "active")]  # not deprecated
    [waiting] = world.services.confirm.pending(KEY, _now())
    assert waiting.text == COFFEE  # still the user's to answer, with the buttons
    assert world.shown()[-1][1] == waiting.id
    answer = _tool_results(world.model.chat_requests[-1])[-1]
    assert "status" not in answer and "only the user" in answer["error"].lower()


async def test_code_holding_the_service_cannot_confirm_without_the_user(world: World) -> None:
    # What the agent holds is the confirmation service; today's API let it confirm by id.
    agent = world.services.agent
    assert agent is not None
    service, mint = agent.confirm, world.services.user_acts
    p = service.propose(KEY, TEA, now=_now())
    other = service.propose(KEY, COFFEE, now=_now())
    with pytest.raises(TypeError):
        service.confirm(KEY, p.id, now=_now())  # type: ignore[call-arg]

    real_reject = mint.act(KEY, p.id, "reject", via="button")
    forgeries = (
        UserAct(KEY, p.id, "confirm", "button", seal="0" * 64),  # made up
        UserActMint().act(KEY, p.id, "confirm", via="button"),  # sealed by another mint
        replace(real_reject, action="confirm"),  # the user's "no" turned into "yes"
        replace(mint.act(KEY, other.id, "confirm", via="button"), proposal_id=p.id),
        replace(mint.act(KEY, other.id, "confirm", via="button"), action="replace"),
    )
    for act in forgeries:
        with pytest.raises(NotTheUsersActError):
            service.confirm(act, now=_now())
    with pytest.raises(NotTheUsersActError):  # a reject is not a confirm
        service.confirm(real_reject, now=_now())
    edit = mint.act(KEY, p.id, "edit", via="edit", text="我最喜歡的茶是東方美人")
    with pytest.raises(NotTheUsersActError):  # the user's edit, to other text
        service.edit(replace(edit, text="我最喜歡的茶是普洱"), now=_now())

    assert world.services.memory.entries(KEY) == []
    assert [w.text for w in service.pending(KEY, _now())] == [TEA, COFFEE]


def test_the_agent_package_never_reaches_the_mint() -> None:
    # The mint is the bot layer's: no module of agent/ may name it or the Services field.
    root = Path(__file__).resolve().parents[2] / "agent"
    modules = list(root.rglob("*.py"))  # every folder: agent/turn/, agent/reminders/ ...
    sources = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in modules}
    assert {"pipeline.py", "turn/tools.py", "reminders/desk.py"} <= sources.keys()
    for name, source in sources.items():
        assert "UserActMint" not in source and "user_acts" not in source, name


# -- a bare word confirms only what the user is looking at ---------------------------------


async def test_bare_ok_with_two_waiting_asks_which_and_writes_nothing(world: World) -> None:
    await world.offer(TEA)
    await world.offer(COFFEE)
    first_two, asked = world.shown(), len(world.model.chat_requests)
    await world.send("ok")

    assert world.services.memory.entries(KEY) == []
    assert len(world.model.chat_requests) == asked  # not handed to the model either
    assert len(world.services.confirm.pending(KEY, _now())) == 2
    again = world.shown()[len(first_two) :]
    assert sorted(pid for _, pid in again) == sorted(pid for _, pid in first_two)
    assert any("你指的是哪一條" in t for t in world.texts())  # they write Chinese

    await world.send("好")  # still two: still asks
    assert world.services.memory.entries(KEY) == []
    (tea_mid, _), _ = first_two
    await world.send("ok", reply_to=tea_mid)  # a reply names its proposal (even the first showing)
    assert [e.text for e in world.services.memory.entries(KEY)] == [TEA]


async def test_bare_ok_after_other_talk_does_not_confirm(world: World) -> None:
    await world.offer(TEA)
    world.model.queue_chat("今天是星期三。")
    await world.send("今天星期幾？")  # the bot's last message is now its answer
    await world.send("ok")
    assert world.services.memory.entries(KEY) == []
    assert TEA not in world.memory_md()
    assert any("你是指這條" in t for t in world.texts())

    await world.send("ok")  # now the proposal is the bot's last message: the user's act
    assert [e.text for e in world.services.memory.entries(KEY)] == [TEA]


async def test_a_notice_after_the_proposal_is_the_last_word(world: World) -> None:
    await world.offer(TEA)
    await world.offer(COFFEE)
    mid, pid = world.shown()[0]
    await world.press(f"pm:d:{pid}", mid)  # one left, but the bot's last message is COFFEE's
    await world.send("/stats")
    await world.send("ok")
    assert world.services.memory.entries(KEY) == []


async def test_edit_state_expires_with_its_proposal(world: World) -> None:
    await world.offer(TEA)
    mid, pid = world.shown()[-1]
    await world.press(f"pm:e:{pid}", mid)
    world.services.pending.expire_due(_now() + timedelta(minutes=31))  # the expiry job ran
    world.model.queue_chat("好的，綠茶也不錯。")
    await world.send("我也喜歡喝綠茶")

    # The message is ordinary chat again: the model answers it, no proposal is rewritten.
    assert any(
        "我也喜歡喝綠茶" in json.dumps(b, ensure_ascii=False) for b in world.model.chat_requests
    )
    assert world.services.pending.get(KEY, pid).text == TEA
    assert world.services.memory.entries(KEY) == []


# -- the terminal chat keeps the same rules ------------------------------------------------


async def _terminal_offer(world: World, chat: TerminalChat, text: str) -> None:
    """The terminal user asks to remember ``text``; the model proposes it."""
    world.model.queue_chat(tool_reply("memory_save", text=text), PENDING_REPLY)
    await chat.handle(f"記住：{text}")


async def test_terminal_bare_ok_with_two_waiting_writes_nothing(world: World) -> None:
    out = io.StringIO()
    chat = TerminalChat(backend_for(world.services), "cli_ann", out)
    await _terminal_offer(world, chat, TEA)
    await _terminal_offer(world, chat, COFFEE)
    asked = len(world.model.chat_requests)
    await chat.handle("ok")
    assert len(world.services.confirm.pending("cli_ann", _now())) == 2
    assert world.services.memory.entries("cli_ann") == []
    assert len(world.model.chat_requests) == asked


async def test_terminal_bare_ok_after_other_talk_does_not_confirm(world: World) -> None:
    out = io.StringIO()
    chat = TerminalChat(backend_for(world.services), "cli_ann", out)
    await _terminal_offer(world, chat, TEA)
    assert len(world.services.confirm.pending("cli_ann", _now())) == 1
    world.model.queue_chat("今天是星期三。")
    await chat.handle("今天星期幾？")
    await chat.handle("ok")
    assert world.services.memory.entries("cli_ann") == []


# -- the user's own acts still confirm -----------------------------------------------------


async def test_user_acts_confirm(world: World) -> None:
    await world.offer(TEA)
    await world.send("好")  # one waiting, and it is the bot's last message
    assert [e.text for e in world.services.memory.entries(KEY)] == [TEA]

    await world.offer(COFFEE)
    await world.offer("我住在台中市西屯區")
    (coffee_mid, _), (_, home) = world.shown()[-2:]
    await world.send("yes", reply_to=coffee_mid)  # a reply names its proposal
    await world.send(f"/confirm {home}")
    texts = sorted(e.text for e in world.services.memory.entries(KEY))
    assert texts == sorted([TEA, COFFEE, "我住在台中市西屯區"])


async def test_a_typed_remember_is_the_users_act_and_what_the_model_proposes_still_waits(
    world: World,
) -> None:
    await world.send(f"/remember {TEA}")  # the user's own command: saved at once
    [entry] = world.services.memory.entries(KEY)
    assert entry.text == TEA and world.services.confirm.pending(KEY, _now()) == []
    assert world.model.chat_requests == []  # no model took part
    # It went the way a "yes" goes: a proposal of the command, confirmed by the user's act.
    with world.services.state.lock:
        rows = world.services.state.conn.execute(
            "SELECT source, status, entry_id FROM pending_memories WHERE user_key=?", (KEY,)
        ).fetchall()
    assert [tuple(r) for r in rows] == [("command", "confirmed", entry.id)]

    # In chat the model proposes (a tool call, then its words alone) and tries to confirm:
    # both wait for the user.
    world.model.chat_handler = _confirm_after_save(lambda pid: "yes")
    await world.send("記住：我現在早上改喝黑咖啡了")
    world.model.chat_handler = None
    world.model.queue_chat("好的，我記住了！")  # no tool call: proposed from the user's words
    await world.send("記住我住在台中市西屯區")
    waiting = sorted(p.text for p in world.services.confirm.pending(KEY, _now()))
    assert waiting == sorted([COFFEE, "我住在台中市西屯區"])
    assert [e.text for e in world.services.memory.entries(KEY)] == [TEA]
    assert COFFEE not in world.memory_md() and "西屯" not in world.memory_md()
