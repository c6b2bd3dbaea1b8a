from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from turnscope._exceptions import InputError
from turnscope.retrieval import (
    Corpus,
    Passage,
    build_retriever,
    default_cache_dir,
)

from .conftest import PASSAGES, CountingEncoder


def test_second_build_does_not_re_embed(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path
) -> None:
    first = build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 1
    second = build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 1
    assert second.run("Dublin SLA") == first.run("Dublin SLA")
    assert len(list((tmp_path / "dense").glob("*.npy"))) == 1


def test_changed_corpus_text_is_re_embedded(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path
) -> None:
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    changed = Corpus([Passage(PASSAGES[0].id, "Completely new text about invoices.")]
                     + PASSAGES[1:])
    r = build_retriever("dense", changed, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 2
    assert r.run("new text invoices", k=1)[0].id == PASSAGES[0].id


def test_other_encoder_name_is_a_different_entry(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path
) -> None:
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    counting_encoder.name = "another-encoder"
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 2


@pytest.mark.parametrize("garbage", [b"", b"not a numpy file", b"\x93NUMPY\x01\x00garbage"])
def test_corrupted_dense_cache_is_rebuilt_with_warning(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path,
    caplog: pytest.LogCaptureFixture, garbage: bytes,
) -> None:
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    (path,) = (tmp_path / "dense").glob("*.npy")
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="turnscope.retrieval"):
        r = build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 2
    assert "rebuilding unreadable dense index cache" in caplog.text
    assert r.run("Dublin SLA", k=1)[0].id == "docs/regions/dublin#sla"
    # the rebuilt entry was written back and is now a hit
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 2


def test_wrong_shape_in_dense_cache_is_rebuilt(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path
) -> None:
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    (path,) = (tmp_path / "dense").glob("*.npy")
    np.save(path, np.zeros((2, 3), dtype=np.float32))
    build_retriever("dense", corpus, encoder=counting_encoder, cache_dir=tmp_path)
    assert counting_encoder.passage_calls == 2


def test_bm25_cache_hit_rebuild_and_corruption(
    corpus: Corpus, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = build_retriever("bm25", corpus, cache_dir=tmp_path)
    (entry,) = (tmp_path / "bm25").iterdir()
    mtime = max(f.stat().st_mtime_ns for f in entry.iterdir())
    second = build_retriever("bm25", corpus, cache_dir=tmp_path)
    assert max(f.stat().st_mtime_ns for f in entry.iterdir()) == mtime  # not rewritten
    assert second.run("Dublin SLA") == first.run("Dublin SLA")

    for f in entry.iterdir():
        f.write_bytes(b"\x00garbage")
    with caplog.at_level(logging.WARNING, logger="turnscope.retrieval"):
        third = build_retriever("bm25", corpus, cache_dir=tmp_path)
    assert "rebuilding unreadable BM25 index cache" in caplog.text
    assert third.run("Dublin SLA") == first.run("Dublin SLA")

    changed = Corpus(PASSAGES[:3])
    build_retriever("bm25", changed, cache_dir=tmp_path)
    assert len(list((tmp_path / "bm25").iterdir())) == 2


def test_unwritable_cache_dir_only_warns(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="turnscope.retrieval"):
        r = build_retriever("hybrid", corpus, encoder=counting_encoder, cache_dir=blocker)
    assert "could not write index cache" in caplog.text
    assert r.run("Dublin SLA", k=1)[0].id == "docs/regions/dublin#sla"


def test_default_cache_dir_from_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Corpus,
    counting_encoder: CountingEncoder,
) -> None:
    monkeypatch.setenv("TURNSCOPE_CACHE", str(tmp_path / "env-cache"))
    assert default_cache_dir() == tmp_path / "env-cache"
    build_retriever("dense", corpus, encoder=counting_encoder)
    assert list((tmp_path / "env-cache" / "dense").glob("*.npy"))
    monkeypatch.delenv("TURNSCOPE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "turnscope"


def test_use_cache_false_writes_nothing(
    corpus: Corpus, counting_encoder: CountingEncoder, tmp_path: Path
) -> None:
    build_retriever("hybrid", corpus, encoder=counting_encoder, cache_dir=tmp_path,
                    use_cache=False)
    assert not any(tmp_path.iterdir())


def test_unknown_kind_lists_valid_kinds(corpus: Corpus) -> None:
    with pytest.raises(InputError, match="valid kinds: bm25, dense, hybrid"):
        build_retriever("sparse", corpus)
