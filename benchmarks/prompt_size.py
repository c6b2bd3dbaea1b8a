"""Prompt size per turn, by scope policy, as a conversation grows.

Run from the repository root::

    python benchmarks/prompt_size.py [--centroid] [--png PATH]
    PYTHONPATH=. python benchmarks/prompt_size.py      # from a plain checkout

For each conversation length L in 10, 50 and 200 turns, a synthetic
conversation of L turns is followed by one more user message, and the prompt
an LLM rewriter would receive for it (``build_messages``, counterweight on) is
measured in characters and estimated tokens (``prompt_size``: chars/4 for Latin
text, one token per CJK character). The conversations cycle through topics
(a region, a service, a feature...), ten turns per topic, and the assistant
repeats entity names the way real answers do, so stale entities are salient.
The last topic and the final message are the same at every length, so the
three figures differ only by how much earlier conversation a policy lets in.

Expected: ``full`` grows with the conversation; ``liveness`` stays flat
(200-turn / 10-turn ratio at most 1.3); ``window`` is flat by construction.

The scopes are the Session's real ones: a recording rewriter captures every
request (and answers with the embedded rewrite, so slots and segments evolve
as they would). ``segment`` uses the ``flag`` detector unless ``--centroid``
is given (the centroid detector embeds every user turn, which is slow on CPU).
A PNG of prompt tokens per user turn over the 200-turn conversation is written
when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from turnscope import Session, bundled_vocabulary
from turnscope.rewriters import RewriteRequest, RewriteResult, build_messages, prompt_size

LENGTHS = (10, 50, 200)
#: liveness must stay within this growth from 10 to 200 turns
FLAT_GOAL = 1.3
TURNS_PER_TOPIC = 10

#: (entity, first attribute, second attribute): names from the bundled cloud vocabulary,
#: so slots are typed and a new entity of a type supersedes the old one
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("Dublin", "uptime SLA", "RPO"),
    ("billing export API", "pagination", "rate limit"),
    ("managed Postgres", "point-in-time recovery", "read replicas"),
    ("Frankfurt", "customer-managed keys", "RTO"),
    ("object storage", "lifecycle rules", "retrieval fee"),
    ("audit logs", "retention", "log sink"),
)
FINAL_MESSAGE = "What are the limits for it?"


def topic_block(name: str, attr1: str, attr2: str) -> list[tuple[str, str]]:
    """Ten turns about one entity; the answers repeat its name, as answers do."""
    return [
        ("user", f"Tell me about the {attr1} of {name}."),
        ("assistant", f"{name} offers {attr1}. For {name}, {attr1} is documented in the "
                      f"{name} guide, and {name} customers can check it in the console."),
        ("user", f"And the {attr2}?"),
        ("assistant", f"The {attr2} of {name} is listed next to the {attr1}; {name} "
                      f"publishes both for every plan."),
        ("user", "Is it included in the free tier?"),
        ("assistant", f"Yes, {name} includes the {attr1} and the {attr2} in the free tier."),
        ("user", "How do I turn that on?"),
        ("assistant", f"Open {name} in the console, choose Settings, then enable {attr2}. "
                      f"{name} applies the change within minutes."),
        ("user", "Can you explain that in more detail?"),
        ("assistant", f"In more detail: {name} stores the {attr2} setting per project; the "
                      f"{name} API exposes it too, and {name} logs every change."),
    ]


def conversation(length: int) -> list[tuple[str, str]]:
    """``length`` turns of cycling topics; the last block is always TOPICS[0]."""
    blocks = length // TURNS_PER_TOPIC
    turns: list[tuple[str, str]] = []
    for b in range(blocks):
        turns += topic_block(*TOPICS[(b - blocks + 1) % len(TOPICS)])
    return turns[:length]


@dataclass
class Recorder:
    """A rewriter that records the prompt size of every request, then answers with
    the session's embedded rewrite (so the conversation state evolves normally)."""

    session: Session | None = None
    sizes: list[tuple[int, int, int]] = field(default_factory=list)  # (turn, chars, tokens)
    name: str = "recorder"

    def run(self, request: RewriteRequest) -> RewriteResult:
        chars, tokens = prompt_size(build_messages(request, counterweight=True))
        self.sizes.append((request.message.index, chars, tokens))
        if self.session is None:
            raise RuntimeError("Recorder.session must be set before use")
        return self.session.embedded.run(request)


def measure(policy: str, turns: Sequence[tuple[str, str]]) -> list[tuple[int, int, int]]:
    rec = Recorder()
    session = Session(policy=policy, rewriter=rec, vocabulary=bundled_vocabulary("cloud"))
    rec.session = session
    for role, text in turns:
        session.add(role, text)
    return rec.sizes


def chart(series: dict[str, list[tuple[int, int, int]]], path: Path, console: Console) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        console.print("[dim]matplotlib is not installed: no chart written[/dim]")
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, sizes in series.items():
        ax.plot([t for t, _, _ in sizes], [k for _, _, k in sizes], label=label, linewidth=1.4)
    ax.set_xlabel("turn")
    ax.set_ylabel("prompt tokens (estimated)")
    ax.set_title("LLM rewriter prompt size per user turn, by scope policy")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    console.print(f"chart written to {path}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--centroid", action="store_true",
                        help="segment with the centroid detector (slow) instead of flag")
    parser.add_argument("--png", type=Path, default=Path("benchmarks/out/prompt_size.png"))
    args = parser.parse_args(argv)
    segment = "segment:centroid" if args.centroid else "segment:flag"
    policies = ("full", "window", segment, "liveness", "relevant", "default")
    console = Console()
    console.width = max(console.width, 110)  # one row per policy, even when piped

    table = Table(title="Prompt of the next user turn after L turns: estimated tokens "
                        "(characters)")
    table.add_column("policy", no_wrap=True)
    for n in LENGTHS:
        table.add_column(f"L={n}", justify="right", no_wrap=True)
    table.add_column(f"ratio {LENGTHS[-1]}/{LENGTHS[0]}", justify="right", no_wrap=True)
    table.add_column(f"mean tokens/turn, L={LENGTHS[-1]}", justify="right", no_wrap=True)

    series: dict[str, list[tuple[int, int, int]]] = {}
    ratios: dict[str, float] = {}
    for policy in policies:
        at: dict[int, tuple[int, int]] = {}
        for n in LENGTHS:
            sizes = measure(policy, conversation(n) + [("user", FINAL_MESSAGE)])
            _, chars, tokens = sizes[-1]
            at[n] = (chars, tokens)
            if n == LENGTHS[-1]:
                series[policy] = sizes
        ratio = at[LENGTHS[-1]][1] / at[LENGTHS[0]][1]
        ratios[policy] = ratio
        mean_tokens = sum(k for _, _, k in series[policy]) / len(series[policy])
        table.add_row(policy, *(f"{k:,} ({c:,})" for c, k in at.values()), f"{ratio:.2f}",
                      f"{mean_tokens:,.0f}")
    console.print(table)

    flat = ratios["liveness"] <= FLAT_GOAL
    grows = ratios["full"] > ratios["liveness"]
    console.print(f"liveness ratio {ratios['liveness']:.2f} (goal <= {FLAT_GOAL}): "
                  + ("[green]flat[/green]" if flat else "[red]grows[/red]"))
    console.print(f"full ratio {ratios['full']:.2f}: "
                  + ("[green]grows with the conversation[/green]" if grows else "[red]flat?[/red]"))
    chart(series, args.png, console)
    return 0 if flat and grows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
