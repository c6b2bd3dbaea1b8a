"""Per-message language detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnscope import detect_language
from turnscope.conversation._state import DEFAULT_JA_SHARE, has_cjk


@pytest.mark.parametrize("text", [
    "このページは何？",
    "さっきのアバターの話",
    "詳しく",
    "具体的に",
    "設定方法の詳細",
    "アバター案内の料金は？",
    "日本語",
    "EC2の料金は？",
    "AWSのCMKはどのリージョンで使えますか？",
    "ｱﾊﾞﾀｰの料金",  # half-width katakana
    "アバター案内",
])
def test_japanese(text: str) -> None:
    assert detect_language(text) == "ja"


@pytest.mark.parametrize("text", [
    "What's the SLA for Dublin?",
    "is it free?",
    "ok different question — is the billing export API paginated?",
    "Is the SLA 99.95%?",
    "",
    "123",
    "   ",
    "ＡＢＣ",  # full-width Latin is still Latin
    "Café crème in Zürich?",
    "Tell me about 東京 region pricing and availability",
])
def test_english(text: str) -> None:
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text", [
    "How much does アバター案内 cost per month?",
    "What does アバター mean?",
    "Is the 受付端末 available in English?",
])
def test_product_name_in_english_sentence_stays_english(text: str) -> None:
    # module docstring: a single katakana product name inside an English sentence
    # should not flip the message to Japanese
    assert detect_language(text) == "en"


def test_share_threshold() -> None:
    assert DEFAULT_JA_SHARE == 0.3
    text = "東京 abcdefgh"  # 2 CJK of 10 letters, no kana
    assert detect_language(text) == "en"
    assert detect_language(text, ja_share=0.1) == "ja"


def test_has_cjk() -> None:
    assert has_cjk("EC2の料金")
    assert not has_cjk("EC2 pricing")


@given(st.text(alphabet=st.characters(max_codepoint=0x2FFF)))
def test_no_cjk_is_english(text: str) -> None:
    assert detect_language(text) == "en"


@given(st.text(alphabet="あいうえおかきくけこアイウエオ日本語料金", min_size=1))
def test_pure_japanese_is_japanese(text: str) -> None:
    assert detect_language(text) == "ja"


@given(st.text())
def test_always_en_or_ja(text: str) -> None:
    assert detect_language(text) in {"en", "ja"}
