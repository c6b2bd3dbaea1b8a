from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnscope.retrieval import TextTokenizer, tokenize
from turnscope.retrieval._tokenize import is_cjk, stem_plural


def test_english_lowercased_stopwords_removed_plurals_stemmed() -> None:
    assert tokenize("What's the uptime SLA for the Dublin regions?") == [
        "uptime", "sla", "dublin", "region",
    ]


def test_options_switch_stopwords_and_stemming_off() -> None:
    assert tokenize("The Regions", stopwords=False, stem=False) == ["the", "regions"]
    assert TextTokenizer(stopwords=False, stem=False).name != TextTokenizer().name


def test_japanese_runs_become_overlapping_bigrams() -> None:
    assert tokenize("料金プラン") == ["料金", "金プ", "プラ", "ラン"]


def test_single_cjk_character_run_is_kept_as_is() -> None:
    assert tokenize("月 額") == ["月", "額"]


def test_mixed_latin_and_japanese() -> None:
    assert tokenize("EC2の料金") == ["ec2", "の料", "料金"]


def test_nfkc_first_fullwidth_and_halfwidth() -> None:
    assert tokenize("ＥＣ２の料金") == ["ec2", "の料", "料金"]
    assert tokenize("ｱﾊﾞﾀｰ") == tokenize("アバター")


def test_punctuation_and_underscores_split() -> None:
    assert tokenize("page_size=500; 「アバター」・受付") == [
        "page", "size", "500", "アバ", "バタ", "ター", "受付",
    ]


def test_plural_stemming_rules() -> None:
    words = ["policies", "classes", "boxes", "batches", "wishes", "keys", "status", "basis",
             "access", "gas"]
    assert [stem_plural(w) for w in words] == [
        "policy", "class", "box", "batch", "wish", "key", "status", "basis", "access", "gas",
    ]


def test_is_cjk() -> None:
    assert all(is_cjk(c) for c in "漢かなカナー々")
    assert not any(is_cjk(c) for c in "aZ9 한・。")


@given(st.text())
def test_tokens_are_nonempty_and_contain_no_whitespace(text: str) -> None:
    for tok in tokenize(text):
        assert tok
        assert not any(c.isspace() for c in tok)


@given(st.text(alphabet="漢字かなカタカナー", min_size=2))
def test_cjk_run_yields_len_minus_one_bigrams(text: str) -> None:
    assert tokenize(text) == [text[i : i + 2] for i in range(len(text) - 1)]
