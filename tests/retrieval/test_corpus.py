from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnscope._exceptions import CorpusError, InputError
from turnscope.retrieval import (
    Corpus,
    Passage,
    bundled_corpus,
    bundled_corpus_names,
    load_corpus,
)


def _write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                    encoding="utf-8")
    return path


def test_corpus_sequence_and_by_id(corpus: Corpus) -> None:
    assert len(corpus) == 6
    assert corpus[0].id == "docs/api/billing-export#pagination"
    assert corpus.by_id["site/avatar#price"].lang == "ja"
    assert "nope" not in corpus.by_id
    assert list(corpus)[1] is corpus[1]


def test_corpus_rejects_duplicates_and_empty() -> None:
    with pytest.raises(CorpusError, match="duplicate passage id 'a'"):
        Corpus([Passage("a", "x"), Passage("a", "y")])
    with pytest.raises(CorpusError, match="no passages"):
        Corpus([])


def test_fingerprint_tracks_ids_titles_and_texts() -> None:
    base = Corpus([Passage("a", "one"), Passage("b", "two")])
    assert base.fingerprint == Corpus([Passage("a", "one"), Passage("b", "two")]).fingerprint
    assert len(base.fingerprint) == 64
    for other in (
        [Passage("a", "one"), Passage("b", "two!")],
        [Passage("a", "one"), Passage("c", "two")],
        [Passage("a", "one", title="T"), Passage("b", "two")],
        [Passage("b", "two"), Passage("a", "one")],
        [Passage("a", "on"), Passage("b", "etwo")],
    ):
        assert Corpus(other).fingerprint != base.fingerprint


def test_load_jsonl(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "c.jsonl", [
        {"id": "p1", "text": "hello", "title": "T", "lang": "en", "url": "https://x",
         "site": "x", "extra": 1},
        {"id": "p2", "text": "こんにちは", "lang": "ja", "url": None},
    ])
    c = load_corpus(path)
    assert c[0] == Passage("p1", "hello", "T", "en", "https://x", "x")
    assert c[1] == Passage("p2", "こんにちは", lang="ja")


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("{not json", "line 3"),
        ('{"text": "no id"}', "missing required field 'id'"),
        ('{"id": 7, "text": "x"}', "field 'id' must be a string"),
        ('["id", "text"]', "expected a JSON object"),
        ('{"id": "p1", "text": "dup"}', "duplicate passage id 'p1'"),
    ],
)
def test_bad_jsonl_line_names_file_and_line(tmp_path: Path, bad: str, why: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "p1", "text": "a"}\n\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        load_corpus(path)
    message = str(info.value)
    assert "bad.jsonl" in message and "line 3" in message and why in message


def test_missing_path_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file"):
        load_corpus(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no passages"):
        load_corpus(tmp_path / "empty.jsonl")


def test_load_folder_of_markdown_and_text(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "billing-export.md").write_text(
        "# Billing export API\n\nExports line items.\n\n"
        "## Pagination\n\nCursor based.\n\n### Page size\n\nAt most 1,000.\n\n"
        "```md\n## not a heading\n```\n\n"
        "## Rate limits!\n\n10 requests per second.\n\n## Pagination\n\nAgain.\n",
        encoding="utf-8",
    )
    (tmp_path / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    (tmp_path / "ja.md").write_text("## 料金 プラン\n\n月額制です。\n", encoding="utf-8")
    (tmp_path / "ignored.json").write_text("{}", encoding="utf-8")
    (tmp_path / "blank.txt").write_text("  \n", encoding="utf-8")

    c = load_corpus(tmp_path)
    assert c.ids == (
        "api/billing-export.md",
        "api/billing-export.md#pagination",
        "api/billing-export.md#rate-limits",
        "api/billing-export.md#pagination-1",
        "ja.md#料金-プラン",
        "notes.txt",
    )
    intro = c.by_id["api/billing-export.md"]
    assert intro.title == "Billing export API" and intro.text == "Exports line items."
    section = c.by_id["api/billing-export.md#pagination"]
    assert section.title == "Billing export API"
    assert section.text.startswith("Pagination\n")
    assert "### Page size" in section.text and "## not a heading" in section.text
    assert c.by_id["ja.md#料金-プラン"].title == "料金 プラン"
    assert c.by_id["ja.md#料金-プラン"].lang == "ja"
    assert c.by_id["notes.txt"] == Passage("notes.txt", "Plain notes.", "notes")


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no non-empty"):
        load_corpus(tmp_path)


def test_bundled_corpora_load() -> None:
    assert {"cloud_docs", "ja_site"} <= set(bundled_corpus_names())
    en = bundled_corpus("cloud_docs")
    ja = bundled_corpus("ja_site")
    assert len(en) > 10 and len(ja) > 10
    assert {p.lang for p in en} == {"en"}
    assert {p.lang for p in ja} == {"ja"}


def test_unknown_bundled_corpus_lists_names() -> None:
    with pytest.raises(InputError, match="cloud_docs"):
        bundled_corpus("nope")
