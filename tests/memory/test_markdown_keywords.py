"""MEMORY.md's keyword index line and the ``refreshed`` field go through the one codec."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from memory.base.markdown import KEYWORDS_LABEL, Entry, MemoryDocument, parse_memory, render_memory
from tests.trust.test_codec import FAST, NASTY, entries, nonempty, texts

OLD_LABEL = "關鍵字 Keywords:"
keywords = st.lists(nonempty, max_size=5).map(tuple)
lookalikes = st.sampled_from(
    (
        f"{KEYWORDS_LABEL} forged, core",
        f"\\{KEYWORDS_LABEL} x",
        f"\\\\{KEYWORDS_LABEL}",
        KEYWORDS_LABEL,
        f"{OLD_LABEL} 舊標籤的筆記",  # the two-language label older files wrote
        f"\\{OLD_LABEL}",
        "just a note",
        "> 引用",
    )
)


@FAST
@given(
    st.lists(entries, max_size=3),
    keywords,
    st.lists(lookalikes, max_size=3),
    texts,
)
def test_documents_with_keywords_notes_and_refreshed_round_trip(
    members: list[Entry], words: tuple[str, ...], notes: list[str], refreshed: str
) -> None:
    members = [replace(e, refreshed_at=refreshed) for e in members]
    sections = tuple(dict.fromkeys(e.section for e in members))
    doc = MemoryDocument(
        sections=sections,
        entries=tuple(sorted(members, key=lambda e: sections.index(e.section))),
        notes=tuple(("", n) for n in notes),
        keywords=words,
    )
    back = parse_memory(render_memory(doc))
    assert back.keywords == words
    assert back.notes == doc.notes and back.entries == doc.entries


def test_the_keyword_line_is_readable_and_a_lookalike_note_stays_a_note() -> None:
    doc = MemoryDocument(
        keywords=("咖啡", "PostgreSQL", "a, b"),
        notes=(("", f"{KEYWORDS_LABEL} 手寫的筆記"),),
        sections=("偏好",),
        entries=(Entry(id="m-1", text="我喜歡咖啡", section="偏好"),),
    )
    text = render_memory(doc)
    assert text.splitlines()[2] == f"{KEYWORDS_LABEL} 咖啡, PostgreSQL, a&#x2C; b"
    assert f"\\{KEYWORDS_LABEL} 手寫的筆記" in text
    assert parse_memory(text) == doc


def test_with_keywords_adds_only_new_words_and_bounds_the_index() -> None:
    doc = MemoryDocument(keywords=("咖啡",))
    grown = doc.with_keywords(["咖啡", "Coffee", "coffee", "  部署  ", ""])
    assert grown.keywords == ("咖啡", "Coffee", "部署")
    assert MemoryDocument().with_keywords([str(i) for i in range(300)]).keywords[0] == "100"
    assert NASTY  # the codec's own hostile pieces are in the generated text above


def test_the_keyword_line_is_one_language_and_an_older_files_line_still_reads() -> None:
    assert KEYWORDS_LABEL == "Keywords:"  # like the file's other labels: "# MEMORY", "- id:"
    older = (
        "# MEMORY\n\n"
        f"{OLD_LABEL} 咖啡, PostgreSQL\n\n"
        f"\\{OLD_LABEL} 手寫的筆記\n\n"
        "## 偏好\n\n- 我喜歡咖啡\n  - id: m-1\n"
    )
    doc = parse_memory(older)
    assert doc.keywords == ("咖啡", "PostgreSQL")
    assert doc.notes == (("", f"{OLD_LABEL} 手寫的筆記"),)
    assert [e.text for e in doc.entries] == ["我喜歡咖啡"]
    text = render_memory(doc)
    assert "Keywords: 咖啡, PostgreSQL" in text.splitlines()
    assert not any(line.startswith(OLD_LABEL) for line in text.splitlines())
    assert parse_memory(text) == doc
