"""ConversationRewriter: the history-to-session layer every drop-in shares."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from turnscope import InputError, Session
from turnscope.conversation import Role
from turnscope.integrations._common import (
    ConversationRewriter,
    HistoryTurn,
    history_turn,
    missing_extra,
    role_of,
    trace_of,
)

from ._conversation import ANSWER, ASK, FOLLOW_UP, LEFT, SUBJECT

HISTORY = [HistoryTurn(Role.USER, ASK), HistoryTurn(Role.ASSISTANT, ANSWER)]


def counting_factory() -> tuple[list[Session], ConversationRewriter]:
    made: list[Session] = []

    def factory() -> Session:
        made.append(Session())
        return made[-1]

    return made, ConversationRewriter(factory)


def test_empty_history_passes_the_message_through() -> None:
    rw = ConversationRewriter()
    assert rw.rewrite(FOLLOW_UP, []).query == FOLLOW_UP
    assert rw.rewrite(ASK, []).query == ASK


def test_follow_up_is_resolved_and_a_left_subject_is_not_carried() -> None:
    rw = ConversationRewriter()
    first = rw.rewrite(FOLLOW_UP, HISTORY)
    assert SUBJECT in first.query.lower()
    assert SUBJECT in [c.lower() for c in first.carried]
    history = HISTORY + [HistoryTurn(Role.USER, FOLLOW_UP),
                         HistoryTurn(Role.ASSISTANT, "Surgery, radiation and hormone therapy.")]
    left = rw.rewrite(LEFT, history)
    assert SUBJECT not in left.query.lower()
    assert left.carried == ()


def test_a_longer_history_reuses_the_session_and_matches_a_fresh_replay() -> None:
    made, rw = counting_factory()
    rw.rewrite(FOLLOW_UP, HISTORY)
    longer = HISTORY + [HistoryTurn(Role.USER, FOLLOW_UP),
                        HistoryTurn(Role.ASSISTANT, "Surgery, radiation and hormone therapy.")]
    cached = rw.rewrite("Is it hereditary?", longer)
    assert len(made) == 1  # fed two turns, not a new session
    assert made[0].turn_count == len(longer) + 1
    fresh = ConversationRewriter().rewrite("Is it hereditary?", longer)
    assert cached.query == fresh.query
    assert cached.carried == fresh.carried


def test_another_conversation_gets_its_own_session_and_the_first_stays_cached() -> None:
    made, rw = counting_factory()
    rw.rewrite(FOLLOW_UP, HISTORY)
    other = [HistoryTurn(Role.USER, "Who built Machu Picchu?"),
             HistoryTurn(Role.ASSISTANT, "The Inca emperor Pachacuti built Machu Picchu.")]
    out = rw.rewrite("When was it built?", other)
    assert SUBJECT not in out.query.lower()
    assert len(made) == 2
    # the first conversation, one exchange longer, continues its cached session
    rw.rewrite(LEFT, HISTORY + [HistoryTurn(Role.USER, FOLLOW_UP), HistoryTurn(Role.ASSISTANT, "Surgery.")])
    assert len(made) == 2


def test_no_cache_replays_every_time() -> None:
    made: list[Session] = []

    def factory() -> Session:
        made.append(Session())
        return made[-1]

    rw = ConversationRewriter(factory, cache_size=0)
    rw.rewrite(FOLLOW_UP, HISTORY)
    rw.rewrite(FOLLOW_UP, HISTORY)
    assert len(made) == 2


def test_a_refused_history_does_not_leave_a_half_fed_session_in_the_cache() -> None:
    made, rw = counting_factory()
    rw.rewrite(FOLLOW_UP, HISTORY)
    with pytest.raises(InputError):
        rw.rewrite("And then?", HISTORY + [HistoryTurn(Role.USER, FOLLOW_UP),
                                           HistoryTurn(Role.ASSISTANT, "\u200b")])
    # the session that took part of the refused history is gone: a new one answers
    out = rw.rewrite(FOLLOW_UP, HISTORY)
    assert SUBJECT in out.query.lower()
    assert len(made) == 2
    assert made[1].turn_count == len(HISTORY) + 1


def test_kept_conversation_with_answers() -> None:
    rw = ConversationRewriter()
    assert rw.rewrite(ASK).query == ASK
    rw.add_answer(ANSWER)
    rw.add_answer("   ")  # an empty answer is no turn
    assert SUBJECT in rw.rewrite(FOLLOW_UP).query.lower()
    assert [t.role for t in rw.history] == [Role.USER, Role.ASSISTANT, Role.USER]
    rw.reset()
    assert rw.history == ()
    assert rw.rewrite(FOLLOW_UP).query == FOLLOW_UP


@pytest.mark.parametrize(("name", "role"), [
    ("human", Role.USER), ("user", Role.USER), ("AI", Role.ASSISTANT), ("assistant", Role.ASSISTANT),
    ("chatbot", Role.ASSISTANT), ("model", Role.ASSISTANT), ("system", None), ("tool", None),
])
def test_role_names(name: str, role: Role | None) -> None:
    assert role_of(name) is role


def test_unknown_role_and_empty_messages() -> None:
    with pytest.raises(InputError, match="narrator"):
        role_of("narrator")
    assert history_turn("ai", "") is None
    assert history_turn("ai", None) is None
    assert history_turn("system", "Be brief.") is None
    assert history_turn("human", "Hi") == HistoryTurn(Role.USER, "Hi")


def test_bad_arguments_name_what_was_wrong() -> None:
    with pytest.raises(InputError, match="session_factory"):
        ConversationRewriter("Session")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="cache_size"):
        ConversationRewriter(cache_size=-1)
    with pytest.raises(InputError, match="not a turnscope Session"):
        ConversationRewriter(lambda: "x").rewrite("hi", [])  # type: ignore[arg-type, return-value]
    with pytest.raises(InputError, match=r"history\[0\]"):
        ConversationRewriter().rewrite("hi", [("user", "hello")])  # type: ignore[list-item]
    with pytest.raises(InputError, match="string"):
        ConversationRewriter().rewrite(None, [])  # type: ignore[arg-type]


def test_trace_is_json_and_holds_the_rewrite() -> None:
    result = ConversationRewriter().rewrite(FOLLOW_UP, HISTORY)
    trace = trace_of(FOLLOW_UP, result)
    assert json.loads(json.dumps(trace)) == trace
    assert trace["message"] == FOLLOW_UP
    assert trace["query"] == result.query
    assert trace["reference_class"] == result.reference_class
    assert trace["carried"] == list(result.carried)
    assert trace["turn"] == result.turn
    assert isinstance(trace["details"], dict)


def test_missing_extra_names_the_install_command() -> None:
    err = missing_extra("langchain", "langchain-core", "langchain")
    assert "pip install 'turnscope[langchain]'" in str(err)
    assert "langchain-core" in str(err)


@pytest.mark.parametrize(("module", "framework", "extra"), [
    ("langchain", "langchain_core", "langchain"),
    ("llamaindex", "llama_index", "llamaindex"),
    ("haystack", "haystack", "haystack"),
])
def test_a_missing_framework_raises_an_import_error_naming_the_extra(
        module: str, framework: str, extra: str) -> None:
    # a None entry in sys.modules makes that import fail as if it were not installed;
    # in a subprocess so that this test's interpreter keeps the real frameworks
    code = (f"import sys; sys.modules[{framework!r}] = None\n"
            f"try:\n    import turnscope.integrations.{module}\n"
            f"except ImportError as e:\n    print(e)\n    sys.exit(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert f"pip install 'turnscope[{extra}]'" in proc.stdout


def test_importing_the_package_imports_no_framework() -> None:
    code = ("import sys, turnscope.integrations\n"
            "print(sorted(m for m in ('langchain_core', 'llama_index', 'haystack') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_each_extra_is_declared_and_in_all() -> None:
    meta = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    extras = meta["project"]["optional-dependencies"]
    in_all = {name for req in extras["all"] for name in req.split("[", 1)[1].rstrip("]").split(",")}
    for extra, package in (("langchain", "langchain-core"), ("llamaindex", "llama-index-core"),
                           ("haystack", "haystack-ai")):
        assert any(req.startswith(package) for req in extras[extra]), extra
        assert extra in in_all, extra
