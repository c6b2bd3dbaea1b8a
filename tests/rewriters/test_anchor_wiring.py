"""Where the embedded rewriter carries the segment's subject, and how a parser fault degrades."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from turnscope import Session
from turnscope.language import Decision

EXCHANGE = [("user", "can herbs grow on a shady balcony?"),
            ("assistant", "Mint, parsley and chives cope with partial shade; keep the herbs in pots that drain.")]
MESSAGE = "how often should i water"


class Abstains:
    def decide(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
               rules_class: str | None = None) -> Decision:
        return Decision(None, None, 0.0, None, 0, "abstained")


def _session(decider: object) -> Session:
    s = Session(decider=decider)  # type: ignore[arg-type]
    for role, text in EXCHANGE:
        s.add(role, text)
    return s


def test_the_subject_is_carried_and_named_in_the_output() -> None:
    r = _session(Abstains()).user(MESSAGE)
    assert r.query == f"{MESSAGE} (herbs)"
    assert "herbs" in r.carried
    assert r.trace["anchor"] == {"phrase": "herbs", "reason": "carried"}


def test_the_rules_alone_carry_nothing() -> None:
    r = _session(None).user(MESSAGE)
    assert r.query == MESSAGE
    assert "anchor" not in r.trace


def test_japanese_is_left_to_its_own_rules() -> None:
    s = Session(decider=Abstains())  # type: ignore[arg-type]
    s.add("user", "ベランダでハーブは育ちますか？")
    s.add("assistant", "ミントやパセリは半日陰でも育ちます。")
    assert "anchor" not in s.user("水やりの頻度は？").trace


def test_a_parser_fault_keeps_the_query_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> object:
        raise RuntimeError("parser crashed")

    monkeypatch.setattr("turnscope.rewriters._embedded.load_parser", broken)
    r = _session(Abstains()).user(MESSAGE)
    assert r.query == MESSAGE
    assert r.trace["anchor"]["status"] == "failed"
    assert "parser crashed" in r.trace["anchor"]["reason"]
