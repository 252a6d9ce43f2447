"""Embedders: the embedded e5 model, and Ollama's through the real client against a fake."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from agent.ollama_client import OllamaEmbedder
from memory.errors import EmbedderUnavailableError
from memory.index.embedders import (
    QUERY_HEAD_CHARS,
    QUERY_TAIL_CHARS,
    E5Embedder,
    embed_queries,
    query_part,
)
from tests.fakes.ollama_server import FakeOllama, fake_embedding


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_e5_shapes_and_normalisation(embedder: E5Embedder) -> None:
    q = embedder.embed_query("我喜歡喝咖啡")
    assert q.shape == (384,) and q.dtype == np.float32
    assert np.isclose(np.linalg.norm(q), 1.0, atol=1e-3)
    passages = embedder.embed_passages(["咖啡", "coffee", "藍色的天空 blue sky"])
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    assert embedder.embed_passages([]).shape == (0, 384)
    assert embedder.name == E5Embedder.MODEL and embedder.dim == 384


def test_e5_query_and_passage_prefixes_differ(embedder: E5Embedder) -> None:
    text = "I drink coffee every morning"
    q = embedder.embed_query(text)
    (p,) = embedder.embed_passages([text])
    assert not np.allclose(q, p)  # "query: " and "passage: " prefixes give different vectors
    assert float(q @ p) > 0.8


def test_e5_batching_gives_the_same_vectors(embedder: E5Embedder) -> None:
    texts = [f"第{i}條記憶 memory number {i}" for i in range(5)]
    small = E5Embedder(batch_size=2)
    assert np.allclose(small.embed_passages(texts), embedder.embed_passages(texts), atol=1e-4)


@pytest.mark.parametrize(
    ("query", "close", "far"),
    [
        ("我喜歡喝咖啡", "I love drinking coffee", "The train leaves at nine"),
        ("What is my favourite colour?", "我最喜歡的顏色是藍色", "明天要去銀行繳費"),
        ("When do we deploy?", "每週五下午部署到正式環境", "我養了一隻貓"),
        ("deployment schedule", "每週五下午部署到正式環境", "我養了一隻貓"),
        ("我喜歡喝咖啡", "每天早上一杯黑咖啡", "週末去爬山"),
    ],
)
def test_e5_similar_meanings_are_closer(
    embedder: E5Embedder, query: str, close: str, far: str
) -> None:
    q = embedder.embed_query(query)
    near_vec, far_vec = embedder.embed_passages([close, far])
    assert float(q @ near_vec) > float(q @ far_vec)


def test_ollama_embedder_batches_through_the_real_client(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64, batch_size=32)
    texts = [f"text {i} 第{i}" for i in range(70)]
    out = emb.embed_passages(texts)
    assert out.shape == (70, 64)
    sizes = [len(body["input"]) for body in fake_ollama.embed_requests]
    assert sizes == [32, 32, 6]
    assert {body["model"] for body in fake_ollama.embed_requests} == {"mxbai-embed-large"}
    assert np.allclose(out[3], fake_embedding(texts[3], 64), atol=1e-6)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    q = emb.embed_query("text 3")
    assert q.shape == (64,)
    assert emb.name == "ollama/mxbai-embed-large"


def test_ollama_embedder_asks_for_an_unknown_dimension(fake_ollama: FakeOllama) -> None:
    fake_ollama.dim = 48
    emb = OllamaEmbedder(fake_ollama.url, "some-new-model")
    assert emb.dim == 48
    assert emb.embed_passages([]).shape == (0, 48)


def test_ollama_unreachable_is_a_clear_error() -> None:
    emb = OllamaEmbedder(f"http://127.0.0.1:{_closed_port()}", dim=8, timeout=2)
    with pytest.raises(EmbedderUnavailableError, match="not reachable"):
        emb.embed_query("hello")


def test_ollama_server_error_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_status = 500
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64)
    with pytest.raises(EmbedderUnavailableError, match="mxbai-embed-large"):
        emb.embed_passages(["x"])


def test_ollama_garbage_answer_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_garbage = True
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64)
    with pytest.raises(EmbedderUnavailableError):
        emb.embed_query("x")


def test_ollama_timeout_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.delay = 1.0
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64, timeout=0.2)
    with pytest.raises(EmbedderUnavailableError):
        emb.embed_query("x")


LONG = "我們明天要去台北開會。" * 5_000 + " the very end of it"  # 55,000 characters


def test_e5_embeds_a_bounded_part_of_a_long_query(embedder: E5Embedder) -> None:
    part = query_part(LONG)
    assert len(part) <= QUERY_HEAD_CHARS + QUERY_TAIL_CHARS + 3
    assert part.startswith(LONG[:QUERY_HEAD_CHARS]) and part.endswith("the very end of it")
    # The model sees only that part: the vector of the whole is the vector of the part.
    assert np.allclose(embedder.embed_query(LONG), embedder.embed_query(part), atol=1e-6)
    assert query_part("short") == "short"


def test_ollama_is_sent_the_bounded_part(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64)
    emb.embed_query(LONG)
    [body] = fake_ollama.embed_requests
    assert body["input"] == [query_part(LONG)]


def test_e5_queries_in_one_call_are_each_query_s_vector(embedder: E5Embedder) -> None:
    """A memory's text and its Simplified fold are embedded in one call (memory.index.views):
    each row is what embed_query gives that text, a long one cut the same way."""
    texts = ["我每天早上都喝烏龍茶", "我每天早上都喝乌龙茶", LONG]
    rows = embed_queries(embedder, texts)
    assert rows.shape == (3, embedder.dim)
    for row, text in zip(rows, texts, strict=True):
        assert np.allclose(row, embedder.embed_query(text), atol=1e-5)


def test_ollama_queries_in_one_call_are_one_request(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(fake_ollama.url, "mxbai-embed-large", dim=64)
    rows = embed_queries(emb, ["烏龍茶", LONG])
    [body] = fake_ollama.embed_requests
    assert body["input"] == ["烏龍茶", query_part(LONG)]
    assert np.allclose(rows[0], emb.embed_query("烏龍茶"), atol=1e-6)
