"""turnscope.warm_up: models loaded up front, and rewrites unchanged by it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from turnscope import ConfigError, Session, warm_up

_SCRIPT = """
import json, sys
from importlib import resources
from turnscope import Session, bundled_vocabulary, warm_up
if sys.argv[1] == "warm":
    warm_up()
out = []
for name in ("en_a.jsonl", "ja.jsonl"):
    text = resources.files("turnscope").joinpath("data", "followups", name).read_text("utf-8")
    for line in text.splitlines()[:6]:
        item = json.loads(line)
        s = Session()
        for t in item["prefix"]:
            s.add(t["role"], t["content"])
        out.append(s.user(item["follow_up"]).to_output(item["id"]))
print(json.dumps(out, ensure_ascii=False))
"""


def _rewrites(mode: str) -> list[object]:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True,
                          timeout=300, check=True)
    result: list[object] = json.loads(done.stdout)
    return result


def test_rewrites_are_the_same_with_and_without_warm_up() -> None:
    assert _rewrites("warm") == _rewrites("cold")


def test_a_second_call_is_skipped_and_steps_are_reported() -> None:
    first = warm_up(languages=("en",))
    again = warm_up(languages=("en",))
    assert again.skipped and again.total == 0.0
    if not first.skipped:  # another test of this process may have warmed already
        assert [n for n, _ in first.seconds] == ["encoder", "resolver", "tagger", "shift", "decider", "turns"]
    # the models are loaded: a fresh session's turns load nothing new
    s = Session()
    s.user("Which plans include phone support?")
    s.assistant("Business and Enterprise include it.")
    assert s.user("How much is the first one?").query


def test_an_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'xx'"):
        warm_up(languages=("xx",))
