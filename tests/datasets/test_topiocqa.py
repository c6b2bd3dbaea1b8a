"""TopiOCQA and TIAGE topic-switch records on the real data."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from turnscope._exceptions import DatasetError
from turnscope.datasets import (
    TopicTurn,
    load_tiage,
    load_tiage_train,
    load_topiocqa,
    load_topiocqa_train,
    resolve_data_root,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_root() -> Path:
    env = os.environ.get("TURNSCOPE_DATA")
    return resolve_data_root(Path(env) if env else REPO / "../shared/data")


@pytest.fixture(scope="module")
def topiocqa(data_root: Path) -> list[list[TopicTurn]]:
    return load_topiocqa(data_root)


def test_topiocqa_sizes_and_order(topiocqa: list[list[TopicTurn]]) -> None:
    assert len(topiocqa) == 205
    assert sum(len(conv) for conv in topiocqa) == 2514
    for conv in topiocqa:
        assert [t.turn for t in conv] == list(range(1, len(conv) + 1))
        assert len({t.conversation for t in conv}) == 1
        assert not conv[0].is_switch


def test_topiocqa_first_conversation(topiocqa: list[list[TopicTurn]]) -> None:
    first = topiocqa[0][0]
    assert first == TopicTurn(
        conversation=1,
        turn=1,
        question="where does the man with the golden gun take place",
        answer="Britain",
        topic="The Man with the Golden Gun (film)",
        is_switch=False,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.topic = "x"  # type: ignore[misc]


def test_topiocqa_switch_is_a_change_of_known_topic(topiocqa: list[list[TopicTurn]]) -> None:
    for conv in topiocqa:
        last = ""
        for t in conv:
            expected = bool(t.topic) and bool(last) and t.topic != last
            assert t.is_switch == expected
            last = t.topic or last
    # 909 naive changes, of which 237 are artefacts of unanswerable (topic-less) turns
    assert sum(t.is_switch for conv in topiocqa for t in conv) == 672


def test_topiocqa_unanswerable_turn_is_not_a_switch(topiocqa: list[list[TopicTurn]]) -> None:
    conv = topiocqa[12]  # conversation 13: turn 4 is unanswerable, topic stays Plymouth Colony
    assert conv[3].topic == "" and conv[3].answer == "UNANSWERABLE"
    assert not conv[3].is_switch
    assert conv[2].topic == conv[4].topic == "Plymouth Colony"
    assert not conv[4].is_switch


def test_tiage(data_root: Path) -> None:
    dialogues = load_tiage(data_root)
    assert len(dialogues) == 100
    assert sum(len(d) for d in dialogues) == 1546
    assert sum(t.is_switch for d in dialogues for t in d) == 311
    first = dialogues[0][0]
    assert first.conversation == 1 and first.turn == 1
    assert first.question == "hello what are doing today ?"
    assert first.answer == "" and first.topic == ""
    assert all(not d[0].is_switch for d in dialogues)


def test_tiage_bad_label_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "tiage").mkdir()
    path = tmp_path / "tiage/anno_dev.json"
    path.write_text(json.dumps({"1": [["hi", "-1"], ["bye", "2"]]}), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"anno_dev\.json: dialogue 1, utterance 2"):
        load_tiage(tmp_path)


def test_topiocqa_out_of_order_turns_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "topiocqa").mkdir()
    row = {"Conversation_no": 1, "Turn_no": 2, "Question": "q", "Answer": "a", "Topic": "T"}
    (tmp_path / "topiocqa/topiocqa_dev.json").write_text(json.dumps([row]), encoding="utf-8")
    with pytest.raises(DatasetError, match="conversation 1, turn 2: turn out of order"):
        load_topiocqa(tmp_path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"topiocqa_dev\.json: file not found"):
        load_topiocqa(tmp_path)


# -- train parts (what the learned shift detector is fitted on) ----------------------


@pytest.fixture(scope="module")
def topiocqa_train(data_root: Path) -> list[list[TopicTurn]]:
    return load_topiocqa_train(data_root)


def test_topiocqa_train_sizes_and_order(topiocqa_train: list[list[TopicTurn]]) -> None:
    assert len(topiocqa_train) == 3209
    assert sum(len(conv) for conv in topiocqa_train) == 41642
    # the snapshot leaves out the 300 lowest-numbered conversations
    assert topiocqa_train[0][0].conversation == 301
    assert topiocqa_train[-1][0].conversation == 3509
    for conv in topiocqa_train:
        assert [t.turn for t in conv] == list(range(1, len(conv) + 1))
        assert len({t.conversation for t in conv}) == 1
        assert not conv[0].is_switch


def test_topiocqa_train_first_turns(topiocqa_train: list[list[TopicTurn]]) -> None:
    first, second = topiocqa_train[0][:2]
    assert first == TopicTurn(
        conversation=301,
        turn=1,
        question="what is the atmosphere of the planet saturn",
        answer="The outer atmosphere of Saturn contains 96.3% molecular hydrogen and 3.25% "
               "helium by volume",
        topic="Saturn",
        is_switch=False,
    )
    assert second.question == "how are rings formed?" and second.topic == "Saturn"
    assert not second.is_switch


def test_topiocqa_train_switches_follow_the_dev_rule(topiocqa_train: list[list[TopicTurn]]) -> None:
    naive = 0
    for conv in topiocqa_train:
        last = ""
        previous = None
        for t in conv:
            assert t.is_switch == (bool(t.topic) and bool(last) and t.topic != last)
            if previous is not None and t.topic != previous:
                naive += 1
            previous = t.topic
            last = t.topic or last
    assert sum(t.is_switch for conv in topiocqa_train for t in conv) == 11141
    # comparing with the empty topic of unanswerable turns would count far more
    assert naive > 11141
    unanswerable = [t for conv in topiocqa_train for t in conv if not t.topic]
    assert len(unanswerable) == 3330
    assert all(t.answer == "UNANSWERABLE" and not t.is_switch for t in unanswerable)


def test_tiage_train(data_root: Path) -> None:
    dialogues = load_tiage_train(data_root)
    assert len(dialogues) == 300
    assert sum(len(d) for d in dialogues) == 4692
    assert sum(t.is_switch for d in dialogues for t in d) == 887
    first = dialogues[0][:2]
    assert first[0].question == "hey ! do you love cats ?" and not first[0].is_switch
    assert first[1].question == "hey . . . i am a dog person , i have two"
    assert all(not d[0].is_switch for d in dialogues)
    assert [d[0].conversation for d in dialogues[:3]] == [1, 2, 3]


def test_train_files_are_named_when_missing(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"topiocqa_train_part\.json: file not found"):
        load_topiocqa_train(tmp_path)
    with pytest.raises(DatasetError, match=r"anno_train\.json: file not found"):
        load_tiage_train(tmp_path)


def test_train_and_dev_are_read_by_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "topiocqa").mkdir()
    rows = [{"Conversation_no": 7, "Turn_no": n, "Question": f"q{n}", "Answer": a, "Topic": t}
            for n, (a, t) in enumerate([("x", "A"), ("UNANSWERABLE", ""), ("y", "A"),
                                        ("z", "B")], start=1)]
    for name in ("topiocqa_dev.json", "topiocqa_train_part.json"):
        (tmp_path / "topiocqa" / name).write_text(json.dumps(rows), encoding="utf-8")
    dev, train = load_topiocqa(tmp_path), load_topiocqa_train(tmp_path)
    assert dev == train
    assert [t.is_switch for t in train[0]] == [False, False, False, True]
