"""Promise 5, attacked: a secret typed in chat is stored nowhere and logged nowhere.

The guard must catch the way people actually type passwords and codes (zh and en) without
masking ordinary numbers; then a whole conversation that carries secrets goes through the
real agent, a misbehaving model (the fake Ollama copies whatever looks interesting back into
its replies, summaries and keywords), compaction, the idle summary, the topic index, the
short-term table and the search index, and no file under the data dir, no row of pcai.db or
of the index, and no log line at INFO or above may hold the secret.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.build import agent_worker
from agent.ollama_client import OllamaEmbedder
from agent.pipeline import Agent
from agent.types import IncomingMessage
from bot.app import Services, build_agent, build_services
from bot.settings import load_settings
from memory.base.db import connect
from memory.base.guards import REDACTED, mask, scan
from memory.state.short_term import ShortTermStore
from tests.fakes.chat_requests import instruction_of, summarised_lines
from tests.fakes.ollama_server import FakeOllama, tool_reply


# -- the guard ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password hunter2xyz", "hunter2xyz"),
        ("my wifi password hunter2xyz please", "hunter2xyz"),
        ("密碼hunter2xyz", "hunter2xyz"),
        ("wifi 密碼是hunter2xyz 喔", "hunter2xyz"),
        ("pw: hunter2xyz", "hunter2xyz"),
        ("PW=Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("PIN 1234", "1234"),
        ("pin:8642", "8642"),
        ("my pin is 0000", "0000"),
        ("提款卡 PIN 碼 8765", "8765"),
        ("驗證碼 123456", "123456"),
        ("验证码：654321，五分鐘內有效", "654321"),
        ("passcode 778899", "778899"),
        ("the door passcode is 4c7x9q", "4c7x9q"),
        ("OTP 482913 for the bank", "482913"),
        ("門禁密碼 5566", "5566"),
        ("密碼改成abc12345了", "abc12345"),
        ("password for gmail: Tr0ub4dor", "Tr0ub4dor"),
        ("one-time code 905118", "905118"),
        ("認證碼是 337190", "337190"),
        # The phrasings issue 20 found stored in clear.
        ("my password is: hunter22", "hunter22"),
        ("the old password was hunter22", "hunter22"),
        ("password => hunter22", "hunter22"),
        ("Password -> hunter22", "hunter22"),
        ("the password's hunter22", "hunter22"),
        ("wifi key: hunter22", "hunter22"),
        ("my PIN is 1 2 3 4", "1 2 3 4"),
        ("Mein Passwort lautet hunter22", "hunter22"),
        ("mot de passe : hunter22", "hunter22"),
        ("mi contraseña es hunter22", "hunter22"),
        ("la mia password è hunter22", "hunter22"),
        ("a minha senha é hunter22", "hunter22"),
        ("mijn wachtwoord is hunter22", "hunter22"),
    ],
)
def test_natural_password_and_code_phrasings_are_masked(text: str, secret: str) -> None:
    found = scan(text)
    assert [text[f.start : f.end] for f in found] == [secret]
    masked = mask(text)
    assert secret not in masked and REDACTED in masked


@pytest.mark.parametrize(
    "text",
    [
        "明天 2026-03-04 下午 3 點開會",
        "這件外套 1234 元，打折後 999 元",
        "我的電話是 0912 345 678，有事打給我",
        "call me at +886 912 345 678",
        "I forgot my PIN again",
        "PIN 碼要設四位數",
        "驗證碼一直收不到",
        "password manager 很好用",
        "密碼錯誤三次會被鎖住",
        "change your password every 90 days",
        "pin 2 on the chip is ground",
        "I paid 1234 dollars for the flight on 2025-12-01",
        "room 1234, floor 5",
        "password 錯了",
        "my password is too short",
        "order 123456 shipped yesterday",
        "the pin code screen shows 4 digits",
        "a spinning wheel of 1234 colours",
        "我家密碼鎖是 Yale 的",
        "密碼 2026-03-04 到期，記得換",
        "password 2FA is on",
        "密碼每 90 天要換一次",
    ],
)
def test_ordinary_numbers_and_password_talk_are_left_alone(text: str) -> None:
    assert scan(text) == []
    assert mask(text) == text


# -- every store -------------------------------------------------------------------------
OWNER = "telegram_1001"
PASSWORD, PIN, CODE = "hunter2xyz", "97531", "864213"
SECRETS = (PASSWORD, PIN, CODE)
SAID = (
    f"my wifi password {PASSWORD}, the router sits in the hall cupboard",
    f"記一下：密碼{PASSWORD}，路由器在玄關櫃子",
    f"門禁 PIN {PIN}，明天搬家",
    f"銀行的驗證碼 {CODE} 先別管，我們聊晚餐",
)
# Plain words of the conversation (user text) that must not reach a log line at INFO+.
USER_WORDS = ("router", "路由器", "cupboard", "玄關", "晚餐", *SECRETS)
_DIGITS = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*")


def misbehaving_model(request: dict[str, Any]) -> Any:
    """Copies the tokens that look interesting (they hold digits) into everything it writes."""
    messages = request["messages"]
    system, last = instruction_of(request), messages[-1]
    summary = system.startswith("Summarise")  # it echoes the lines it is asked about
    data = "\n".join(summarised_lines(request)) if summary else str(last.get("content", ""))
    loot = list(dict.fromkeys(_DIGITS.findall(data)))
    if system.startswith("Summarise"):  # compaction and idle summaries: echo and keywords
        return f"{data}\nKeywords: {', '.join(loot[:5] or ['wifi'])}"
    if last["role"] == "user" and "router" in data:
        return tool_reply(
            "memory_save",
            text="路由器放在玄關的櫃子裡",
            section=f"wifi password {PASSWORD}",
            topic=f"password {PASSWORD}",
        )
    return f"好的，我記住了 {' '.join(loot)}".strip()


@dataclass
class Flow:
    """The agent over real services on a temporary data dir, and the misbehaving model."""

    services: Services
    agent: Agent
    fake: FakeOllama
    clock: datetime

    def msg(self, text: str) -> IncomingMessage:
        """A message from the owner, one minute after the previous one."""
        self.clock += timedelta(minutes=1)
        return IncomingMessage(user_key=OWNER, text=text, time=self.clock, language="zh")


@pytest.fixture
def flow(tmp_path: Path, fake_ollama: FakeOllama) -> Iterator[Flow]:
    """Compaction after 3 user turns, keeping 1; the model is the misbehaving one."""
    settings = load_settings(
        {
            "PCAI_DATA_DIR": str(tmp_path / "botmemory"),
            "OLLAMA_HOST": fake_ollama.url,
            "PCAI_EMBEDDER": "ollama",
            "PCAI_HISTORY_AUTO_WRITE_THRESHOLD_TURNS": "3",
            "PCAI_HISTORY_HISTORY_TURNS_AFTER": "1",
        }
    )
    fake_ollama.chat_handler = misbehaving_model
    embedder = OllamaEmbedder(fake_ollama.url, settings.embed_model, dim=fake_ollama.dim)
    services = build_services(settings, embedder=embedder)
    services.memory.ensure_index()
    agent = build_agent(services)
    yield Flow(services, agent, fake_ollama, datetime.now().astimezone().replace(microsecond=0))
    services.close()


def _rows_with(db: Path, needles: tuple[str, ...]) -> list[str]:
    """Every (table, value) of ``db``'s ordinary tables whose text holds one of ``needles``."""
    conn = connect(db, vec=db.name != "pcai.db")
    try:
        tables = [
            r[0]
            for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if not str(r[1] or "").upper().startswith("CREATE VIRTUAL")
        ]
        hits = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in tuple(row):
                    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
                    if isinstance(text, str) and any(n in text for n in needles):
                        hits.append(f"{table}: {text[:120]}")
        return hits
    finally:
        conn.close()


async def test_a_secret_reaches_no_file_no_row_and_no_log_line(
    flow: Flow, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for text in SAID:
        reply = await flow.agent.respond(flow.msg(text))
        assert not reply.error
    assert await agent_worker(flow.agent).settle()  # the compaction the turns left for later
    data = flow.services.settings.data_dir
    full = (data / "users" / OWNER / "MEMORY_FULL.md").read_text(encoding="utf-8")
    assert "對話摘要" in full and REDACTED in full  # compaction echoed the talk, masked
    [proposal] = flow.services.confirm.pending(OWNER)
    assert proposal.section == f"wifi password {REDACTED}"

    made = await flow.services.idle.run(flow.clock + timedelta(hours=2))
    assert [r.session_id for r in made] == [OWNER]
    auto = (data / "users" / OWNER / "auto_summaries.md").read_text(encoding="utf-8")
    assert "晚餐" in auto and REDACTED in auto  # the model's echo, masked
    assert "、REDACTED" not in auto
    for _ in range(3):  # a section that stays dominant is written to MEMORY_TOPIC.md
        flow.agent.topics.record(
            OWNER, [f"wifi password {PASSWORD}"], flow.clock, summary=f"PIN {PIN}"
        )
    assert (data / "users" / OWNER / "MEMORY_TOPIC.md").exists()
    ShortTermStore(flow.services.state).add(OWNER, "calendar", f"門禁 PIN {PIN}", flow.clock)
    flow.services.memory.remember(OWNER, f"大樓門禁 PIN {PIN}", section=f"pw: {PASSWORD}")
    flow.services.memory.indexer.sync_user(OWNER)
    await flow.agent.new_session(OWNER)  # /new: the rest is summarised too

    # The bot did read the secrets (they were in its prompts), and stored none of them.
    asked = "\n".join(
        str(m.get("content")) for r in flow.fake.chat_requests for m in r["messages"]
    )
    assert all(secret in asked for secret in SECRETS)
    files = sorted(p for p in data.rglob("*") if p.is_file())
    assert len(files) > 8
    leaks = [
        str(p.relative_to(data))
        for p in files
        if any(s.encode() in p.read_bytes() for s in SECRETS)
    ]
    assert leaks == []
    settings = flow.services.settings
    assert _rows_with(settings.state_db_path, SECRETS) == []
    assert _rows_with(settings.index_path, SECRETS) == []

    logged = [logging.Formatter().format(r) for r in caplog.records if r.levelno >= logging.INFO]
    assert [line for line in logged if any(w in line for w in USER_WORDS)] == []


async def test_a_session_stored_before_masking_leaks_nothing_into_its_summaries(
    flow: Flow,
) -> None:
    # A session file from before masking existed holds the secret verbatim; the model then
    # copies it, without its "password" context, into its summary keywords.
    old = flow.clock - timedelta(hours=3)
    raw = {
        "id": OWNER,
        "messages": [
            {"role": "user", "content": SAID[1], "time": old.isoformat()},
            {"role": "assistant", "content": f"好的 {PASSWORD}", "time": old.isoformat()},
        ],
    }
    path = flow.services.sessions.path(OWNER)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")

    [made] = await flow.services.idle.run(flow.clock)
    assert PASSWORD not in " ".join(made.summary.keywords) + made.summary.summary
    await flow.agent.new_session(OWNER)

    data = flow.services.settings.data_dir
    user_files = [p for p in (data / "users" / OWNER).rglob("*.md")]
    assert {p.name for p in user_files} >= {"auto_summaries.md", "MEMORY_FULL.md"}
    assert [p.name for p in user_files if PASSWORD in p.read_text(encoding="utf-8")] == []
    assert PASSWORD not in path.read_text(encoding="utf-8")
    asked = [str(m.get("content")) for r in flow.fake.chat_requests for m in r["messages"]]
    assert any(PASSWORD in text for text in asked)  # the model was shown it, and repeated it
