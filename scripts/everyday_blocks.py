"""Apply the reference building blocks (agreement, ellipsis, preamble, elaboration) to the
everyday follow-up items and print, per pattern, how often each block fires and how often its
text meets the item's required and forbidden terms (docs/output.md's matching).

Development half only: the check half is not to be read while the blocks are being built.

    python scripts/everyday_blocks.py [--items turnscope/data/followups/everyday_dev.jsonl]
                                      [--resolved /tmp/dev_rewrites.jsonl] [--show]

``--resolved`` takes the output of ``turnscope rewrite`` on the same items: the previous
question of a thread is then read "as resolved" (the rewrite of the item whose follow-up it
was), as the rewriter would hand it over; without it the previous user turn is used as typed.
The current rewrite of each item is then also scored, as a baseline.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnscope._lexicon import check_terms, has_cjk
from turnscope.references._grammar import (
    attach_topic,
    elaboration_query,
    is_person,
    parse_fragment,
    person_names,
    pronoun_agreement,
    split_preamble,
    substitute_in_thread,
)

DEFAULT_ITEMS = Path(__file__).resolve().parents[1] / "turnscope/data/followups/everyday_dev.jsonl"
#: which block is meant for which pattern (the others are counted as stray firings)
MEANT_FOR = {
    "agreement": {"person_pronoun"},
    "ellipsis": {"completion", "substitution_product", "substitution_country", "substitution_group",
                 "substitution_year", "substitution_version"},
    "preamble": {"pivot", "long_range"},
    "elaboration": {"elaboration"},
}


@dataclass(frozen=True)
class Outcome:
    block: str
    text: str
    passed: bool


def _user_turns(item: dict[str, Any]) -> list[str]:
    return [t["content"] for t in item["prefix"] if t["role"] == "user"]


def _assistant_turns(item: dict[str, Any]) -> list[str]:
    return [t["content"] for t in item["prefix"] if t["role"] == "assistant"]


_PERSON_PRONOUN = re.compile(r"\b(?:he|she|him|his|her|himself|herself)\b", re.IGNORECASE)


def _agreement_block(item: dict[str, Any], _prev: str | None) -> str | None:
    """He/she -> the latest person the conversation introduced (the latest assistant turn that
    introduces one, by grammar). A demonstration of what the rewriter would do with it."""
    text: str = item["follow_up"]
    if pronoun_agreement(text) != "person":
        return None
    turns = [t["content"] for t in item["prefix"]]
    for turn in reversed(turns):
        names = person_names(turn)
        if names:
            break
    else:
        return None
    if len(names) != 1:
        # two people in the latest turn that has any: the grammar alone cannot pick one
        return None
    name = names[0]
    pronouns = list(_PERSON_PRONOUN.finditer(text))
    if len(pronouns) != 1:
        return None
    m = pronouns[0]
    word = m.group(0).lower()
    new = f"{name}'s" if word == "his" else name
    return text[:m.start()] + new + text[m.end():]


def _ellipsis_block(item: dict[str, Any], _prev: str | None, thread: Sequence[str] = ()) -> str | None:
    frag = parse_fragment(item["follow_up"])
    if frag is None or not thread:
        return None
    return substitute_in_thread(thread, frag)


def _preamble_block(item: dict[str, Any], _prev: str | None) -> str | None:
    clean, topic = split_preamble(item["follow_up"])
    if clean == item["follow_up"]:
        return None
    if topic is not None:
        return attach_topic(clean, topic) or clean
    return clean


def _elaboration_block(item: dict[str, Any], prev: str | None) -> str | None:
    if prev is None:
        return None
    return elaboration_query(item["follow_up"], prev)


BLOCKS: dict[str, Callable[..., str | None]] = {
    "agreement": _agreement_block,
    "ellipsis": _ellipsis_block,
    "preamble": _preamble_block,
    "elaboration": _elaboration_block,
}


def _thread(item: dict[str, Any], by_key: dict[tuple[Any, int, str], str], resolved: dict[str, str]) -> list[str]:
    """The item's previous user turns, oldest first, each as resolved where the item whose
    follow-up it was is in the same file and was resolved (by a block, else by --resolved),
    else as typed."""
    out: list[str] = []
    position = 0
    for turn in item["prefix"]:
        if turn["role"] == "user":
            rid = by_key.get((item.get("conversation"), position, turn["content"]))
            out.append(resolved.get(rid, turn["content"]) if rid is not None else turn["content"])
        position += 1
    return out


def _passed(text: str, item: dict[str, Any]) -> bool:
    check = check_terms(text, item["required_in_rewrite"], item["forbidden_in_rewrite"])
    return check.covered and not check.contaminated


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=Path, default=DEFAULT_ITEMS)
    ap.add_argument("--resolved", type=Path, default=None,
                    help="turnscope rewrite output for the same items (previous questions as resolved)")
    ap.add_argument("--show", action="store_true", help="print every firing with its text")
    args = ap.parse_args(argv)
    if "check" in args.items.name:
        print("refusing to read a check half", file=sys.stderr)
        return 2
    items = [json.loads(line) for line in args.items.read_text(encoding="utf-8").splitlines() if line.strip()]
    rewrites: dict[str, str] = {}
    if args.resolved is not None:
        for line in args.resolved.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rewrites[row["id"]] = row["query"]
    by_key = {(it.get("conversation"), len(it["prefix"]), it["follow_up"]): it["id"] for it in items}
    # what the rewriter would hand over as the thread: its own rewrites, replaced by a
    # block's text where a block fired on that earlier turn (items are in thread order)
    resolved: dict[str, str] = dict(rewrites)
    n_resolved = 0

    n_by_pattern: Counter[str] = Counter()
    fired: dict[tuple[str, str], int] = defaultdict(int)
    passed: dict[tuple[str, str], int] = defaultdict(int)
    base_pass: Counter[str] = Counter()
    vetoes: list[str] = []
    for it in items:
        pattern = it["pattern"]
        n_by_pattern[pattern] += 1
        thread = _thread(it, by_key, resolved)
        n_resolved += sum(1 for t, u in zip(thread, _user_turns(it), strict=True) if t != u)
        prev = thread[-1] if thread else None
        if it["id"] in rewrites and _passed(rewrites[it["id"]], it):
            base_pass[pattern] += 1
        for name, block in BLOCKS.items():
            text = block(it, prev, thread) if name == "ellipsis" else block(it, prev)
            if text is None:
                continue
            if pattern in MEANT_FOR[name]:
                resolved[it["id"]] = text
            ok = _passed(text, it)
            fired[(pattern, name)] += 1
            passed[(pattern, name)] += ok
            if args.show:
                print(f"  [{name}] {it['id']} {pattern} {'PASS' if ok else 'FAIL'}: {it['follow_up']!r} -> {text!r}")
        # agreement as a veto: a current rewrite that put a name of the wrong kind for the
        # message's pronoun ("How old is Parasite?"), which is_person would have refused
        if it["id"] in rewrites and not has_cjk(it["follow_up"]):
            agreement = pronoun_agreement(it["follow_up"])
            query = rewrites[it["id"]]
            if agreement in ("person", "thing") and query != it["follow_up"]:
                texts = [t["content"] for t in it["prefix"]]
                for span in re.finditer(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*", query):
                    name = span.group(0)
                    if name in it["follow_up"] or name.split()[0] in {"How", "What", "Who", "Is", "Does", "Where",
                                                                      "When", "Can", "Do", "Which", "Why"}:
                        continue
                    verdict = is_person(name, texts)
                    if (agreement == "person" and verdict is False) or (agreement == "thing" and verdict is True):
                        vetoes.append(f"{it['id']} {pattern}: {it['follow_up']!r} -> {query!r}: "
                                      f"{name!r} is_person={verdict}")

    print(f"items: {len(items)} ({args.items.name}); earlier user turns read as resolved: {n_resolved}")
    header = f"{'pattern':30s} {'n':>3s}" + ("  current" if rewrites else "") + "".join(
        f"  {name:>16s}" for name in BLOCKS)
    print(header)
    print("-" * len(header))
    for pattern in sorted(n_by_pattern):
        row = f"{pattern:30s} {n_by_pattern[pattern]:3d}"
        if rewrites:
            row += f"  {base_pass[pattern]:7d}"
        for name in BLOCKS:
            f, p = fired[(pattern, name)], passed[(pattern, name)]
            cell = f"{f}/{p}" if f else "-"
            mark = "" if not f or pattern in MEANT_FOR[name] else " !"
            row += f"  {cell + mark:>16s}"
        print(row)
    print("cells: fired/passed (passed = every required term present and no forbidden term);"
          " '!' = fired on a pattern the block is not meant for")
    if rewrites:
        print("current = the rewrite in --resolved passes the same check")
        print(f"agreement vetoes of current rewrites: {len(vetoes)}")
        for v in vetoes:
            print("  " + v)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
