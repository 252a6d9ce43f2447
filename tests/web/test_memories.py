"""The memories page: listing by section, search, explain, filters, and shaping entries."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from memory.base.fsutil import atomic_write_text
from memory.base.markdown import parse_memory
from tests.web.conftest import Page, csrf_of

ALICE = "telegram_111"
COFFEE = "我每天早上喝一杯黑咖啡，不加糖"
TEA = "I prefer oolong tea in the afternoon"
WORK = "The quarterly report is due every March 31"


def _doc(page: Page) -> str:
    return page.services.memory.paths(ALICE).memory_md.read_text(encoding="utf-8")


def test_memories_show_by_section_with_every_field(page: Page) -> None:
    page.remember(ALICE, COFFEE, "偏好 Preferences", canonical_topic="coffee", user_weight=7)
    page.remember(ALICE, WORK, "工作 Work", is_core=True, scope="project:pcai")
    page.remember(ALICE, TEA, "偏好 Preferences")
    html = page.login(ALICE).get("/").text
    # an English reader sees the English half of each section name (issue 23, item 5)
    assert re.findall(r"<h2>([^<]+)</h2>", html) == ["Preferences", "Work"]
    first, second = html.split("<h2>")[1:3]
    assert COFFEE in first and TEA in first and WORK in second
    coffee = html[html.index(COFFEE) : html.index(COFFEE) + 2500]
    for label, value in [
        ("topic", "coffee"),
        ("weight", "7"),
        ("scope", "everywhere"),
        ("uses", "0"),
        ("last used", "not yet"),
        ("in replies", "when the topic comes up"),
        ("layer", "L2"),  # the codes under "Technical details"
        ("scope", "global"),
    ]:
        assert re.search(rf"<dt>{label}</dt><dd[^>]*>{value}</dd>", coffee), label
    assert re.search(r"<dt>health \(0–1[^<]*</dt><dd>0\.\d\d</dd>", coffee)
    assert re.search(r"<dt>fades at today&#39;s rate on</dt><dd>never</dd>", coffee)  # weight 7
    work = html[html.index(WORK) :]
    assert re.search(r"<dt>in replies</dt><dd[^>]*>always in mind</dd>", work)
    assert re.search(r"<dt>layer</dt><dd>L0</dd>", work)
    assert re.search(r"<dt>core \(pinned\)</dt><dd>yes</dd>", work)


def test_the_fade_date_follows_todays_rate(page: Page) -> None:
    page.remember(ALICE, TEA)  # weight 5, never used: recency alone keeps it up
    html = page.login(ALICE).get("/").text
    created = datetime.now().astimezone().date()
    # 0.4 exp(-0.693/14 d) + 0.125 < 0.15 first on whole day 57 (exp(-0.0495*57) = 0.0595)
    assert f"<dd>{(created + timedelta(days=57)).isoformat()}</dd>" in html


def test_search_in_chinese_and_english_with_explain(page: Page) -> None:
    for text in (COFFEE, TEA, WORK):
        page.remember(ALICE, text)
    client = page.login(ALICE)
    zh = client.get("/", params={"q": "咖啡"}).text
    hits = re.findall(r'<a class="text" href="/m/[^"]+">([^<]+)</a>', zh)
    assert hits and hits[0] == COFFEE and TEA not in hits
    en = client.get("/", params={"q": "oolong tea", "explain": "1"}).text
    hits = re.findall(r'<a class="text" href="/m/[^"]+">([^<]+)</a>', en)
    assert hits[0] == TEA
    for stage in ("similarity", "fusion", "recency", "importance", "mmr"):
        assert f"<td>{stage}</td>" in en, stage
    assert "Dropped candidates" in en and 'class="stage"' in en  # what fell out, and where
    # Each memory hit shows its id, and the hits come best score first (issue 24).
    ids = re.findall(r'<a class="text" href="/m/([^"]+)">', en)
    assert ids and all(f'<code class="id">{i}</code>' in en for i in ids)
    scores = [float(x) for x in re.findall(r'<span class="score">([\d.]+)</span>', en)]
    assert scores == sorted(scores, reverse=True)


def test_opening_a_memory_is_a_use_of_it(page: Page) -> None:
    entry_id = page.remember(ALICE, COFFEE)
    client = page.login(ALICE)
    assert page.services.access.get(ALICE, entry_id).count == 0
    assert client.get(f"/m/{entry_id}").status_code == 200
    html = client.get(f"/m/{entry_id}").text
    assert page.services.access.get(ALICE, entry_id).count == 2

    def uses(memory_id: str) -> int:
        return page.services.access.get(ALICE, memory_id).count

    # An act on the page is one use; the entry page it lands on is that act's, not another.
    landed = client.post(f"/m/{entry_id}/pin", data={"csrf": csrf_of(html), "on": "1"})
    assert "<dt>uses</dt><dd>3</dd>" in landed.text and uses(entry_id) == 3
    # A refused edit (a secret in the text) counts nothing; the form sent again with a new
    # text, a scope and unpinned is one act: the new version has the old one's 3, plus 1.
    form = {"csrf": csrf_of(landed.text), "weight": "5", "scope": "project:pcai"}
    refused = client.post(f"/m/{entry_id}/edit", data={**form, "text": "password: hunter2-Xq9!"})
    assert refused.status_code == 422 and uses(entry_id) == 3
    r = client.post(f"/m/{entry_id}/edit", data={**form, "text": COFFEE + "，偶爾加奶"})
    new = str(r.url).rsplit("/m/", 1)[1]
    assert new != entry_id and (uses(entry_id), uses(new)) == (3, 4)
    client.get(f"/m/{new}")  # opened again later: a use
    assert uses(new) == 5


def test_filters_by_status_layer_section_and_scope(page: Page) -> None:
    page.remember(ALICE, COFFEE, "偏好 Preferences")
    page.remember(ALICE, WORK, "工作 Work", scope="project:pcai")
    core = page.remember(ALICE, "Always answer me in Traditional Chinese", is_core=True)
    page.services.governance.set_status(
        ALICE, core, "archived", now=datetime.now().astimezone(), reason="test"
    )
    client = page.login(ALICE)

    def shown(**params: str) -> set[str]:
        html = client.get("/", params=params).text
        return set(re.findall(r'<p class="text">([^<]+)</p>', html))

    assert shown(scope="project:pcai") == {WORK}
    assert shown(layer="L1") == {WORK}
    assert shown(status="archived") == {"Always answer me in Traditional Chinese"}
    assert shown(status="active") == {COFFEE, WORK}
    assert shown(section="偏好 Preferences") == {COFFEE}


def test_editing_the_text_writes_a_new_version_that_supersedes(page: Page) -> None:
    old = page.remember(ALICE, COFFEE, "偏好 Preferences", canonical_topic="coffee")
    client = page.login(ALICE)
    token = csrf_of(client.get(f"/m/{old}").text)
    new_text = "我現在早上改喝拿鐵，不喝黑咖啡了"
    r = client.post(
        f"/m/{old}/edit",
        data={"csrf": token, "text": new_text, "section": "偏好 Preferences", "topic": "coffee",
              "weight": "6", "scope": "global"},
        follow_redirects=False,
    )  # fmt: skip
    new = r.headers["location"].removeprefix("/m/")
    assert r.status_code == 303 and new != old
    entries = {e.id: e for e in parse_memory(_doc(page)).entries}
    assert entries[old].status == "deprecated" and entries[old].text == COFFEE
    assert entries[new].text == new_text and entries[new].supersedes == (old,)
    assert entries[new].canonical_topic == "coffee" and entries[new].user_weight == 6
    timeline = client.get(f"/m/{new}").text.split('class="timeline"')[1]
    assert timeline.index(COFFEE) < timeline.index(new_text) and "replaced" in timeline


def test_editing_fields_changes_the_entry_in_place(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA)
    client = page.login(ALICE)
    token = csrf_of(client.get(f"/m/{entry_id}").text)
    client.post(
        f"/m/{entry_id}/edit",
        data={"csrf": token, "text": TEA, "section": "Drinks", "topic": "tea",
              "weight": "8", "scope": "lang:en", "core": "1"},
    )  # fmt: skip
    [entry] = parse_memory(_doc(page)).entries
    assert (entry.id, entry.section, entry.canonical_topic) == (entry_id, "Drinks", "tea")
    assert (entry.user_weight, entry.scope, entry.is_core) == (8, "lang:en", True)
    assert [h.split(": ", 1)[1] for h in entry.history] == [
        "scope global -> lang:en by the user",  # the chat's /scope and /pin wrote these
        "pinned by the user",
    ]


def test_an_edit_goes_through_the_chat_guards(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA)
    client = page.login(ALICE)
    token = csrf_of(client.get(f"/m/{entry_id}").text)
    before = _doc(page)
    r = client.post(
        f"/m/{entry_id}/edit",
        data={"csrf": token, "text": "my bank password is hunter2-Secret!", "weight": "5"},
    )
    assert "password" in r.text.lower() and "hunter2" not in _doc(page)
    r = client.post(f"/m/{entry_id}/edit", data={"csrf": token, "text": TEA, "weight": "11"})
    assert "0 to 10" in r.text
    r = client.post(f"/m/{entry_id}/edit", data={"csrf": token, "text": TEA, "scope": "x y"})
    assert "Scope must be" in r.text
    assert _doc(page) == before


def test_pin_and_unpin_are_the_chats_own_acts(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA)
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)
    client.post(f"/m/{entry_id}/pin", data={"csrf": token, "on": "1"})
    [entry] = parse_memory(_doc(page)).entries
    assert entry.is_core and entry.history[-1].endswith("pinned by the user")  # as /pin writes
    client.post(f"/m/{entry_id}/pin", data={"csrf": token, "on": "0"})
    [entry] = parse_memory(_doc(page)).entries
    assert not entry.is_core and entry.history[-1].endswith("unpinned by the user")


def test_keep_a_fading_memory(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA)  # weight 5: it fades in 57 days unless kept
    doc = page.services.memory.document(ALICE)
    long_ago = (datetime.now().astimezone() - timedelta(days=55)).isoformat(timespec="seconds")
    page.services.memory.write_document(
        ALICE, doc.with_entry(replace(doc.entries[0], created_at=long_ago))
    )  # within the week of the fade line: the page offers Keep
    client = page.login(ALICE)
    html = client.get("/").text
    assert 'class="keep"' in html
    r = client.post(f"/m/{entry_id}/keep", data={"csrf": csrf_of(html)})
    assert "Kept: its recency starts again." in r.text
    [entry] = parse_memory(_doc(page)).entries
    assert entry.refreshed_at and entry.user_weight == 6  # one step up: it no longer fades
    assert "<dt>fades at today&#39;s rate on</dt><dd>never</dd>" in r.text


def test_forget_then_undo(page: Page) -> None:
    entry_id = page.remember(ALICE, COFFEE)
    client = page.login(ALICE)
    token = csrf_of(client.get("/").text)
    r = client.post(f"/m/{entry_id}/forget", data={"csrf": token})
    assert "Forgot" in r.text and 'id="undo"' in r.text
    # The Undo button says what it takes back; nothing else on the page holds the text.
    assert f"↩️ Undo forgetting &#39;{COFFEE}&#39;</button>" in r.text
    listing = client.get("/?q=咖啡").text.split('class="search"')[1]
    assert COFFEE not in _doc(page) and COFFEE not in listing
    r = client.post("/undo", data={"csrf": token})
    assert f"Undone: forgetting &#39;{COFFEE}&#39;" in r.text and COFFEE in _doc(page)
    assert 'id="undo"' not in r.text


def test_the_undo_button_names_the_edit_and_brings_the_old_text_back(page: Page) -> None:
    old = page.remember(ALICE, COFFEE, "偏好 Preferences", canonical_topic="coffee")
    before = parse_memory(_doc(page)).entries
    client = page.login(ALICE)
    token = csrf_of(client.get(f"/m/{old}").text)
    client.post(
        f"/m/{old}/edit",
        data={"csrf": token, "text": "我現在早上改喝拿鐵", "section": "偏好 Preferences",
              "topic": "coffee", "weight": "7", "scope": "global"},
    )  # fmt: skip
    html = client.get("/").text
    assert f"↩️ Undo the edit of &#39;{COFFEE}&#39;</button>" in html
    r = client.post("/undo", data={"csrf": csrf_of(html)})
    assert f"Undone: the edit of &#39;{COFFEE}&#39;" in r.text
    assert parse_memory(_doc(page)).entries == before  # the whole form taken back, exactly


def test_restore_an_archived_entry(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA)
    now = datetime.now().astimezone()
    page.services.governance.set_status(ALICE, entry_id, "archived", now=now, reason="health")
    client = page.login(ALICE)
    html = client.get("/", params={"status": "archived"}).text
    assert TEA in html and 'class="restore"' in html
    client.post(f"/m/{entry_id}/restore", data={"csrf": csrf_of(html)})
    [entry] = parse_memory(_doc(page)).entries
    assert entry.status == "active" and entry.history[-1].endswith("archived -> active: restored")


def test_a_hand_edit_of_memory_md_shows_on_the_next_load(page: Page) -> None:
    page.remember(ALICE, TEA)
    client = page.login(ALICE)
    assert TEA in client.get("/").text  # the page has read (and cached) the file
    path = page.services.memory.paths(ALICE).memory_md
    atomic_write_text(path, _doc(page) + "\n- 我養了一隻叫豆花的柴犬\n")
    assert "豆花" in client.get("/").text
    with path.open("r+", encoding="utf-8") as f:  # rewritten in place, same size
        text = f.read()
        f.seek(0)
        f.write(text.replace("豆花", "布丁"))
    assert "布丁" in client.get("/").text
    assert "布丁" in client.get("/", params={"q": "柴犬"}).text  # and in search


def test_a_section_typed_as_a_heading_is_named_once(page: Page) -> None:
    client = page.login(ALICE)
    added = client.post(
        "/add", data={"csrf": csrf_of(client.get("/").text), "text": TEA, "section": "## Evil"}
    )
    assert added.status_code in (200, 303)
    [entry] = page.services.memory.entries(ALICE)
    assert entry.section == "Evil" and "## ## " not in _doc(page)
    form = {"text": TEA, "section": " ### Good ", "topic": "", "weight": "5", "scope": "global"}
    client.post(
        f"/m/{entry.id}/edit", data={"csrf": csrf_of(client.get(f"/m/{entry.id}").text), **form}
    )
    [entry] = page.services.memory.entries(ALICE)
    assert entry.section == "Good" and "\n## Good\n" in _doc(page) and "## #" not in _doc(page)


def test_the_list_edits_a_memorys_text_in_place_and_keeps_its_other_fields(page: Page) -> None:
    old = page.remember(
        ALICE, TEA, "偏好 Preferences", canonical_topic="tea", user_weight=7, scope="project:pcai"
    )
    client = page.login(ALICE)
    html = client.get("/").text
    item = html[html.index(f'id="e-{old}"') :]
    item = item[: item.index("</li>")]
    # the list's item: the sentence, an Edit form for its text, Delete, the rest under Details
    assert f'action="/m/{old}/edit"' in item and f'action="/m/{old}/forget"' in item
    assert item.index("<summary>Details</summary>") < item.index(f'<dd class="id">{old}</dd>')
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', item))
    form = {**hidden, "text": "I prefer jasmine tea now"}
    r = client.post(f"/m/{old}/edit", data=form, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/#e-")  # back to the list
    entries = {e.text: e for e in parse_memory(_doc(page)).entries}
    new = entries["I prefer jasmine tea now"]
    assert entries[TEA].status == "deprecated" and new.supersedes == (old,)
    assert (new.section, new.canonical_topic, new.user_weight, new.scope) == (
        "偏好 Preferences",
        "tea",
        7,
        "project:pcai",
    )


def _holding(page: Page, needle: str) -> list[str]:
    """Every file of the data folder (files, both databases, their WAL) holding ``needle``."""
    root = page.services.settings.data_dir
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_delete_all_asks_first_offers_the_export_and_is_final(page: Page) -> None:
    old = page.remember(ALICE, "My dentist is Dr. Quillby", canonical_topic="dentist")
    page.remember(ALICE, COFFEE)
    when = datetime.now().astimezone()
    page.services.daily_log.append(ALICE, "user", "My dentist is Dr. Quillby", when, "tg-1")
    page.remember("telegram_222", WORK)
    client = page.login(ALICE)
    token = csrf_of(client.get(f"/m/{old}").text)
    form = {"csrf": token, "text": "My dentist is Dr. Quillby-Chen", "section": "",
            "topic": "dentist", "weight": "5", "scope": "global"}  # fmt: skip
    client.post(f"/m/{old}/edit", data=form)  # a replaced version: history, not a memory
    assert 'href="/forget-all"' in client.get("/").text
    ask = client.get("/forget-all").text
    assert "This deletes all 2 of your memories" in ask and "It is final" in ask
    assert 'href="/export.md"' in ask and 'href="/export.json"' in ask  # the export first
    assert len(page.services.memory.entries(ALICE)) == 3  # asking deleted nothing
    stale = client.post("/forget-all", data={"csrf": token, "count": "7"})
    assert "This deletes all 2" in stale.text and len(page.services.memory.entries(ALICE)) == 3

    done = client.post("/forget-all", data={"csrf": token, "count": "2"})
    assert "Deleted 2 memories and every copy of them. This cannot be undone." in done.text
    assert page.services.memory.entries(ALICE) == [] and 'id="undo"' not in done.text
    assert _holding(page, "Quillby") == [] and _holding(page, COFFEE) == []  # every copy
    undo = client.post("/undo", data={"csrf": token})
    assert "deleting all your memories, cannot be taken back" in undo.text
    assert page.services.memory.entries(ALICE) == []
    assert [e.text for e in page.services.memory.entries("telegram_222")] == [WORK]


def test_the_entry_page_names_sections_in_the_readers_half(page: Page) -> None:
    entry_id = page.remember(ALICE, TEA, "個人 Personal")
    page.remember(ALICE, WORK, "工作 Work")
    client = page.login(ALICE)
    html = client.get(f"/m/{entry_id}").text
    assert '<option value="個人 Personal" selected>Personal</option>' in html
    assert '<option value="工作 Work" >Work</option>' in html
    assert "個人" not in re.sub(r'value="[^"]*"', "", html)  # only in what the form sends back
    form = {"csrf": csrf_of(html), "text": TEA, "section": "個人 Personal", "new_section": "",
            "topic": "", "weight": "6", "scope": "global"}  # fmt: skip
    client.post(f"/m/{entry_id}/edit", data=form)
    [entry] = [e for e in page.services.memory.entries(ALICE) if e.text == TEA]
    assert (entry.section, entry.user_weight) == ("個人 Personal", 6)  # the file keeps both
    client.post(f"/m/{entry_id}/edit", data={**form, "new_section": "Health"})
    [entry] = [e for e in page.services.memory.entries(ALICE) if e.text == TEA]
    assert entry.section == "Health"


def test_a_new_section_typed_as_one_half_on_the_page_is_the_section_of_both(page: Page) -> None:
    """Typing "Personal" (or 工作) as the new section moves the memory into "個人 Personal",
    not into a second section of the same name beside it (as `pcai remember --section` does)."""
    entry_id = page.remember(ALICE, TEA, "偏好 Preferences")
    page.remember(ALICE, COFFEE, "個人 Personal")
    client = page.login(ALICE)
    form = {"csrf": csrf_of(client.get(f"/m/{entry_id}").text), "text": TEA,
            "section": "偏好 Preferences", "new_section": " personal ", "topic": "",
            "weight": "5", "scope": "global"}  # fmt: skip
    client.post(f"/m/{entry_id}/edit", data=form)
    [entry] = [e for e in page.services.memory.entries(ALICE) if e.text == TEA]
    assert entry.section == "個人 Personal"  # was: "personal", a section beside it
    client.post(f"/m/{entry_id}/edit", data={**form, "new_section": "工作"})
    [entry] = [e for e in page.services.memory.entries(ALICE) if e.text == TEA]
    assert entry.section == "工作 Work"  # a built-in section's half names it too
    assert "personal" not in parse_memory(_doc(page)).sections
