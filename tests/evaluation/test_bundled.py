"""The bundled follow-up set loads, and every item can be scored."""

from __future__ import annotations

from collections import Counter

from turnscope._items import STRATA
from turnscope.evaluation import DEFAULT_LANG_CORPORA, bundled_item_files, bundled_items
from turnscope.retrieval import bundled_corpus


def test_bundled_items_load_in_file_order() -> None:
    files = bundled_item_files()
    assert files == sorted(files) and all(f.endswith(".jsonl") for f in files)
    items = bundled_items()
    assert items, "no bundled follow-up items"
    ids = [i.id for i in items]
    assert len(ids) == len(set(ids))


def test_bundled_items_are_scoreable() -> None:
    items = bundled_items()
    counts = Counter(i.reference_type for i in items)
    assert set(counts) <= set(STRATA), f"unknown strata: {set(counts) - set(STRATA)}"
    corpora = {lang: bundled_corpus(name) for lang, name in DEFAULT_LANG_CORPORA.items()}
    for item in items:
        assert item.lang in corpora, f"{item.id}: no bundled corpus for lang {item.lang!r}"
        missing = [g for g in item.gold if g not in corpora[item.lang].by_id]
        assert not missing, f"{item.id}: gold passages not in the corpus: {missing}"
