"""A small fake Ollama server on 127.0.0.1 that the real ``ollama`` client can talk to.

It speaks the parts of Ollama's HTTP API that PCAI uses, with the same JSON shapes:

- ``GET /api/version`` -> ``{"version": ...}``
- ``GET /api/tags`` -> ``{"models": [{"model", "name", "modified_at", "size", "digest",
  "details"}]}`` (the names in ``models``)
- ``POST /api/embed`` -> ``{"model", "embeddings": [[...], ...]}``: deterministic,
  L2-normalised hashed bag-of-words vectors of dimension ``dim`` (English words, CJK
  characters and CJK bigrams), so texts sharing words are close and identical texts equal.
- ``POST /api/show`` -> the model's ``model_info`` (``<family>.context_length``:
  ``context_length``) and ``capabilities`` (``"tools"`` unless told otherwise); 404 for a
  model not in ``models``.
- ``POST /api/chat`` -> ``{"model", "created_at", "message": {"role": "assistant",
  "content", "tool_calls"?}, "done": true, "prompt_eval_count", ...}``; with ``"stream":
  true`` the same reply as NDJSON written chunk by chunk (the text in 4-character pieces,
  then a final ``done`` chunk with the counts). ``prompt_eval_count`` is the prompt's size
  (~4 characters a token) cut to ``options.num_ctx`` (``default_ctx``, 4096, without it), as
  Ollama cuts a longer prompt silently. ``hold_stream`` (an Event) holds an answer after its
  first chunk until set: a test sees text arrive before the answer ends; ``chunk_delay``
  (seconds) paces the chunks as a model on a small machine writes them.

Usage::

    with FakeOllama(dim=64) as server:        # or the ``fake_ollama`` pytest fixture
        client = ollama.Client(host=server.url)
        server.queue_chat("hello", tool_reply("memory_save", text="我喜歡咖啡"))
        server.chat_handler = lambda request: {"content": "..."}   # used when the queue is empty
        server.delay = 2.0                     # seconds before every answer (slowness)
        server.fail_status = 500               # every request answers HTTP 500 ...
        server.fail_garbage = True             # ... or 200 with a body that is not JSON
        server.fail_paths = {"/api/chat"}      # limit failures to these paths (empty: all)
        server.fail_when = lambda path, body: ...  # ... or fail just the requests it picks
        server.requests                        # every Recorded(method, path, body), in order
        server.chat_requests / server.embed_requests   # the JSON bodies of those calls

A chat reply (queued or returned by the handler) is a ``str`` (the content) or a dict with
``content`` and/or ``tool_calls`` (``[{"function": {"name", "arguments": {...}}}]``); the
helper :func:`tool_reply` builds the latter. With neither a queued reply nor a handler, the
server answers ``"ok"``. Unknown paths answer 404 ``{"error": ...}`` like Ollama.

Small local models break tool calling in three ways (mem0 #1971, #2386; Graphiti #868); each
has a helper that turns a scripted tool-call reply into the broken one, and ``tool_mode``
applies it to every reply that carries tool calls::

    server.tool_mode = NO_TOOL_CALL     # no call at all: only a claim ("好的，我記住了！")
    server.tool_mode = JSON_TEXT        # the call written as ```json text in the content
    server.tool_mode = WRONG_NAMES      # the call made, its arguments renamed (text -> content)
    without_tool_calls(reply) / as_json_text(reply, style="fence"|"bare"|"tag")
    with_wrong_names(reply, {"text": "memory"})     # the helpers, for one scripted reply
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.tool_replies import (
    BROKEN_MODES,
    JSON_TEXT,
    NATIVE,
    NO_TOOL_CALL,
    SMALL_MODEL_CLAIM,
    WRONG_ARGUMENT_NAMES,
    WRONG_NAMES,
    ChatReply,
    as_json_text,
    tool_reply,
    with_wrong_names,
    without_tool_calls,
)

__all__ = [
    "BROKEN_MODES",
    "JSON_TEXT",
    "NATIVE",
    "NO_TOOL_CALL",
    "SMALL_MODEL_CLAIM",
    "WRONG_ARGUMENT_NAMES",
    "WRONG_NAMES",
    "FakeOllama",
    "as_json_text",
    "fake_embedding",
    "tool_reply",
    "with_wrong_names",
    "without_tool_calls",
]

ChatHandler = Callable[[dict[str, Any]], ChatReply]

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _features(text: str) -> list[str]:
    lowered = text.lower()
    feats = _WORD.findall(lowered)
    for run in _CJK.findall(lowered):
        feats.extend(run)
        feats.extend(run[i : i + 2] for i in range(len(run) - 1))
    return feats


def fake_embedding(text: str, dim: int) -> list[float]:
    """The deterministic unit vector the fake gives ``text`` (hashed bag of words)."""
    vec = [0.0] * dim
    for feat in _features(text):
        digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dim
        vec[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:  # empty or punctuation-only text still gets a valid unit vector
        vec[0], norm = 1.0, 1.0
    return [v / norm for v in vec]


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    body: dict[str, Any] = field(default_factory=dict)


class FakeOllama:
    """The fake server; starts on a free port of 127.0.0.1 in a background thread."""

    def __init__(
        self,
        *,
        dim: int = 64,
        models: tuple[str, ...] = ("qwen2.5:7b", "mxbai-embed-large:latest"),
        version: str = "0.6.5",
    ) -> None:
        self.dim = dim
        self.models = list(models)
        self.version = version
        self.delay = 0.0
        self.fail_status: int | None = None
        self.fail_garbage = False
        self.fail_paths: set[str] = set()
        # Fails (as fail_status, 500 by default, or fail_garbage) each request it returns True for.
        self.fail_when: Callable[[str, dict[str, Any]], bool] | None = None
        self.chat_handler: ChatHandler | None = None
        self.tool_mode = NATIVE  # or one of BROKEN_MODES: how a small model breaks tool calls
        self.default_ctx = 4096  # Ollama's num_ctx when a call sends none (every CPU machine)
        self.context_length = 32768  # the most the models take (/api/show)
        self.capabilities = ("completion", "tools")
        # Set: each streamed answer waits (up to 5 s) after its first chunk until it is set.
        self.hold_stream: threading.Event | None = None
        self.chunk_delay = 0.0  # seconds between two streamed chunks
        self.requests: list[Recorded] = []
        self._replies: deque[ChatReply] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, what ``ollama.Client(host=...)`` takes."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def queue_chat(self, *replies: ChatReply) -> None:
        """Answer the next chat calls with ``replies``, in order."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every /api/chat call (model, messages, tools, ...)."""
        return [r.body for r in self.requests if r.path == "/api/chat"]

    @property
    def embed_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every /api/embed call."""
        return [r.body for r in self.requests if r.path == "/api/embed"]

    def reset(self) -> None:
        """Forget recorded requests, queued replies and failure switches."""
        with self._lock:
            self.requests.clear()
            self._replies.clear()
        self.chat_handler = None
        self.tool_mode = NATIVE
        self.delay, self.fail_status, self.fail_garbage = 0.0, None, False
        self.fail_paths = set()
        self.fail_when = None

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOllama:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- answers -----------------------------------------------------------------------

    def _record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(Recorded(method, path, body))

    def _failing(self, path: str) -> bool:
        return (self.fail_status is not None or self.fail_garbage) and (
            not self.fail_paths or path in self.fail_paths
        )

    def _next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            reply: ChatReply | None = self._replies.popleft() if self._replies else None
        if reply is None:
            reply = self.chat_handler(body) if self.chat_handler else "ok"
        if isinstance(reply, str):
            reply = {"content": reply}
        if reply.get("tool_calls") and self.tool_mode in BROKEN_MODES:
            reply = BROKEN_MODES[self.tool_mode](reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
        if reply.get("tool_calls"):
            message["tool_calls"] = reply["tool_calls"]
        return message

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """The status and JSON (or NDJSON lines, as a list of str) for one request."""
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        if method == "GET" and path == "/api/version":
            return 200, {"version": self.version}
        if method == "GET" and path == "/api/tags":
            return 200, {"models": [self._model_row(name, now) for name in self.models]}
        if method == "POST" and path == "/api/embed":
            texts = body.get("input", "")
            texts = [texts] if isinstance(texts, str) else list(texts)
            rows = [fake_embedding(str(t), self.dim) for t in texts]
            return 200, {"model": body.get("model", ""), "embeddings": rows}
        if method == "POST" and path == "/api/show":
            return self._show(str(body.get("model", "")), now)
        if method == "POST" and path == "/api/chat":
            message = self._next_reply(body)
            final = {
                "model": body.get("model", ""),
                "created_at": now,
                "message": message,
                "done": True,
                "done_reason": "stop",
                "total_duration": 1_000_000,
                "prompt_eval_count": self._evaluated(body),
                "eval_count": 5,
            }
            if not body.get("stream"):
                return 200, final
            # Ollama streams the text in pieces (a few characters each), calls in one chunk.
            text = message.get("content", "")
            pieces = [text[i : i + 4] for i in range(0, len(text), 4)] or [""]
            chunks = [
                {**_head(final), "message": {**message, "content": piece}, "done": False}
                for piece in pieces
            ]
            for chunk in chunks[1:]:
                chunk["message"].pop("tool_calls", None)
            last = {**final, "message": {"role": "assistant", "content": ""}}
            return 200, [json.dumps(c, ensure_ascii=False) for c in [*chunks, last]]
        return 404, {"error": f"404 page not found: {method} {path}"}

    def _evaluated(self, body: dict[str, Any]) -> int:
        """prompt_eval_count: the prompt's tokens (~4 characters each), cut to ``num_ctx``."""
        sent = sum(len(str(m.get("content") or "")) // 4 + 4 for m in body.get("messages", []))
        sent += len(json.dumps(body.get("tools") or [])) // 4
        num_ctx = int((body.get("options") or {}).get("num_ctx") or self.default_ctx)
        return min(sent, num_ctx)  # Ollama cuts a longer prompt and answers 200 all the same

    def _show(self, model: str, now: str) -> tuple[int, Any]:
        """``/api/show``: 404 for a model not pulled, else its context length and capabilities."""
        full = model if ":" in model else f"{model}:latest"
        if full not in {m if ":" in m else f"{m}:latest" for m in self.models}:
            return 404, {"error": f"model '{model}' not found"}
        family = full.split(":")[0].split(".")[0]
        return 200, {
            "modelfile": f"FROM {full}",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": {"format": "gguf", "family": family, "parameter_size": "7B"},
            "model_info": {
                "general.architecture": family,
                f"{family}.context_length": self.context_length,
            },
            "capabilities": list(self.capabilities),
            "modified_at": now,
        }

    @staticmethod
    def _model_row(name: str, now: str) -> dict[str, Any]:
        full = name if ":" in name else f"{name}:latest"
        return {
            "name": full,
            "model": full,
            "modified_at": now,
            "size": 1_000_000,
            "digest": hashlib.sha256(full.encode()).hexdigest(),
            "details": {"format": "gguf", "family": full.split(":")[0], "parameter_size": "7B"},
        }


def _head(final: dict[str, Any]) -> dict[str, Any]:
    """A streamed chunk's fields (the final one's, less its counts)."""
    return {"model": final["model"], "created_at": final["created_at"]}


def _make_handler(server: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            path = self.path.split("?", 1)[0]
            server._record(method, path, body if isinstance(body, dict) else {"_raw": body})
            if server.delay:
                time.sleep(server.delay)
            picked = server.fail_when is not None and server.fail_when(path, body)
            if server._failing(path) or picked:
                if server.fail_garbage:
                    self._send(200, b"<html>this is not json", "text/html")
                else:
                    status = server.fail_status or 500
                    self._send(status, json.dumps({"error": "fake failure"}).encode())
                return
            status, payload = server.answer(method, path, body)
            if isinstance(payload, list):
                self._stream(status, payload)
            else:
                self._send(status, json.dumps(payload, ensure_ascii=False).encode())

        def _stream(self, status: int, lines: list[str]) -> None:
            """NDJSON, one chunk per line as it is written (chunked transfer)."""
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for n, line in enumerate(lines):
                    data = (line + "\n").encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if n == 0 and server.hold_stream is not None:
                        server.hold_stream.wait(5)
                    if server.chunk_delay:
                        time.sleep(server.chunk_delay)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def do_GET(self) -> None:
            """Answer a GET."""
            self._serve("GET")

        def do_POST(self) -> None:
            """Answer a POST."""
            self._serve("POST")

        def do_HEAD(self) -> None:
            """Ollama answers HEAD / with 200."""
            self._send(200, b"")

    return Handler
