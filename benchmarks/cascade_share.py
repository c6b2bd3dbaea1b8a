"""How many user turns of whole conversations the cascade sends to the model, and what the
turns it keeps local cost.

    python benchmarks/cascade_share.py [--set corpus-dev] [--set cast19] ...

``benchmarks/llm_recorded.py`` measures the cascade on follow-ups only (each item is a turn
that refers back), where the first message of a conversation never occurs. This replays
whole conversations turn by turn through ``CascadeRewriter`` over an LLM backend whose
transport only counts the calls (HTTP 503: the embedded rewrite answers), and prints the
share of user turns that would call the model, with the cascade's reason for each turn that
did not.

A turn the cascade keeps local is answered by the embedded rewrite; a turn it sends to the
model is answered as calling every turn would answer it. So the cascade can only lose on
the turns it keeps, and it loses at most the judged ones among them whose embedded rewrite
misses a required word or holds a forbidden one (counting the model right on every one of
them: the bound needs no recorded answer). Judged turns are those a set gives references
for (every follow-up of CAsT; the written corpus's annotated follow-ups).

Sets: the written corpus's parts (``corpus-dev``; ``corpus-check`` is read as aggregates
only, docs/splits.md) and the public CAsT sets (``cast19`` and ``cast21dev`` are development
sets; ``cast20`` and ``cast21check`` are check sets, aggregates only).
"""

from __future__ import annotations

import argparse
import collections
import logging
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import httpx
from resolver_sets import SETS as PUBLIC_SETS

from turnscope import Session
from turnscope.evaluation import check_terms
from turnscope.rewriters import CascadeRewriter, LLMRewriter
from turnscope.training.corpus import load_corpus


class Turn(NamedTuple):
    role: str
    content: str
    item: dict[str, Any] | None  # the follow-up item judging this user turn, if any


def conversations(items: Iterable[dict[str, Any]]) -> list[list[Turn]]:
    """Whole conversations rebuilt from follow-up items: the item with the longest history
    gives the turns, and each user turn is judged by the item it is the follow-up of."""
    by_conv: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for it in items:
        by_conv[str(it["conversation"])].append(it)
    out: list[list[Turn]] = []
    for group in by_conv.values():
        judged = {len(it["prefix"]): it for it in group}
        longest = max(group, key=lambda it: len(it["prefix"]))
        turns = [*longest["prefix"], {"role": "user", "content": longest["follow_up"]}]
        out.append([Turn(t["role"], t["content"], judged.get(k) if t["role"] == "user" else None)
                    for k, t in enumerate(turns)])
    return out


#: the written corpus's parts, then the public CAsT sets as resolver_sets.py loads them
SETS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "corpus-dev": lambda: load_corpus("dev"),
    "corpus-check": lambda: load_corpus("check"),
    **{name: load for name, (_, load) in PUBLIC_SETS.items() if name.startswith("cast")},
}


def measure(name: str) -> dict[str, Any]:
    calls: list[httpx.Request] = []

    def count(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503)

    llm = LLMRewriter(base_url="http://llm.test/v1", model="m", api_key_env=None,
                      transport=httpx.MockTransport(count), max_retries=0, breaker_threshold=10**9)
    cascade = CascadeRewriter(llm)
    reasons: collections.Counter[str] = collections.Counter()
    kept_judged = kept_missed = kept_contaminated = judged = 0
    convs = conversations(SETS[name]())
    for conv in convs:
        s = Session(rewriter=cascade)
        for t in conv:
            if t.role != "user":
                s.assistant(t.content)
                continue
            r = s.user(t.content)
            info = r.trace.get("cascade") or {}
            reasons[str(info.get("reason"))] += 1
            if t.item is None or not t.item["prefix"]:
                continue
            judged += 1
            if info.get("called") is False:
                c = check_terms(r.query, t.item["required_in_rewrite"], t.item["forbidden_in_rewrite"])
                kept_judged += 1
                kept_missed += not c.covered
                kept_contaminated += c.contaminated
    users = sum(reasons.values())
    return {"set": name, "conversations": len(convs), "user_turns": users, "calls": len(calls),
            "saved": 1 - len(calls) / users, "reasons": dict(reasons.most_common()),
            "judged_follow_ups": judged, "kept_judged": kept_judged,
            "kept_missed": kept_missed, "kept_contaminated": kept_contaminated}


def main() -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/cascade_share.py")
    ap.add_argument("--set", dest="sets", action="append", choices=list(SETS),
                    help="repeatable; default corpus-dev")
    args = ap.parse_args()
    # every call falls back (HTTP 503) and says so: the warnings are the same line each time
    logging.getLogger("turnscope").setLevel(logging.ERROR)
    print("| set | user turns | model called | saved | judged follow-ups kept local "
          "| of those: missed / contaminated (the most the cascade can lose) |")
    print("|---|---|---|---|---|---|")
    details = []
    for name in args.sets or ["corpus-dev"]:
        m = measure(name)
        details.append(m)
        print(f"| {name} | {m['user_turns']} | {m['calls']} | {m['saved']:.2f} | "
              f"{m['kept_judged']} of {m['judged_follow_ups']} | "
              f"{m['kept_missed']} / {m['kept_contaminated']} |", flush=True)
    for m in details:
        print(f"{m['set']}: " + ", ".join(f"{k} {v}" for k, v in m["reasons"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
