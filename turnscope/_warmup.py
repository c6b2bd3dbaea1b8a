"""Load, once per process and up front, everything a turn needs.

A fresh :class:`turnscope.Session` loads its models on first use: the e5 encoder, LightGBM
and the resolver's booster, the neural tagger's ONNX session, the topic-shift detector,
and the first inference of each pays for thread pools and kernels besides. Measured on two
shared cores the first user turn of a process took about 2 s and the second 0.8 s against
under 0.1 s for a warm one. A process that serves turns (``turnscope serve`` workers,
``turnscope chat``) calls :func:`warm_up` before it takes the first one.

It works through the public loaders and a throwaway conversation, not by reaching into
the turn pipeline: whatever a turn loads lazily, a turn of the throwaway session loads
too. The models and caches it fills are the process-wide ones every session shares, and
they hold values, not conversation state, so later rewrites are the same with or without
it (``tests/test_warmup.py``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from turnscope.entities import Vocabulary

__all__ = ["WarmUp", "warm_up", "WARM_UP_CONVERSATIONS"]

logger = logging.getLogger("turnscope.warmup")
T = TypeVar("T")

#: the throwaway conversations, one per language the shipped models read: a question, an
#: answer listing two things, an ordinal follow-up (resolver and tagger), a pronoun one,
#: and a change of subject (the shift detector)
WARM_UP_CONVERSATIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("user", "Which regions host the managed database service?"),
           ("assistant", "It runs in Oslo and in Lisbon, both with daily backups."),
           ("user", "How long are backups kept in the second one?"),
           ("user", "Is it cheaper there?"),
           ("user", "Separately, how do I reset my password?")),
    "ja": (("user", "オンライン講座にはどんなコースがありますか？"),
           ("assistant", "初級コースと上級コースの2つがあります。"),
           ("user", "2つ目の受講料はいくらですか？"),
           ("user", "それは分割払いできますか？")),
}

_LOCK = threading.Lock()
_DONE: set[tuple[str, int, tuple[str, ...]]] = set()


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` did: seconds per step (``encoder``, ``resolver``, ``tagger``,
    ``shift``, ``decider``, ``turns``), or ``skipped`` when this process had already warmed the same."""

    seconds: tuple[tuple[str, float], ...]
    skipped: bool = False

    @property
    def total(self) -> float:
        return sum(s for _, s in self.seconds)


def _step(name: str, out: list[tuple[str, float]], fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    value = fn()
    out.append((name, time.perf_counter() - start))
    return value


def warm_up(*, policy: str = "default", vocabulary: Vocabulary | None = None,
            languages: Sequence[str] = ("en", "ja")) -> WarmUp:
    """Load every model a turn of ``Session(policy=policy, vocabulary=vocabulary)`` uses
    and run a throwaway conversation per language through such a session, so that the first
    real turn of the process costs what a warm one does. Safe to call from several threads
    (one does the work); a second call with the same arguments returns at once.

    >>> warm_up(languages=()).skipped
    False
    """
    from turnscope._encoder import default_encoder
    from turnscope._session import Session
    from turnscope.language import shared_decider
    from turnscope.resolver import default_resolver, shipped_model

    unknown = [lang for lang in languages if lang not in WARM_UP_CONVERSATIONS]
    if unknown:
        from turnscope._exceptions import ConfigError

        raise ConfigError(f"no warm-up conversation for {', '.join(map(repr, unknown))}; "
                          f"valid: {', '.join(WARM_UP_CONVERSATIONS)}")
    key = (policy, id(vocabulary), tuple(languages))
    with _LOCK:
        if key in _DONE:
            return WarmUp((), skipped=True)
        steps: list[tuple[str, float]] = []
        # the first inference of e5 pays for its thread pool: embed once each way
        _step("encoder", steps, lambda: (default_encoder().embed_queries(["warm up"]),
                                         default_encoder().embed_passages(["warm up"])))
        resolver = _step("resolver", steps, default_resolver)  # imports LightGBM too
        # the tagger is the resolver's own (None when its model reads no tagger)
        _step("tagger", steps, lambda: resolver.tagger)
        _step("shift", steps, shipped_model)
        # the reference decider: spaCy's pipeline and the small LM's weights (about 5 s)
        _step("decider", steps, shared_decider)

        def turns() -> None:
            for lang in languages:
                session = Session(policy=policy, vocabulary=vocabulary)
                for role, text in WARM_UP_CONVERSATIONS[lang]:
                    if role == "user":
                        session.user(text)
                    else:
                        session.assistant(text)

        _step("turns", steps, turns)
        _DONE.add(key)
    report = WarmUp(tuple(steps))
    logger.info("turnscope warmed up in %.2f s (%s)", report.total,
                ", ".join(f"{n} {s:.2f} s" for n, s in steps))
    return report
