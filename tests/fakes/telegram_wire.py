"""The Telegram stand-in's HTTP side: form, JSON and multipart bodies, entities, errors."""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

# Parameters Telegram reads as JSON, numbers or booleans when they arrive as form strings
# (python-telegram-bot sends every value as a form field, JSON-encoding the non-strings).
_JSON_FIELDS = frozenset(
    {
        "reply_markup",
        "entities",
        "caption_entities",
        "reply_parameters",
        "link_preview_options",
        "commands",
        "scope",
        "allowed_updates",
        "menu_button",
        "reaction",
        "rights",
    }
)
_INT_FIELDS = frozenset(
    {
        "chat_id",
        "message_id",
        "offset",
        "limit",
        "reply_to_message_id",
        "message_thread_id",
        "draft_id",
    }
)
_BOOL_FIELDS = frozenset(
    {
        "drop_pending_updates",
        "disable_notification",
        "protect_content",
        "show_alert",
        "allow_sending_without_reply",
        "for_channels",
        "is_big",
    }
)
_BOT_PATH = re.compile(r"/bot([^/]+)/([A-Za-z]+)")
_FILE_PATH = re.compile(r"/file/bot([^/]+)/(.+)")
_DISPOSITION = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
# A /command (with an optional @bot) or an @username, as Telegram marks them itself.
_ENTITY = re.compile(
    r"(?<![\w/@])/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{5,32})?|(?<![\w@])@[A-Za-z0-9_]{5,32}"
)


class ApiError(Exception):
    """A Bot API failure: HTTP status ``code`` and Telegram's ``description``."""

    def __init__(
        self, code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters  # ResponseParameters, e.g. {"retry_after": 3}

    def body(self) -> dict[str, Any]:
        """The JSON Telegram answers with."""
        out = {"ok": False, "error_code": self.code, "description": self.description}
        return out | ({"parameters": self.parameters} if self.parameters else {})


def bad_request(what: str) -> ApiError:
    """Telegram's 400 ``Bad Request: <what>``."""
    return ApiError(400, f"Bad Request: {what}")


@dataclass(frozen=True, slots=True)
class Upload:
    """One file part of a multipart request."""

    file_name: str
    mime_type: str
    data: bytes


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit of Telegram's entity offsets."""
    return len(text.encode("utf-16-le")) // 2


def find_entities(text: str) -> list[dict[str, Any]]:
    """The ``bot_command`` and ``mention`` entities Telegram would attach to ``text``."""
    found = []
    for match in _ENTITY.finditer(text):
        kind = "bot_command" if match.group().startswith("/") else "mention"
        offset = utf16_len(text[: match.start()])
        found.append({"type": kind, "offset": offset, "length": utf16_len(match.group())})
    return found


def decode_params(raw: dict[str, Any]) -> dict[str, Any]:
    """Parameters as Telegram reads them: form strings become JSON, numbers and booleans."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            if key in _JSON_FIELDS:
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as exc:
                    raise bad_request(f"can't parse {key} JSON object") from exc
            elif key in _INT_FIELDS and re.fullmatch(r"-?\d+", value):
                value = int(value)
            elif key in _BOOL_FIELDS:
                value = value.strip().lower() in ("true", "1")
            elif key == "timeout":
                value = float(value or 0)
        out[key] = value
    return out


def _multipart(raw: bytes, boundary: str) -> tuple[dict[str, str], dict[str, Upload]]:
    fields: dict[str, str] = {}
    files: dict[str, Upload] = {}
    for part in raw.split(b"--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        data = data.removesuffix(b"\r\n")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        params = dict(_DISPOSITION.findall(headers.get("content-disposition", "")))
        name = params.get("name", "")
        if "filename" in params:
            mime = headers.get("content-type", "application/octet-stream")
            files[name] = Upload(urllib.parse.unquote(params["filename"]), mime, data)
        else:
            fields[name] = data.decode("utf-8")
    return fields, files


def parse_request(
    content_type: str, raw: bytes, query: str
) -> tuple[dict[str, Any], dict[str, Upload]]:
    """The decoded parameters and uploaded files of one Bot API request."""
    params: dict[str, Any] = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    files: dict[str, Upload] = {}
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json" and raw:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise bad_request("can't parse JSON body") from exc
        if isinstance(body, dict):
            params.update(body)
    elif kind == "multipart/form-data":
        found = re.search(r'boundary="?([^";]+)', content_type)
        if found is None:
            raise bad_request("multipart body without a boundary")
        fields, files = _multipart(raw, found.group(1))
        params.update(fields)
    elif raw:
        params.update(urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    return decode_params(params), files


class Served(Protocol):
    """What the HTTP handler serves: the Bot API, the file server and the client API."""

    def bot_api(
        self, token: str, method: str, params: dict[str, Any], files: dict[str, Upload]
    ) -> tuple[int, bytes]: ...

    def file_bytes(self, token: str, file_path: str) -> bytes | None: ...

    def client(self, path: str, body: dict[str, Any]) -> Any: ...


def make_handler(server: Served) -> type[BaseHTTPRequestHandler]:
    """The request handler class routing ``/bot...``, ``/file/bot...`` and client paths."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as python-telegram-bot's httpx pool expects

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def _serve(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(url.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            ctype = self.headers.get("Content-Type", "")
            if bot := _BOT_PATH.fullmatch(path):
                try:
                    params, files = parse_request(ctype, raw, url.query)
                except ApiError as exc:
                    self._send(exc.code, json.dumps(exc.body()).encode())
                    return
                self._send(*server.bot_api(bot.group(1), bot.group(2), params, files))
            elif file := _FILE_PATH.fullmatch(path):
                data = server.file_bytes(file.group(1), file.group(2))
                if data is None:
                    self._send(404, json.dumps(ApiError(404, "Not Found").body()).encode())
                else:
                    self._send(200, data, "application/octet-stream")
            else:
                try:
                    body = json.loads(raw or b"{}")
                    result = server.client(path, body if isinstance(body, dict) else {})
                    status, answer = 200, {"ok": True, "result": result}
                except json.JSONDecodeError:
                    status, answer = 400, bad_request("the body is not JSON").body()
                except ApiError as exc:
                    status, answer = exc.code, exc.body()
                self._send(status, json.dumps(answer, ensure_ascii=False).encode())

        def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a long poll)
                pass

        def do_GET(self) -> None:
            """Telegram takes GET as well as POST."""
            self._serve()

        def do_POST(self) -> None:
            """Answer a POST."""
            self._serve()

    return Handler
