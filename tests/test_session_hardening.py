"""``Session`` against hostile but realistic callers (issue 9): threads, wrong arguments,
pasted text with odd widths, invisible and control characters, very long messages."""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

from turnscope import ConfigError, InputError, Session
from turnscope.entities import EntityExtractor, LivenessConfig, bundled_vocabularies
from turnscope.rewriters import RewriteRequest, RewriteResult

# -- 7. one session shared by threads ------------------------------------------------------


def test_threads_appending_to_one_session_get_unique_contiguous_indices() -> None:
    s = Session(resolver=None)
    workers, per_worker = 8, 12
    results: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(workers)

    def work(w: int) -> None:
        start.wait()
        try:
            for i in range(per_worker):
                if i % 3 == 2:
                    s.assistant(f"Worker {w} answer {i}: Frankfurt and Dublin both support CMK.")
                    continue
                r = s.user(f"What is the uptime SLA of region {w}-{i}?")
                with lock:
                    results.append(r.turn)
        except BaseException as exc:  # collected: a thread's exception would vanish
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    total = workers * per_worker
    indices = [t.index for t in s.state.turns]
    assert indices == list(range(1, total + 1))  # unique, contiguous, in order of arrival
    assert s.turn_count == total
    assert len(results) == len(set(results)) == workers * (per_worker - per_worker // 3)
    assert sorted(s.state.mentions) == indices
    # a user turn's resolved record sits at its own index
    assert set(results) == set(s.state.resolved)


def test_session_survives_pickling_with_a_fresh_lock() -> None:
    s = Session(resolver=None)
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    copy = pickle.loads(pickle.dumps(s))
    assert copy.user("What's the uptime SLA on the second one?").query == \
        "What's the uptime SLA on Dublin?"
    assert copy._lock is not s._lock


# -- 9. library arguments are checked where they are given ----------------------------------

class NoRun:
    name = "norun"


class Fixed:
    name = "fixed"

    def run(self, request: RewriteRequest) -> RewriteResult:
        return RewriteResult("fixed query", "standalone", False, (), None, backend="fixed")


@pytest.mark.parametrize(("kwargs", "names"), [
    ({"vocabulary": "cloud"}, ["vocabulary", "Vocabulary", "bundled_vocabulary"]),
    ({"vocabulary": {"types": {}}}, ["vocabulary", "Vocabulary"]),
    ({"policy": 42}, ["policy", "window", "liveness", "42"]),
    ({"policy": None}, ["policy"]),
    ({"rewriter": NoRun()}, ["rewriter", "run"]),
    ({"rewriter": "llm"}, ["rewriter", "run"]),
    ({"liveness": {"stale_after": 2}}, ["liveness", "LivenessConfig"]),
    ({"liveness": 3}, ["liveness", "LivenessConfig"]),
    ({"extractor": "spacy"}, ["extractor", "EntityExtractor"]),
    ({"resolver": 1.5}, ["resolver", "Resolver", "None", "default"]),
])
def test_wrong_arguments_raise_input_error_naming_them(kwargs: dict[str, Any],
                                                       names: list[str]) -> None:
    with pytest.raises(InputError) as exc:
        Session(**kwargs)
    for name in names:
        assert name in str(exc.value)


def test_unknown_resolver_name_is_a_config_error() -> None:
    # a wrong type is an InputError; an unknown name, like an unknown policy, a ConfigError
    with pytest.raises(ConfigError, match="resolver must be"):
        Session(resolver="learned")


def test_vocabulary_and_extractor_together_are_refused() -> None:
    vocab = bundled_vocabularies()
    with pytest.raises(InputError, match="vocabulary or extractor"):
        Session(vocabulary=vocab, extractor=EntityExtractor(vocab))


def test_good_arguments_are_accepted() -> None:
    vocab = bundled_vocabularies()
    s = Session(policy="window:2", rewriter=Fixed(), extractor=EntityExtractor(vocab),
                liveness=LivenessConfig(), resolver=None)
    assert s.user("How do I rotate an API token?").query == "fixed query"


@pytest.mark.parametrize("screen", [{"page_title": 42}, {"site": ["a"]}, "a page"])
def test_wrong_screen_is_an_input_error(screen: Any) -> None:
    with pytest.raises(InputError, match="screen"):
        Session(resolver=None).user("what's on this page?", screen=screen)


# -- 10. width and zero-width characters -------------------------------------------------

JA_QUESTION = "アバター案内の料金プランってどんなのがある？"
JA_ANSWER = ("アバター案内には3つのプランがあります。1つ目はライトプラン（月額9,800円）、"
             "2つ目はスタンダードプラン（月額29,800円）、3つ目はエンタープライズプラン（個別見積もり）です。")


def ja_ordinal(question: str, answer: str, follow_up: str) -> tuple[str, str]:
    s = Session(vocabulary=bundled_vocabularies())
    s.user(question)
    s.assistant(answer)
    r = s.user(follow_up)
    return r.query, r.reference_class


def test_japanese_ordinal_with_half_width_katakana_resolves_like_the_clean_one() -> None:
    clean = ja_ordinal(JA_QUESTION, JA_ANSWER, "2つ目のやつって英語いける？")
    assert "スタンダードプラン" in clean[0]
    half_answer = JA_ANSWER.replace("スタンダードプラン", "ｽﾀﾝﾀﾞｰﾄﾞﾌﾟﾗﾝ")
    assert ja_ordinal(JA_QUESTION, half_answer, "2つ目のやつって英語いける？") == clean
    half_question = "ｱﾊﾞﾀｰ案内の料金ﾌﾟﾗﾝってどんなのがある？"
    assert ja_ordinal(half_question, JA_ANSWER, "2つ目のやつって英語いける？") == clean
    assert ja_ordinal(JA_QUESTION, JA_ANSWER, "２つ目のやつって英語いける？") == clean


@pytest.mark.parametrize("zw", ["\u200b", "\ufeff", "\u200c", "\u200d", "\u2060"])
def test_japanese_ordinal_with_a_zero_width_character_resolves_like_the_clean_one(zw: str) -> None:
    clean = ja_ordinal(JA_QUESTION, JA_ANSWER, "2つ目のやつって英語いける？")
    assert ja_ordinal(JA_QUESTION, JA_ANSWER, f"2{zw}つ目のやつって英語いける？") == clean
    assert ja_ordinal(JA_QUESTION, JA_ANSWER.replace("2つ目", f"2{zw}つ目"),
                      "2つ目のやつって英語いける？") == clean


@pytest.mark.parametrize("zw", ["\u200b", "\ufeff", "\u200c", "\u200d"])
def test_english_entity_with_a_zero_width_character_inside_is_extracted(zw: str) -> None:
    s = Session(vocabulary=bundled_vocabularies(), resolver=None)
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant(f"Frank{zw}furt and Dub{zw}lin both support CMK for data at rest.")
    r = s.user("What's the uptime SLA on the second one?")
    assert r.query == "What's the uptime SLA on Dublin?"
    r2 = Session(vocabulary=bundled_vocabularies(), resolver=None).user(
        f"What's the uptime SLA in Dub{zw}lin?")
    assert {"type": "region", "name": "Dublin", "status": "live"} in r2.entities
    assert zw not in r2.query


def test_half_width_katakana_comes_back_full_width_in_the_query() -> None:
    r = Session(vocabulary=bundled_vocabularies()).user("ｱﾊﾞﾀｰ案内の料金は？")
    assert r.query == "アバター案内の料金は？"
    assert any(e["name"] == "アバター案内" for e in r.entities)


# -- 11. control characters and messages with nothing visible ------------------------------

def test_control_characters_stay_out_of_the_query() -> None:
    r = Session(resolver=None).user("What's the uptime SLA\x00 in Dub\x07lin\x1b[31m?\r\nthanks\t!")
    assert r.query.isprintable()
    assert "\x1b" not in r.query and "[31m" not in r.query
    assert "Dublin" in r.query


def test_control_characters_in_a_screen_title_stay_out_of_the_query() -> None:
    r = Session(resolver=None).user("what's on this page?",
                                    screen={"page_title": "Billing\nexport\x00 API\u200b"})
    assert 'the page "Billing export API"' in r.query


def test_assistant_line_breaks_are_kept_for_lists() -> None:
    s = Session(vocabulary=bundled_vocabularies(), resolver=None)
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Two of them:\r\n- Frankfurt\x00\r\n- Dublin\u2028")
    assert s.state.turns[-1].content == "Two of them:\n- Frankfurt\n- Dublin\n"
    assert "Dublin" in s.user("What's the uptime SLA on the second one?").query


@pytest.mark.parametrize("text", ["", "   ", "\u200b", "\u200b \ufeff\u200d", "\x00\x07",
                                  "\n\t\r", "\x1b[31m"])
def test_message_without_visible_text_is_an_input_error(text: str) -> None:
    s = Session(resolver=None)
    with pytest.raises(InputError, match="visible"):
        s.user(text)
    with pytest.raises(InputError, match="visible"):
        s.assistant(text)
    assert s.turn_count == 0  # nothing was recorded


def test_long_message_is_rewritten_in_full() -> None:
    # correctness only: the speed of long messages is measured by benchmarks/long_message.py
    body = " ".join(f"Does region r{i} in Frankfurt support CMK?" for i in range(3000))
    s = Session(vocabulary=bundled_vocabularies(), resolver=None)
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    r = s.user(body + " And what about the second one?")
    assert len(body) > 100_000
    assert r.query.startswith("Does region r0 in Frankfurt")
    assert "r2999" in r.query
