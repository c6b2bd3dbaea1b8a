"""The ranker's features: what the message does, where a candidate lives, what was carried."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from turnscope.resolver import HistoryTurn, candidates
from turnscope.resolver._ranker import FEATURES, featurize, message_signals


def _embed(texts: Sequence[str]) -> np.ndarray:
    # a fixed unit vector per text: the features under test do not read e5
    out = []
    for t in texts:
        v = np.zeros(8, dtype=np.float32)
        v[zlib.crc32(t.encode()) % 8] = 1.0
        out.append(v)
    return np.stack(out)


HISTORY = [HistoryTurn(1, "user", "Is melatonin bad for you?"),
           HistoryTurn(2, "assistant", "Melatonin is safe for most adults in the short term.")]


def test_a_relational_noun_with_no_complement_is_bridging() -> None:
    assert message_signals("What are the side effects?", HISTORY).bridging
    assert not message_signals("What are the side effects of aspirin?", HISTORY).bridging


def test_a_message_that_names_its_own_subject_leans_on_nothing() -> None:
    own = message_signals("Tell me about lung cancer.", HISTORY)
    assert not own.immediate and not own.bridging and not own.pronoun
    assert message_signals("Is it safe for children?", HISTORY).pronoun


def test_message_features_are_the_same_on_every_row() -> None:
    cands = candidates(HISTORY)
    x = featurize("What are the side effects?", HISTORY, cands, _embed)
    assert x.shape == (len(cands), len(FEATURES))
    for name in ("cue_bridging", "msg_wh", "msg_words", "shift_prob", "n_candidates"):
        col = x[:, FEATURES.index(name)]
        assert np.all(col == col[0])
    assert x[0, FEATURES.index("cue_bridging")] == 1.0


def test_where_a_candidate_lives() -> None:
    cands = candidates(HISTORY)
    x = featurize("What are the side effects?", HISTORY, cands, _embed)
    row = {c.text: x[i] for i, c in enumerate(cands)}
    # merged by stems; named as the question wrote it (the answer capitalised it only
    # because it opened a sentence)
    mel = row["melatonin"]
    assert mel[FEATURES.index("in_prev_user")] == 1.0  # the question named it
    assert mel[FEATURES.index("in_prev_answer")] == 1.0  # and so did the answer
    assert mel[FEATURES.index("first_chunk")] == 1.0
    assert mel[FEATURES.index("n_turns")] == 2.0


def test_what_the_previous_rewrite_carried_is_read() -> None:
    hist = [HistoryTurn(1, "user", "Tell me about lavender plants."),
            HistoryTurn(2, "user", "What are the different types?",
                        rewrite="What are the different types of lavender plants?")]
    cands = candidates(hist)
    x = featurize("Are they safe to eat?", hist, cands, _embed)
    by_text = {c.text: x[i] for i, c in enumerate(cands)}
    carried = by_text["lavender plants"]
    assert carried[FEATURES.index("carried_by_prev")] == 1.0
    assert carried[FEATURES.index("carried_count")] == 1.0
    assert by_text["types"][FEATURES.index("carried_by_prev")] == 0.0


def test_mention_features_follow_the_candidates_own_mentions() -> None:
    # the one pass over a candidate's mentions must agree with what the mentions say
    hist = [HistoryTurn(1, "user", "What are the symptoms of anemia?"),
            HistoryTurn(2, "assistant", "Fatigue is common. Anemia also causes pale skin."),
            HistoryTurn(3, "user", "Is anemia dangerous for runners?"),
            HistoryTurn(4, "assistant", "Runners with anemia tire quickly. Iron helps.")]
    cands = candidates(hist)
    x = featurize("How is it treated?", hist, cands, _embed)
    col = {name: FEATURES.index(name) for name in FEATURES}
    for i, c in enumerate(cands):
        assert x[i, col["turns_back"]] == 5 - c.last.turn
        assert x[i, col["first_turns_back"]] == 5 - c.first.turn
        assert x[i, col["exchanges_back"]] == sum(1 for t in (1, 3) if t >= c.last.turn)
        assert x[i, col["user_mentions"]] == sum(m.role == "user" for m in c.mentions)
        assert x[i, col["n_words"]] == c.words
        answer = [m.sentence for m in c.mentions if m.role == "assistant"]
        assert x[i, col["answer_sentence_idx"]] == (min(answer) if answer else -1)
        assert x[i, col["n_turns"]] == len({m.turn for m in c.mentions})
        assert x[i, col["in_opening"]] == float(any(m.turn == 1 for m in c.mentions))
    anemia = next(i for i, c in enumerate(cands) if c.text.lower() == "anemia")
    assert x[anemia, col["n_turns"]] >= 3.0 and x[anemia, col["in_opening"]] == 1.0


def test_every_feature_column_is_written() -> None:
    # message features are broadcast, candidate features per row: together, every column
    from turnscope.resolver._ranker import _CANDIDATE_FEATURES, _MESSAGE_FEATURES

    assert len(set(FEATURES)) == len(FEATURES)
    assert FEATURES == _CANDIDATE_FEATURES + _MESSAGE_FEATURES
    x = featurize("Is it safe?", HISTORY, candidates(HISTORY), _embed, shift=0.25)
    assert x.shape[1] == len(FEATURES)
    assert not np.isnan(x).any()
    assert x[0, FEATURES.index("shift_prob")] == np.float32(0.25)
