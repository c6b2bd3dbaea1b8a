"""The written corpus (``corpus/writers/*.jsonl``): conversations expanded into follow-up items,
and the split fixed before any code read a line (``corpus/README.md``).

>>> items = load_corpus("dev")                 # doctest: +SKIP
>>> items[0]["reference_type"], items[0]["pattern"]   # doctest: +SKIP
('immediate', 'person_pronoun')
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from turnscope._exceptions import ConfigError

__all__ = ["CHECK_WRITERS", "DEFAULT_CORPUS_DIR", "SPLITS", "load_corpus", "split_of"]

#: the repository's corpus folder (the corpus is not shipped in the package)
DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[2] / "corpus" / "writers"
#: writers held out whole: their briefs and domains are never trained or tuned on
CHECK_WRITERS = frozenset({"wc", "wg"})
SPLITS = ("train", "dev", "check")


def split_of(conversation: str, writer: str) -> str:
    """The part a conversation belongs to (corpus/README.md states the rule)."""
    if writer in CHECK_WRITERS:
        return "check"
    bucket = int(hashlib.sha1(conversation.encode("utf-8")).hexdigest(), 16) % 10
    if bucket == 0:
        return "check"
    return "dev" if bucket >= 8 else "train"


def load_corpus(split: str | None = None, folder: Path | None = None, *,
                lang: str | None = None) -> list[dict[str, Any]]:
    """Follow-up items (the fields of docs/output.md's input items, plus ``conversation``, ``writer``, ``domain``,
    ``pattern``, ``antecedent``, ``human_rewrite``, ``split``) of one part, or of all."""
    if split is not None and split not in SPLITS:
        raise ConfigError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    folder = folder or DEFAULT_CORPUS_DIR
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ConfigError(f"no corpus files in {folder}")
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                conv = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path.name}:{n}: not JSON ({exc.msg})") from None
            cid, writer = str(conv["conversation"]), str(conv.get("writer") or path.stem)
            if cid in seen:
                raise ConfigError(f"{path.name}:{n}: conversation {cid!r} appears twice")
            seen.add(cid)
            part = split_of(cid, writer)
            if split is not None and part != split:
                continue
            if lang is not None and conv.get("lang") != lang:
                continue
            turns = conv["turns"]
            for k, fu in enumerate(conv["follow_ups"]):
                idx = int(fu["turn"])
                if not (0 <= idx < len(turns)) or turns[idx]["role"] != "user":
                    raise ConfigError(f"{path.name}:{n}: follow-up {k} names turn {idx}, not a user turn")
                prefix = [{"role": t["role"], "content": t["content"], "screen": t.get("screen")}
                          for t in turns[:idx]]
                items.append({
                    "id": f"{cid}#{idx}",
                    "lang": conv.get("lang", "en"),
                    "prefix": prefix,
                    "follow_up": turns[idx]["content"],
                    "screen": turns[idx].get("screen"),
                    "gold": [],
                    "reference_type": fu["reference_type"],
                    "forbidden_in_rewrite": fu.get("forbidden_in_rewrite") or [],
                    "required_in_rewrite": fu.get("required_in_rewrite") or [],
                    "conversation": cid,
                    "writer": writer,
                    "domain": conv.get("domain"),
                    "pattern": fu.get("pattern"),
                    "antecedent": fu.get("antecedent"),
                    "human_rewrite": fu.get("human_rewrite"),
                    "split": part,
                })
    return items
