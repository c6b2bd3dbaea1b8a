"""The tagger's training labels and what training needs (turnscope.training.neural).

The fine-tuning itself needs PyTorch (the ``train`` extra), which the test environment does
not install on purpose (nothing at run time may need it); what is tested here is what
training and inference share and how a missing extra is reported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from turnscope._exceptions import ConfigError, DatasetError
from turnscope.resolver._candidates import encode, load_tokenizer
from turnscope.training.neural import _read, labels_for, train_neural


def _marked(history: list[str], targets: list[str]) -> list[str]:
    tok = load_tokenizer()
    e = encode(tok, "when was it released?", history)
    y = labels_for(e, history, targets)
    turns = list(reversed(history))
    return [turns[s[0]][s[1]:s[2]] for s, v in zip(e.spans, y, strict=True) if v and s is not None]


def test_labels_mark_every_occurrence_of_the_target_in_the_history() -> None:
    history = ["who directed the Man with the Golden Gun", "Guy Hamilton directed The Man with the Golden Gun."]
    marked = _marked(history, ["the man with the golden gun"])
    assert [w.lower() for w in marked].count("golden") == 2
    assert "Hamilton" not in marked and "directed" not in marked


def test_no_target_marks_nothing() -> None:
    assert _marked(["tell me about jaws"], []) == []


def test_a_bad_training_file_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "data.jsonl"
    p.write_text('{"id": "a:1", "message": "x", "history": [], "targets": []}\n{"id": 2}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"data.jsonl:2"):
        _read(p)


def test_training_without_the_train_extra_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # as where the extra is not installed
    p = tmp_path / "data.jsonl"
    p.write_text('{"id": "a:1", "message": "x", "history": [], "targets": []}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"turnscope\[train\]"):
        train_neural(p, tmp_path / "out")
