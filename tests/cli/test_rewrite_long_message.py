"""``turnscope rewrite`` with a message past the maximum message length (issue 30): that
line gets an error object naming the limit, every other line its rewrite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope import ItemError
from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS, FollowUpItem, parse_item
from turnscope.cli import app

WIDE = {"COLUMNS": "200"}
GOOD_A = {"id": "fu_a", "follow_up": "How do I rotate an API token?"}
GOOD_B = {"id": "fu_b", "prefix": [
    {"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
    {"role": "assistant", "content": "Frankfurt and Dublin both support CMK for data at rest."}],
    "follow_up": "What's the uptime SLA on the second one?"}
MEGABYTE = 1024 * 1024


def jl(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _huge(n: int) -> str:
    words = "the quick brown fox asks about the second region's uptime SLA and "
    return (words * (n // len(words) + 1))[:n]


def test_a_megabyte_follow_up_between_two_lines_is_an_error_naming_the_limit(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A) + jl({"id": "fu_huge", "prefix": GOOD_B["prefix"],
                                       "follow_up": _huge(MEGABYTE)}) + jl(GOOD_B))
    res = CliRunner().invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["fu_a", "fu_huge", "fu_b"]
    assert "query" in out[0] and "query" in out[2]
    err = out[1]["error"]
    assert err["type"] == "too_long" and err["line"] == 2
    assert str(DEFAULT_MAX_MESSAGE_CHARS) in err["message"] and "follow_up" in err["message"]
    assert str(MEGABYTE) in err["message"]


def test_the_good_lines_answer_as_they_do_without_the_long_one(tmp_path: Path) -> None:
    alone, mixed = tmp_path / "alone.jsonl", tmp_path / "mixed.jsonl"
    alone.write_bytes(jl(GOOD_A) + jl(GOOD_B))
    mixed.write_bytes(jl(GOOD_A) + jl({"id": "x", "follow_up": _huge(50_000)}) + jl(GOOD_B))
    a = rows(CliRunner().invoke(app, ["rewrite", "--input", str(alone)], env=WIDE).stdout)
    m = rows(CliRunner().invoke(app, ["rewrite", "--input", str(mixed)], env=WIDE).stdout)
    assert [m[0], m[2]] == a


def test_a_long_prefix_turn_is_refused_too(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    prefix = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": _huge(20_000)}]
    items.write_bytes(jl({"id": "p", "prefix": prefix, "follow_up": "and the second one?"}))
    res = CliRunner().invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    err = rows(res.stdout)[0]["error"]
    assert err["type"] == "too_long" and "prefix.1.content" in err["message"]
    assert str(DEFAULT_MAX_MESSAGE_CHARS) in err["message"]


def test_max_message_option_moves_the_limit(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A) + jl(GOOD_B))
    res = CliRunner().invoke(app, ["rewrite", "--input", str(items), "--max-message", "35"], env=WIDE)
    out = rows(res.stdout)
    assert "query" in out[0]  # 29 characters
    assert out[1]["error"]["type"] == "too_long" and "35" in out[1]["error"]["message"]


def test_a_message_at_the_limit_is_accepted() -> None:
    text = _huge(DEFAULT_MAX_MESSAGE_CHARS)
    assert parse_item(json.dumps({"id": "a", "follow_up": text})).follow_up == text
    with pytest.raises(ItemError) as info:
        parse_item(json.dumps({"id": "a", "follow_up": text + "x"}))
    assert info.value.kind == "too_long"


def test_the_limit_is_in_the_item_model_for_every_caller() -> None:
    with pytest.raises(ValueError, match=str(DEFAULT_MAX_MESSAGE_CHARS)):
        FollowUpItem.model_validate({"id": "a", "follow_up": _huge(DEFAULT_MAX_MESSAGE_CHARS + 1)})
    item = FollowUpItem.model_validate({"id": "a", "follow_up": "x" * 100},
                                       context={"max_message_chars": 100})
    assert len(item.follow_up) == 100
