"""The composition root picks the backend, the context length and the summary model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.ollama_client import OllamaChat
from agent.openai_client import OpenAIChat
from agent.pipeline import Agent
from agent.summarizer import LLMSummarizer
from bot.app import build_agent, build_services
from bot.settings import load_settings
from memory.index.embedders import E5Embedder
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(model="qwen2.5-7b-instruct", n_ctx=16384)
    yield server
    server.stop()


def _agent(tmp_path: Path, embedder: E5Embedder, **env: str) -> Agent:
    settings = load_settings({"PCAI_DATA_DIR": str(tmp_path / "botmemory"), **env})
    services = build_services(settings, embedder=embedder)
    agent = build_agent(services)
    services.close()
    return agent


@pytest.mark.parametrize(
    ("model_max", "setting", "expected"),
    [(32768, "", 8192), (4096, "", 4096), (32768, "12288", 12288)],
)
def test_ollama_gets_num_ctx_from_the_setting_or_what_the_model_takes(
    tmp_path: Path,
    embedder: E5Embedder,
    fake_ollama: FakeOllama,
    model_max: int,
    setting: str,
    expected: int,
) -> None:
    fake_ollama.context_length = model_max
    extra = {"PCAI_CONTEXT_TOKENS": setting} if setting else {}
    agent = _agent(tmp_path, embedder, OLLAMA_HOST=fake_ollama.url, **extra)
    assert isinstance(agent.llm, OllamaChat)
    assert agent.llm.context_tokens == expected
    assert agent.fit is not None and agent.fit.context_tokens == expected


def test_the_openai_backend_reads_the_servers_context(
    tmp_path: Path, embedder: E5Embedder, fake_openai: FakeOpenAI
) -> None:
    agent = _agent(
        tmp_path,
        embedder,
        PCAI_LLM_BACKEND="openai",
        PCAI_LLM_BASE_URL=fake_openai.url,
        PCAI_CHAT_MODEL="qwen2.5-7b-instruct",
        PCAI_SUMMARY_MODEL="qwen2.5-1.5b-instruct",
    )
    llm, fit = agent.llm, agent.fit
    assert isinstance(llm, OpenAIChat) and llm.model == "qwen2.5-7b-instruct"
    assert fit is not None and fit.context_tokens == 16384  # from /props
    summarizer = agent.compactor.summaries.primary
    assert isinstance(summarizer, LLMSummarizer)
    assert summarizer.llm.model == "qwen2.5-1.5b-instruct"


def test_an_unreachable_openai_server_leaves_the_default_context(
    tmp_path: Path, embedder: E5Embedder
) -> None:
    agent = _agent(
        tmp_path,
        embedder,
        PCAI_LLM_BACKEND="openai",
        PCAI_LLM_BASE_URL="http://127.0.0.1:9/v1",
    )
    assert agent.fit is not None and agent.fit.context_tokens == 8192
