"""Inference: score every candidate phrase, carry the few the evidence supports.

Two LightGBM models trained by ``turnscope train`` on public conversations with
human rewrites (docs/splits.md names them):

* the **ranker** scores every candidate for "does this message need this
  phrase?" and orders them; its scores rank well within a message but are not
  comparable across messages;
* the **gate** reads the best three (distinct) candidates with their ranker
  features, their rank and how their scores compare, and gives the probability
  that each is needed: the leading ones that clear the threshold are carried.

The thresholds and the cap on carried phrases are stored in the model file beside
the trees, chosen on development data by replaying whole conversations with fold
models (see ``benchmarks/resolver_sweep.py`` for a sweep on a check set). There are
two thresholds, by what the query can do with a phrase: a message with a pronoun to
stand for ("Is it treatable?") has a slot the phrase fills; any other message can
only get the phrase appended, and is more often complete as it is ("Tell me about
lung cancer."), so it asks for more evidence. Carrying nothing is the default: a
phrase is carried only when the gate says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError
from turnscope.resolver._candidates import Candidate, HistoryTurn, candidates, key_of, may_name
from turnscope.resolver._embedcache import CachedEmbedder
from turnscope.resolver._features import FEATURES, featurize
from turnscope.resolver._neural import NeuralTagger, default_tagger
from turnscope.resolver._realize import has_slot, realize

__all__ = ["DEFAULT_HISTORY_TURNS", "GATE_EXTRA", "GATE_SEPARATOR", "Resolution", "Resolver", "ScoredCandidate",
           "carried_count", "default_resolver", "gate_rows", "history_of", "may_name", "ranked_for",
           "scope_history", "session_shift", "shift_threshold", "shortlist", "tagger_view"]

#: turns of history the ranker reads besides the conversation's opening turn (the
#: liveness horizon: an entity silent for longer is evicted, SPEC section 2)
DEFAULT_HISTORY_TURNS = 12
_MODEL_FILE = "resolver.txt"
#: the line between the ranker's trees and the gate's in the model file
GATE_SEPARATOR = "\n#### gate ####\n"


def _booster(text: str) -> Any:
    """One LightGBM model from its text (lightgbm is imported here: it costs ~0.8 s)."""
    import lightgbm as lgb

    return lgb.Booster(model_str=text)


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    text: str
    score: float
    turn: int
    role: str


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the ranker decided for one message (the trace shows all of it)."""

    query: str
    carried: tuple[str, ...]
    #: the shortlisted candidates, best first, each with the gate's probability that the
    #: message needs it (carried when it and the ones before it clear the threshold)
    scored: tuple[ScoredCandidate, ...]
    threshold: float
    #: why phrases the gate passed were not carried (the grammar did not allow them)
    declined: str | None = None

    def trace(self, top: int = 5) -> dict[str, object]:
        out: dict[str, object] = {
            "threshold": round(self.threshold, 4),
            "candidates": [{"text": c.text, "score": round(c.score, 4), "turn": c.turn,
                            "role": c.role} for c in self.scored[:top]],
            "carried": list(self.carried)}
        if self.declined:
            out["declined"] = self.declined
        return out


def tagger_view(history: Sequence[HistoryTurn], rewrites: bool) -> list[HistoryTurn]:
    """The history as the neural tagger reads it: with ``rewrites``, each earlier user turn
    as the query it was rewritten to (a session's own; the human one in training), so a
    subject the last rewrite carried is in the newest user turn of the tagger's window."""
    if not rewrites:
        return list(history)
    return [HistoryTurn(t.index, t.role, t.rewrite or t.text) if t.rewrite else t for t in history]


def scope_history(history: Sequence[HistoryTurn], turns: int = DEFAULT_HISTORY_TURNS) -> list[HistoryTurn]:
    """The turns the ranker reads: the opening turn plus the last ``turns``."""
    if len(history) <= turns + 1:
        return list(history)
    return [history[0], *history[-turns:]]


#: how many of the best-scored (distinct) candidates the gate considers
SHORTLIST = 3
#: what the gate reads besides the candidate's own features: its rank and how its score
#: compares with the others of the same message (scores are not calibrated across messages)
GATE_EXTRA: tuple[str, ...] = ("rank", "score", "top_score", "score_ratio", "gap_next", "n_above_01")


def shortlist(keys: Sequence[frozenset[str]], scores: np.ndarray, size: int = SHORTLIST) -> list[int]:
    """The best-scored candidates, each adding a content word the ones before it lack."""
    chosen: list[int] = []
    covered: set[str] = set()
    for i in np.argsort(-scores, kind="stable"):
        if len(chosen) >= size:
            break
        if keys[i] <= covered:
            continue
        chosen.append(int(i))
        covered |= keys[i]
    return chosen


def gate_rows(x: np.ndarray, scores: np.ndarray, short: Sequence[int]) -> np.ndarray:
    """One row per shortlisted candidate: its ranker features plus :data:`GATE_EXTRA`."""
    if not short:
        return np.zeros((0, x.shape[1] + len(GATE_EXTRA)), dtype=np.float32)
    top = float(scores[short[0]])
    n_above = float((scores >= 0.1).sum())
    rows = []
    for r, i in enumerate(short):
        nxt = float(scores[short[r + 1]]) if r + 1 < len(short) else 0.0
        extra = [r + 1, float(scores[i]), top, float(scores[i]) / top if top > 0 else 0.0,
                 float(scores[i]) - nxt, n_above]
        rows.append(np.concatenate([x[i], np.asarray(extra, dtype=np.float32)]))
    return np.stack(rows).astype(np.float32)


def carried_count(gate: np.ndarray, threshold: float, max_carried: int) -> int:
    """How many shortlisted candidates are carried: the leading ones the gate passes."""
    n = 0
    for p in gate[:max_carried]:
        if p < threshold:
            break
        n += 1
    return n


class Resolver:
    """The learned resolver.

    >>> r = default_resolver()
    >>> h = [HistoryTurn(1, "user", "What are the symptoms of lobular carcinoma?"),
    ...      HistoryTurn(2, "assistant", "Lobular carcinoma often causes no symptoms.")]
    >>> r.resolve("How is it treated?", h).query  # doctest: +SKIP
    'How is lobular carcinoma treated?'
    """

    def __init__(self, booster: Any, gate: Any, meta: dict[str, Any],
                 embedder: CachedEmbedder | None = None, tagger: NeuralTagger | None = None) -> None:
        names = tuple(meta.get("features", ()))
        unknown = [f for f in names if f not in FEATURES]
        if not names or unknown or tuple(meta.get("gate_extra", ())) != GATE_EXTRA:
            raise ConfigError("resolver model was trained on other features "
                              f"({', '.join(unknown) or 'gate columns differ'}); run `turnscope train`")
        #: the columns of :data:`FEATURES` the model reads, in its order (a model trained
        #: without the neural tagger's columns never runs the tagger)
        self._columns = np.asarray([FEATURES.index(f) for f in names], dtype=np.intp)
        self.uses_neural = any(f.startswith("nn_") for f in names)
        #: whether the tagger reads earlier user turns as the queries they were rewritten to
        self.nn_rewrites = bool(meta.get("nn_reads_rewrites", False))
        self._tagger = tagger
        self._booster = booster
        self._gate = gate
        self.meta = meta
        self.threshold = float(meta["threshold"])
        #: the threshold for a message with a pronoun slot (models without one: the same)
        self.slot_threshold = float(meta.get("slot_threshold", meta["threshold"]))
        self.max_carried = int(meta["max_carried"])
        self.embedder = embedder or CachedEmbedder()

    def with_threshold(self, threshold: float, slot: float | None = None) -> Resolver:
        """The same models with other gate thresholds (for sweeps and ``--resolver-threshold``):
        ``threshold`` for every message, or for messages without a pronoun slot when ``slot``
        is given. Shares the embedder."""
        for name, value in (("threshold", threshold), ("slot threshold", slot)):
            if value is not None and not 0.0 <= value <= 1.01:
                raise ConfigError(f"{name} must be in [0, 1], got {value!r}")
        meta = {**self.meta, "threshold": threshold, "slot_threshold": threshold if slot is None else slot}
        return Resolver(self._booster, self._gate, meta, self.embedder, self._tagger)

    @property
    def tagger(self) -> NeuralTagger | None:
        """The neural tagger the model reads (loaded on first use), or None."""
        if not self.uses_neural:
            return None
        if self._tagger is None:
            self._tagger = default_tagger()
        return self._tagger

    def prefetch(self, message: str, history: Sequence[HistoryTurn]) -> None:
        """Start the tagger's work for :meth:`resolve` of the same arguments on its own thread,
        so that it overlaps what the caller does first (a session embeds the message for the
        topic-shift detector). The resolution is the same with or without it."""
        tagger = self.tagger
        if tagger is not None:
            tagger.prefetch(message, tagger_view(history, self.nn_rewrites))

    def threshold_for(self, message: str) -> float:
        """The gate threshold that applies to ``message``."""
        return self.slot_threshold if has_slot(message) else self.threshold

    @classmethod
    def load(cls, path: Path | None = None, embedder: CachedEmbedder | None = None,
             tagger: NeuralTagger | None = None) -> Resolver:
        """The model at ``path``, else the one shipped in the package; ``tagger`` replaces the
        shared default tagger (e.g. one on another number of threads)."""
        try:
            if path is None:
                text = (resources.files("turnscope") / "data" / "models" / _MODEL_FILE).read_text("utf-8")
            else:
                text = Path(path).read_text("utf-8")
        except FileNotFoundError:
            raise ConfigError(f"no resolver model at {path or _MODEL_FILE}; run `turnscope train`") from None
        header, _, trees = text.partition("\n")
        try:
            meta = json.loads(header)
        except json.JSONDecodeError:
            raise ConfigError(f"resolver model {path or _MODEL_FILE}: first line is not a JSON header") from None
        ranker, sep, gate = trees.partition(GATE_SEPARATOR)
        if not sep:
            raise ConfigError(f"resolver model {path or _MODEL_FILE}: no gate model; run `turnscope train`")
        return cls(_booster(ranker), _booster(gate), meta, embedder, tagger)

    def score(self, message: str, history: Sequence[HistoryTurn], *,
              shift: float | None = None) -> tuple[list[Candidate], np.ndarray]:
        """The candidates of ``history`` the message does not already contain, with the
        ranker's score of each. ``shift`` is the topic-shift probability of the message
        (computed from ``history`` when not given)."""
        cands, scores, _ = self._score(message, history, shift)
        return cands, scores

    def shift(self, message: str, history: Sequence[HistoryTurn]) -> float:
        """The learned topic-shift detector's probability for ``message`` after ``history``."""
        from turnscope.resolver._shift import history_shift_probability

        if not any(t.role == "user" for t in history):
            return 0.0
        return history_shift_probability(list(history), message, encoder=self.embedder)

    def _score(self, message: str, history: Sequence[HistoryTurn],
               shift: float | None) -> tuple[list[Candidate], np.ndarray, np.ndarray]:
        hist = scope_history(history)
        msg_key = key_of(message)
        cands = [c for c in candidates(hist) if not c.key <= msg_key]
        if not cands:
            return [], np.zeros(0), np.zeros((0, len(self._columns)), dtype=np.float32)
        p = self.shift(message, history) if shift is None else shift
        tagger = self.tagger
        ev = tagger.evidence(message, tagger_view(history, self.nn_rewrites)) if tagger is not None else None
        x = featurize(message, hist, cands, self.embedder.query, p, ev)[:, self._columns]
        # one thread: a message's hundred rows cost less than starting a thread team, and a
        # team contends with the e5 engine's own OpenMP threads, which spin on the other
        # core for a while after each embedding (two OpenMP runtimes: ~9 ms an exchange
        # in benchmarks/resolver_cost.py)
        return cands, np.asarray(self._booster.predict(x, num_threads=1), dtype=np.float64), x

    def resolve(self, message: str, history: Sequence[HistoryTurn], *,
                threshold: float | None = None, shift: float | None = None) -> Resolution:
        """Score the candidates of ``history`` (oldest first) for ``message`` and rewrite it."""
        t = self.threshold_for(message) if threshold is None else threshold
        cands, scores, x = self._score(message, history, shift)
        short = shortlist([c.key for c in cands], scores)
        gate = np.asarray(self._gate.predict(gate_rows(x, scores, short), num_threads=1),
                          dtype=np.float64) \
            if short else np.zeros(0)
        n = carried_count(gate, t, self.max_carried)
        passed = [cands[i].text for i in short[:n]]
        query, carried = realize(message, passed, [may_name(cands[i]) for i in short[:n]])
        declined = (f"{passed[0]!r} cannot stand for the personal pronoun of the message"
                    if passed and not carried else None)
        scored = tuple(ScoredCandidate(cands[i].text, float(gate[r]), cands[i].last.turn,
                                       cands[i].last.role) for r, i in enumerate(short))
        return Resolution(query, tuple(carried), scored, t, declined)


def session_shift(state: Any, index: int, text: str, resolver: Resolver | None = None) -> float:
    """The shift probability of a session's current message, from the detector's
    incremental per-session state (each turn embedded once, whatever the length). The
    detector embeds through the resolver's cache, so the message and the turns are
    embedded once for both."""
    if not any(t.role.value == "user" for t in state.turns):
        return 0.0
    return float(_detector_for(resolver or default_resolver()).probability(state, _Msg(index, text)))


class _Msg:
    __slots__ = ("index", "text")

    def __init__(self, index: int, text: str) -> None:
        self.index, self.text = index, text


_DETECTORS: dict[int, Any] = {}


def _detector_for(resolver: Resolver) -> Any:
    from turnscope.resolver._shift import ShiftDetector

    with _LOCK:
        det = _DETECTORS.get(id(resolver.embedder))
        if det is None:
            det = _DETECTORS[id(resolver.embedder)] = ShiftDetector(encoder=resolver.embedder)
        return det


def shift_threshold() -> float:
    """The shipped topic-shift detector's decision threshold."""
    from turnscope.resolver._shift import shipped_model

    return float(shipped_model().threshold)


def history_of(state: Any, turns: int = DEFAULT_HISTORY_TURNS) -> list[HistoryTurn]:
    """A session's turns as the resolver reads them (:func:`scope_history`: the opening
    turn and the last ``turns``), each user turn with the query it was rewritten to (what
    the previous rewrites carried is evidence for this one). Only those turns are built,
    so the cost of a turn does not grow with the conversation."""
    kept = state.turns if len(state.turns) <= turns + 1 else [state.turns[0], *state.turns[-turns:]]
    out = []
    for t in kept:
        resolved = state.resolved.get(t.index) if t.role.value == "user" else None
        out.append(HistoryTurn(t.index, t.role.value, t.content, resolved.query if resolved else None))
    return out


_DEFAULT: Resolver | None = None
_LOCK = threading.Lock()


def default_resolver() -> Resolver:
    """The process-wide resolver with the shipped model (loaded on first use)."""
    global _DEFAULT
    with _LOCK:
        if _DEFAULT is None:
            _DEFAULT = Resolver.load()
        return _DEFAULT


def ranked_for(state: Any, message_index: int, message: str, resolver: Resolver | None = None,
               top: int = 8) -> tuple[ScoredCandidate, ...]:
    """The best-scored candidates for the message at ``message_index`` of a session's
    :class:`~turnscope.conversation.ConversationState` (cached in ``state.ranked``, so the
    embedded rewriter and an LLM prompt of the same turn score once)."""
    memo = state.ranked
    if message_index in memo:
        return tuple(memo[message_index][:top])
    r = resolver or default_resolver()
    history = history_of(state)
    cands, scores = r.score(message, history, shift=session_shift(state, message_index, message, r))
    ranked = sorted((ScoredCandidate(c.text, float(s), c.last.turn, c.last.role)
                     for c, s in zip(cands, scores, strict=True)), key=lambda c: -c.score)
    memo.clear()  # only the current turn is ever asked for again
    memo[message_index] = ranked
    return tuple(ranked[:top])
