"""Japanese fragments that ask the previous question again under another condition, and
fragment-shaped questions that name their own owner (turnscope/rewriters/_rules/_immediate.py)."""

from __future__ import annotations

from turnscope import Session
from turnscope.entities import EntityExtractor


def _session(*turns: str) -> Session:
    s = Session()
    for i, text in enumerate(turns):
        (s.user if i % 2 == 0 else s.assistant)(text)
    return s


def test_a_condition_swaps_the_offer_of_its_kind() -> None:
    s = _session("料金プランについて知りたい", "ライト、スタンダード、エンタープライズの3つがあります。",
                 "で、スタンダードプランって会話数の上限ある？", "スタンダードプランは月10,000会話までです。")
    r = s.user("エンタープライズだと？")
    assert r.query == "エンタープライズプランって会話数の上限ある？"
    assert "スタンダード" not in r.query


def test_a_condition_goes_in_front_of_a_question_with_nothing_of_its_kind() -> None:
    s = _session("保守の保証期間は？", "買い取りの場合、保証は購入から1年間です。")
    r = s.user("レンタルだと？")
    assert r.query == "レンタルだと、保守の保証期間は？"


def test_a_condition_beside_a_name_of_its_shape_is_not_guessed() -> None:
    # 東京 may replace 大阪 or not: nothing here types two kanji names, so no condition is
    # written in front of a question that still says 大阪
    s = _session("大阪の天気は？", "大阪は晴れです。")
    r = s.user("東京だと？")
    assert "東京だと、大阪" not in r.query


def test_a_question_naming_its_own_owner_takes_no_dropped_topic() -> None:
    s = _session("従業員って何人くらい？", "ほしぞらテックの従業員数は48名です。")
    r = s.user("おもてなし受付の保証期間は？")
    assert r.query == "おもてなし受付の保証期間は？"
    assert "従業員" not in r.query


def test_sosite_joins_the_last_item_of_a_japanese_list() -> None:
    ex = EntityExtractor()
    text = "主な機能は4つあります。音声対話、画面連動、多言語対応、そして会話ログ分析です。"
    lists = ex.enumerations(text, 2, "ja", ex.extract(text, "ja"))
    assert [m.name for m in lists[0].items] == ["音声対話", "画面連動", "多言語対応", "会話ログ分析"]


def test_a_part_of_a_dropped_owner_still_takes_the_owner() -> None:
    # 「バッテリーの充電時間」: the battery is a part, and whose battery it is was dropped
    s = _session("AirSound Pro 3 の重さは？", "AirSound Pro 3 は片耳5.2gです。")
    r = s.user("バッテリーの充電時間は？")
    assert "AirSound Pro 3" in r.query
