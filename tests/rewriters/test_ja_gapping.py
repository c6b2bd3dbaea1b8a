"""Japanese gapping: a one-noun fragment asks the previous question of a peer."""

from __future__ import annotations

import pytest

import turnscope._encoder as encoder_module
from turnscope import Session

RENT_Q = "東京で賃貸の更新料って相場どのくらい？"
RENT_A = "東京では2年ごとに家賃1か月分の更新料がかかるのが一般的です。"


def _after(question: str, answer: str, message: str) -> tuple[str, list[str], object]:
    s = Session(decider=None)
    s.user(question)
    s.assistant(answer)
    r = s.user(message)
    return r.query, list(r.trace["rules"]), r


def test_a_peer_takes_the_place_of_its_peer_in_the_previous_question() -> None:
    query, rules, r = _after(RENT_Q, RENT_A, "大阪は？")
    assert query == "大阪で賃貸の更新料って相場どのくらい？"
    assert "ja-gapping:東京->大阪" in rules
    # what came back from the previous question is carried; the peer swapped out is not
    assert "更新料" in r.carried and "東京" not in r.carried
    assert r.topic_shift is False


def test_a_relational_noun_keeps_its_owner_in_front() -> None:
    query, rules, _ = _after("インフルの予防接種って何月に打つのがいい？",
                             "10月から12月上旬までに打つのが一般的です。", "料金は？")
    assert not any(r.startswith("ja-gapping") for r in rules)
    assert query.endswith("料金は？")


def test_a_condition_is_not_a_peer() -> None:
    _, rules, _ = _after("国民年金の保険料っていくら？", "月額1万7千円ほどです。", "学生で払えない場合は？")
    assert not any(r.startswith("ja-gapping") for r in rules)


def test_a_previous_question_a_rule_rewrote_is_not_repeated() -> None:
    s = Session(decider=None)
    s.user("住民票ってコンビニで取れる？")
    s.assistant("マイナンバーカードがあれば取れます。")
    s.user("料金は？")  # resolved with its owner in front: not the user's own question
    s.assistant("200円前後のところが多いです。")
    r = s.user("印鑑証明は？")
    assert not any(x.startswith("ja-gapping") for x in r.trace["rules"])


def test_an_encoder_fault_leaves_the_rules_rewrite(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> object:
        raise RuntimeError("no model")

    monkeypatch.setattr(encoder_module, "default_encoder", broken)
    query, rules, _ = _after(RENT_Q, RENT_A, "大阪は？")
    assert not any(r.startswith("ja-gapping") for r in rules)
    assert query != "大阪で賃貸の更新料って相場どのくらい？"
    assert "Japanese gapping skipped" in caplog.text
