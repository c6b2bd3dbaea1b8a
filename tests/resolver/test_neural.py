"""The neural tagger's encoding, word grouping and evidence (turnscope.resolver._candidates)."""

from __future__ import annotations

import numpy as np
import pytest

from turnscope._exceptions import ConfigError
from turnscope.resolver._candidates import (
    DEFAULT_MAX_LEN,
    MAX_TURNS,
    HistoryTurn,
    NeuralEvidence,
    NeuralTagger,
    default_tagger,
    encode,
    key_of,
    load_tokenizer,
    word_scores,
)


@pytest.fixture(scope="module")
def tok():  # type: ignore[no-untyped-def]
    return load_tokenizer()


def test_encode_puts_the_message_first_and_the_newest_turn_next(tok) -> None:  # type: ignore[no-untyped-def]
    e = encode(tok, "when was it released?", ["tell me about the golden gun", "Guy Hamilton directed it."])
    assert e.ids[0] == tok.token_to_id("[CLS]")
    first_history = next(k for k, s in enumerate(e.spans) if s is not None)
    # the first history token belongs to the newest turn (position 0), the answer
    assert e.spans[first_history][0] == 0
    assert all(t == 0 for t in e.type_ids[:first_history]) and e.type_ids[first_history] == 1
    assert len(e.ids) == len(e.type_ids) == len(e.spans)


def test_encode_respects_the_length_budget(tok) -> None:  # type: ignore[no-untyped-def]
    long = " ".join(["photosynthesis converts light into chemical energy"] * 60)
    e = encode(tok, "why?", [long] * 20)
    assert len(e.ids) <= DEFAULT_MAX_LEN
    # at most MAX_TURNS turns are read, newest first
    assert max(s[0] for s in e.spans if s is not None) < MAX_TURNS


def test_word_scores_group_pieces_into_words_and_keep_the_best_per_stem(tok) -> None:  # type: ignore[no-untyped-def]
    history = ["Is lobular carcinoma dangerous?"]
    e = encode(tok, "how is it treated?", history)
    probs = np.full(len(e.ids), 0.1)
    start = history[0].find("lobular")
    pieces = [k for k, s in enumerate(e.spans) if s is not None and start <= s[1] < start + len("lobular")]
    probs[pieces[-1]] = 0.9  # only the word's last piece: the word still gets it
    scores = word_scores(e, probs, history)
    (lobular,) = key_of("lobular")
    assert scores[lobular] == pytest.approx(0.9)
    # function words have no stem; every stem comes from the history
    assert set(scores) <= set(key_of(history[0]))


def test_phrase_evidence_counts_an_unread_stem_as_zero() -> None:
    ev = NeuralEvidence(0.8, {"lobular": 0.9, "carcinoma": 0.5})
    assert ev.phrase(frozenset({"lobular", "carcinoma"})) == pytest.approx((0.9, 0.7, 0.5))
    assert ev.phrase(frozenset({"lobular", "unseen"})) == pytest.approx((0.9, 0.45, 0.0))
    assert ev.top == pytest.approx(0.9)


def test_missing_model_is_a_config_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="no neural tagger"):
        NeuralTagger(model=tmp_path / "absent.onnx")


def test_the_shipped_tagger_gives_probabilities_and_caches() -> None:
    t = default_tagger()
    h = [HistoryTurn(1, "user", "who directed the man with the golden gun"),
         HistoryTurn(2, "assistant", "Guy Hamilton directed The Man with the Golden Gun.")]
    ev = t.evidence("when was it released?", h)
    assert 0.0 <= ev.need <= 1.0
    assert ev.stems and all(0.0 <= v <= 1.0 for v in ev.stems.values())
    assert t.evidence("when was it released?", h) is ev
    assert t.evidence("when was it released?", []).stems == {}


#: the shipped tagger's token probabilities for this input computed with exact int8
#: arithmetic (the same weights rewritten as u8 x u8, which no x86 kernel saturates; equal to a
#: VNNI CPU's u8 x s8 result). On an AVX2 CPU without VNNI and without the session option
#: ``session.x64quantprecision`` the 16-bit pair sums saturate and some move by 0.03
_EXACT_TREATABLE = [0.4135, 0.0104, 0.0146, 0.1057, 0.0660, 0.0048, 0.0846, 0.5143, 0.3894, 0.0019,
                    0.1146, 0.0028, 0.0035, 0.0043, 0.0583, 0.2064, 0.2785, 0.1339, 0.0063, 0.0850,
                    0.1620, 0.2623, 0.0318, 0.0407, 0.0010, 0.0021, 0.6572, 0.4559, 0.0014, 0.0492]


def test_the_tagger_computes_exact_int8_on_every_cpu() -> None:
    from turnscope.resolver._candidates import NeuralTagger

    _, probs, need = NeuralTagger().run(
        "Is it treatable?", ["What is throat cancer?",
                             "Throat cancer is cancer that develops in the pharynx or larynx."])
    # float rounding between SIMD paths is ~1e-6; saturation moves these by up to 0.03
    assert np.abs(probs - np.asarray(_EXACT_TREATABLE)).max() < 2e-3
    assert need == pytest.approx(0.9986, abs=2e-3)


def test_the_tagger_gives_the_same_answer_on_one_thread_and_on_two() -> None:
    # integer GEMM splits rows and columns, not the sums, so the outputs must not depend on
    # the number of threads
    one, two = NeuralTagger(threads=1), NeuralTagger(threads=2)
    texts = ["What is throat cancer?", "Throat cancer is cancer that develops in the pharynx or larynx.",
             "What are its symptoms?", "A cough, a sore throat and trouble swallowing are common."]
    for message in ("Is it treatable?", "How is the second one diagnosed?", "what about in children"):
        _, p1, n1 = one.run(message, texts)
        _, p2, n2 = two.run(message, texts)
        assert np.array_equal(p1, p2)
        assert n1 == n2


@pytest.mark.parametrize("threads", [0, -1, 1.5, True])
def test_a_bad_thread_count_is_a_config_error(threads) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="threads"):
        NeuralTagger(threads=threads)


def test_the_default_tagger_runs_on_one_thread_unless_told_otherwise() -> None:
    from turnscope.resolver._candidates import DEFAULT_THREADS, tagger_threads

    assert DEFAULT_THREADS == 1
    assert tagger_threads({}) == DEFAULT_THREADS
    opts = default_tagger()._session.get_session_options()
    assert opts.intra_op_num_threads == tagger_threads()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert opts.get_session_config_entry("session.x64quantprecision") == "1"


def test_the_environment_sets_the_tagger_threads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from turnscope.resolver._candidates import THREADS_ENV, tagger_threads

    assert tagger_threads({THREADS_ENV: " 3 "}) == 3
    monkeypatch.setenv(THREADS_ENV, "1")
    assert NeuralTagger()._session.get_session_options().intra_op_num_threads == 1
    # an explicit count wins over the environment
    assert NeuralTagger(threads=2)._session.get_session_options().intra_op_num_threads == 2


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "\u00b2"])
def test_a_bad_thread_count_in_the_environment_names_the_variable(monkeypatch, value) -> None:  # type: ignore[no-untyped-def]
    from turnscope.resolver._candidates import THREADS_ENV

    monkeypatch.setenv(THREADS_ENV, value)
    with pytest.raises(ConfigError, match=f"{THREADS_ENV} must be a whole number >= 1, got '{value}'"):
        NeuralTagger()


_TEXTS = [HistoryTurn(1, "user", "What is throat cancer?"),
          HistoryTurn(2, "assistant", "Throat cancer is cancer that develops in the pharynx or larynx.")]


def test_a_prefetched_answer_is_the_one_computed_inline() -> None:
    inline = NeuralTagger(overlap=False).evidence("Is it treatable?", _TEXTS)
    t = NeuralTagger()
    t.prefetch("Is it treatable?", _TEXTS)
    ev = t.evidence("Is it treatable?", _TEXTS)
    assert ev == inline
    assert t._pending == {}
    assert t.evidence("Is it treatable?", _TEXTS) is ev  # cached


def test_a_pair_is_computed_once_however_often_it_is_prefetched(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    t = NeuralTagger()
    calls: list[str] = []
    real = t.run

    def counted(message, texts):  # type: ignore[no-untyped-def]
        calls.append(message)
        return real(message, texts)

    monkeypatch.setattr(t, "run", counted)
    for _ in range(3):
        t.prefetch("Is it treatable?", _TEXTS)
    t.evidence("Is it treatable?", _TEXTS)
    t.prefetch("Is it treatable?", _TEXTS)  # already cached: nothing starts
    t.evidence("Is it treatable?", _TEXTS)
    assert calls == ["Is it treatable?"]


def test_without_overlap_prefetch_does_nothing() -> None:
    t = NeuralTagger(overlap=False)
    t.prefetch("Is it treatable?", _TEXTS)
    assert t._pending == {} and t._executor is None and len(t._cache) == 0


def test_a_failure_on_the_tagger_thread_reaches_the_caller_and_is_not_kept(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    t = NeuralTagger()

    def broken(message, texts):  # type: ignore[no-untyped-def]
        raise RuntimeError("onnxruntime failed")

    monkeypatch.setattr(t, "run", broken)
    t.prefetch("Is it treatable?", _TEXTS)
    with pytest.raises(RuntimeError, match="onnxruntime failed"):
        t.evidence("Is it treatable?", _TEXTS)
    assert t._pending == {}
    monkeypatch.undo()
    assert 0.0 <= t.evidence("Is it treatable?", _TEXTS).need <= 1.0
