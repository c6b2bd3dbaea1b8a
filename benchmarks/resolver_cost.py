"""What the learned resolver costs: time per exchange, against the rules alone, in one run.

    python benchmarks/resolver_cost.py [--conversations 6] [--long-turns 1000]

Replays CAsT 2021 development conversations (answers are long passages: the case
where embedding every sentence of an answer used to cost ~0.5 s an exchange) through
a session with the learned resolver and through one without it (the rules alone),
and reports the median time per exchange (the user turn's rewrite plus the assistant
turn that follows) for both, their ratio, and how many texts each exchange embedded.
The shipped model's size and the training time it records are printed beside.
Absolute times on a shared 2-core machine are noise; the ratio is the figure. The three
systems (and a fourth row, the learned resolver with every e5 vector answered from a
warm cache: the resolver's own work, which code changes move and e5 does not) are timed
in interleaved rounds (``--rounds``), so that a change in the machine's load falls on all
of them alike; the medians are over every exchange of every round. One more row times the
learned resolver with its tagger on ``--threads-row K`` threads (2 unless told; 0 drops the
row), the setting ``$TURNSCOPE_TAGGER_THREADS`` changes.

Then the growth with the conversation's length: the same five exchanges are timed
after a history of 10 turns and after ``--long-turns`` turns (other CAsT 2021
exchanges, concatenated); the ratio of the two medians should stay near 1 (the
resolver reads a bounded window; the detector keeps running sums). The short
history is 10 turns, not none: an empty history skips the resolver, which would
flatter the short side.
"""

from __future__ import annotations

import argparse
import statistics
import time
from importlib import resources
from typing import Any

# the caches every timed session starts without (this folder is on sys.path when run)
from decider_cost import forget_model_caches  # noqa: E402
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from turnscope import Session
from turnscope.datasets import load_cast
from turnscope.resolver import CachedEmbedder, Resolver
from turnscope.resolver._candidates import (
    HistoryTurn,
    NeuralTagger,
    clear_text_caches,
    default_tagger,
    sentences,
    tagger_threads,
)


def forget() -> None:
    """Empty the process-wide caches a live conversation never hits (every turn is new to
    it), which the interleaved rounds would otherwise fill: the parser's chunks and keys,
    e5's query vectors and the reference decider's LM scorings."""
    clear_text_caches()
    forget_model_caches()


def exchanges(items: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    convs: dict[str, list[tuple[str, str]]] = {}
    for it in items:
        convs.setdefault(it["conversation"], [])
    for conv in convs:
        last = [it for it in items if it["conversation"] == conv][-1]
        turns = [(t["role"], t["content"]) for t in last["prefix"]] + [("user", last["follow_up"])]
        convs[conv] = turns
    return list(convs.values())


def run(convs: list[list[tuple[str, str]]], make: Any) -> tuple[list[float], int]:
    times: list[float] = []
    texts = 0
    for turns in convs:
        s = make()
        for k in range(0, len(turns) - 1, 2):
            (_, u), (_, a) = turns[k], turns[k + 1]
            t0 = time.perf_counter()
            s.user(u)
            s.assistant(a)
            times.append(time.perf_counter() - t0)
        emb = getattr(s.embedded.resolver, "embedder", None)
        texts += emb.misses if emb is not None else 0
    return times, texts


def learned_with(tagger: NeuralTagger | None = None, embedder: CachedEmbedder | None = None) -> Any:
    """A maker of sessions with the learned resolver and nothing cached from an earlier one:
    the chunk and key caches and the tagger's answers emptied (CAsT passages recur across
    topics), a fresh e5 cache unless ``embedder`` (warmed beforehand: what is left is the
    resolver's own work) is given, and ``tagger`` (else the shared default one)."""
    t = tagger or default_tagger()

    def make() -> Session:
        forget()
        t.clear_cache()
        return Session(resolver=Resolver.load(embedder=embedder or CachedEmbedder(), tagger=t))

    return make


def fresh_learned() -> Session:
    """A session with the learned resolver, the default tagger and nothing cached."""
    return learned_with()()


def warm_learned(embedder: CachedEmbedder) -> Any:
    """Like :func:`learned_with`, but e5 answers from ``embedder``."""
    return learned_with(embedder=embedder)


def encoder_alone(convs: list[list[tuple[str, str]]]) -> list[float]:
    """The time e5 takes to embed each user turn once: the part of an exchange no
    resolver code can save."""
    emb = CachedEmbedder()
    emb.query(["warm the engine"])
    forget()
    times = []
    for turns in convs:
        for k in range(0, len(turns) - 1, 2):
            t0 = time.perf_counter()
            emb.query([turns[k][1]])
            times.append(time.perf_counter() - t0)
    return times


def tagger_alone(convs: list[list[tuple[str, str]]]) -> list[float]:
    """The time the neural tagger takes on each user turn with the turns before it (its
    cache emptied first): the encoder the learned resolver adds to an exchange."""
    tagger = default_tagger()
    tagger.clear_cache()
    times = []
    for turns in convs:
        for k in range(0, len(turns) - 1, 2):
            hist = [HistoryTurn(j + 1, r, t) for j, (r, t) in enumerate(turns[:k])]
            t0 = time.perf_counter()
            tagger.evidence(turns[k][1], hist)
            times.append(time.perf_counter() - t0)
    tagger.clear_cache()
    return times


def growth(convs: list[list[tuple[str, str]]], long_turns: int) -> tuple[float, float, int]:
    """Median ms of the same five exchanges after 10 turns and after ``long_turns`` turns."""
    pool = [(turns[k][1], turns[k + 1][1]) for turns in convs for k in range(0, len(turns) - 1, 2)]
    probe = pool[-5:]
    # CAsT passages recur across topics: a filler exchange sharing a sentence with the probe
    # would leave that sentence cached in the long session and flatter it
    seen = {x for u, a in probe for x in (u, *sentences(a))}
    filler = [(u, a) for u, a in pool[:-5] if not seen & {u, *sentences(a)}]
    if not filler:
        raise SystemExit("not enough exchanges for the growth measurement")

    def timed(s: Session, pairs: list[tuple[str, str]]) -> list[float]:
        out = []
        for u, a in pairs:
            t0 = time.perf_counter()
            s.user(u)
            s.assistant(a)
            out.append(time.perf_counter() - t0)
        return out

    short = fresh_learned()
    timed(short, filler[:2])  # warm the process (model load, first calls) before timing
    short = fresh_learned()
    if len(filler) < 5:
        raise SystemExit("not enough exchanges for the 10-turn history")
    for u, a in filler[-5:]:  # 10 turns of history, untimed
        short.user(u)
        short.assistant(a)
    t_short = timed(short, probe)
    # the long session re-uses the filler texts in order (an embedder cache would hide
    # the per-turn embedding, so it gets a fresh one; only the history grows)
    long = fresh_learned()
    fed = 0
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(f"feeding {long_turns} turns", total=long_turns)
        while fed < long_turns:
            u, a = filler[(fed // 2) % len(filler)]
            long.user(u)
            long.assistant(a)
            fed += 2
            progress.advance(task, 2)
    t_long = timed(long, probe)
    return statistics.median(t_short) * 1000, statistics.median(t_long) * 1000, fed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=6)
    ap.add_argument("--long-turns", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    ap.add_argument("--threads-row", type=int, default=2,
                    help="also time the learned resolver with its tagger on this many threads (0: no such row)")
    args = ap.parse_args()
    other_threads = NeuralTagger(threads=args.threads_row) if args.threads_row > 0 else None
    all_convs = exchanges(load_cast(2021, part="dev"))
    convs = all_convs[: args.conversations]
    console = Console(width=120)
    warm = CachedEmbedder()
    run(convs, warm_learned(warm))  # fills the cache the fourth row reads
    learned: list[float] = []
    rules: list[float] = []
    encoder: list[float] = []
    own: list[float] = []
    neural: list[float] = []
    other: list[float] = []
    n_texts = 0
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("timing rounds", total=args.rounds)
        for _ in range(max(1, args.rounds)):
            # nothing is cached from an earlier conversation (but in the fourth row, e5)
            t, k = run(convs, fresh_learned)
            learned += t
            n_texts += k
            rules += run(convs, lambda: (forget(), Session(resolver=None))[1])[0]
            encoder += encoder_alone(convs)
            own += run(convs, warm_learned(warm))[0]
            neural += tagger_alone(convs)
            if other_threads is not None:
                other += run(convs, learned_with(other_threads))[0]
            progress.advance(task)
    n = len(learned)
    table = Table(title=f"time per exchange, {len(convs)} CAsT 2021 dev conversations, "
                        f"{n // max(1, args.rounds)} exchanges x {max(1, args.rounds)} interleaved rounds")
    for col in ("system", "median ms", "p90 ms", "ratio to rules (median)", "ratio to e5 alone (median)"):
        table.add_column(col, justify="right")
    med_r = statistics.median(rules)
    med_e = statistics.median(encoder)
    rows = [("rules alone", rules), ("e5 alone (the user turn, once)", encoder),
            (f"neural tagger alone ({tagger_threads()} thread(s); the user turn with its history)", neural),
            (f"learned resolver (the tagger beside e5, {tagger_threads()} thread(s))", learned),
            ("learned resolver, e5 from a warm cache", own)]
    if other:
        rows.append((f"learned resolver, tagger on {args.threads_row} threads", other))
    for name, ts in rows:
        med = statistics.median(ts)
        p90 = sorted(ts)[int(0.9 * (len(ts) - 1))]
        table.add_row(name, f"{med * 1000:.1f}", f"{p90 * 1000:.1f}", f"{med / med_r:.2f}", f"{med / med_e:.2f}")
    console.print(table)
    path = resources.files("turnscope") / "data" / "models" / "resolver.txt"
    meta = Resolver.load().meta
    console.print(f"texts embedded per exchange: {n_texts / n:.1f} (each user turn once, as a query; "
                  f"answers are read for their words, not embedded); model file {len(path.read_bytes()) / 1e6:.2f} MB; "
                  f"trained on {meta['trained_on']}")
    if args.long_turns:
        ms_short, ms_long, fed = growth(all_convs, args.long_turns)
        g = Table(title="the same five exchanges, short history vs long history (learned resolver)")
        for col in ("history", "median ms per exchange", "ratio to 10-turn"):
            g.add_column(col, justify="right")
        g.add_row("10 turns", f"{ms_short:.1f}", "1.00")
        g.add_row(f"{fed} turns", f"{ms_long:.1f}", f"{ms_long / ms_short:.2f}")
        console.print(g)


if __name__ == "__main__":
    main()
