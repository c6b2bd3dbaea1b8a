"""The learned reference decision behind the rules: what it may change, and how it fails."""

from __future__ import annotations

from collections.abc import Sequence

from turnscope import Session
from turnscope.language import Decision

EXCHANGE = [("user", "Who directed the film Parasite?"),
            ("assistant", "Parasite (2019) was directed by Bong Joon-ho. It won the Palme d'Or at Cannes.")]


class FakeDecider:
    def __init__(self, decision: Decision | None = None, error: Exception | None = None) -> None:
        self.decision, self.error = decision, error
        self.calls: list[tuple[str, str | None]] = []

    def decide(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
               rules_class: str | None = None) -> Decision:
        self.calls.append((message, rules_query))
        if self.error is not None:
            raise self.error
        assert self.decision is not None
        return self.decision


def _session(decider: object) -> Session:
    s = Session(decider=decider)  # type: ignore[arg-type]
    for role, text in EXCHANGE:
        s.add(role, text)
    return s


def test_a_confident_decision_writes_the_query_and_says_so() -> None:
    d = FakeDecider(Decision("How old is Bong Joon-ho?", "Bong Joon-ho", 0.9, "he", 5, "ranked first"))
    r = _session(d).user("How old is he?")
    assert r.query == "How old is Bong Joon-ho?"
    assert r.carried == ["Bong Joon-ho"] or tuple(r.carried) == ("Bong Joon-ho",)
    assert r.trace["decider"]["chosen"] == "Bong Joon-ho"
    assert r.trace["decided_by"] == "decider"


def test_an_abstention_keeps_the_rules_rewrite() -> None:
    rules_only = _session(None).user("How old is he?").query
    d = FakeDecider(Decision(None, None, 0.2, "he", 5, "below the threshold 0.50"))
    r = _session(d).user("How old is he?")
    assert r.query == rules_only
    assert d.calls and d.calls[0][1] == rules_only  # it saw the rules' rewrite as a candidate
    assert r.trace["decider"]["reason"].startswith("below the threshold")


def test_a_failing_decider_leaves_the_rules_rewrite_and_the_trace_says_so() -> None:
    rules_only = _session(None).user("How old is he?").query
    r = _session(FakeDecider(error=RuntimeError("boom"))).user("How old is he?")
    assert r.query == rules_only
    assert r.trace["decider"]["status"] == "failed" and "boom" in r.trace["decider"]["reason"]


def test_japanese_and_pivots_are_not_sent_to_the_decider() -> None:
    d = FakeDecider(Decision("x", "x", 0.9, "x", 2, "ranked first"))
    s = _session(d)
    s.user("ok different question — is the Louvre open on Mondays?")
    s.user("それはいくら？")
    assert d.calls == []


def test_japanese_never_puts_a_name_in_front_of_a_whole_sentence() -> None:
    s = Session()
    s.user("マイナンバーカードの暗証番号を忘れたらどうする？")
    s.assistant("市区町村の窓口で再設定できます。担当の河野さんに相談してください。")
    r = s.user("彼って今も窓口にいるの？")
    assert "の彼って" not in r.query  # 「窓口の彼って…」 would read as someone else


def test_a_pasted_text_is_not_sent_to_the_decider_or_the_anchor() -> None:
    from turnscope.rewriters._embedded import DEFAULT_MAX_DECIDED_CHARS

    d = FakeDecider(Decision("How old is Bong Joon-ho?", "Bong Joon-ho", 0.9, "he", 5, "ranked first"))
    long = "How old is he? " + "This paragraph was pasted from a review. " * 30
    assert len(long) > DEFAULT_MAX_DECIDED_CHARS
    r = _session(d).user(long)
    assert d.calls == []
    assert "longer than" in r.trace["decider"]["reason"]
    assert "longer than" in r.trace["anchor"]["reason"]
    assert r.decided_by != "decider" and r.query.endswith("pasted from a review.")
    # a message at the limit is still decided
    _session(d).user("How old is he?" + " really" * ((DEFAULT_MAX_DECIDED_CHARS - 20) // 7))
    assert len(d.calls) == 1
