"""The person's model server on 127.0.0.1, scripted per chat step, on either wire.

:class:`ScriptedModel` is :class:`tests.fakes.openai_server.FakeOpenAI` (llama.cpp's wire
format: streamed text, streamed tool calls, HTTP 400 ``exceed_context_size_error``);
:class:`ScriptedOllama` is :class:`tests.fakes.ollama_server.FakeOllama` (Ollama's NDJSON
stream, native tool calls). Each run of the world draws one. Both answer as a deterministic model
would: what it says depends on what it is asked, never on how many times it was asked. Each
chat step of the world machine sets a :class:`Plan`:

- a request whose last message is the person's (no tool result yet) gets the plan's tool calls
  (``memory_save``, ``reminder_create``), or its reply when it has none; a request after a
  tool result gets the reply. A retry of the whole turn is asked the same, and answers the same;
- ``too_long_at``: that round of the turn is refused with llama.cpp's HTTP 400 "exceeds the
  available context size" (what makes the agent retry with half the prompt); Ollama never
  refuses (it cuts the prompt), so there the round answers;
- ``hold_at``: that round waits, mid-answer, until :meth:`ScriptedModel.release` (the world
  copies the data folder meanwhile: a kill -9 while the model answers), then answers;
- a summary request (``/new``, compaction) gets a one-line summary.

Every round's user message (as :func:`agent.prompt.turn_message` reads it) is kept in
``asked``: the person's message must never reach the model cut to nothing.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent.prompt import turn_message
from tests.fakes.chat_requests import instruction_of
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tool_replies import ChatReply

SUMMARY = "- The person and the assistant talked about their day."
TOO_LONG = "the request exceeds the available context size, try increasing it"


@dataclass(frozen=True, slots=True)
class Plan:
    """What the model does in one chat turn."""

    reply: str = "ok"
    saves: tuple[str, ...] = ()  # memory_save texts, asked in the first round
    reminders: tuple[tuple[str, str], ...] = ()  # reminder_create (when, text) calls
    too_long_at: int = 0  # this round answers HTTP 400 "exceeds the context" (0: none)
    hold_at: int = 0  # this round waits until released (0: none)

    def calls(self) -> list[dict[str, Any]]:
        """The tool calls of the first round, in the wire shape the fake streams."""
        out: list[dict[str, Any]] = [
            {"function": {"name": "memory_save", "arguments": {"text": text}}}
            for text in self.saves
        ]
        out += [
            {"function": {"name": "reminder_create", "arguments": {"when": w, "text": t}}}
            for w, t in self.reminders
        ]
        return out


class Script:
    """What both wires share: the plan, the rounds asked, the held round (module docstring)."""

    def __init__(self) -> None:
        self.plan = Plan()
        self.rounds = 0  # turn rounds asked since the plan was set
        self.asked: list[tuple[int, str]] = []  # (round, the user message the model saw)
        self.held = threading.Event()  # a round is waiting mid-answer
        self._release = threading.Event()
        self._plan_lock = threading.Lock()

    def script(self, plan: Plan) -> None:
        """The next chat turn's plan (its rounds are counted from 1)."""
        with self._plan_lock:
            self.plan, self.rounds = plan, 0
            self.asked.clear()
            self.held.clear()
            self._release.clear()

    def release(self) -> None:
        """Let the held round answer."""
        self._release.set()

    def decide(self, body: dict[str, Any], refuses: bool = True) -> tuple[bool, ChatReply]:
        """(whether this round is refused as too long, the reply) for one chat request; a
        server that never ``refuses`` a long prompt answers that round too."""
        if "Summarise" in instruction_of(body):
            return False, SUMMARY
        with self._plan_lock:
            self.rounds += 1
            n, plan = self.rounds, self.plan
            messages = body.get("messages") or [{}]
            users = [m for m in messages if m.get("role") == "user"]
            said = turn_message(str(users[-1].get("content") or "")) if users else ""
            self.asked.append((n, said))
        if n == plan.too_long_at and refuses:
            return True, ""
        if n == plan.hold_at:
            self.held.set()
            self._release.wait(30)
        after_tool = messages[-1].get("role") == "tool"
        calls = plan.calls()
        if calls and not after_tool:
            return False, {"content": "", "tool_calls": calls}
        return False, plan.reply


class ScriptedModel(Script, FakeOpenAI):
    """The fake OpenAI-compatible server, answering each round from the current :class:`Plan`."""

    backend = "openai"

    def __init__(self) -> None:
        Script.__init__(self)
        FakeOpenAI.__init__(self)
        self._serial = threading.Lock()  # a reply is queued and streamed as one step
        self._httpd.model = self  # type: ignore[attr-defined]
        self._httpd.RequestHandlerClass = _scripted(self._httpd.RequestHandlerClass)

    def bodies(self) -> list[dict[str, Any]]:
        """Every chat request's body, in order."""
        return list(self.requests)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], ChatReply]:
        """(HTTP status, the error body, the reply to stream) for one chat request."""
        too_long, reply = self.decide(body)
        if too_long:
            error = {"code": 400, "message": TOO_LONG, "type": "exceed_context_size_error"}
            return 400, {"error": {**error, "n_prompt_tokens": self.n_ctx + 1}}, ""
        return 200, {}, reply

    def stream(self, body: dict[str, Any], reply: ChatReply) -> list[dict[str, Any]]:
        """The chunks of ``reply`` as the fake streams them."""
        with self._serial:
            with self._lock:
                self._replies.appendleft(reply)
            return self.events(body)


class ScriptedOllama(Script, FakeOllama):
    """The same model on Ollama's wire (tests/fakes/ollama_server.py). Ollama never refuses a
    prompt as too long (it cuts it and answers), so a ``too_long_at`` round answers too."""

    backend = "ollama"

    def __init__(self) -> None:
        Script.__init__(self)
        FakeOllama.__init__(self)
        self.chat_handler = lambda body: self.decide(body, refuses=False)[1]

    def bodies(self) -> list[dict[str, Any]]:
        """Every chat request's body, in order."""
        return self.chat_requests


Model = ScriptedModel | ScriptedOllama  # the person's model server, on one wire or the other


def _scripted(base: type[BaseHTTPRequestHandler]) -> type[BaseHTTPRequestHandler]:
    """The fake's handler with POST answered by :meth:`ScriptedModel.answer`."""

    class Scripted(base):  # type: ignore[valid-type,misc]
        def do_POST(self) -> None:
            """One chat completion: an error, or the queued reply streamed as the fake does."""
            model: ScriptedModel = self.server.model  # type: ignore[attr-defined]
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw or b"{}")
            model.requests.append(body)
            status, error, reply = model.answer(body)
            if status != 200:
                self._json(status, error)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for chunk in [*map(json.dumps, model.stream(body, reply)), "[DONE]"]:
                    data = f"data: {chunk}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass

    return Scripted
