"""Training data of the neural tagger (turnscope.training.neural_data), on tiny TopiOCQA-format
fixtures (not the real data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from turnscope._exceptions import DatasetError
from turnscope.training.neural_data import (
    ANSWER_CHARS,
    HISTORY_TURNS,
    build_neural_data,
    render_sample,
)

Turn = tuple[str, str, str]  # (topic, question, answer)

SATURN: list[Turn] = [
    ("Saturn", "what is the atmosphere of saturn", "Saturn's atmosphere is mostly hydrogen."),
    ("Saturn", "how far is saturn from the sun?", "About 1.4 billion km."),
    ("Jupiter", "what is jupiter?", "Jupiter is the largest planet."),
]
CURIE: list[Turn] = [
    ("Marie Curie", "who discovered polonium", "Marie Curie. She named it after Poland."),
    ("Marie Curie", "where was she born?", "She was born in Warsaw."),
    ("Marie Curie", "when did marie curie die?", "In 1934."),
]
FILM: list[Turn] = [
    ("Jaws (film)", "who directed jaws", "Steven Spielberg directed Jaws in 1975."),
    ("Jaws (film)", "when was it released?", "June 20, 1975."),
    ("Jaws (film)", "who composed the music?", "John Williams."),
    ("", "who were influenced by it?", "UNANSWERABLE"),
]


def _write(root: Path, conversations: list[list[Turn]]) -> Path:
    rows: list[dict[str, Any]] = []
    for number, conv in enumerate(conversations, start=1):
        for turn_no, (topic, question, answer) in enumerate(conv, start=1):
            rows.append({"Context": [], "Conversation_no": number, "Turn_no": turn_no,
                         "Question": question, "Answer": answer, "Topic": topic,
                         "Topic_section": "", "is_nq": False})
    path = root / "topiocqa" / "topiocqa_train_part.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows), encoding="utf-8")
    return root


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"].split(":", 3)[3]: r for r in rows}


def _build(root: Path, out: Path, **kw: Any) -> list[dict[str, Any]]:
    build_neural_data(root, out, progress=False, **kw)
    return _rows(out)


def test_ablation_replaces_the_subject_with_a_pronoun_and_labels_the_history_span(
        tmp_path: Path) -> None:
    root = _write(tmp_path / "data", [SATURN, CURIE])
    rows = _build(root, tmp_path / "out.jsonl", natural=False)
    saturn = {r["id"]: r for r in rows if r["id"].startswith("topiocqa-train:1:2:")}
    pos = saturn["topiocqa-train:1:2:ablation:it"]
    assert pos["message"] == "how far is it from the sun?"
    assert pos["original"] == "how far is saturn from the sun?"
    # the span as the history writes it: the newest mention, the assistant's "Saturn"
    assert pos["targets"] == ["Saturn"]
    assert pos["history"] == [
        {"role": "user", "text": "what is the atmosphere of saturn"},
        {"role": "assistant", "text": "Saturn's atmosphere is mostly hydrogen."},
    ]
    # the conversation's answers say "she" of Marie Curie
    curie = next(r for r in rows if r["id"].startswith("topiocqa-train:2:3:ablation"))
    assert curie["message"] == "when did she die?"
    assert curie["targets"] == ["Marie Curie"]


def test_the_unablated_question_is_a_negative_of_its_own(tmp_path: Path) -> None:
    rows = _build(_write(tmp_path / "data", [SATURN]), tmp_path / "out.jsonl", natural=False)
    named = [r for r in rows if r["id"].endswith(":named")]
    assert [(r["message"], r["targets"], r["original"]) for r in named] == [
        ("how far is saturn from the sun?", [], None)]


def _planets(n: int) -> list[list[Turn]]:
    """``n`` conversations with one ablation each (and its named twin), no switch."""
    names = ["Mars", "Venus", "Mercury", "Neptune", "Uranus", "Pluto"][:n]
    return [[(p, f"what is {p.lower()}", f"{p} is a planet."),
             (p, f"how big is {p.lower()}?", "Quite big.")] for p in names]


def test_a_switch_that_names_the_new_topic_carries_nothing(tmp_path: Path) -> None:
    # five positives, five named twins and the switch: a share of 5/11, inside the band
    root = _write(tmp_path / "data", [SATURN, *_planets(4)])
    report = build_neural_data(root, tmp_path / "out.jsonl", progress=False, natural=False)
    switch = _by_kind(_rows(tmp_path / "out.jsonl"))["switch-named"]
    assert switch["message"] == "what is jupiter?"
    assert switch["targets"] == []
    assert report.negative_kinds.get("switch-named") == 1


def test_a_switch_that_does_not_name_its_topic_is_left_out_not_made_a_negative(
        tmp_path: Path) -> None:
    conv: list[Turn] = [
        ("Take On Me", "who sang take on me", "The song was recorded by A-ha."),
        ("A-ha", "how many albums did they release?", "Eleven."),  # points back at A-ha
    ]
    root = _write(tmp_path / "data", [conv])
    report = build_neural_data(root, tmp_path / "out.jsonl", progress=False, natural=False)
    assert report.excluded["switch-unnamed"] == 1
    assert all(r["message"] != conv[1][1] for r in _rows(tmp_path / "out.jsonl"))


def test_natural_follow_up_is_labelled_and_its_deablated_twin_is_a_negative(
        tmp_path: Path) -> None:
    rows = _build(_write(tmp_path / "data", [FILM]), tmp_path / "out.jsonl", natural=True)
    kinds = _by_kind(rows)
    assert kinds["natural:it"]["message"] == "when was it released?"
    assert kinds["natural:it"]["targets"] == ["Jaws"]
    assert kinds["natural:it"]["original"] is None
    assert kinds["deablation"]["message"] == "when was Jaws released?"
    assert kinds["deablation"]["targets"] == []
    # "who composed the music?" points at nothing clear: its label is unknown, it is left out
    assert not any(r["message"] == "who composed the music?" for r in rows)


def test_without_natural_only_ablation_kinds_are_written(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", [FILM])
    report = build_neural_data(root, tmp_path / "out.jsonl", progress=False, natural=False)
    assert _rows(tmp_path / "out.jsonl") == []
    assert report.excluded["natural-same-topic"] == 2
    assert report.excluded["unanswerable"] == 1
    assert report.excluded["first-turn"] == 1


def test_every_target_occurs_in_a_history_text_and_the_schema_holds(tmp_path: Path) -> None:
    long_answer = "Saturn " + "x" * (ANSWER_CHARS * 2)
    long_conv: list[Turn] = [("Saturn", f"question {k} about saturn", long_answer)
                             for k in range(HISTORY_TURNS + 4)]
    rows = _build(_write(tmp_path / "data", [SATURN, CURIE, FILM, long_conv]),
                  tmp_path / "out.jsonl")
    assert rows
    for r in rows:
        assert set(r) == {"id", "source", "message", "history", "targets", "original"}
        assert r["source"] == "topiocqa-train"
        assert len(r["history"]) <= 2 * HISTORY_TURNS
        assert all(h["role"] in ("user", "assistant") for h in r["history"])
        assert all(len(h["text"]) <= ANSWER_CHARS for h in r["history"])
        for target in r["targets"]:
            assert any(target.lower() in h["text"].lower() for h in r["history"]), r


def test_the_larger_class_is_thinned_into_the_band(tmp_path: Path) -> None:
    switches: list[list[Turn]] = [[("Saturn", "what is saturn", "A planet."),
                                   (f"Topic {k}", f"what is topic {k}?", "Something.")]
                                  for k in range(6)]
    root = _write(tmp_path / "data", [SATURN, *switches])
    report = build_neural_data(root, tmp_path / "out.jsonl", progress=False, natural=False)
    assert report.positives == 1
    assert report.examples == 2
    assert 0.45 <= report.positive_share <= 0.55
    # negatives: six switches here, Saturn's switch to Jupiter, Saturn's named twin; one kept
    assert report.dropped_for_balance == 8 - 1


def test_same_seed_same_file(tmp_path: Path) -> None:
    names = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda sigma".split()
    films = [[(f"{n.title()} (film)", f"who directed {n}", f"{n.title()} was directed by X."),
              (f"{n.title()} (film)", f"when was {n} released?", "1990.")] for n in names]
    root = _write(tmp_path / "data", films)
    outputs: list[bytes] = []
    for seed in (7, 7, 8, 9, 10):
        build_neural_data(root, tmp_path / f"out{len(outputs)}.jsonl", seed=seed, progress=False)
        outputs.append((tmp_path / f"out{len(outputs)}.jsonl").read_bytes())
    assert outputs[0] == outputs[1]
    # the seed decides pronoun or description ("when was the film released?")
    assert len(set(outputs)) > 1


def test_progress_bar_run_writes_the_same_file(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", [SATURN, CURIE, FILM])
    build_neural_data(root, tmp_path / "a.jsonl", progress=False)
    build_neural_data(root, tmp_path / "b.jsonl", progress=True)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_missing_data_file_names_the_path(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(DatasetError, match="topiocqa_train_part.json"):
        build_neural_data(tmp_path / "data", tmp_path / "out.jsonl", progress=False)


def test_garbled_data_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "data" / "topiocqa" / "topiocqa_train_part.json"
    path.parent.mkdir(parents=True)
    path.write_text('[{"Conversation_no": 1, "Turn_no": ', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"topiocqa_train_part\.json.*invalid JSON"):
        build_neural_data(tmp_path / "data", tmp_path / "out.jsonl", progress=False)
    path.write_text(json.dumps([{"Conversation_no": 1, "Turn_no": 1}]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"topiocqa_train_part\.json.*missing field"):
        build_neural_data(tmp_path / "data", tmp_path / "out.jsonl", progress=False)


def test_missing_data_root_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="nowhere"):
        build_neural_data(tmp_path / "nowhere", tmp_path / "out.jsonl", progress=False)


def test_render_sample_shows_message_targets_and_last_user_turn(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    build_neural_data(_write(tmp_path / "data", [SATURN]), out, progress=False, natural=False)
    text = render_sample(out, n=50, seed=1)
    assert text.count("\n") + 1 == len(_rows(out))
    assert "**how far is it from the sun?** → [\"Saturn\"]" in text
    assert "last user turn: _what is the atmosphere of saturn_" in text


CITY: list[Turn] = [
    ("Lyon", "what is the history of lyon", "Lyon was founded by the Romans in 43 BC."),
    ("Lyon", "what is its population?", "About 520,000 people live in Lyon."),
    ("Lyon", "when was it founded?", "In 43 BC."),
    ("Lyon", "what can you eat there?", "Lyon is known for its bouchons."),
]


def test_every_history_is_as_asked(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", [CITY, SATURN])
    rows = {r["id"]: r for r in _build(root, tmp_path / "out.jsonl")}
    users = [h["text"] for h in rows["topiocqa-train:1:3:natural:it"]["history"] if h["role"] == "user"]
    assert users == ["what is the history of lyon", "what is its population?"]
