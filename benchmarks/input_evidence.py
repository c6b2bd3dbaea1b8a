"""Input contamination and input coverage of each policy's LLM prompt (SPEC section 5).

The same two term checks as for a rewrite, applied to the *user message of the prompt*
each scope policy builds: how clean and how complete the evidence is that a model
would be handed, whatever model then writes the query. Sets: the bundled follow-up
items and TREC CAsT 2019/2020 (converted as in SPEC section 7).

    python benchmarks/input_evidence.py [--policies full,window:2,segment:flag,liveness,default]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from turnscope import Session
from turnscope._items import FollowUpItem
from turnscope.cli._common import load_vocabulary
from turnscope.datasets import load_cast
from turnscope.evaluation import check_terms
from turnscope.evaluation._bundled import bundled_items
from turnscope.rewriters import RewriteRequest, RewriteResult, build_messages
from turnscope.rewriters._prompts import user_content

DEFAULT_POLICIES = "full,window:2,segment:flag,liveness,default"


class _Capture:
    """A rewriter that records the prompt a policy's scope would produce, then lets the
    embedded rewriter answer (so the conversation state evolves as in production)."""

    name = "capture"

    def __init__(self) -> None:
        self.prompt = ""
        self.session: Session | None = None

    def run(self, request: RewriteRequest) -> RewriteResult:
        self.prompt = user_content(build_messages(request, counterweight=True))
        if self.session is None:
            raise RuntimeError("capture rewriter used outside a session")
        return self.session.embedded.run(request)


def _session(policy: str, vocab: object) -> tuple[Session, _Capture]:
    cap = _Capture()
    s = Session(policy=policy, rewriter=cap, vocabulary=vocab)  # type: ignore[arg-type]
    cap.session = s
    return s, cap


def bundled(policy: str, items: list[FollowUpItem], tick: Callable[[], None]) -> list[tuple[bool, bool]]:
    vocab = load_vocabulary("bundled")
    out = []
    for it in items:
        s, cap = _session(policy, vocab)
        for t in it.prefix:
            s.add(t.role, t.content, t.screen.model_dump() if t.screen else None)
        s.user(it.follow_up, screen=it.screen.model_dump() if it.screen else None)
        c = check_terms(cap.prompt, it.required_in_rewrite, it.forbidden_in_rewrite)
        out.append((c.covered, c.contaminated))
        tick()
    return out


def cast(policy: str, items: list[dict[str, object]], tick: Callable[[], None]) -> list[tuple[bool, bool]]:
    out = []
    s, cap = _session(policy, None)
    for it in items:
        if not it["prefix"]:
            s, cap = _session(policy, None)
        s.user(str(it["follow_up"]))
        if it["prefix"]:
            c = check_terms(cap.prompt, it["required_in_rewrite"],  # type: ignore[arg-type]
                            it["forbidden_in_rewrite"])  # type: ignore[arg-type]
            out.append((c.covered, c.contaminated))
        tick()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", default=DEFAULT_POLICIES)
    args = ap.parse_args()
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    sets: dict[str, object] = {"bundled": bundled_items(), "cast2019": load_cast(2019, None),
                               "cast2020": load_cast(2020, None)}
    results: dict[tuple[str, str], list[tuple[bool, bool]]] = defaultdict(list)
    total = sum(len(v) for v in sets.values()) * len(policies)  # type: ignore[arg-type]
    with Progress() as progress:
        task = progress.add_task("building prompts", total=total)

        def tick() -> None:
            progress.advance(task)

        for pol in policies:
            results[(pol, "bundled")] = bundled(pol, sets["bundled"], tick)  # type: ignore[arg-type]
            for name in ("cast2019", "cast2020"):
                results[(pol, name)] = cast(pol, sets[name], tick)  # type: ignore[arg-type]
    table = Table(title="input coverage / input contamination of each policy's prompt")
    table.add_column("policy")
    for name in sets:
        table.add_column(name, justify="right")
    for pol in policies:
        cells = []
        for name in sets:
            v = results[(pol, name)]
            cov = sum(a for a, _ in v) / len(v)
            con = sum(b for _, b in v) / len(v)
            cells.append(f"{cov:.2f} / {con:.2f}  (n={len(v)})")
        table.add_row(pol, *cells)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
