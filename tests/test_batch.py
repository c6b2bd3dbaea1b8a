"""Batch rewriting (issue 21, point 4): sharing the replay of common histories changes no
output. Every test compares with the per-item replay (a fresh session per item), which is
what ``turnscope rewrite`` did before."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope import BatchRewriter, InputError, Session
from turnscope._items import FollowUpItem, rewrite_item
from turnscope.cli import app
from turnscope.rewriters import EmbeddedRewriter, RewriteRequest, RewriteResult

# Conversations of our own: one domain-ish (an ordinal over a list, a pronoun), one
# open-domain with a change of subject, one with screens.
CONVERSATIONS: dict[str, list[tuple[str, str | None, str | None]]] = {
    "laptops": [
        ("Which laptops under 1,500 dollars have 32 GB of memory?", None, None),
        ("The ZenBook 14 UX3405, the ThinkPad T14s Gen 5 and the XPS 13 9340 all do.",
         None, None),
        ("How heavy is the second one?", None, None),
        ("The ThinkPad T14s Gen 5 weighs 1.24 kg.", None, None),
        ("Does it have a backlit keyboard?", None, None),
        ("Yes, with two brightness levels.", None, None),
        ("And what about the battery life of the first one?", None, None),
    ],
    "history": [
        ("Who built the Hagia Sophia?", None, None),
        ("The emperor Justinian I had it built between 532 and 537.", None, None),
        ("How long did the construction take?", None, None),
        ("About five years.", None, None),
        ("Unrelated, but what is the boiling point of ethanol?", None, None),
        ("78.37 degrees Celsius at sea level.", None, None),
        ("Is it lower at high altitude?", None, None),
    ],
    "screens": [
        ("How do I reset my password?", "Account settings", "https://example.com/account"),
        ("Open Security, then choose Reset password.", None, None),
        ("What does this page let me change?", "Billing", "https://example.com/billing"),
        ("Your payment method and the invoice address.", None, None),
        ("Can I download old invoices here?", "Billing", "https://example.com/billing"),
    ],
}


def _turns(name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, (content, title, url) in enumerate(CONVERSATIONS[name]):
        turn: dict[str, Any] = {"role": "user" if i % 2 == 0 else "assistant", "content": content}
        if title is not None:
            turn["screen"] = {"page_title": title, "page_url": url, "site": "example.com"}
        out.append(turn)
    return out


def item(**fields: Any) -> FollowUpItem:
    return FollowUpItem.model_validate(fields)


def items_of(name: str) -> list[FollowUpItem]:
    """One item per user turn after the first: history so far, the turn as follow-up."""
    turns = _turns(name)
    return [item(id=f"{name}-{i}", prefix=turns[:i], follow_up=t["content"],
                         screen=t.get("screen"))
            for i, t in enumerate(turns) if t["role"] == "user"]


def per_item(items: list[FollowUpItem], make: Callable[[], Session]) -> list[Any]:
    return [rewrite_item(it, make) for it in items]


def lines(results: list[Any], items: list[FollowUpItem]) -> list[str]:
    return [json.dumps(r.to_output(it.id), ensure_ascii=False) for r, it in zip(results, items,
                                                                               strict=True)]


def assert_same(batch: list[Any], reference: list[Any], items: list[FollowUpItem]) -> None:
    # the whole result (query, trace, slot table, scope, ...) and the JSON line
    for b, r, it in zip(batch, reference, items, strict=True):
        assert b == r, it.id
    assert lines(batch, items) == lines(reference, items)


def test_items_in_order_give_the_per_item_results_and_reuse_their_history() -> None:
    items = items_of("laptops") + items_of("history") + items_of("screens")
    batch = BatchRewriter(Session)
    got = [batch.rewrite(it) for it in items]
    assert_same(got, per_item(items, Session), items)
    stats = batch.stats
    # one fresh session: every later item, a conversation's first one included (the
    # empty history), starts from a cached session
    assert stats.fresh_sessions == 1 and stats.items == len(items)
    assert stats.turns_fed + stats.turns_reused == sum(len(it.prefix) for it in items)
    assert stats.turns_reused > stats.turns_fed


def test_items_out_of_order_and_interleaved_give_the_per_item_results() -> None:
    items = items_of("laptops") + items_of("history") + items_of("screens")
    random.Random(7).shuffle(items)
    got = list(BatchRewriter(Session).rewrite_all(items))
    assert_same(got, per_item(items, Session), items)
    rev = items[::-1]
    assert_same(list(BatchRewriter(Session).rewrite_all(rev)), per_item(rev, Session), rev)


def test_divergent_histories_give_the_per_item_results() -> None:
    base = _turns("laptops")[:4]  # question, list answer, "the second one", its answer
    branches = [
        item(id="same-history-a", prefix=base, follow_up="Does it have a backlit keyboard?"),
        item(id="same-history-b", prefix=base, follow_up="How much does the third one cost?"),
        item(id="other-answer", prefix=base[:3] + [
            {"role": "assistant", "content": "The XPS 13 9340 weighs 1.19 kg."}],
            follow_up="Does it have a backlit keyboard?"),
        item(id="shorter", prefix=base[:2], follow_up="Which one is the lightest?"),
        item(id="longer", prefix=base + [
            {"role": "user", "content": "Does it have a backlit keyboard?"},
            {"role": "assistant", "content": "Yes."}], follow_up="And a fingerprint reader?"),
        item(id="no-history", follow_up="Does it have a backlit keyboard?"),
    ]
    got = list(BatchRewriter(Session).rewrite_all(branches))
    assert_same(got, per_item(branches, Session), branches)


def test_the_cache_stays_bounded_and_a_small_cache_changes_no_result() -> None:
    items = items_of("laptops") + items_of("history") + items_of("screens")
    random.Random(3).shuffle(items)
    batch = BatchRewriter(Session, max_sessions=2)
    got = []
    for it in items:
        got.append(batch.rewrite(it))
        assert batch.stats.cached_sessions <= 2
    assert_same(got, per_item(items, Session), items)
    batch.clear()
    assert batch.stats.cached_sessions == 0


def test_max_sessions_and_items_are_checked() -> None:
    for bad in (0, -1, 1.5, True, "4"):
        with pytest.raises(InputError, match="max_sessions"):
            BatchRewriter(Session, max_sessions=bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="follow_up"):
        BatchRewriter(Session).rewrite({"id": "x", "prefix": []})
    with pytest.raises(InputError, match="FollowUpItem or a dict"):
        BatchRewriter(Session).rewrite(["not", "an", "item"])  # type: ignore[arg-type]


def test_a_failing_item_leaves_the_cache_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Session.user

    def user(self: Session, content: str, **kw: Any) -> Any:
        # fails after the history is fed, on the follow-up of one item
        if content == "Is it lower at high altitude?" and not kw.get("rewriter"):
            raise RuntimeError("boom")
        return real(self, content, **kw)

    items = items_of("history")
    reference = per_item(items[:-1], Session)
    monkeypatch.setattr(Session, "user", user)
    batch = BatchRewriter(Session)
    got = [batch.rewrite(it) for it in items[:-1]]
    with pytest.raises(RuntimeError, match="boom"):
        batch.rewrite(items[-1])
    monkeypatch.setattr(Session, "user", real)
    # the items before and the failed item again, from the cache the failure left
    assert_same(got, reference, items[:-1])
    assert batch.rewrite(items[-1]) == rewrite_item(items[-1], Session)


class _FlaggingRewriter:
    """A configured (non-embedded) backend: the embedded rewrite, flagged as a topic shift.
    Under ``segment:flag`` the flag opens a segment, so a follow-up rewritten by it changes
    the scope of later turns; history turns are replayed by the embedded rewriter."""

    name = "flagging"

    def __init__(self) -> None:
        self.inner = EmbeddedRewriter(resolver=None)

    def run(self, request: RewriteRequest) -> RewriteResult:
        r = self.inner.run(request)
        return dataclasses.replace(r, topic_shift=True, backend="flagging")


def test_a_configured_rewriter_rewrites_only_follow_ups_as_per_item() -> None:
    rw = _FlaggingRewriter()

    def make() -> Session:
        return Session(policy="segment:flag", rewriter=rw)

    items = items_of("laptops") + items_of("history")
    batch = BatchRewriter(make)
    got = list(batch.rewrite_all(items))
    assert_same(got, per_item(items, make), items)
    assert all(r.backend == "flagging" for r in got)


def test_fork_is_independent_of_its_parent() -> None:
    s = Session()
    for t in _turns("laptops")[:4]:
        s._feed(t["role"], t["content"], t.get("screen"))
    f = s.fork()
    for field in dataclasses.fields(s.state):
        value = getattr(s.state, field.name)
        if isinstance(value, (list, dict, set)) or hasattr(value, "__dict__"):
            assert getattr(f.state, field.name) is not value, field.name
    before = (s.turn_count, s.slot_rows(), dict(s.state.resolved))
    a = f.user("Does it have a backlit keyboard?")
    assert (s.turn_count, s.slot_rows(), dict(s.state.resolved)) == before
    # the parent still rewrites as if the fork had never taken a turn
    assert s.user("Does it have a backlit keyboard?") == a


# -- the command ---------------------------------------------------------------------------

def _jsonl(items: list[FollowUpItem | str]) -> bytes:
    out = []
    for it in items:
        out.append(it if isinstance(it, str) else
                   json.dumps(it.model_dump(exclude_none=True), ensure_ascii=False))
    return ("\n".join(out) + "\n").encode("utf-8")


def test_rewrite_command_output_is_the_per_item_output_with_a_bad_line_in_the_middle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import turnscope.cli._rewrite as cli_rewrite

    laptops, history = items_of("laptops"), items_of("history")
    invisible = item(id="invisible-answer", prefix=_turns("history")[:1] + [
        {"role": "assistant", "content": "\u200b"}], follow_up="How long did it take?")
    lines_in: list[FollowUpItem | str] = [*laptops[:2], history[0], '{"id": "broken", ',
                                          invisible, laptops[2], *history[1:], laptops[3]]
    path = tmp_path / "items.jsonl"
    path.write_bytes(_jsonl(lines_in))
    runner = CliRunner()
    batched = runner.invoke(app, ["rewrite", "--input", str(path)])

    class PerItem:
        """What ``turnscope rewrite`` did before: a fresh session replaying each item."""

        def __init__(self, make_session: Callable[[], Session]) -> None:
            self.make_session = make_session

        def rewrite(self, item: FollowUpItem) -> Any:
            return rewrite_item(item, self.make_session)

    monkeypatch.setattr(cli_rewrite, "BatchRewriter", PerItem)
    reference = runner.invoke(app, ["rewrite", "--input", str(path)])
    assert batched.exit_code == reference.exit_code == 1
    assert batched.stdout == reference.stdout  # byte for byte
    rows = [json.loads(x) for x in batched.stdout.splitlines()]
    assert [r["id"] for r in rows] == [None if isinstance(x, str) else x.id for x in lines_in]
    assert rows[3]["error"]["type"] == "invalid_json" and rows[3]["error"]["line"] == 4
    assert rows[4]["error"]["type"] == "rewrite_error" and rows[4]["error"]["line"] == 5
    assert all("error" not in r for i, r in enumerate(rows) if i not in (3, 4))


def test_progress_bar_goes_to_stderr_and_leaves_stdout_alone(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(_jsonl(list(items_of("screens"))))
    runner = CliRunner()
    plain = runner.invoke(app, ["rewrite", "--input", str(path), "--no-progress"])
    shown = runner.invoke(app, ["rewrite", "--input", str(path), "--progress"])
    assert plain.exit_code == shown.exit_code == 0
    assert shown.stdout == plain.stdout
    n = len(items_of("screens"))
    assert f"{n}/{n}" in shown.stderr and f"{n}/{n}" not in plain.stderr
