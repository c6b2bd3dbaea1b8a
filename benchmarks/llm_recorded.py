"""The LLM path on recorded answers: a capable model's replies to the exact prompts, recorded
once, replayed through the real ``LLMRewriter`` with an injected transport.

    python benchmarks/llm_recorded.py prompts            # writes benchmarks/recorded/prompts.jsonl
    python benchmarks/llm_recorded.py split --parts 6    # one file per answering model run
    python benchmarks/llm_recorded.py score [--save benchmarks/figures/llm_recorded.json]

Items: every sixth follow-up of the written corpus's check part (corpus/README.md; read as
aggregates only, docs/splits.md), English and Japanese. Prompts per item:

- ``condense``: LangChain's history-aware "contextualize the question" prompt, the whole
  history as chat messages (the baseline most RAG stacks ship);
- ``full``: turnscope's whole-history prompt with the counterweight clause, which the default
  policy now sends for a conversation of up to ``SHORT_CONVERSATION_TURNS`` turns;
- ``default-before``: the default policy's scoped prompt as it was (live entities, recent
  turns, ranked phrases, lists), recorded before the change;
- ``full-before``: the whole-history prompt with the longer system text it had before the
  reference class left the prompt (recorded in session 24).

Long conversations (``long-default``, ``long-condense``): the same items after earlier
conversations of the same language (other check conversations, whole), so that each history
holds at least ``LONG_TURNS`` turns: the same user talked about other subjects first. Scored
in a second table: the default policy's prompt (which trims what is out of scope past
``SHORT_CONVERSATION_TURNS``) against the condense prompt given the whole history.

A prompt that is no longer built keeps its rows and answers under a ``-before`` variant,
scored from the recorded answers' ``query``; ``split`` writes only the prompts no answer
file holds yet.

``score`` replays each prompt's recorded answer (an unrecorded prompt gets HTTP 503 and the
embedded fallback, counted) and the cascade (``turnscope.rewriters.CascadeRewriter``: the
model only where the embedded path is not confident), and prints coverage / contamination
per reference group, the share of turns that call the model, and prompt sizes in tokens.
The answers file names the model that wrote them and the date (benchmarks/recorded/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

# the reference groups of benchmarks/corpus_eval.py (this folder is on sys.path when run)
from corpus_eval import PATTERN_GROUPS as GROUPS  # noqa: E402

from turnscope import BatchRewriter, Session
from turnscope._lexicon import check_terms
from turnscope.rewriters import LLMRewriter
from turnscope.rewriters._prompts import prompt_size
from turnscope.training.corpus import load_corpus

HERE = Path(__file__).resolve().parent / "recorded"
PROMPTS = HERE / "prompts.jsonl"
ANSWERS = HERE / "answers.jsonl"
MODEL = "recorded"
BASE_URL = "http://recorded.test/v1"

#: LangChain's contextualize-question system prompt (langchain.chains.create_history_aware_retriever docs)
CONDENSE_SYSTEM = (
    "Given a chat history and the latest user question which might reference context in the "
    "chat history, formulate a standalone question which can be understood without the chat "
    "history. Do NOT answer the question, just reformulate it if needed and otherwise return "
    "it as is.")



def key_of(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:24]


def items() -> list[dict[str, Any]]:
    return load_corpus("check")[::6]


#: the shortest history of a long-conversation item, in turns
LONG_TURNS = 30


def long_items() -> list[dict[str, Any]]:
    """:func:`items`, each after whole earlier conversations of its language (the longest
    item prefix of each other check conversation, which ends with an answer), picked in an
    order fixed by a hash of the item id, until the history holds ``LONG_TURNS`` turns."""
    whole: dict[str, list[dict[str, Any]]] = {}
    lang_of: dict[str, str] = {}
    for it in load_corpus("check"):
        if len(it["prefix"]) > len(whole.get(it["conversation"], [])):
            whole[it["conversation"]] = list(it["prefix"])
            lang_of[it["conversation"]] = it.get("lang") or "en"
    out = []
    for it in items():
        lang = it.get("lang") or "en"
        others = sorted((c for c in whole if c != it["conversation"] and lang_of[c] == lang and whole[c]),
                        key=lambda c: hashlib.sha256(f"{it['id']}|{c}".encode()).hexdigest())
        filler: list[dict[str, Any]] = []
        for c in others:
            if len(filler) + len(it["prefix"]) >= LONG_TURNS:
                break
            filler += whole[c]
        out.append({**it, "id": f"{it['id']}@long", "prefix": filler + list(it["prefix"])})
    return out


def group(item: dict[str, Any]) -> str:
    lang = item.get("lang") or "en"
    return f"{lang}:{GROUPS.get(item['pattern'], 'other')}"


def condense_messages(item: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "system", "content": CONDENSE_SYSTEM},
            *({"role": t["role"], "content": t["content"]} for t in item["prefix"]),
            {"role": "user", "content": item["follow_up"]}]


class Replay(httpx.BaseTransport):
    """Answers a chat request with the recorded answer to its messages (503 when there is
    none), and keeps every prompt it was asked."""

    def __init__(self, answers: dict[str, str], echo: bool = False) -> None:
        self.answers = answers
        self.echo = echo  # recording: answer every prompt with the message as typed
        self.asked: list[list[dict[str, str]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        messages = json.loads(request.content)["messages"]
        self.asked.append(messages)
        answer = self.answers.get(key_of(messages))
        if answer is None and self.echo:
            latest = messages[-1]["content"].split("LATEST MESSAGE:")[-1].split("\n")[0].strip()
            answer = json.dumps({"query": latest, "topic_shift": False, "reference_class": "standalone",
                                 "entities": []})
        if answer is None:
            return httpx.Response(503, json={"error": "not recorded"})
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": answer}}]})


def llm(transport: httpx.BaseTransport) -> LLMRewriter:
    # no circuit breaker: an unrecorded prompt is one fallback, not thirty seconds of them
    return LLMRewriter(base_url=BASE_URL, model=MODEL, api_key_env=None, transport=transport,
                       max_retries=0, output_mode="json_object", timeout=5.0,
                       breaker_threshold=10**9)


def replay(its: list[dict[str, Any]], policy: str, answers: dict[str, str],
           cascade: bool = False, echo: bool = False) -> tuple[list[str], Replay, list[bool]]:
    transport = Replay(answers, echo)
    rw = llm(transport)
    if cascade:
        from turnscope.rewriters import CascadeRewriter

        cas = CascadeRewriter(rw)
        made = lambda: Session(policy=policy, rewriter=cas)  # noqa: E731
    else:
        made = lambda: Session(policy=policy, rewriter=rw)  # noqa: E731
    batch = BatchRewriter(made)
    queries, called = [], []
    for it in its:
        before = len(transport.asked)
        r = batch.rewrite(it)
        queries.append(r.query)
        called.append(len(transport.asked) > before)
    return queries, transport, called


#: prompts no longer built: their recorded rows are kept and scored from the answers' query
BEFORE = ("default-before", "full-before", "long-default-before")


def cmd_prompts(_: argparse.Namespace) -> int:
    HERE.mkdir(parents=True, exist_ok=True)
    its = items()
    old = [json.loads(line) for line in PROMPTS.read_text(encoding="utf-8").splitlines()] \
        if PROMPTS.exists() else []
    built: dict[str, list[dict[str, Any]]] = {}
    for variant, policy in (("full", "full"),):
        _, transport, _ = replay(its, policy, {}, echo=True)
        if len(transport.asked) != len(its):
            print(f"{variant}: {len(transport.asked)} prompts for {len(its)} items", file=sys.stderr)
        built[variant] = [{"key": key_of(m), "variant": variant, "item": it["id"], "messages": m}
                          for it, m in zip(its, transport.asked, strict=False)]
    rows = [r for r in old if r["variant"] in BEFORE]
    new_keys = {r["key"] for v in built.values() for r in v}
    # a built variant whose prompts changed keeps its old rows (and answers) as "-before"
    rows += [{**r, "variant": f"{r['variant']}-before"} for r in old
             if r["variant"] in built and r["key"] not in new_keys
             and f"{r['variant']}-before" not in {x["variant"] for x in rows}]
    rows += [r for v in built.values() for r in v]
    for it in its:
        m = condense_messages(it)
        rows.append({"key": key_of(m), "variant": "condense", "item": it["id"], "messages": m})
    longs = long_items()
    _, transport, _ = replay(longs, "default", {}, echo=True)
    if len(transport.asked) != len(longs):
        print(f"long-default: {len(transport.asked)} prompts for {len(longs)} items", file=sys.stderr)
    long_rows = [{"key": key_of(m), "variant": "long-default", "item": it["id"], "messages": m}
                 for it, m in zip(longs, transport.asked, strict=False)]
    # the long prompt as it was before a change keeps its rows (and answers) as "-before"
    long_keys = {r["key"] for r in long_rows}
    if not any(r["variant"] == "long-default-before" for r in rows):
        rows += [{**r, "variant": "long-default-before"} for r in old
                 if r["variant"] == "long-default" and r["key"] not in long_keys]
    rows += long_rows
    for it in longs:
        m = condense_messages(it)
        rows.append({"key": key_of(m), "variant": "long-condense", "item": it["id"], "messages": m})
    with PROMPTS.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} prompts for {len(its)} items -> {PROMPTS}", file=sys.stderr)
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for line in PROMPTS.read_text(encoding="utf-8").splitlines()]
    answered = _answers()
    seen: set[str] = set(answered)
    unique = [r for r in rows if not (r["key"] in seen or seen.add(r["key"]))]  # type: ignore[func-returns-value]
    for old in HERE.glob("to_answer_*.jsonl"):
        old.unlink()
    for k in range(args.parts):
        part = unique[k:: args.parts]
        if not part:
            continue
        with (HERE / f"to_answer_{k}.jsonl").open("w", encoding="utf-8") as fh:
            for r in part:
                # the answering model sees the prompt only: no item id, no variant, no gold
                fh.write(json.dumps({"key": r["key"], "messages": r["messages"]}, ensure_ascii=False) + "\n")
    print(f"{len(unique)} distinct prompts in {args.parts} parts", file=sys.stderr)
    return 0


def _answers() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(HERE.glob("answers*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["key"]] = r["answer"]
    return out


def _figures(its: list[dict[str, Any]], queries: list[str]) -> dict[str, dict[str, float]]:
    acc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for it, q in zip(its, queries, strict=True):
        c = check_terms(q, it["required_in_rewrite"], it["forbidden_in_rewrite"])
        for g in (group(it), group(it).split(":")[0] + ":ALL", "ALL"):
            acc[g].append((int(c.covered), int(c.contaminated)))
    return {g: {"n": len(v), "coverage": sum(a for a, _ in v) / len(v),
                "contamination": sum(b for _, b in v) / len(v)} for g, v in sorted(acc.items())}


def from_answers(its: list[dict[str, Any]], prompts: list[dict[str, Any]],
                 answers: dict[str, str], variant: str) -> dict[str, dict[str, float]] | None:
    """A prompt as it was, scored from its recorded answers' ``query`` (the prompt is no
    longer built, so there is no replay through the rewriter's guard)."""
    by_item = {p["item"]: answers.get(p["key"]) for p in prompts if p["variant"] == variant}
    if not by_item:
        return None
    queries = []
    for it in its:
        raw = by_item.get(it["id"])
        try:
            queries.append(str(json.loads(raw)["query"]) if raw else it["follow_up"])
        except (ValueError, KeyError, TypeError):
            queries.append(it["follow_up"])
    return _figures(its, queries)


def cmd_score(args: argparse.Namespace) -> int:
    its = items()
    answers = _answers()
    prompts = [json.loads(line) for line in PROMPTS.read_text(encoding="utf-8").splitlines()]
    tokens: dict[str, list[int]] = defaultdict(list)
    for p in prompts:
        tokens[p["variant"]].append(prompt_size(p["messages"])[1])
    cols: dict[str, dict[str, dict[str, float]]] = {}
    calls: dict[str, float] = {}
    missing = 0
    cq = []
    for it in its:
        a = answers.get(key_of(condense_messages(it)))
        missing += a is None
        cq.append((a or it["follow_up"]).strip().strip('"'))
    cols["condense (whole history)"] = _figures(its, cq)
    calls["condense (whole history)"] = 1.0
    for variant, label in (("default-before", "default before (scoped)"),
                           ("full-before", "full before (long system text)")):
        before = from_answers(its, prompts, answers, variant)
        if before is not None:
            cols[label] = before
            calls[label] = 1.0
    for label, policy, cascade in (("turnscope full", "full", False),
                                   ("turnscope default", "default", False),
                                   ("cascade (default)", "default", True)):
        queries, transport, called = replay(its, policy, answers, cascade)
        cols[label] = _figures(its, queries)
        calls[label] = sum(called) / len(called)
        missing += sum(1 for m in transport.asked if key_of(m) not in answers)
        if cascade:
            tokens["cascade"] = [prompt_size(m)[1] for m in transport.asked]
    emb = BatchRewriter(lambda: Session())
    cols["embedded default, no LLM"] = _figures(its, [emb.rewrite(it).query for it in its])
    calls["embedded default, no LLM"] = 0.0
    groups = sorted({g for c in cols.values() for g in c}, key=lambda g: (g == "ALL", g))
    print(f"\n{len(its)} items; {len(answers)} recorded answers; {missing} prompts not recorded "
          "(answered by the embedded fallback)")
    print(f"{'group':28s} {'n':>4s}" + "".join(f" {k[:24]:>24s}" for k in cols))
    for g in groups:
        n = next(iter(cols.values()))[g]["n"]
        print(f"{g:28s} {n:4d}" + "".join(
            f" {c[g]['coverage']:11.2f} /{c[g]['contamination']:5.2f}     " for c in cols.values()))
    print("share of turns calling the model: " + ", ".join(f"{k} {v:.2f}" for k, v in calls.items()))
    for k, v in tokens.items():
        if v:
            v = sorted(v)
            print(f"prompt tokens {k}: median {statistics.median(v):.0f}, p90 {v[int(0.9 * (len(v) - 1))]}")
    long_cols = _score_long(answers, prompts)
    if args.save:
        sizes = {k: {"median": statistics.median(v), "p90": sorted(v)[int(0.9 * (len(v) - 1))]}
                 for k, v in tokens.items() if v}
        Path(args.save).write_text(json.dumps({
            "items": len(its), "answers": len(answers), "missing": missing, "figures": cols,
            "calls": calls, "tokens": sizes, "long_conversations": long_cols}, indent=1) + "\n")
    return 0


def _score_long(answers: dict[str, str], prompts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The long-conversation table: condense over the whole history against the default."""
    if not any(p["variant"] == "long-condense" for p in prompts):
        return None
    longs = long_items()
    cq, missing = [], 0
    for it in longs:
        a = answers.get(key_of(condense_messages(it)))
        missing += a is None
        cq.append((a or it["follow_up"]).strip().strip('"'))
    cols = {"condense (whole history)": _figures(longs, cq)}
    before = from_answers(longs, prompts, answers, "long-default-before")
    if before is not None:
        cols["default before (slots, scores)"] = before
    queries, transport, _ = replay(longs, "default", answers)
    cols["turnscope default"] = _figures(longs, queries)
    missing += sum(1 for m in transport.asked if key_of(m) not in answers)
    tokens = {"condense (whole history)": sorted(prompt_size(condense_messages(it))[1] for it in longs),
              "default before (slots, scores)": sorted(prompt_size(p["messages"])[1] for p in prompts
                                                       if p["variant"] == "long-default-before"),
              "turnscope default": sorted(prompt_size(m)[1] for m in transport.asked)}
    turns = sorted(len(it["prefix"]) for it in longs)
    print(f"\nlong conversations: {len(longs)} items, history {turns[0]}-{turns[-1]} turns "
          f"(median {statistics.median(turns):.0f}); {missing} prompts not recorded")
    print(f"{'group':28s} {'n':>4s}" + "".join(f" {k[:24]:>24s}" for k in cols))
    for g in sorted({g for c in cols.values() for g in c}, key=lambda g: (g == "ALL", g)):
        n = next(iter(cols.values()))[g]["n"]
        print(f"{g:28s} {n:4d}" + "".join(
            f" {c[g]['coverage']:11.2f} /{c[g]['contamination']:5.2f}     " for c in cols.values()))
    sizes = {k: {"median": statistics.median(v), "p90": v[int(0.9 * (len(v) - 1))]} for k, v in tokens.items() if v}
    for k, v in sizes.items():
        print(f"prompt tokens {k}: median {v['median']:.0f}, p90 {v['p90']}")
    return {"items": len(longs), "missing": missing, "figures": cols, "tokens": sizes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/llm_recorded.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("prompts")
    sp = sub.add_parser("split")
    sp.add_argument("--parts", type=int, default=6)
    sc = sub.add_parser("score")
    sc.add_argument("--save")
    args = ap.parse_args(argv)
    # the rewriter's warnings quote the rejected answer, that is a check item's words: they
    # are counted, not printed (docs/splits.md, use 11)
    quiet = _Counted()
    log = logging.getLogger("turnscope")
    log.addHandler(quiet)
    log.propagate = False
    try:
        return {"prompts": cmd_prompts, "split": cmd_split, "score": cmd_score}[args.cmd](args)
    finally:
        if quiet.count:
            print(f"{quiet.count} warnings of the rewriter (answers its guard rejected, answered "
                  "by the embedded fallback) counted, not shown", file=sys.stderr)


class _Counted(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


if __name__ == "__main__":
    sys.exit(main())
