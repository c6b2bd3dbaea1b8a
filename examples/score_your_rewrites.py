"""Score your own rewriter with ``turnscope eval --rewrites``, before changing anything.

This stands in for the "condense the question" step you already run: it writes one rewrite
per item of the bundled follow-up set (here the previous user turn pasted in front of the
message, a common condense shortcut), then scores that file beside turnscope's default and
the baselines, per reference kind, with the project's gate:

    python examples/score_your_rewrites.py            # writes mine.jsonl, then runs the eval

It exits 1 when your rewrites miss a bound of the gate (the pasted previous turn misses 21,
mostly by carrying a left subject), as `turnscope eval --gate` does; mine.html holds the
report.

Replace ``condense`` with a call to your own prompt and run it again. The file format is one
JSON line per item: ``{"id": "<item id>", "query": "<your rewrite>"}``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from turnscope.evaluation import bundled_items


def condense(history: list[tuple[str, str]], message: str) -> str:
    """Your rewriter goes here. This one pastes the previous user turn in front."""
    users = [text for role, text in history if role == "user"]
    return " ".join(users[-1:] + [message])


def main(out: Path = Path("mine.jsonl")) -> int:
    with out.open("w", encoding="utf-8") as fh:
        for item in bundled_items():
            history = [(t.role, t.content) for t in item.prefix]
            fh.write(json.dumps({"id": item.id, "query": condense(history, item.follow_up)},
                                ensure_ascii=False) + "\n")
    print(f"wrote {out}; scoring it (about 3 minutes on 2 cores)", file=sys.stderr)
    # --detail prints every figure per stratum: where your rewrites carry a left subject
    return subprocess.call([sys.executable, "-m", "turnscope", "eval", "--rewrites", str(out),
                            "--detail", "--gate", "default", "--report", "mine.html"])


if __name__ == "__main__":
    sys.exit(main())
