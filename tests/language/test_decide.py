"""Candidate rewrites keep the user's words; the decider abstains below its threshold."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from turnscope.language import ReferenceDecider, SmallLM, candidates_for, feature_names, load_parser

HISTORY = [("user", "Who painted The Two Fridas?"),
           ("assistant", "Frida Kahlo painted The Two Fridas after her divorce from Diego Rivera.")]


@pytest.fixture(scope="module")
def lm() -> SmallLM:
    return SmallLM.load()


class _Booster:
    """A ranker that scores the candidate naming ``favourite`` at ``p``, the rest at 0.1."""

    def __init__(self, favourite: str, p: float, cands: list[Any]) -> None:
        self.rows = [p if c.phrase == favourite else 0.1 for c in cands]

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.rows[: len(x)])


@pytest.mark.parametrize("message", ["did he paint her as well?", "How old was she when she painted it?",
                                     "Sorry, was his work political?"])
def test_every_candidate_keeps_the_message_outside_the_reference(lm: SmallLM, message: str) -> None:
    ref, cands = candidates_for(message, HISTORY, None, lm)
    assert ref is not None
    head, tail = message[: ref.start], message[ref.end:]
    for c in cands:
        if c.generator == "parser":
            assert c.text.lower().startswith(head.lower()) and c.text.endswith(tail)
            assert c.phrase is not None and c.phrase in c.text
    assert set(feature_names()) >= set(cands[-1].features)


def test_decider_takes_a_confident_pick_and_abstains_below_threshold(lm: SmallLM) -> None:
    msg = "how old was he"
    _, cands = candidates_for(msg, HISTORY, None, lm)
    sure = ReferenceDecider(lm, _Booster("Diego Rivera", 0.9, cands), threshold=0.5, parser=load_parser())
    d = sure.decide(msg, HISTORY, None)
    assert d.query == "how old was Diego Rivera" and d.phrase == "Diego Rivera"
    unsure = ReferenceDecider(lm, _Booster("Diego Rivera", 0.4, cands), threshold=0.5, parser=load_parser())
    d = unsure.decide(msg, HISTORY, None)
    assert d.query is None and "threshold" in d.reason


def test_no_reference_no_decision(lm: SmallLM) -> None:
    d = ReferenceDecider(lm, _Booster("x", 0.9, []), 0.5, load_parser()).decide(
        "What is a good Python linter?", HISTORY, None)
    assert d.query is None and d.reason == "no reference"


class _Favourites:
    """A ranker that scores each candidate naming one of ``favourites`` at 0.9, the rest at 0.1
    (reads the candidates' phrases off the feature rows' order, which it is given)."""

    def __init__(self, favourites: set[str]) -> None:
        self.favourites = favourites
        self.pending: list[list[Any]] = []

    def predict(self, x: np.ndarray) -> np.ndarray:
        cands = self.pending.pop(0)
        return np.asarray([0.9 if c.phrase in self.favourites else 0.1 for c in cands])


class _Spy(ReferenceDecider):
    def probabilities(self, cands: Any) -> list[float]:
        self.booster.pending.append(list(cands))
        return super().probabilities(cands)


OFFICE = [("user", "how do i report a problem with a coworker confidentially"),
          ("assistant", "Talk to your HR partner, Gloria Mendes. Your manager, Ben Howard, isn't told "
                        "unless you want him involved.")]


def test_two_pronouns_of_two_people_are_both_resolved(lm: SmallLM) -> None:
    d = _Spy(lm, _Favourites({"Gloria Mendes", "Ben Howard"}), 0.5, load_parser()).decide(
        "will she tell him if i talk to her", OFFICE, None)
    # "her" agrees with "she", already resolved: it is left as typed
    assert d.query == "will Gloria Mendes tell Ben Howard if i talk to her"
    assert d.phrases == ("Gloria Mendes", "Ben Howard") and d.phrase == "Gloria Mendes"


def test_a_second_pronoun_is_left_when_the_ranker_is_unsure(lm: SmallLM) -> None:
    d = _Spy(lm, _Favourites({"Gloria Mendes"}), 0.5, load_parser()).decide(
        "will she tell him if i talk to her", OFFICE, None)
    assert d.query == "will Gloria Mendes tell him if i talk to her" and d.phrases == ("Gloria Mendes",)



class _CountingParser:
    """The shipped parser, counting the texts it is asked to parse."""

    def __init__(self) -> None:
        self.nlp = load_parser()
        self.texts: list[str] = []

    def __call__(self, text: str) -> Any:
        self.texts.append(text)
        return self.nlp(text)

    def pipe(self, texts: Any) -> Any:
        texts = list(texts)
        self.texts.extend(texts)
        return self.nlp.pipe(texts)


def test_an_earlier_message_is_parsed_once_over_the_turns_that_read_it() -> None:
    counting = _CountingParser()
    fresh_parsers = []  # kept alive: the parse cache is keyed by the parser's id
    history = list(HISTORY)
    turns = ["did he paint her as well?", "How old was she when she painted it?", "was his work political?"]
    for message in turns:
        _, cands = candidates_for(message, history, None, None, parser=counting)
        # the same candidates as parsing every text afresh
        fresh_parsers.append(_CountingParser())
        _, fresh = candidates_for(message, history, None, None, parser=fresh_parsers[-1])
        assert [(c.text, c.features) for c in cands] == [(c.text, c.features) for c in fresh]
        history += [("user", message), ("assistant", "Yes; she painted him several times.")]
    assert counting.texts and len(counting.texts) == len(set(counting.texts))
