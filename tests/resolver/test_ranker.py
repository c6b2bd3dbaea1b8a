"""The shipped model: it loads, it carries what a pronoun needs, and nothing otherwise."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from turnscope import ConfigError, Session
from turnscope.resolver import CachedEmbedder, HistoryTurn, Resolver, default_resolver

from .counting import CountingEncoder

_TAX = [HistoryTurn(1, "user", "When is the deadline for filing a federal tax return?"),
        HistoryTurn(2, "assistant", "The federal income tax return deadline is usually April 15. "
                                    "You can request an extension with Form 4868.")]


def test_shipped_model_is_small_and_names_its_training() -> None:
    path = resources.files("turnscope") / "data" / "models" / "resolver.txt"
    assert path.is_file()
    assert len(path.read_bytes()) <= 10 * 1024 * 1024
    meta = default_resolver().meta
    assert set(meta["trained_on"]) == {"cast19", "canard", "cast21dev"}
    assert 0.0 < default_resolver().threshold < 1.0


def test_a_standalone_question_carries_nothing() -> None:
    res = default_resolver().resolve("How do volcanoes form?", _TAX)
    assert res.carried == ()
    assert res.query == "How do volcanoes form?"


def test_a_pronoun_ranks_the_subject_of_the_conversation_first() -> None:
    hist = [HistoryTurn(1, "user", "What is throat cancer?"),
            HistoryTurn(2, "assistant", "Throat cancer is cancer that develops in the throat or the "
                                        "voice box. Smoking and alcohol raise the risk.")]
    res = default_resolver().resolve("Is it treatable?", hist)
    assert res.scored[0].text.lower() == "throat cancer"
    assert res.scored[0].score > 2 * res.scored[1].score
    # the shipped gate is precision-first: it carries only above its threshold, and when it
    # does, the pronoun is what gets replaced
    low = default_resolver().resolve("Is it treatable?", hist, threshold=0.3)
    assert low.query.lower() == "is throat cancer treatable?"


def test_the_trace_has_scores_and_the_threshold() -> None:
    res = default_resolver().resolve("Can I get an extension?", _TAX)
    tr = res.trace()
    assert tr["threshold"] == pytest.approx(default_resolver().threshold, abs=1e-4)
    assert tr["candidates"] and all(0.0 <= c["score"] <= 1.0 for c in tr["candidates"])  # type: ignore[index, union-attr]


def test_session_output_has_carried_and_the_resolver_trace() -> None:
    s = Session()
    s.user("What is throat cancer?")
    s.assistant("Throat cancer is cancer that develops in the throat or the voice box.")
    r = s.user("Is it treatable?")
    out = r.to_output("x")
    assert out["carried"] == list(r.carried)
    assert "resolver" in r.trace and "shift_probability" in r.trace
    assert all(c in r.query for c in r.carried)


def test_a_session_with_a_domain_vocabulary_keeps_the_typed_rules() -> None:
    from turnscope import bundled_vocabulary

    s = Session(vocabulary=bundled_vocabulary("cloud"))
    s.user("Which EU regions support customer-managed encryption keys?")
    s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    r = s.user("What's the uptime SLA on the second one?")
    assert "resolver" not in r.trace and "Dublin" in r.query


def test_session_without_resolver_keeps_the_rules() -> None:
    s = Session(resolver=None)
    s.user("What is throat cancer?")
    r = s.user("Is it treatable?")
    assert "resolver" not in r.trace


def test_a_model_file_without_header_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "m.txt"
    bad.write_text("tree\nversion=v4\n")
    with pytest.raises(ConfigError, match="JSON header"):
        Resolver.load(bad)


def test_a_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="turnscope train"):
        Resolver.load(tmp_path / "none.txt")


def test_resolver_argument_is_validated() -> None:
    with pytest.raises(ConfigError, match="resolver must be"):
        Session(resolver="learned")


def test_a_session_embeds_each_user_turn_once_and_no_answer() -> None:
    # the cost of an exchange is one e5 call for the message, however long the answer:
    # answers are read for their words (candidates, overlaps), never embedded
    enc = CountingEncoder()
    s = Session(resolver=Resolver.load(embedder=CachedEmbedder(encoder=enc)))
    users = ["What is throat cancer?", "Is it treatable?", "What are the survival rates?"]
    answer = ("Throat cancer is cancer that develops in the throat or the voice box. "
              "Smoking and alcohol raise the risk. Treatment depends on the stage. "
              "Early cancers are often treated with radiation alone.")
    for u in users:
        s.user(u)
        s.assistant(answer)
    assert enc.calls == users


def test_a_phrase_the_pronoun_cannot_take_is_declined_in_the_trace() -> None:
    # the gate passes everything at threshold 0; "he" cannot be "controversy"
    hist = [HistoryTurn(1, "user", "What was the controversy about the singer?"),
            HistoryTurn(2, "assistant", "The controversy began with an assault charge in 2003.")]
    res = default_resolver().resolve("Did he plead guilty?", hist, threshold=0.0)
    assert res.scored[0].text == "controversy"
    assert res.query == "Did he plead guilty?" and res.carried == ()
    assert "controversy" in str(res.trace()["declined"])
    named = [HistoryTurn(1, "user", "Tell me about Jack White."),
             HistoryTurn(2, "assistant", "Jack White is a guitarist. The controversy began with "
                                         "an assault charge in 2003.")]
    ok = default_resolver().resolve("Did he plead guilty?", named, threshold=0.0)
    assert ok.carried[0] == "Jack White" and "declined" not in ok.trace()


def test_a_section_heading_is_not_a_name() -> None:
    from turnscope.resolver import candidates
    from turnscope.resolver._ranker import may_name

    hist = [HistoryTurn(1, "user", "Bill W. — Marriage, work, and alcoholism"),
            HistoryTurn(2, "user", "Who was he married to?"),
            HistoryTurn(3, "assistant", "He married Lois Burnham in 1918. Marriage suited him.")]
    assert {c.text: may_name(c) for c in candidates(hist[:1])} == {
        "Bill W.": True, "Marriage": False, "alcoholism": False}
    heading = [HistoryTurn(1, "user", "Tell me about Van Morrison — Influence")]
    assert {c.text: may_name(c) for c in candidates(heading)} == {"Influence": False,
                                                                 "Van Morrison": True}
    # capitalised again at the start of a sentence of the answer: it may be a name there
    merged = {c.text.lower(): may_name(c) for c in candidates(hist)}
    assert merged["marriage"] is True and merged["lois burnham"] is True
    assert may_name(next(c for c in candidates(hist) if c.text == "alcoholism")) is False


def test_a_message_with_a_pronoun_slot_has_its_own_threshold() -> None:
    r = default_resolver().with_threshold(0.9, slot=0.3)
    assert r.threshold_for("Is it treatable?") == 0.3
    assert r.threshold_for("What are the side effects?") == 0.9
    hist = [HistoryTurn(1, "user", "What is throat cancer?"),
            HistoryTurn(2, "assistant", "Throat cancer is cancer of the pharynx or larynx.")]
    assert r.resolve("Is it treatable?", hist).threshold == 0.3
    uniform = default_resolver().with_threshold(0.5)
    assert uniform.threshold_for("Is it treatable?") == uniform.threshold_for("Why?") == 0.5


def test_a_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ConfigError, match="slot threshold"):
        default_resolver().with_threshold(0.5, slot=1.5)


def test_a_session_hands_each_decided_turn_s_latent_subject_on() -> None:
    from turnscope.resolver._ranker import history_of

    s = Session()
    s.user("What is throat cancer?")
    s.assistant("Throat cancer is cancer of the pharynx or larynx.")
    first = s.user("Is it treatable?")
    s.assistant("Most cases are treatable when found early.")
    shown = first.trace["resolver"]["candidates"]  # type: ignore[index]
    hist = history_of(s.state)
    by_index = {t.index: t for t in hist}
    # a turn the resolver decided keeps its shortlist with the gate's probabilities, as the
    # trace showed them; the opening turn was decided with nothing to shortlist; an answer has none
    assert by_index[first.turn].latent == tuple((c["text"], c["score"]) for c in shown)
    assert by_index[first.turn].latent
    assert by_index[1].latent == ()
    assert by_index[2].latent is None
    assert set(s.state.latent) == {1, first.turn}
    # a fork copies it, and the original's later turns do not leak into the fork
    fork = s.fork()
    s.user("What are the symptoms?")
    assert set(fork.state.latent) == {1, first.turn}


def test_the_shipped_model_reads_no_latent_subject() -> None:
    from turnscope.resolver._features import BASE_FEATURES

    r = default_resolver()
    assert r.meta["features"] == list(BASE_FEATURES)
    hist = [HistoryTurn(1, "user", "What is throat cancer?", "What is throat cancer?"),
            HistoryTurn(2, "assistant", "Throat cancer is cancer of the pharynx or larynx.")]
    with_latent = [HistoryTurn(1, "user", "What is throat cancer?", "What is throat cancer?",
                               (("larynx", 0.99),)), hist[1]]
    a, b = r.resolve("Is it treatable?", hist), r.resolve("Is it treatable?", with_latent)
    assert a == b


def test_the_latent_store_keeps_the_opening_and_the_last_turns_only() -> None:
    from turnscope.conversation import ConversationState
    from turnscope.resolver._ranker import DEFAULT_HISTORY_TURNS, Resolution, remember_latent

    state = ConversationState()
    for index in range(1, 200, 2):
        remember_latent(state, index, Resolution("q", (), (), 0.8))
    kept = sorted(state.latent)
    assert kept[0] == 1 and kept[-1] == 199
    assert len(kept) <= DEFAULT_HISTORY_TURNS + 2
    assert all(k >= 199 - 2 * DEFAULT_HISTORY_TURNS for k in kept[1:])


def test_a_shadow_rewrite_keeps_the_subject_for_later_turns_only() -> None:
    from turnscope.resolver._ranker import Shadow, history_of, shadow_rewrite

    latent = (("throat cancer", 0.6), ("larynx", 0.3))
    half = Shadow(0.5)
    assert shadow_rewrite("Is it treatable?", "Is it treatable?", latent, half) == "Is throat cancer treatable?"
    # below the floor, no shadow, a turn the resolver rewrote, nothing shortlisted: the query
    assert shadow_rewrite("Is it treatable?", "Is it treatable?", latent, Shadow(0.7)) == "Is it treatable?"
    assert shadow_rewrite("Is it treatable?", "Is it treatable?", latent, None) == "Is it treatable?"
    assert shadow_rewrite("Is it treatable?", "Is lung cancer treatable?", latent, half) == "Is lung cancer treatable?"
    assert shadow_rewrite("Is it treatable?", "Is it treatable?", (), half) == "Is it treatable?"
    # a phrase the pronoun cannot take is not carried in the shadow either
    assert shadow_rewrite("Did he plead guilty?", "Did he plead guilty?", (("controversy", 0.9),), half) \
        == "Did he plead guilty?"
    # without a pronoun slot the phrase is appended, unless the shadow is for slots only
    assert shadow_rewrite("What about the cost?", "What about the cost?", latent, half) != "What about the cost?"
    assert shadow_rewrite("What about the cost?", "What about the cost?", latent,
                          Shadow(0.5, slots_only=True)) == "What about the cost?"
    assert shadow_rewrite("Is it treatable?", "Is it treatable?", latent,
                          Shadow(0.5, slots_only=True)) == "Is throat cancer treatable?"
    for bad in (0.0, 1.5):
        with pytest.raises(ConfigError, match="shadow floor must be in"):
            Shadow(bad)

    s = Session()
    s.user("What is throat cancer?")
    s.assistant("Throat cancer is cancer of the pharynx or larynx.")
    res = s.user("Is it treatable?")
    top = res.trace["resolver"]["candidates"][0]  # type: ignore[index]
    plain = {t.index: t.rewrite for t in history_of(s.state)}
    low = Shadow(0.01)
    shadowed = {t.index: t.rewrite for t in history_of(s.state, shadow=low)}
    assert plain[res.turn] == res.query
    assert shadowed[res.turn] == shadow_rewrite("Is it treatable?", res.query, ((top["text"], top["score"]),), low)


def test_an_empty_bag_is_refused() -> None:
    from turnscope._exceptions import ConfigError
    from turnscope.resolver._ranker import Bag

    with pytest.raises(ConfigError, match="at least one model"):
        Bag(())
