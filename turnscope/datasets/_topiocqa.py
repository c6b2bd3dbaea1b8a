"""Topic-switch data: TopiOCQA and TIAGE (dev and train) as turn records.

Both become lists of conversations of ``TopicTurn``; ``is_switch`` marks the
turns where the topic changes, which is what the segmenters are calibrated and
scored on.

TopiOCQA gives a Wikipedia topic per turn; a switch is a turn whose topic
differs from the previous turn's. Unanswerable turns (174 in dev) carry an
empty topic: that means *unknown*, not *a new topic*, so such a turn is never
a switch and the next turn is compared with the last known topic. Comparing
with "" instead would invent two switches around every unanswerable turn.

TIAGE labels each utterance of a chit-chat dialogue ("1" shift, "0" no shift,
"-1" the opening utterance). Utterances are not question/answer pairs, so each
one is a record of its own: ``question`` holds the utterance, ``answer`` and
``topic`` are empty.

Dev sets are for scoring; the train files (``load_topiocqa_train``: the 3,209
conversations of TopiOCQA train in the shared snapshot; ``load_tiage_train``)
are what the learned shift detector is fitted and calibrated on. Train and dev
are read by the same code, so a switch means the same thing in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnscope._exceptions import DatasetError
from turnscope.datasets._cast import read_json, resolve_data_root

__all__ = ["TopicTurn", "load_tiage", "load_tiage_train", "load_topiocqa", "load_topiocqa_train"]

_TOPIOCQA_DEV = Path("topiocqa/topiocqa_dev.json")
_TOPIOCQA_TRAIN = Path("topiocqa/topiocqa_train_part.json")
_TIAGE_DEV = Path("tiage/anno_dev.json")
_TIAGE_TRAIN = Path("tiage/anno_train.json")
_TIAGE_LABELS = {"-1": False, "0": False, "1": True}


@dataclass(frozen=True)
class TopicTurn:
    """One turn of a topic-switch data set (``turn`` is 1-based)."""

    conversation: int
    turn: int
    question: str
    answer: str
    topic: str
    is_switch: bool


def _get(row: Any, key: str, kind: type, where: str) -> Any:
    if not isinstance(row, dict) or key not in row:
        raise DatasetError(f"{where}: missing field {key!r}")
    value = row[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DatasetError(f"{where}: field {key!r} should be {kind.__name__}, got {value!r}")
    return value


def load_topiocqa(data_root: Path | None = None) -> list[list[TopicTurn]]:
    """TopiOCQA dev conversations, in file order.

    >>> convs = load_topiocqa(Path("../shared/data"))  # doctest: +SKIP
    >>> len(convs), sum(t.is_switch for c in convs for t in c)  # doctest: +SKIP
    (205, 672)
    """
    return _read_topiocqa(resolve_data_root(data_root) / _TOPIOCQA_DEV)


def load_topiocqa_train(data_root: Path | None = None) -> list[list[TopicTurn]]:
    """The TopiOCQA train conversations of the shared snapshot, in file order.

    Same rules as :func:`load_topiocqa` (an unanswerable turn is never a switch).

    >>> convs = load_topiocqa_train(Path("../shared/data"))  # doctest: +SKIP
    >>> len(convs), sum(len(c) for c in convs)  # doctest: +SKIP
    (3209, 41642)
    """
    return _read_topiocqa(resolve_data_root(data_root) / _TOPIOCQA_TRAIN)


def _read_topiocqa(path: Path) -> list[list[TopicTurn]]:
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty JSON list of turns")
    conversations: list[list[TopicTurn]] = []
    last_topic = ""
    for index, row in enumerate(data):
        where = f"{path}: entry #{index + 1}"
        conv_no = _get(row, "Conversation_no", int, where)
        turn_no = _get(row, "Turn_no", int, where)
        where = f"{path}: conversation {conv_no}, turn {turn_no}"
        topic = _get(row, "Topic", str, where).strip()
        if turn_no == 1:
            conversations.append([])
            last_topic = ""
        elif (
            not conversations
            or conversations[-1][-1].conversation != conv_no
            or turn_no != len(conversations[-1]) + 1
        ):
            # "the previous turn" is only meaningful when turns arrive grouped and in order
            raise DatasetError(f"{where}: turn out of order (turns must run 1..n per conversation)")
        current = conversations[-1]
        is_switch = bool(topic) and bool(last_topic) and topic != last_topic
        if topic:
            last_topic = topic
        current.append(
            TopicTurn(
                conversation=conv_no,
                turn=turn_no,
                question=_get(row, "Question", str, where),
                answer=_get(row, "Answer", str, where),
                topic=topic,
                is_switch=is_switch,
            )
        )
    return conversations


def load_tiage(data_root: Path | None = None) -> list[list[TopicTurn]]:
    """TIAGE dev dialogues, one record per utterance (``question`` = the utterance).

    >>> dialogues = load_tiage(Path("../shared/data"))  # doctest: +SKIP
    >>> len(dialogues), sum(t.is_switch for d in dialogues for t in d)  # doctest: +SKIP
    (100, 311)
    """
    return _read_tiage(resolve_data_root(data_root) / _TIAGE_DEV)


def load_tiage_train(data_root: Path | None = None) -> list[list[TopicTurn]]:
    """TIAGE train dialogues, one record per utterance, same rules as :func:`load_tiage`.

    >>> dialogues = load_tiage_train(Path("../shared/data"))  # doctest: +SKIP
    >>> len(dialogues), sum(len(d) for d in dialogues)  # doctest: +SKIP
    (300, 4692)
    """
    return _read_tiage(resolve_data_root(data_root) / _TIAGE_TRAIN)


def _read_tiage(path: Path) -> list[list[TopicTurn]]:
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise DatasetError(f"{path}: expected a non-empty JSON object of dialogues")
    dialogues: list[list[TopicTurn]] = []
    for key, utterances in data.items():
        try:
            conv_no = int(key)
        except ValueError:
            raise DatasetError(f"{path}: dialogue key {key!r} is not a number") from None
        if not isinstance(utterances, list):
            raise DatasetError(f"{path}: dialogue {key}: expected a list of utterances")
        dialogue: list[TopicTurn] = []
        for index, pair in enumerate(utterances, start=1):
            where = f"{path}: dialogue {key}, utterance {index}"
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not all(isinstance(x, str) for x in pair)
            ):
                raise DatasetError(f"{where}: expected [text, label], got {pair!r}")
            text, label = pair
            if label not in _TIAGE_LABELS:
                raise DatasetError(
                    f"{where}: unknown shift label {label!r} (expected one of "
                    f"{sorted(_TIAGE_LABELS)})"
                )
            dialogue.append(
                TopicTurn(
                    conversation=conv_no,
                    turn=index,
                    question=text,
                    answer="",
                    topic="",
                    # the opening utterance cannot be a shift, whatever its label says
                    is_switch=_TIAGE_LABELS[label] and index > 1,
                )
            )
        dialogues.append(dialogue)
    return dialogues
