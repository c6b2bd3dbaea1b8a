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
    # the gate passes everything at threshold 0; "he" can be none of these phrases (no
    # person is named), so whichever the ranker puts first is declined, by name
    hist = [HistoryTurn(1, "user", "What was the controversy about the album?"),
            HistoryTurn(2, "assistant", "The controversy began with an assault charge in 2003.")]
    res = default_resolver().resolve("Did he plead guilty?", hist, threshold=0.0)
    assert res.scored[0].text in {"controversy", "album", "assault charge"}
    assert res.query == "Did he plead guilty?" and res.carried == ()
    assert res.scored[0].text in str(res.trace()["declined"])
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


def test_a_session_reads_each_earlier_user_turn_as_the_query_it_was_rewritten_to() -> None:
    from turnscope.resolver._ranker import history_of

    s = Session()
    s.user("What is throat cancer?")
    s.assistant("Throat cancer is cancer of the pharynx or larynx.")
    first = s.user("Is it treatable?")
    s.assistant("Most cases are treatable when found early.")
    by_index = {t.index: t for t in history_of(s.state)}
    assert by_index[first.turn].text == "Is it treatable?"
    assert by_index[first.turn].rewrite == first.query
    assert by_index[2].rewrite is None  # an answer is never rewritten
    # the session keeps no resolver state besides the rewrites (and the current turn's ranking)
    assert not hasattr(s.state, "latent")
    assert set(s.state.ranked) <= {first.turn}


def test_the_shipped_model_reads_every_feature_column_in_order() -> None:
    from turnscope.resolver._ranker import FEATURES

    # the resolver picks the model's columns by name; the shipped model reads them all, as
    # computed, so no column is computed for nothing
    assert default_resolver().meta["features"] == list(FEATURES)
