"""Time per user turn of the embedded default at conversation lengths 10, 100 and 1,000.

The cost of a turn must not grow with the conversation: slots age only while
non-terminal, enumerations and the exchange index are appended, nothing re-reads
the transcript. Reported as the ratio against the 10-turn conversation measured
in the same run (absolute times on shared machines are noise).

    python benchmarks/turn_latency.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from rich.console import Console
from rich.table import Table

from turnscope import Session, bundled_vocabulary

REGIONS = ["Frankfurt", "Dublin", "Paris", "Stockholm", "Tokyo", "Singapore", "Virginia", "Oregon"]
SERVICES = ["billing export API", "reporting export API", "usage export API", "audit logs"]
METRICS = ["RPO", "RTO", "uptime SLA"]


def script(n_turns: int) -> list[tuple[str, str]]:
    """A conversation that cycles through subjects and reference kinds, ``n_turns`` long."""
    out: list[tuple[str, str]] = []
    i = 0
    while len(out) < n_turns:
        r1, r2 = REGIONS[i % len(REGIONS)], REGIONS[(i + 3) % len(REGIONS)]
        svc, met = SERVICES[i % len(SERVICES)], METRICS[i % len(METRICS)]
        kind = i % 6
        if kind == 0:
            out += [("user", f"Which regions support customer-managed keys, {r1} or {r2}?"),
                    ("assistant", f"{r1} and {r2} both support CMK for data at rest.")]
        elif kind == 1:
            out += [("user", f"What's the {met} on the second one?"),
                    ("assistant", f"{r2} has a documented {met} in its DR page.")]
        elif kind == 2:
            out += [("user", "what about the RTO?"),
                    ("assistant", f"The RTO for {r2} is one hour.")]
        elif kind == 3:
            out += [("user", f"different question — is the {svc} paginated?"),
                    ("assistant", f"Yes, the {svc} uses cursor pagination.")]
        elif kind == 4:
            out += [("user", "is it free?"), ("assistant", f"The {svc} is free up to a quota.")]
        else:
            out += [("user", f"go back to what you said about {r1}"),
                    ("assistant", f"{r1} supports CMK.")]
        i += 1
    return out[:n_turns]


def time_turns(length: int, probes: int = 12) -> list[float]:
    """Per-turn seconds of the ``probes`` user turns that follow a ``length``-turn history."""
    s = Session(vocabulary=bundled_vocabulary("cloud"))
    convo = script(length + 2 * probes)
    for role, text in convo[:length]:
        s.add(role, text)
    times = []
    for role, text in convo[length:]:
        t0 = time.perf_counter()
        s.add(role, text)
        dt = time.perf_counter() - t0
        if role == "user":
            times.append(dt)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    console = Console()
    time_turns(10)  # warm up regex caches and the vocabulary
    results: dict[int, list[float]] = {}
    for length in (10, 100, 1000):
        samples: list[float] = []
        for _ in range(args.repeats):
            samples += time_turns(length)
        results[length] = samples
    base = statistics.median(results[10])
    table = Table(title="embedded default: time per user turn")
    table.add_column("conversation length (turns)", justify="right")
    table.add_column("median per turn (ms)", justify="right")
    table.add_column("ratio vs 10 turns", justify="right")
    for length, samples in results.items():
        med = statistics.median(samples)
        table.add_row(str(length), f"{med * 1000:.2f}", f"{med / base:.2f}")
    console.print(table)
    ratio = statistics.median(results[1000]) / base
    console.print(f"ratio 1,000-turn / 10-turn = {ratio:.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
