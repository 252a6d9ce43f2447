"""A small fake OpenAI-compatible server (llama.cpp's flavour) on 127.0.0.1.

For what the real small model in tests/realmodel cannot do reliably: tool calls, and errors
on demand. It speaks the real protocol that the ``openai`` client reads:

- ``GET /v1/models`` -> ``{"object": "list", "data": [{"id", "object": "model", ...}]}``
- ``GET /props`` -> ``{"default_generation_settings": {"n_ctx": n_ctx}}`` (llama.cpp's), and
  ``chat_template_caps.supports_tools`` when ``supports_tools`` is set
- ``POST /v1/chat/completions`` with ``"stream": true`` -> server-sent events: the text in
  4-character deltas, tool calls as llama.cpp streams them (id and name first, then the
  arguments' JSON in pieces), a ``finish_reason`` chunk, a usage chunk (with
  ``prompt_tokens_details.cached_tokens``), ``[DONE]``. A prompt over ``n_ctx`` (~4
  characters a token) is refused with llama.cpp's HTTP 400 ``exceed_context_size_error``.

Replies are queued like the fake Ollama's (``queue_chat``; a str, or a dict with ``content``
and ``tool_calls``: ``tests.fakes.tool_replies.tool_reply``); ``requests`` keeps each body.
:data:`TOO_LONG` queued answers that one request with llama.cpp's HTTP 400
``exceed_context_size_error``, whatever its size (our count is not the server's).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.tool_replies import ChatReply

# Queued as a reply: that request is refused as over the context (HTTP 400).
TOO_LONG: dict[str, Any] = {"refuse": "exceed_context_size_error"}
_TOO_LONG_TEXT = "the request exceeds the available context size, try increasing it"


class FakeOpenAI:
    """The fake server; starts on a free port of 127.0.0.1 in a background thread."""

    def __init__(self, *, model: str = "qwen2.5-7b-instruct", n_ctx: int = 8192) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.cached = 0  # what the usage chunk reports as cached
        self.fail_status: int | None = None  # every chat answers this status when set
        # /props' chat_template_caps.supports_tools (llama.cpp's; None: not said)
        self.supports_tools: bool | None = None
        self.requests: list[dict[str, Any]] = []
        self._replies: deque[ChatReply] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def queue_chat(self, *replies: ChatReply) -> None:
        """Answer the next chat calls with ``replies``, in order (then ``"ok"``)."""
        with self._lock:
            self._replies.extend(replies)

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The prompt's size as this fake counts it (~4 characters a token)."""
        text = json.dumps(body.get("messages", []), ensure_ascii=False)
        return len(text) // 4 + len(json.dumps(body.get("tools") or [])) // 4

    def next_reply(self) -> ChatReply:
        """The next queued reply (``"ok"`` when none is)."""
        with self._lock:
            return self._replies.popleft() if self._replies else "ok"

    def events(self, body: dict[str, Any], reply: ChatReply | None = None) -> list[dict[str, Any]]:
        """The chunks of one streamed answer (of ``reply``, else the next queued one)."""
        reply = self.next_reply() if reply is None else reply
        reply = {"content": reply} if isinstance(reply, str) else reply
        text = str(reply.get("content") or "")
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": text[i : i + 4]} for i in range(0, len(text), 4)]
        for n, call in enumerate(reply.get("tool_calls") or []):
            fn = call["function"]
            args = json.dumps(fn.get("arguments", {}), ensure_ascii=False)
            head = {"index": n, "id": f"call_{n}", "type": "function"}
            deltas.append({"tool_calls": [{**head, "function": {"name": fn["name"]}}]})
            for i in range(0, len(args), 5):
                part = {"index": n, "function": {"arguments": args[i : i + 5]}}
                deltas.append({"tool_calls": [part]})
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0}
        base["model"] = body.get("model", self.model)
        chunks = [
            {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
        ]
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        prompt = self.prompt_tokens(body)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": prompt + max(1, len(text) // 4),
            "prompt_tokens_details": {"cached_tokens": min(self.cached, prompt)},
        }
        chunks.append({**base, "choices": [], "usage": usage})
        return chunks


def _handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            """Models and props."""
            if self.path.startswith("/v1/models"):
                row = {"id": server.model, "object": "model", "created": 0, "owned_by": "fake"}
                self._json(200, {"object": "list", "data": [row]})
            elif self.path.startswith("/props"):
                props: dict[str, Any] = {"default_generation_settings": {"n_ctx": server.n_ctx}}
                if server.supports_tools is not None:
                    props["chat_template_caps"] = {"supports_tools": server.supports_tools}
                self._json(200, props)
            else:
                self._json(404, {"error": {"code": 404, "message": "File Not Found"}})

        def do_POST(self) -> None:
            """One chat completion, streamed."""
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw or b"{}")
            server.requests.append(body)
            if server.fail_status is not None:
                self._json(server.fail_status, {"error": {"message": "fake failure"}})
                return
            prompt = server.prompt_tokens(body)
            reply = server.next_reply() if prompt <= server.n_ctx else TOO_LONG
            if reply is TOO_LONG:
                error = {"code": 400, "message": _TOO_LONG_TEXT, "type": TOO_LONG["refuse"]}
                self._json(400, {"error": {**error, "n_prompt_tokens": prompt}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in [*map(json.dumps, server.events(body, reply)), "[DONE]"]:
                data = f"data: {chunk}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    return Handler
