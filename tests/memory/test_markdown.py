"""MEMORY.md parsing and rendering: every governance field survives a round trip."""

from __future__ import annotations

from memory.base.markdown import (
    DEFAULT_SECTION,
    Entry,
    MemoryDocument,
    derived_id,
    parse_memory,
    render_memory,
)

FULL = Entry(
    id="m-20261122-7f3a2c",
    text="我喜歡喝咖啡，不加糖 (no sugar)\nsecond line of the same memory",
    section="偏好",
    summary="喜歡黑咖啡",
    memory_class="policy",
    scope="food",
    canonical_topic="food:coffee",
    supersedes=("m-20261101-aaaaaa", "h-0123456789"),
    status="deprecated",
    claims=("drinks coffee", "no sugar, ever"),
    is_core=True,
    enforcement_level="hard",
    user_weight=9,
    importance=0.95,
    created_at="2026-11-22T10:00:00+08:00",
    status_changed_at="2026-11-23T09:00:00+08:00",
    history=("2026-11-22 created", "2026-11-23 deprecated: replaced by tea"),
)


def test_every_governance_field_round_trips() -> None:
    doc = MemoryDocument(
        sections=("偏好", "Work"),
        entries=(FULL, Entry(id="m-2", text="Deploys happen on Fridays", section="Work")),
    )
    text = render_memory(doc)
    assert parse_memory(text) == doc
    # Rendering is stable: a second round trip writes the same bytes.
    assert render_memory(parse_memory(text)) == text


def test_each_non_default_field_is_written_readably() -> None:
    text = render_memory(MemoryDocument(entries=(FULL,)))
    for line in (
        "  - topic: food:coffee",
        "  - class: policy",
        "  - supersedes: m-20261101-aaaaaa, h-0123456789",
        "  - status: deprecated",
        "  - core: true",
        "  - enforcement: hard",
        "  - weight: 9",
        "  - importance: 0.95",
        "  - history: 2026-11-23 deprecated: replaced by tea",
    ):
        assert line in text.splitlines()


def test_defaults_are_not_written() -> None:
    text = render_memory(MemoryDocument(entries=(Entry(id="m-1", text="plain"),)))
    assert "status:" not in text and "weight:" not in text and "class:" not in text
    assert "- id: m-1" in text


def test_hand_written_bullets_without_fields() -> None:
    text = "# MEMORY\n\n## 偏好\n\n- 喜歡藍色\n* likes jazz\n\n## Work\n- standup at 9:30\n"
    doc = parse_memory(text)
    assert [e.text for e in doc.entries] == ["喜歡藍色", "likes jazz", "standup at 9:30"]
    assert [e.section for e in doc.entries] == ["偏好", "偏好", "Work"]
    assert doc.entries[0].id == derived_id("喜歡藍色")
    assert doc.entries[0].status == "active" and doc.entries[0].user_weight == 5
    # Ids derived from text are stable across parses.
    assert parse_memory(text).entries[0].id == doc.entries[0].id


def test_multi_line_entry_keeps_its_lines() -> None:
    text = "## Notes\n\n- first line\n  second line 第二行\n  - weight: 8\n  third line\n"
    (entry,) = parse_memory(text).entries
    assert entry.text == "first line\nsecond line 第二行\nthird line"
    assert entry.user_weight == 8


def test_sections_are_kept_in_order_even_when_empty() -> None:
    doc = parse_memory("# MEMORY\n\n## B\n\n## A\n\n- in a\n")
    assert doc.sections == ("B", "A")
    assert parse_memory(render_memory(doc)).sections == ("B", "A")


def test_entries_before_any_heading_go_to_the_default_section() -> None:
    doc = parse_memory("- no heading yet\n")
    assert doc.entries[0].section == DEFAULT_SECTION


def test_unknown_lines_and_fields_are_tolerated() -> None:
    text = (
        "# My memory\n"
        "Some intro paragraph a person wrote.\n"
        "```\ncode block\n```\n"
        "## 偏好\n"
        "- 咖啡\n"
        "  - mood: happy\n"
        "  - weight: not-a-number\n"
        "  - importance: 7\n"
        "> a quote\n"
        "- tea\n"
    )
    doc = parse_memory(text)
    assert doc.title == "# My memory"
    coffee, tea = doc.entries
    assert coffee.user_weight == 5  # a bad value falls back to the default
    assert coffee.importance == 1.0  # clamped to [0, 1]
    assert "mood" in coffee.text  # an unknown field stays visible as text, never lost
    assert tea.text == "tea"


def test_with_entry_and_without() -> None:
    doc = MemoryDocument().with_entry(Entry(id="a", text="x", section="S"))
    doc = doc.with_entry(Entry(id="a", text="y", section="S"))
    assert [e.text for e in doc.entries] == ["y"] and doc.sections == ("S",)
    assert doc.without("a").entries == ()


def test_empty_file() -> None:
    assert parse_memory("").entries == ()
    assert parse_memory(render_memory(MemoryDocument())) == MemoryDocument()


def test_blank_line_inside_an_entry_round_trips() -> None:
    entry = Entry(id="m-1", text="first paragraph\n\nsecond paragraph 第二段")
    doc = MemoryDocument(sections=(DEFAULT_SECTION,), entries=(entry,))
    assert parse_memory(render_memory(doc)) == doc


def test_lines_a_person_wrote_survive_a_rewrite() -> None:
    text = (
        "# MEMORY\n"
        "My notes, edited by hand.\n\n"
        "## 偏好\n\n"
        "> 這段是引用\n"
        "- 喜歡藍色\n"
        "Some closing remark\n"
    )
    doc = parse_memory(text)
    rewritten = render_memory(doc.with_entry(Entry(id="m-new", text="likes tea", section="偏好")))
    for kept in ("My notes, edited by hand.", "> 這段是引用", "Some closing remark", "- 喜歡藍色"):
        assert kept in rewritten
    again = parse_memory(rewritten)
    assert again.notes == doc.notes
    assert parse_memory(render_memory(again)) == again


def test_a_second_title_line_is_not_lost() -> None:
    doc = parse_memory("# MEMORY\n# Another title\n- x\n")
    assert doc.title == "# MEMORY"
    assert "# Another title" in render_memory(doc)


HAND_WRITTEN = """\
# MEMORY

My long-term notes. 我自己寫的。

## 偏好 ##

- 喜歡藍色 & 綠色
- 我喜歡喝咖啡，不加糖
  - id: m-20261122-7f3a2c
  - weight: 8
  - topic: food:coffee
* likes jazz, esp. Coltrane
  and Monk (started 2019)

## Work

> standups are optional on Fridays
- Deploy checklist:
  1. run the tests
  2. tag the release
  - core: yes
- Wi-Fi at the office is "Guest&amp;Staff" &#x41;
  \\- not a field: a dash a person escaped by hand

## C#

- prefers `async` APIs
"""


def test_a_typical_hand_written_file_parses_as_a_person_means_it() -> None:
    doc = parse_memory(HAND_WRITTEN)
    assert doc.title == "# MEMORY"
    assert doc.sections == ("偏好", "Work", "C#")
    assert [(e.section, e.text) for e in doc.entries] == [
        ("偏好", "喜歡藍色 & 綠色"),
        ("偏好", "我喜歡喝咖啡，不加糖"),
        ("偏好", "likes jazz, esp. Coltrane\nand Monk (started 2019)"),
        ("Work", "Deploy checklist:\n1. run the tests\n2. tag the release"),
        (
            "Work",
            'Wi-Fi at the office is "Guest&amp;Staff" A\n- not a field: a dash a person escaped'
            " by hand",
        ),
        ("C#", "prefers `async` APIs"),
    ]
    coffee, checklist = doc.entries[1], doc.entries[3]
    assert (coffee.id, coffee.user_weight, coffee.canonical_topic) == (
        "m-20261122-7f3a2c",
        8,
        "food:coffee",
    )
    assert checklist.is_core and not doc.entries[4].is_core
    assert doc.entries[0].id == derived_id("喜歡藍色 & 綠色")
    assert doc.notes == (
        ("", "My long-term notes. 我自己寫的。"),
        ("Work", "> standups are optional on Fridays"),
    )


def test_a_hand_written_file_survives_a_rewrite_by_the_bot() -> None:
    doc = parse_memory(HAND_WRITTEN)
    rewritten = render_memory(doc.with_entry(Entry(id="m-new", text="likes tea", section="Work")))
    again = parse_memory(rewritten)
    new = Entry(id="m-new", text="likes tea", section="Work")
    assert again.entries == (*doc.entries[:5], new, doc.entries[5])
    assert again.notes == doc.notes and again.sections == doc.sections
    lines = rewritten.splitlines()
    for kept in ("- 喜歡藍色 & 綠色", "  1. run the tests", "## C#", "  - core: true"):
        assert kept in lines
    assert '- Wi-Fi at the office is "Guest&amp;Staff" A' in lines
    assert render_memory(again) == rewritten


def test_list_fields_keep_items_with_separators_and_blanks() -> None:
    entry = Entry(
        id="m-1",
        text="x",
        supersedes=("a,b", " c "),
        claims=("one | two", "three\nfour"),
        history=(" spaced ", ""),
    )
    text = render_memory(MemoryDocument(sections=(DEFAULT_SECTION,), entries=(entry,)))
    assert "  - supersedes: a&#x2C;b, &#x20;c&#x20;" in text.splitlines()
    assert parse_memory(text).entries == (entry,)
