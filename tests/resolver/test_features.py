"""The ranker's features: what the message does, where a candidate lives, what was carried."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from turnscope.resolver import HistoryTurn, candidates
from turnscope.resolver._features import FEATURES, featurize, message_signals


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
    mel = row["Melatonin"]  # the newest mention names the merged candidate
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
