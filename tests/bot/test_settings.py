"""Settings: the defaults, environment and TOML overrides, clear errors, masked secrets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import (
    SettingsError,
    env_names,
    load_settings,
    mask,
    settings_as_dict,
    unknown_variables,
)


def test_defaults_match_the_docs() -> None:
    s = load_settings({"HOME": "/home/ann"})
    assert s.data_dir == Path("/home/ann/.local/share/pcai")
    assert s.ollama_host == "http://localhost:11434"
    assert s.embed_model == "mxbai-embed-large"
    r = s.retrieval  # docs/retrieval.md, "Staged scoring"
    assert (r.vector_weight, r.bm25_weight) == (0.7, 0.3)
    assert (r.min_score, r.hard_min_score) == (0.3, 0.35)
    # Chosen by the LoCoMo benchmark (bench/RESULTS.md), not the original 14 / 60 / 0.85.
    assert (r.recency_half_life_days, r.recency_weight) == (1.0, 0.10)
    assert (r.length_norm_anchor, r.time_decay_half_life_days, r.mmr_threshold) == (500, 0, 0.99)
    assert r.fusion == "weighted"
    assert r.bm25_hit_bonus == 0.15
    assert (s.index.chunk_tokens, s.index.chunk_overlap_tokens) == (400, 80)
    assert s.pending.ttl_minutes == 30
    assert (s.history.max_history, s.history.full_text_count) == (15, 5)
    assert s.history.auto_write_threshold_tokens == 10000
    assert s.history.idle_summary_minutes == 60
    assert (s.topic_index.window_size, s.topic_index.dominant_threshold) == (5, 0.7)
    b = s.budget  # docs/retrieval.md, "Selection and budget"
    assert (b.memory_tokens, b.long_chunk_max_tokens, b.short_term_max_tokens) == (
        2000,
        1500,
        1000,
    )
    assert (b.l0_max, b.l0_min_user_weight, b.static_fallback_chars) == (10, 9, 4000)
    assert s.lifecycle.delete_archived_after_days == 60


def test_environment_overrides() -> None:
    s = load_settings(
        {
            "PCAI_DATA_DIR": "/tmp/pcai-data",
            "TELEGRAM_BOT_TOKEN": "123:abc",
            "OLLAMA_HOST": "http://127.0.0.1:1",
            "PCAI_ALLOWED_USERS": "1, 22,333",
            "PCAI_GROUPS": "yes",
            "PCAI_RETRIEVAL_HARD_MIN_SCORE": "0.4",
            "PCAI_RETRIEVAL_TOP_K": "8",
            "PCAI_PENDING_TTL_MINUTES": "45",
            "PCAI_HISTORY_AUTO_WRITE_THRESHOLD_TOKENS": "5000",
        }
    )
    assert s.data_dir == Path("/tmp/pcai-data")
    assert s.telegram_bot_token == "123:abc" and s.ollama_host == "http://127.0.0.1:1"
    assert s.allowed_users == (1, 22, 333) and s.groups is True
    assert s.retrieval.hard_min_score == 0.4 and s.retrieval.top_k == 8
    assert s.pending.ttl_minutes == 45
    assert s.history.auto_write_threshold_tokens == 5000


def test_toml_file_and_environment_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "pcai.toml"
    cfg.write_text(
        'chat_model = "llama3.1:8b"\nallowed_users = [5, 6]\n'
        "[retrieval]\nhard_min_score = 0.5\nmin_score = 0.2\n"
        "[topic_index]\nwindow_size = 7\n",
        encoding="utf-8",
    )
    s = load_settings({"PCAI_CONFIG": str(cfg), "PCAI_RETRIEVAL_MIN_SCORE": "0.25"})
    assert s.chat_model == "llama3.1:8b" and s.allowed_users == (5, 6)
    assert s.retrieval.hard_min_score == 0.5
    assert s.retrieval.min_score == 0.25  # the environment wins over the file
    assert s.topic_index.window_size == 7
    assert load_settings({}, cfg).chat_model == "llama3.1:8b"


@pytest.mark.parametrize(
    "env",
    [
        {"PCAI_RETRIEVAL_TOP_K": "five"},
        {"PCAI_RETRIEVAL_HARD_MIN_SCORE": "high"},
        {"PCAI_GROUPS": "maybe"},
        {"PCAI_ALLOWED_USERS": "alice,bob"},
        {"PCAI_EMBEDDER": "openai"},
        {"PCAI_RETRIEVAL_FUSION": "magic"},
        {"PCAI_LOG_LEVEL": "LOUD"},
        {"PCAI_REMINDERS_SNOOZE_MINUTES": "0"},
        {"PCAI_REMINDERS_SNOOZE_MINUTES": "nan"},
        {"PCAI_CONFIG": "/nonexistent/pcai.toml"},
    ],
)
def test_bad_values_give_a_settings_error(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError) as err:
        load_settings(env)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "toml",
    [
        "this is = not toml =",
        "retrieval = 3\n",
        "[retrieval]\ntop_k = 'x'\n",
        "[retrieval]\nhard_min_scor = 0.5\n",  # a typo must not be silently ignored
        "chat_modle = 'x'\n",
    ],
)
def test_bad_toml_gives_a_settings_error(tmp_path: Path, toml: str) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml, encoding="utf-8")
    with pytest.raises(SettingsError):
        load_settings({"PCAI_CONFIG": str(cfg)})


def test_settings_are_frozen() -> None:
    s = load_settings({})
    with pytest.raises(AttributeError):
        s.chat_model = "x"  # type: ignore[misc]


def test_secrets_are_masked() -> None:
    token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    out = settings_as_dict(load_settings({"TELEGRAM_BOT_TOKEN": token}))
    assert token not in str(out) and "AAHdq" not in str(out)
    assert out["telegram_bot_token"] == "123456789:****"
    assert mask("") == "" and "secret" not in mask("secretvalue")


def test_a_misspelt_pcai_variable_is_named_with_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PCAI_RETRIEVL_TOP_K", "3")
    monkeypatch.setenv("PCAI_RETRIEVAL_TOP_K", "4")  # a real one: no warning
    assert main(["config", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        "pcai: warning: PCAI_RETRIEVL_TOP_K is not a setting and is ignored "
        "(did you mean PCAI_RETRIEVAL_TOP_K?)\n"
    )
    assert json.loads(out)["retrieval"]["top_k"] == 4


def test_every_setting_is_a_known_variable() -> None:
    env = {name: "1" for name in env_names()}
    assert unknown_variables(env) == []
    assert "PCAI_WEB_PUBLIC_URL" in env and "TELEGRAM_BOT_TOKEN" in env


def test_the_api_key_is_masked_and_out_of_the_repr() -> None:
    key = "sk-proj-Zq8xT3bLbkFJ4a9s0d"
    s = load_settings(
        {
            "PCAI_LLM_BACKEND": "openai",
            "PCAI_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
            "PCAI_LLM_API_KEY": key,
        }
    )
    assert s.llm_api_key == key
    out = settings_as_dict(s)
    assert out["llm_api_key"] == "sk-****" and "Zq8x" not in str(out)
    assert "Zq8x" not in repr(s)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"PCAI_LLM_BACKEND": "vllm"}, "PCAI_LLM_BACKEND must be 'ollama' or 'openai'"),
        ({"PCAI_LLM_BACKEND": "openai"}, "PCAI_LLM_BASE_URL must be the server's address"),
        ({"PCAI_CONTEXT_TOKENS": "1000"}, "PCAI_CONTEXT_TOKENS must be 0 (automatic) or at least"),
        ({"PCAI_REPLY_TOKENS": "10"}, "PCAI_REPLY_TOKENS must be at least 64"),
        (
            {"PCAI_CONTEXT_TOKENS": "2048", "PCAI_REPLY_TOKENS": "1500"},
            "at most half of the context length",
        ),
    ],
)
def test_model_settings_are_checked(env: dict[str, str], needle: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(needle)):
        load_settings(env)


def test_the_webhook_settings_are_read_checked_and_the_secret_masked() -> None:
    s = load_settings(
        {
            "PCAI_TELEGRAM_WEBHOOK_URL": "https://pcai.example.org/telegram",
            "PCAI_TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0",
            "PCAI_TELEGRAM_WEBHOOK_PORT": "9443",
            "PCAI_TELEGRAM_WEBHOOK_SECRET_TOKEN": "Zq8xT3bL-bk_FJ4a9s0d",
        }
    )
    assert (s.telegram_webhook_listen, s.telegram_webhook_port) == ("0.0.0.0", 9443)
    assert s.telegram_webhook_url == "https://pcai.example.org/telegram"
    assert "Zq8x" not in str(settings_as_dict(s)) and "Zq8x" not in repr(s)
    for env, needle in [
        ({"PCAI_TELEGRAM_WEBHOOK_URL": "pcai.example.org"}, "PCAI_TELEGRAM_WEBHOOK_URL must be"),
        ({"PCAI_TELEGRAM_WEBHOOK_PORT": "0"}, "PCAI_TELEGRAM_WEBHOOK_PORT must be a port"),
        (
            {"PCAI_TELEGRAM_WEBHOOK_SECRET_TOKEN": "has spaces!"},
            "PCAI_TELEGRAM_WEBHOOK_SECRET_TOKEN must be 1-256 characters",
        ),
    ]:
        with pytest.raises(SettingsError, match=re.escape(needle)):
            load_settings(env)
