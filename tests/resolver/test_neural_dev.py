"""Stacking the tagger on the development sets (turnscope.resolver._neural_dev): the labels a
development message gets, the folds they fall in, and how the resolver's training finds the
fold taggers that stand in for a tagger fine-tuned on those sets. The fine-tuning itself
needs PyTorch (the ``train`` extra), which the test environment leaves out on purpose."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.resolver.test_train import TINY_PARAMS, _items
from turnscope._exceptions import ConfigError
from turnscope.resolver._candidates import HistoryTurn, key_of
from turnscope.resolver._neural import EMPTY_EVIDENCE, NeuralEvidence, encode, load_tokenizer
from turnscope.resolver._neural_dev import MANIFEST, _digest, dev_rows, fold_taggers
from turnscope.resolver._neural_train import stem_labels
from turnscope.resolver._train import _fold, train_resolver

SHIPPED = Path(str(resources.files("turnscope") / "data" / "models" / "neural"))


def _item(prefix: list[tuple[str, str]], follow_up: str, human: str, rewrites: list[str],
          conversation: str = "c1") -> dict[str, Any]:
    return {"id": f"{conversation}_{len(prefix)}", "conversation": conversation, "follow_up": follow_up,
            "human_rewrite": human, "prefix": [{"role": r, "content": t} for r, t in prefix],
            "prefix_rewrites": rewrites}


def test_a_row_is_labelled_by_the_history_words_the_human_rewrite_adds() -> None:
    item = _item([("user", "What is throat cancer?"), ("assistant", "A cancer of the pharynx."),
                  ("user", "Is it treatable?")],
                 "What are its symptoms?", "What are the symptoms of throat cancer?",
                 ["What is throat cancer?", "Is throat cancer treatable?"])
    (row,) = dev_rows({"cast19": [item]}, folds=5)
    assert set(row["stems"]) == set(key_of("throat cancer"))
    # earlier user turns are read as their human rewrites, as the resolver's tagger reads them
    assert row["history"][-1] == "Is throat cancer treatable?"
    assert row["fold"] == _fold("c1", 5) and row["set"] == "cast19"


def test_a_word_the_rewrite_adds_from_nowhere_in_the_history_is_not_a_label() -> None:
    item = _item([("user", "Tell me about the Beatles.")], "Who was their drummer?",
                 "Who was the Beatles' drummer in Hamburg?", [])
    (row,) = dev_rows({"canard": [item]}, folds=5)
    assert set(row["stems"]) == set(key_of("Beatles"))  # not "Hamburg": no history turn has it


def test_a_complete_message_is_a_negative_and_an_opening_turn_is_no_row() -> None:
    items = [_item([], "What is throat cancer?", "What is throat cancer?", []),
             _item([("user", "What is throat cancer?")], "How tall is Mount Everest?",
                   "How tall is Mount Everest?", [])]
    rows = dev_rows({"cast19": items}, folds=5)
    assert len(rows) == 1 and rows[0]["stems"] == []


def test_stem_labels_mark_whole_words_and_not_their_punctuation() -> None:
    tok = load_tokenizer()
    history = ["Can lung cancer spread?", "What causes throat cancer's symptoms?"]
    e = encode(tok, "What is the first sign of it?", history)
    y = stem_labels(e, history, frozenset(key_of("throat cancer")))
    turns = list(reversed(history))
    marked = [turns[s[0]][s[1]:s[2]] for s, v in zip(e.spans, y, strict=True) if v and s is not None]
    assert marked.count("cancer") == 2 and "throat" in marked
    assert "?" not in marked and "lung" not in marked and "causes" not in marked


def _fake_folds(tmp_path: Path, folds: int, digest: str | None = None) -> Path:
    """A shipped dir whose tagger declares fold taggers, with copies of the real tagger as
    the fold taggers (the files, not their training, are what is tested)."""
    ship = tmp_path / "ship"
    fold_dir = tmp_path / "folds"
    ship.mkdir(parents=True)
    for name in ("tagger.int8.onnx", "tokenizer.json"):
        shutil.copyfile(SHIPPED / name, ship / name)
    (ship / "tagger.json").write_text(json.dumps({"stacked": {"folds": folds, "fold_dir": str(fold_dir)}}))
    for k in range(folds):
        (fold_dir / f"fold{k}").mkdir(parents=True)
        shutil.copyfile(SHIPPED / "tagger.int8.onnx", fold_dir / f"fold{k}" / "tagger.int8.onnx")
    (fold_dir / MANIFEST).write_text(json.dumps({"folds": folds, "shipped_sha256": digest or
                                                 _digest(ship / "tagger.int8.onnx")}))
    return ship


def test_fold_taggers_are_found_for_a_stacked_tagger(tmp_path: Path) -> None:
    taggers = fold_taggers(_fake_folds(tmp_path, 3), 3)
    assert taggers is not None and sorted(taggers) == [0, 1, 2]
    ev = taggers[1].evidence("when was it released?", [HistoryTurn(1, "user", "who directed Jaws")])
    assert 0.0 <= ev.need <= 1.0


def test_a_tagger_never_fine_tuned_on_the_development_sets_needs_no_fold_taggers(tmp_path: Path) -> None:
    ship = tmp_path / "ship"
    ship.mkdir()
    (ship / "tagger.json").write_text(json.dumps({"format": "turnscope-neural/1"}))
    assert fold_taggers(ship, 5) is None


def test_missing_or_foreign_fold_taggers_are_an_error_that_says_how_to_rebuild(tmp_path: Path) -> None:
    ship = _fake_folds(tmp_path / "a", 3)
    shutil.rmtree(tmp_path / "a" / "folds")
    with pytest.raises(ConfigError, match=r"there are none at .*turnscope train --only neural"):
        fold_taggers(ship, 3)
    with pytest.raises(ConfigError, match=r"another tagger than the shipped one"):
        fold_taggers(_fake_folds(tmp_path / "b", 3, digest="0" * 16), 3)
    with pytest.raises(ConfigError, match=r"made for 3 folds, the resolver trains with 5"):
        fold_taggers(_fake_folds(tmp_path / "c", 3), 5)


class _Recording:
    """A tagger that says nothing and records which messages it was asked about."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def evidence(self, message: str, history: list[HistoryTurn]) -> NeuralEvidence:
        self.messages.append(message)
        return EMPTY_EVIDENCE


def test_the_resolver_trains_each_fold_on_the_scores_of_the_tagger_that_never_saw_it(tmp_path: Path) -> None:
    items = _items()
    folds = 3
    taggers = {k: _Recording() for k in range(folds)}
    train_resolver(None, tmp_path / "r.txt", items={"fixture": items}, folds=folds, rounds=10, seed=7,
                   params=TINY_PARAMS, fold_taggers=taggers, calibrate=False)  # type: ignore[arg-type]
    for k, tagger in taggers.items():
        asked = set(tagger.messages)
        mine = {it["follow_up"] for it in items if it["prefix"] and _fold(it["conversation"], folds) == k}
        assert asked and asked <= mine
    assert json.loads((tmp_path / "r.txt").read_text().splitlines()[0])["fold_taggers"] is True
