"""Pending proposals (confirm, replace, edit, discard, batch) and export / import."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from memory.base.markdown import parse_memory
from tests.web.conftest import Page, csrf_of

ALICE = "telegram_111"


def _chat_proposal(page: Page, text: str) -> str:
    """What the model proposes in chat (``memory_save``); a typed /remember is saved at once."""
    now = datetime.now().astimezone()
    return page.services.confirm.propose(ALICE, text, "chat:1", now=now).id


def _texts(page: Page) -> list[str]:
    return [e.text for e in page.services.memory.entries(ALICE)]


def test_confirm_a_proposal_made_in_chat(page: Page) -> None:
    pid = _chat_proposal(page, "我女兒的生日是五月三日")
    client = page.login(ALICE)
    html = client.get("/pending").text
    assert "我女兒的生日是五月三日" in html
    assert "time left 30 min" in html
    r = client.post(f"/pending/{pid}/confirm", data={"csrf": csrf_of(html)})
    assert "Remembered: 我女兒的生日是五月三日" in r.text
    assert _texts(page) == ["我女兒的生日是五月三日"]
    assert page.services.confirm.pending(ALICE) == []


def test_replace_edit_and_discard(page: Page) -> None:
    page.remember(ALICE, "My dentist is Dr. Lin on Zhongshan Road", canonical_topic="dentist")
    pid = page.services.confirm.propose(
        ALICE,
        "My dentist is now Dr. Chen near the station",
        "chat:3",
        now=datetime.now().astimezone(),
        fields={"canonical_topic": "dentist"},
    ).id
    client = page.login(ALICE)
    html = client.get("/pending").text
    assert "Replace the old one" in html and "Similar memory exists" in html
    assert "Add as new (keep the old one)" in html
    token = csrf_of(html)
    client.post(f"/pending/{pid}/edit", data={"csrf": token, "text": "My dentist is Dr. Chen"})
    assert [p.text for p in page.services.confirm.pending(ALICE)] == ["My dentist is Dr. Chen"]
    client.post(f"/pending/{pid}/replace", data={"csrf": token})
    entries = page.services.memory.entries(ALICE)
    assert [(e.text, e.status) for e in entries] == [
        ("My dentist is Dr. Lin on Zhongshan Road", "deprecated"),
        ("My dentist is Dr. Chen", "active"),
    ]
    other = _chat_proposal(page, "我下週要去花蓮玩三天")
    r = client.post(f"/pending/{other}/discard", data={"csrf": token})
    assert "Discarded" in r.text and "花蓮" not in "".join(_texts(page))


def test_export_markdown_and_json(page: Page) -> None:
    page.remember(ALICE, "我喜歡在週末爬山")
    page.remember(ALICE, "Weekly sync with the design team is on Tuesdays")
    client = page.login(ALICE)
    md = client.get("/export.md")
    assert md.headers["content-disposition"].startswith("attachment")
    assert [e.text for e in parse_memory(md.text).entries] == _texts(page)
    records = client.get("/export.json").json()
    assert [r["text"] for r in records] == _texts(page)
    assert {"id", "section", "access_count", "chain"} <= set(records[0])


def test_import_only_proposes_and_a_batch_confirms(page: Page) -> None:
    page.remember(ALICE, "我喜歡在週末爬山")
    client = page.login(ALICE)
    token = csrf_of(client.get("/transfer").text)
    records = [
        {"text": "我喜歡在週末爬山", "section": "偏好"},  # already remembered: refused
        {"text": "我的護照十二月到期", "section": "個人", "user_weight": 8},
        {"text": "My api key is sk-abcdefghijklmnopqrstuvwxyz123456"},  # a secret: refused
        {"text": "Old fact", "status": "deprecated"},  # not live: not imported
    ]
    files = {"file": ("backup.json", json.dumps(records, ensure_ascii=False), "application/json")}
    r = client.post("/import", data={"csrf": token}, files=files)
    assert "1 proposals to confirm; 2 not imported" in r.text
    assert _texts(page) == ["我喜歡在週末爬山"]  # nothing written by the import itself
    md = "# MEMORY\n\n## 工作\n\n- 每週五下午交週報\n"
    files = {"file": ("MEMORY.md", md, "text/markdown")}
    r = client.post("/import", data={"csrf": token}, files=files)
    waiting = page.services.confirm.pending(ALICE)
    assert [p.text for p in waiting] == ["我的護照十二月到期", "每週五下午交週報"]
    assert waiting[0].fields["user_weight"] == 8
    ids = [p.id for p in waiting]
    r = client.post("/pending/batch", data={"csrf": token, "ids": ids, "action": "confirm"})
    assert r.text.count("Remembered:") == 2
    assert _texts(page) == ["我喜歡在週末爬山", "我的護照十二月到期", "每週五下午交週報"]


def test_a_file_that_is_no_export_is_one_sentence(page: Page) -> None:
    client = page.login(ALICE)
    token = csrf_of(client.get("/transfer").text)
    files = {"file": ("x.json", b"\xff\xfe not json", "application/json")}
    r = client.post("/import", data={"csrf": token}, files=files)
    assert "Cannot read that file" in r.text and page.services.confirm.pending(ALICE) == []


def test_a_file_too_large_is_refused(page: Page) -> None:
    client = page.login(ALICE)
    token = csrf_of(client.get("/transfer").text)
    big = "- 一條很長的記憶\n" * 200_000  # about 4 MB
    r = client.post("/import", data={"csrf": token}, files={"file": ("big.md", big, "text/md")})
    assert "too large" in r.text and page.services.confirm.pending(ALICE) == []


@pytest.mark.parametrize(
    ("name", "content", "expected", "skipped"),
    [
        ("notes.txt", "I take my coffee black\n\n- 我住在台北\n2. My cat is Mochi\n", 3, 0),
        (
            "mem0.json",
            json.dumps(
                {"results": [{"id": "a", "memory": "Likes sushi"}, {"id": "b", "score": 1}]}
            ),
            1,
            1,
        ),
        (
            "MEMORY.md",
            "# MEMORY\n\n## Work\n\n- I deploy on Fridays\n  - id: m-20260101-aaaaaaaa\n\n"
            "My sister Anna lives in Tainan\nand visits every May.\n",
            2,
            0,
        ),
    ],
)
def test_plain_lines_other_tools_and_paragraphs_become_proposals(
    page: Page, name: str, content: str, expected: int, skipped: int
) -> None:
    client = page.login(ALICE)
    token = csrf_of(client.get("/transfer").text)
    r = client.post("/import", data={"csrf": token}, files={"file": (name, content, "text/plain")})
    assert f"{expected} proposals to confirm; {skipped} not imported" in r.text
    assert len(page.services.confirm.pending(ALICE)) == expected
