"""What the reference decider costs a turn (issue 37), measured against the rules alone in the
same run.

    python benchmarks/decider_cost.py [--items 120]

Replays English follow-ups of the written corpus's dev part twice: with the decider and with
``decider=None``. Prints, for the turns the language model scored and for the others, the
median and p90 time of a turn, each as a ratio to the same turn without the decider; the
first turn of a fresh process (the parser and the model load) against a warm one; and the
process's resident memory once the model is loaded.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

from turnscope import Session
from turnscope._encoder import default_encoder
from turnscope.language import shared_decider
from turnscope.training.corpus import load_corpus

FIRST_TURN = """
import time, json
t0 = time.perf_counter()
from turnscope import Session
s = Session()
s.user("Who directed the film Parasite?")
s.assistant("Parasite (2019) was directed by Bong Joon-ho. It won the Palme d'Or at Cannes.")
t1 = time.perf_counter(); s.user("How old is he?"); t2 = time.perf_counter()
s.assistant("He was born in 1969."); t3 = time.perf_counter(); s.user("Where was she born?"); t4 = time.perf_counter()
print(json.dumps({"import_and_setup": t1 - t0, "first": t2 - t1, "warm": t4 - t3}))
"""


def forget_model_caches() -> None:
    """Empty e5's kept query vectors and the decider's kept LM scorings: a live turn is new
    to the process, and a benchmark that runs a turn twice (here with and without the
    decider; resolver_cost.py in rounds) must not time the second run from the first's."""
    enc = default_encoder()
    if hasattr(enc, "clear_cache"):
        enc.clear_cache()
    decider = shared_decider()
    if decider is not None:
        decider.lm.clear_cache()


def _turn(session_factory, item):  # type: ignore[no-untyped-def]
    forget_model_caches()
    s = session_factory()
    for t in item["prefix"]:
        s.add(t["role"], t["content"])
    start = time.perf_counter()
    r = s.user(item["follow_up"])
    return time.perf_counter() - start, r


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=120)
    args = ap.parse_args()
    items = load_corpus("dev", lang="en")[: args.items]
    with_d = Session  # the default: decider on
    without = lambda: Session(decider=None)  # noqa: E731
    _turn(with_d, items[0])  # load the parser and the model outside the timings
    scored, other = [], []
    for item in items:
        t_rules, _ = _turn(without, item)
        t_dec, r = _turn(with_d, item)
        d = r.trace.get("decider")
        (scored if isinstance(d, dict) and d.get("candidates") else other).append((t_dec, t_rules))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(items)} turns; the language model scored {len(scored)} ({len(scored) / len(items):.0%})")
    print(f"{'turns':28s} {'median':>9s} {'p90':>9s} {'rules alone':>12s} {'ratio':>6s}")
    for name, rows in (("LM-scored", scored), ("not scored", other)):
        if not rows:
            continue
        dec = [a for a, _ in rows]
        rul = [b for _, b in rows]
        print(f"{name:28s} {statistics.median(dec) * 1000:7.0f}ms {pct(dec, 0.9) * 1000:7.0f}ms "
              f"{statistics.median(rul) * 1000:10.0f}ms {statistics.median(dec) / statistics.median(rul):6.2f}")
    out = subprocess.run([sys.executable, "-c", FIRST_TURN], capture_output=True, text=True, check=True)
    first = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"fresh process: import + set-up {first['import_and_setup']:.2f} s, first LM-scored turn "
          f"{first['first']:.2f} s, a warm one {first['warm']:.2f} s (ratio {first['first'] / first['warm']:.1f})")
    print(f"peak resident memory of this process: {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
