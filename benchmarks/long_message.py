"""Time of one user turn against the length of the message: 16 kB, 64 kB, 256 kB and 1 MB.

A user may paste a whole document into the chat. The turn's cost must grow linearly
with the message (issue 9: a 1 MB message once did not finish in 300 s), so the table
reports, beside each time, the ratio against the 16 kB message measured in the same
run and the ratio a linear cost would give (absolute times on shared machines are noise).

The message is made of the bundled follow-up conversations' own sentences (names,
regions, pronouns, ordinals, quoted titles, numbers), repeated up to the size, and ends
with a follow-up that refers back ("... and what's the uptime SLA on the second one?").

A second table (issue 30) times ``turnscope rewrite`` on a file whose middle line holds
a 1 MB follow-up between two ordinary items, with no vocabulary (the command's default,
where the learned shift detector embeds the whole message with e5, whose cost grows with
the square of the tokens): "before" lifts the maximum message length (``--max-message``
far above 1 MB, as the command behaved before it had one) and is cut at ``--before-timeout``
seconds; "after" is the default limit, where the long line gets an error object naming it
and the two other lines their rewrites.

    python benchmarks/long_message.py [--repeats 1] [--lang en|ja] [--only rewrite|turn]
                                      [--before-timeout 120]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.table import Table

from turnscope import Session
from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS
from turnscope.entities import bundled_vocabularies

# binary sizes: 1 MB / 16 kB = 64, the ratio a linear cost gives
SIZES = [("16 kB", 16 * 1024), ("64 kB", 64 * 1024), ("256 kB", 256 * 1024), ("1 MB", 1024 * 1024)]
TAIL = {"en": " And what's the uptime SLA on the second one?", "ja": " それで、2つ目の料金は？"}


def sentences(lang: str) -> list[str]:
    """Every turn of the bundled follow-up items in ``lang``, in file order."""
    name = "ja.jsonl" if lang == "ja" else "en_a.jsonl"
    text = resources.files("turnscope").joinpath("data", "followups", name).read_text("utf-8")
    out: list[str] = []
    for line in text.splitlines():
        if line.strip():
            item = json.loads(line)
            out += [t["content"] for t in item["prefix"]] + [item["follow_up"]]
    return out


def message(size: int, lang: str) -> str:
    """A message of ``size`` characters: the sentences repeated, then the follow-up."""
    pool, parts, n, i = sentences(lang), [], 0, 0
    tail = TAIL[lang]
    while n < size - len(tail):
        s = pool[i % len(pool)]
        parts.append(s)
        n += len(s) + 1
        i += 1
    return (" ".join(parts))[: size - len(tail)] + tail


def one_turn(text: str, lang: str) -> float:
    s = Session(vocabulary=bundled_vocabularies())
    if lang == "ja":
        s.user("アバター案内の料金プランってどんなのがある？")
        s.assistant("3つのプランがあります。1つ目はライトプラン、2つ目はスタンダードプラン、"
                    "3つ目はエンタープライズプランです。")
    else:
        s.user("Which EU regions support customer-managed encryption keys?")
        s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    start = time.perf_counter()
    result = s.user(text)
    elapsed = time.perf_counter() - start
    if not result.query:
        raise SystemExit("empty query")  # the turn must produce a rewrite, not just finish
    return elapsed


def rewrite_file(size: int, lang: str, max_message: int | None, timeout: float) -> tuple[float, str]:
    """Seconds ``turnscope rewrite`` takes on [ordinary, ``size``-character follow-up,
    ordinary] in a fresh process (model loading included), and what each line got."""
    prefix = [{"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
              {"role": "assistant", "content": "Frankfurt and Dublin both support CMK for data at rest."}]
    lines = [{"id": "before", "follow_up": "How do I rotate an API token?"},
             {"id": "long", "prefix": prefix, "follow_up": message(size, lang)},
             {"id": "after", "prefix": prefix, "follow_up": "What's the uptime SLA on the second one?"}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        cmd = [sys.executable, "-c", "from turnscope.cli import main; main()", "rewrite", "--input", str(path)]
        if max_message is not None:
            cmd += ["--max-message", str(max_message)]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "COLUMNS": "200"})
        except subprocess.TimeoutExpired:
            return time.perf_counter() - start, f"no answer within {timeout:.0f} s"
        elapsed = time.perf_counter() - start
    got = []
    for row in map(json.loads, done.stdout.splitlines()):
        got.append(f"{row['id']}: " + (f"error {row['error']['type']}" if "error" in row else "rewrite"))
    return elapsed, "; ".join(got) or done.stderr.strip()[-200:]


def rewrite_table(lang: str, before_timeout: float, console: Console) -> None:
    size = 1024 * 1024
    table = Table(title=f"turnscope rewrite, a 1 MB follow-up between two ordinary lines ({lang})")
    for col in ("", "maximum message", "seconds (fresh process)", "lines"):
        table.add_column(col)
    for label, limit, timeout in (("before", 10 * size, before_timeout),
                                  ("after", None, max(before_timeout, 60.0))):
        elapsed, lines = rewrite_file(size, lang, limit, timeout)
        shown = f"{10 * size:,} (off)" if limit else f"{DEFAULT_MAX_MESSAGE_CHARS:,} (default)"
        table.add_row(label, shown, f"{elapsed:.1f}", lines)
        console.print(f"{label}: {elapsed:.1f} s  {lines}", highlight=False)
    console.print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1,
                    help="runs per size (at least 3 below 256 kB); the fastest counts")
    ap.add_argument("--lang", choices=["en", "ja"], default="en")
    ap.add_argument("--only", choices=["rewrite", "turn"], default=None,
                    help="only the rewrite-file table, or only the per-turn table")
    ap.add_argument("--before-timeout", type=float, default=120.0,
                    help="seconds the unlimited ('before') rewrite run is given")
    args = ap.parse_args()
    console = Console()
    if args.only != "turn":
        rewrite_table(args.lang, args.before_timeout, console)
    if args.only == "rewrite":
        return
    one_turn(message(2_048, args.lang), args.lang)  # warm-up: vocabularies, regex compilation
    times: dict[int, float] = {}
    for label, size in SIZES:
        text = message(size, args.lang)
        # the short messages take a fraction of a second: the fastest of three is less
        # at the mercy of other jobs on the machine, and the ratio's denominator is one of them
        runs = max(1, args.repeats) if size >= 256 * 1024 else max(3, args.repeats)
        times[size] = min(one_turn(text, args.lang) for _ in range(runs))
        console.print(f"{label}: {times[size]:.2f} s", highlight=False)
    base_size, base = SIZES[0][1], times[SIZES[0][1]]
    table = Table(title=f"one user turn against message length ({args.lang})")
    for col in ("message", "characters", "seconds", "µs / character", "× 16 kB", "linear ×"):
        table.add_column(col, justify="right")
    for label, size in SIZES:
        t = times[size]
        table.add_row(label, f"{size:,}", f"{t:.2f}", f"{t / size * 1e6:.1f}",
                      f"{t / base:.1f}", f"{size / base_size:.0f}")
    console.print(table)
    top = SIZES[-1][1]
    console.print(f"time(1 MB) / time(16 kB) = {times[top] / base:.1f}  "
                  f"(linear: {top / base_size:.0f})", highlight=False)


if __name__ == "__main__":
    main()
