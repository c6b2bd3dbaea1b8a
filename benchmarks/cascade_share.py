"""How many user turns of whole conversations the cascade sends to the model.

    python benchmarks/cascade_share.py [--split dev]

``benchmarks/llm_recorded.py`` measures the cascade on follow-ups only (each item is a turn
that refers back), where the first message of a conversation never occurs. This replays
every conversation of a part of the written corpus (corpus/README.md) whole, through
``CascadeRewriter`` over an LLM backend whose transport only counts the calls (HTTP 503:
the embedded rewrite answers), and prints the share of user turns that would call the model,
with the cascade's reason for each turn that did not. No answer is needed, so no quality
figure: that stays with the recorded answers. Use the ``dev`` part; the check part is read
as aggregates only (docs/splits.md).
"""

from __future__ import annotations

import argparse
import collections
import logging
from typing import Any

import httpx

from turnscope import Session
from turnscope.rewriters import CascadeRewriter, LLMRewriter
from turnscope.training.corpus import load_corpus


def whole_conversations(split: str) -> list[dict[str, Any]]:
    """Per conversation, the item with the longest history: its prefix and follow-up hold
    every turn up to the conversation's last follow-up."""
    longest: dict[str, dict[str, Any]] = {}
    for it in load_corpus(split):
        c = it["conversation"]
        if c not in longest or len(it["prefix"]) > len(longest[c]["prefix"]):
            longest[c] = it
    return list(longest.values())


def main() -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/cascade_share.py")
    ap.add_argument("--split", default="dev", choices=["train", "dev", "check"])
    args = ap.parse_args()
    # every call falls back (HTTP 503) and says so: the warnings are the same line each time
    logging.getLogger("turnscope").setLevel(logging.ERROR)
    calls: list[httpx.Request] = []

    def count(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503)

    llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
                      transport=httpx.MockTransport(count), max_retries=0, breaker_threshold=10**9)
    cascade = CascadeRewriter(llm)
    reasons: collections.Counter[str] = collections.Counter()
    convs = whole_conversations(args.split)
    for it in convs:
        s = Session(rewriter=cascade)
        for t in [*it["prefix"], {"role": "user", "content": it["follow_up"]}]:
            if t["role"] == "user":
                r = s.user(t["content"])
                reasons[str((r.trace.get("cascade") or {}).get("reason"))] += 1
            else:
                s.assistant(t["content"])
    users = sum(reasons.values())
    print(f"{args.split}: {len(convs)} conversations, {users} user turns; the model is called on "
          f"{len(calls)} ({len(calls) / users:.2f}), {1 - len(calls) / users:.2f} saved")
    for reason, n in reasons.most_common():
        print(f"  {reason:32s} {n:5d}  {n / users:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
