"""The cascade: the model only where the embedded rewriter is not confident, and why."""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx

from turnscope import Session
from turnscope.language import Decision
from turnscope.rewriters import CascadeRewriter, EmbeddedRewriter, LLMRewriter

EXCHANGE = [("user", "Who directed the film Parasite?"),
            ("assistant", "Parasite (2019) was directed by Bong Joon-ho. It won the Palme d'Or.")]


class Fixed:
    def __init__(self, decision: Decision) -> None:
        self.decision = decision

    def decide(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
               rules_class: str | None = None) -> Decision:
        return self.decision


class Server:
    """An OpenAI-compatible endpoint that answers every request with ``query``."""

    def __init__(self, query: str, status: int = 200) -> None:
        self.query, self.status, self.calls = query, status, 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.status != 200:
            return httpx.Response(self.status)
        content = json.dumps({"query": self.query, "topic_shift": False,
                              "reference_class": "textual_immediate", "entities": []})
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": content}}]})


def _session(server: Server, decision: Decision | None = None) -> Session:
    llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
                      transport=httpx.MockTransport(server), max_retries=0)
    decider = Fixed(decision) if decision is not None else None
    s = Session(rewriter=CascadeRewriter(llm, EmbeddedRewriter(decider=decider)))
    for role, text in EXCHANGE:
        s.add(role, text)
    return s


def test_a_first_message_and_an_explicit_change_of_subject_cost_no_call() -> None:
    server = Server("unused")
    llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
                      transport=httpx.MockTransport(server), max_retries=0)
    first = Session(rewriter=CascadeRewriter(llm, EmbeddedRewriter(decider=None))).user(
        "Who directed the film Parasite?")
    assert first.trace["cascade"] == {"called": False, "reason": "first message"}
    r = _session(server).user("ok different question: is the Louvre open on Mondays?")
    assert r.trace["cascade"] == {"called": False, "reason": "explicit change of subject"}
    assert r.query == "Is the Louvre open on Mondays?"
    assert server.calls == 0


def test_a_plain_question_after_others_still_goes_to_the_model() -> None:
    # the embedded path's "standalone" reading is not evidence enough to skip a call
    server = Server("Is the Louvre open on Mondays?")
    r = _session(server).user("Is the Louvre open on Mondays?")
    assert server.calls == 1
    assert r.trace["cascade"]["called"] is True


def test_a_confident_decider_pick_costs_no_call() -> None:
    server = Server("unused")
    d = Decision("How old is Bong Joon-ho?", "Bong Joon-ho", 0.93, "he", 5, "ranked first")
    r = _session(server, d).user("How old is he?")
    assert server.calls == 0
    assert r.query == "How old is Bong Joon-ho?"
    assert r.trace["cascade"]["reason"] == "the decider is confident"


def test_an_unsure_turn_goes_to_the_model() -> None:
    server = Server("How old is Bong Joon-ho?")
    d = Decision(None, None, 0.41, "he", 5, "below the threshold")
    r = _session(server, d).user("How old is he?")
    assert server.calls == 1
    assert r.query == "How old is Bong Joon-ho?" and r.backend == "llm:m"
    assert r.trace["cascade"] == {"called": True, "reason": "not confident"}


def test_a_backend_fault_still_degrades_to_the_embedded_rewrite() -> None:
    server = Server("unused", status=503)
    d = Decision(None, None, 0.41, "he", 5, "below the threshold")
    r = _session(server, d).user("How old is he?")
    assert server.calls == 1
    assert r.fallback and r.fallback_reason == "http 503"
    assert r.trace["cascade"]["called"] is True
