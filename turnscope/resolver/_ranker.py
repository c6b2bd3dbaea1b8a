"""The learned resolver's inference: what the ranker reads off each candidate phrase, the
ranker and gate that decide which phrases are carried, and the query realised from them.

In reading order: the features (:func:`featurize`), inference with the shipped models
(:class:`Resolver`), and the query (:func:`realize`).
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._exceptions import ConfigError
from turnscope._lexicon import ANAPHORIC_PRONOUNS
from turnscope.entities import EntityExtractor
from turnscope.references import ReferenceClass, classify
from turnscope.resolver._candidates import (
    EMPTY_EVIDENCE,
    CachedEmbedder,
    Candidate,
    HistoryTurn,
    NeuralEvidence,
    NeuralTagger,
    candidates,
    default_tagger,
    key_of,
    may_name,
    overlap,
)

__all__ = [
    "FEATURES",
    "MessageSignals",
    "Embedder",
    "featurize",
    "message_signals",
    "DEFAULT_HISTORY_TURNS",
    "GATE_EXTRA",
    "GATE_SEPARATOR",
    "Resolution",
    "Resolver",
    "ScoredCandidate",
    "carried_count",
    "default_resolver",
    "gate_rows",
    "history_of",
    "may_name",
    "ranked_for",
    "scope_history",
    "session_shift",
    "shift_threshold",
    "shortlist",
    "tagger_view",
    "can_stand_for",
    "has_slot",
    "realize",
]

# Features ------------------------------------------------------------------------------
# Features of (message, candidate) pairs for the learned ranker.
#
# The features follow the seeds' account of where an antecedent lives and how a
# message signals that it needs one:
#
# * **where the candidate lives**: the role of its newest mention, how many turns
#   and exchanges back, the previous question, the previous answer and its first
#   sentence, the conversation's opening turn, a list line or an "A, B, C" series,
#   and whether it is the first noun chunk of its sentence (where a question or a
#   title names its subject: "What is Chattanooga famous for?", CANARD's "Fleet
#   Foxes — Formation"); with these the session-replay objective on the development
#   sets was 0.221 / 0.226 / 0.213 (seeds 13 / 7 / 21), without 0.208 / 0.209 (13 / 7);
# * **its liveness**: turns since its own last mention, how often and in how many
#   turns it was mentioned, and whether the previous rewrites carried it (a topic
#   the last query needed is usually still needed);
# * **similarity**: e5 similarity of the message to the previous question, the
#   opening question and the user's questions so far (each user turn is embedded
#   once, as a query, and reused by every later message); the word overlap (cosine
#   of content-word stem sets) of the candidate's sentences with the message (its best
#   and its newest sentence, and its rank among the candidates) and of the message
#   with the previous answer. Sentences of answers are not embedded: with e5
#   sentence vectors in those places the session-replay objective on the
#   development sets was 0.158 / 0.132 / 0.138 (seeds 13 / 7 / 21), with word
#   overlap 0.150 / 0.152 (seeds 13 / 7), and embedding every sentence of a long
#   answer was most of the cost of a turn (``benchmarks/resolver_cost.py``). The
#   phrase itself is not embedded either (out-of-fold objective 0.182 without, 0.162
#   with);
# * **what the message does**: an anaphoric pronoun, a demonstrative, "one(s)",
#   an ordinal, how many of its content words and capitalised names are new to
#   the conversation, whether it opens with "and"/"what about", its length; and the
#   reference classifier's cues (``turnscope.references``, the structural rules a
#   reader recognises): a relational noun with no complement ("what are the side
#   effects?": bridging), a fragment (ellipsis), a pronoun that refers, "that
#   region", and whether the message leans on the turns just before. With these the
#   session-replay objective on the development sets was 0.231 / 0.231 / 0.231 at
#   seeds 13 / 7 / 21, without 0.221 / 0.226 / 0.213;
# * **what the phrase is**: length, capitalised name, digits, a lone participle;
# * **the topic-shift evidence**: the learned detector's probability that the
#   message opens a new subject (``turnscope.resolver._shift``).
#
# Every feature is a number computed from the text alone; the weights come from
# training (``turnscope train``), none is set by hand.

#: a function from texts to L2-normalised vectors (one row per text)
Embedder = Callable[[Sequence[str]], np.ndarray]

_ANAPHOR = re.compile(rf"\b(?:{'|'.join(sorted(ANAPHORIC_PRONOUNS))})\b", re.I)
_DEM_PRON = re.compile(r"\b(?:this|that|these|those)\b(?=\s*(?:[?.!,]|$|is|are|was|were|do|does|"
                       r"did|have|has|mean|work|cost|help|happen|affect|cause|compare))", re.I)
_DEM_NP = re.compile(r"\b(?:this|that|these|those|such)\s+[a-z]", re.I)
_ONE = re.compile(r"\b(?:one|ones)\b", re.I)
_ORDINAL = re.compile(r"\b(?:first|second|third|fourth|fifth|last|former|latter|\d(?:st|nd|rd|th))\b",
                      re.I)
_CONTINUE = re.compile(r"^\W*(?:and|also|so|but|what\s+about|how\s+about|what\s+else|anything\s+else|"
                       r"tell\s+me\s+more|more\s+about|why|how\s+come)\b", re.I)
_WH = re.compile(r"^\W*(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
_CAP = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9\-]+")
_PIVOT = re.compile(r"\b(?:different|unrelated|another|separate|new)\s+(?:question|topic|subject|thing)\b|"
                    r"\b(?:switching|changing)\s+(?:gears|topics?|subjects?)\b|\bon\s+another\s+note\b", re.I)

#: the features of the candidate itself, in the order ``featurize`` computes them
_CANDIDATE_FEATURES: tuple[str, ...] = (
    # where and how often
    "role_user", "turns_back", "exchanges_back", "first_turns_back", "n_mentions", "n_turns",
    "in_prev_user", "in_prev_answer", "in_prev_answer_first", "answer_sentence_idx",
    "in_opening", "in_list", "user_mentions", "first_chunk", "last_position",
    # what earlier rewrites carried: a topic the previous query carried is usually still on
    "in_prev_rewrite", "carried_by_prev", "carried_count",
    # the phrase
    "n_words", "n_key", "capitalised", "has_digit", "lone_participle", "frac_in_message",
    # similarity
    "sim_sent_msg", "sim_sent_last", "rank_sim", "rank_recency", "sim_margin",
    # the neural tagger's word scores over the phrase's stems (max, mean, min; 0 without it)
    "nn_max", "nn_mean", "nn_min",
)
#: the message's features: the same on every candidate row of a message
_MESSAGE_FEATURES: tuple[str, ...] = (
    "msg_anaphor", "msg_dem_pron", "msg_dem_np", "msg_one", "msg_ordinal", "msg_continue",
    "msg_wh", "msg_pivot", "msg_words", "msg_key", "msg_new_key", "msg_new_caps",
    "cue_bridging", "cue_ellipsis", "cue_pronoun", "cue_type", "ref_immediate",
    "msg_sim_prev_q", "msg_sim_prev_a", "msg_sim_history", "msg_sim_opening", "n_candidates",
    "history_turns",
    # the learned topic-shift detector's probability for this message
    "shift_prob",
    # the neural tagger: does the message need anything, and its best word score
    "nn_need", "nn_top",
)
#: the model's columns, in the order it was trained on (a model file names the columns it
#: reads, and the resolver picks them by name)
FEATURES: tuple[str, ...] = _CANDIDATE_FEATURES + _MESSAGE_FEATURES


@dataclass(frozen=True, slots=True)
class MessageSignals:
    """What the message itself does (one row of message features)."""

    anaphor: bool
    dem_pron: bool
    dem_np: bool
    one: bool
    ordinal: bool
    cont: bool
    wh: bool
    pivot: bool
    words: int
    key: frozenset[str]
    new_key: int
    new_caps: int
    #: the reference classifier's cues (``turnscope.references``): "the cost" with no "of X"
    #: (bridging), a fragment (ellipsis), a pronoun, "that region" (type anaphora), and
    #: whether it reads the message as leaning on the turns just before
    bridging: bool = False
    ellipsis: bool = False
    pronoun: bool = False
    type_anaphora: bool = False
    immediate: bool = False


@functools.lru_cache(maxsize=1)
def _extractor() -> EntityExtractor:
    return EntityExtractor()


@functools.lru_cache(maxsize=4096)
def _classifier_cues(message: str, has_history: bool) -> tuple[frozenset[str], bool]:
    """The cues the reference classifier finds in an English message, and whether it reads
    it as leaning on the turns just before; read with the vocabulary-free extractor, as
    in a session (the learned resolver runs only where no vocabulary is declared)."""
    c = classify(message, "en", _extractor().extract(message, "en"), has_history=has_history)
    return frozenset(q.value for q in c.cues), c.reference_class is ReferenceClass.IMMEDIATE


def message_signals(message: str, history: Sequence[HistoryTurn]) -> MessageSignals:
    seen: set[str] = set()
    seen_lower = " ".join(t.text for t in history).lower()
    for t in history:
        seen.update(key_of(t.text))
    key = key_of(message)
    caps = [m.group() for m in _CAP.finditer(message)]
    cues, immediate = _classifier_cues(message, bool(history))
    return MessageSignals(
        bridging="bridging" in cues, ellipsis="ellipsis" in cues, pronoun="pronoun" in cues,
        type_anaphora="type_anaphora" in cues, immediate=immediate,
        anaphor=bool(_ANAPHOR.search(message)),
        dem_pron=bool(_DEM_PRON.search(message)),
        dem_np=bool(_DEM_NP.search(message)),
        one=bool(_ONE.search(message)),
        ordinal=bool(_ORDINAL.search(message)),
        cont=bool(_CONTINUE.search(message)),
        wh=bool(_WH.search(message)),
        pivot=bool(_PIVOT.search(message)),
        words=len(message.split()),
        key=key,
        new_key=sum(1 for s in key if s not in seen),
        new_caps=sum(1 for c in caps if c.lower() not in seen_lower),
    )


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b) if a.size and b.size else 0.0


def featurize(message: str, history: Sequence[HistoryTurn], cands: Sequence[Candidate],
              embed_query: Embedder, shift: float = 0.0,
              neural: NeuralEvidence | None = None) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate (``history`` oldest first).

    ``embed_query`` is e5 with its query prefix; callers pass a caching wrapper, so
    each user turn is embedded once (as the message, then as history). ``neural`` is the
    tagger's evidence for the message (``_candidates``); without it its columns are 0 (a
    model trained without them never reads them).
    """
    ev = neural if neural is not None else EMPTY_EVIDENCE
    n = len(cands)
    if n == 0:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    msg_index = (history[-1].index + 1) if history else 1
    sig = message_signals(message, history)
    users = [t for t in history if t.role == "user"]
    prev_user = users[-1] if users else None
    prev_answer = history[-1] if history and history[-1].role == "assistant" else None
    opening = history[0] if history else None
    # exchange number of each turn: how many user turns start at or after it
    user_idx = [t.index for t in users]

    rewrites = [(key_of(u.rewrite), key_of(u.text)) for u in users if u.rewrite]
    # the rewrites that added a word: only they can have carried a candidate (most of a
    # session's own rewrites add none, and every candidate is checked against each)
    carrying = [(rw, raw, rw - raw) for rw, raw in rewrites if rw - raw]
    prev_rw = key_of(prev_user.rewrite) if prev_user is not None and prev_user.rewrite else None
    prev_raw = key_of(prev_user.text) if prev_user is not None else frozenset()

    m_vec = embed_query([message])[0]
    pq_vec = embed_query([prev_user.text])[0] if prev_user else np.zeros(0)
    pa_key = key_of(prev_answer.text) if prev_answer else frozenset()
    op_vec = embed_query([opening.text])[0] if opening else np.zeros(0)
    hist_user = embed_query([u.text for u in users]) if users else np.zeros((0, 0))
    hist_vec = hist_user.mean(axis=0) if len(users) else np.zeros(0)
    if hist_vec.size:
        hist_vec = hist_vec / (np.linalg.norm(hist_vec) or 1.0)

    # each sentence's overlap with the message, once: candidates share sentences
    sent_sim: dict[str, float] = {}
    for c in cands:
        for m in c.mentions:
            if m.sentence_text not in sent_sim:
                sent_sim[m.sentence_text] = overlap(key_of(m.sentence_text), sig.key)
    sims = np.array([max(sent_sim[m.sentence_text] for m in c.mentions) for c in cands])
    order = np.argsort(-sims, kind="stable")
    rank_sim = np.empty(n)
    rank_sim[order] = np.arange(n)
    best = float(sims.max())

    # the message's own similarities: the same for every candidate
    sim_prev_q, sim_prev_a = _cos(m_vec, pq_vec), overlap(sig.key, pa_key)
    sim_history, sim_opening = _cos(m_vec, hist_vec), _cos(m_vec, op_vec)
    # what the message does is the same for every candidate: one row, broadcast
    msg = {
        "msg_anaphor": float(sig.anaphor),
        "msg_dem_pron": float(sig.dem_pron),
        "msg_dem_np": float(sig.dem_np),
        "msg_one": float(sig.one),
        "msg_ordinal": float(sig.ordinal),
        "msg_continue": float(sig.cont),
        "msg_wh": float(sig.wh),
        "msg_pivot": float(sig.pivot),
        "msg_words": sig.words,
        "msg_key": len(sig.key),
        "msg_new_key": sig.new_key,
        "msg_new_caps": sig.new_caps,
        "cue_bridging": float(sig.bridging),
        "cue_ellipsis": float(sig.ellipsis),
        "cue_pronoun": float(sig.pronoun),
        "cue_type": float(sig.type_anaphora),
        "ref_immediate": float(sig.immediate),
        "msg_sim_prev_q": sim_prev_q,
        "msg_sim_prev_a": sim_prev_a,
        "msg_sim_history": sim_history,
        "msg_sim_opening": sim_opening,
        "n_candidates": n,
        "history_turns": len(history),
        "shift_prob": shift,
        "nn_need": ev.need,
        "nn_top": ev.top,
    }
    rows = np.zeros((n, len(FEATURES)), dtype=np.float32)
    n_cand = len(_CANDIDATE_FEATURES)  # FEATURES: the candidate's columns, then the message's
    rows[:, n_cand:] = [msg[k] for k in _MESSAGE_FEATURES]
    prev_user_index = prev_user.index if prev_user is not None else None
    prev_answer_index = prev_answer.index if prev_answer is not None else -1
    opening_index = opening.index if opening is not None else None
    # user turns at or after a turn: bisect over their (ascending) indices
    n_users = len(user_idx)
    cand_rows = []
    for i, c in enumerate(cands):
        mentions = c.mentions
        # one pass over the mentions for everything they decide
        last = first = mentions[0]
        turns = set()
        first_sentence = in_list = first_chunk = False
        answer_sentence = -1
        user_mentions = 0
        for m in mentions:
            turns.add(m.turn)
            if (m.turn, -m.sentence) > (last.turn, -last.sentence):
                last = m
            if (m.turn, m.sentence) < (first.turn, first.sentence):
                first = m
            if m.turn == prev_answer_index and m.sentence == 0:
                first_sentence = True
            if m.role == "assistant":
                if answer_sentence < 0 or m.sentence < answer_sentence:
                    answer_sentence = m.sentence
            else:
                user_mentions += 1
            in_list = in_list or m.in_list
            # the first noun chunk of a sentence is where it names its subject ("Fleet
            # Foxes — Formation", "What is Chattanooga famous for?")
            first_chunk = first_chunk or m.position == 0
        key = c.key
        in_prev_rw = prev_rw is not None and key <= prev_rw
        text = c.text
        words = len(text.split())
        sim = float(sims[i])
        cand_rows.append((
            float(last.role == "user"),
            msg_index - last.turn,
            n_users - bisect.bisect_left(user_idx, last.turn),
            msg_index - first.turn,
            len(mentions),
            len(turns),
            float(prev_user_index in turns),
            float(prev_answer is not None and prev_answer_index in turns),
            float(first_sentence),
            answer_sentence,
            float(opening_index in turns),
            float(in_list),
            user_mentions,
            float(first_chunk),
            last.position,
            float(in_prev_rw),
            float(in_prev_rw and not key <= prev_raw),
            sum(1 for rw, raw, added in carrying if key & added and key <= rw and not key <= raw)
            if carrying else 0,
            words,
            len(key),
            float(c.capitalised),
            float(any(ch.isdigit() for ch in text)),
            float(words == 1 and text.islower() and text.endswith(("ed", "ing"))),
            len(key & sig.key) / len(key),
            sim,
            sent_sim[last.sentence_text],
            float(rank_sim[i]),
            float(i),
            best - sim,
            *ev.phrase(key),
        ))
    rows[:, :n_cand] = cand_rows
    return rows


# Ranker and gate -----------------------------------------------------------------------
# Inference: score every candidate phrase, carry the few the evidence supports.
#
# Two LightGBM models trained by ``turnscope train`` on public conversations with
# human rewrites (docs/splits.md names them):
#
# * the **ranker** scores every candidate for "does this message need this
#   phrase?" and orders them; its scores rank well within a message but are not
#   comparable across messages;
# * the **gate** reads the best three (distinct) candidates with their ranker
#   features, their rank and how their scores compare, and gives the probability
#   that each is needed: the leading ones that clear the threshold are carried.
#
# The thresholds and the cap on carried phrases are stored in the model file beside
# the trees, chosen on development data by replaying whole conversations with fold
# models (see ``benchmarks/resolver_sweep.py`` for a sweep on a check set). There are
# two thresholds, by what the query can do with a phrase: a message with a pronoun to
# stand for ("Is it treatable?") has a slot the phrase fills; any other message can
# only get the phrase appended, and is more often complete as it is ("Tell me about
# lung cancer."), so it asks for more evidence. Carrying nothing is the default: a
# phrase is carried only when the gate says so.

#: turns of history the ranker reads besides the conversation's opening turn (the
#: liveness horizon: an entity silent for longer is evicted)
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


def shortlist(keys: Sequence[frozenset[str]], scores: np.ndarray, size: int = SHORTLIST,
              skip: Callable[[int], bool] | None = None) -> list[int]:
    """The best-scored candidates, each adding a content word the ones before it lack (and
    not ``skip``-ped: asked only of the candidates the walk reaches)."""
    chosen: list[int] = []
    covered: set[str] = set()
    for i in np.argsort(-scores, kind="stable"):
        if len(chosen) >= size:
            break
        if keys[i] <= covered or (skip is not None and skip(int(i))):
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
                threshold: float | None = None, shift: float | None = None,
                agrees: Callable[[str], bool] | None = None) -> Resolution:
        """Score the candidates of ``history`` (oldest first) for ``message`` and rewrite it.

        ``agrees`` is a constraint on the candidates (the pronoun's agreement: a person for
        "he", not a person for "it"): those it rejects are dropped before the shortlist, and
        the learned scores decide among the rest. Each candidate is scored as it would be
        without the constraint (its features do not change), so the constraint only removes."""
        t = self.threshold_for(message) if threshold is None else threshold
        cands, scores, x = self._score(message, history, shift)
        keys = [c.key for c in cands]
        if agrees is not None and cands:
            # (the grammar's test reads every earlier turn: asked of a hundred candidates it
            # was most of a long exchange's time. Only two things see a rejected candidate:
            # the gate's count of candidates scored >= 0.1, and the shortlist's walk, which
            # stops after a few; so those above 0.1 are asked now, the rest as reached)
            verdict: dict[int, bool] = {}

            def rejected(i: int) -> bool:
                if i not in verdict:
                    verdict[i] = not agrees(cands[i].text)
                return verdict[i]

            scores = np.where([s >= 0.1 and rejected(i) for i, s in enumerate(scores)], -np.inf, scores)
            short = shortlist(keys, scores, skip=rejected)
        else:
            short = shortlist(keys, scores)
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


# The query -----------------------------------------------------------------------------
# Turn the carried phrases into a query that reads as the user's own message.
#
# Two moves, in order of preference:
#
# 1. **substitute**: the first anaphoric pronoun ("it", "they", "them", "he", a
#    demonstrative used as a pronoun) becomes the top phrase; a possessive ("its",
#    "their", "his") becomes "<phrase>'s";
#    a plural one ("they", "them", "their") becomes the first two phrases joined by "and"
#    ("What's the difference in throat cancer and esophageal cancer's symptoms?");
# 2. **attach**: any other carried phrase follows the message in parentheses,
#    before its final punctuation ("What are the symptoms (lobular carcinoma)?").
#
# The message itself is never cut: a rewrite is the message plus what was carried,
# so it cannot turn into a fragment of an answer.
#
# Grammar decides whether the top phrase may stand for the pronoun at all: "he",
# "him", "his" and "she" refer to a person, and a phrase with no capitalised word
# ("controversy", "global warming") cannot name one; nor can a word capitalised only
# because it opens a section heading ("Van Morrison — Influence": the resolver passes
# what it knows of where each phrase was capitalised). Then nothing is carried: on the
# development sets every such rewrite put a wrong word in the query ("Did controversy
# plead guilty to the charge?", 6 of 7; the seventh added nothing the human rewrite
# needed), and attaching the phrase instead would add the same wrong word.
#
# A carried phrase that another carried phrase extends goes: "binge drinking" says all
# that "drinking" says.

_SUBJECT = re.compile(r"\b(?P<w>it|they|them|he|him|she|this|that|these|those)\b"
                      r"(?!\s*(?:'s|’s|is\s+(?:a|an|the)\b))", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(?P<w>its|their|his)\b", re.IGNORECASE)
# a demonstrative is a pronoun only when no noun follows it ("that" in "is that safe?")
_DEM_FOLLOW = re.compile(r"\s*(?:[?.!,;]|$|is\b|are\b|was\b|were\b|do\b|does\b|did\b|have\b|has\b|"
                         r"mean\b|work\b|cost\b|help\b|happen\b|affect\b|cause\b|compare\b|"
                         r"can\b|will\b|would\b|should\b|could\b)", re.IGNORECASE)
_END = re.compile(r"[\s?？.。!！]*$")
#: pronouns that refer to a person (the antecedent must be able to name one)
_PERSONAL = frozenset({"he", "him", "his", "she"})
_PLURAL = frozenset({"they", "them", "their"})


def _pronoun(message: str) -> re.Match[str] | None:
    hits = []
    for m in _SUBJECT.finditer(message):
        w = m.group("w").lower()
        if w in ("this", "that", "these", "those") and not _DEM_FOLLOW.match(message, m.end()):
            continue
        if w == "that" and re.search(r"\b(?:so|such|now|than|is|was|and)\s*$", message[: m.start()], re.I):
            continue  # a conjunction or relative "that", not a pronoun
        hits.append(m)
        break
    pm = _POSSESSIVE.search(message)
    if pm is not None:
        hits.append(pm)
    return min(hits, key=lambda m: m.start()) if hits else None


def has_slot(message: str) -> bool:
    """Whether the message has a pronoun a carried phrase would stand for.

    >>> has_slot("Is it treatable?"), has_slot("What are its symptoms?"), has_slot("What does that cost?")
    (True, True, True)
    >>> has_slot("Tell me about lung cancer."), has_slot("What is that region's SLA?")
    (False, False)
    """
    return _pronoun(message.strip()) is not None


def can_stand_for(phrase: str, pronoun: str, *, name: bool | None = None) -> bool:
    """Whether ``phrase`` agrees with ``pronoun``: a personal pronoun needs a name.

    ``name`` says whether the phrase can name someone when the caller knows more than its
    text (where it was capitalised: :func:`turnscope.resolver._candidates.may_name`); without
    it, a capitalised word decides.

    >>> can_stand_for("Jack White", "he"), can_stand_for("controversy", "he")
    (True, False)
    >>> can_stand_for("global warming", "it")
    True
    """
    if pronoun.lower() not in _PERSONAL:
        return True
    if name is not None:
        return name
    return any(w[:1].isupper() for w in phrase.split())


def realize(message: str, carried: Sequence[str], names: Sequence[bool] | None = None) -> tuple[str, list[str]]:
    """The query and the carried phrases in the order they appear in it.

    >>> realize("How deadly is it?", ["lobular carcinoma"])
    ('How deadly is lobular carcinoma?', ['lobular carcinoma'])
    >>> realize("What about its treatment?", ["lobular carcinoma", "LCIS"])
    ("What about lobular carcinoma's treatment (LCIS)?", ['lobular carcinoma', 'LCIS'])
    >>> realize("And the side effects?", [])
    ('And the side effects?', [])
    >>> realize("Did he plead guilty?", ["controversy"])  # "he" cannot be "controversy"
    ('Did he plead guilty?', [])
    """
    text = message.strip()
    if not carried:
        return text, []
    carried, names = _widest(carried, names)
    rest = list(carried)
    m = _pronoun(text)
    if m is not None and not can_stand_for(rest[0], m.group("w"), name=names[0] if names else None):
        return text, []
    if m is not None:
        phrase = rest.pop(0)
        if m.group("w").lower() in _PLURAL and rest:
            phrase = f"{phrase} and {rest.pop(0)}"
        if m.group("w").lower() in ("its", "their", "his"):
            phrase = phrase + "'s"
        if m.start() == 0 or re.search(r"[.!?]\s*$", text[: m.start()]):
            phrase = phrase[:1].upper() + phrase[1:]
        text = text[: m.start()] + phrase + text[m.end():]
    if rest:
        end = _END.search(text)
        cut = end.start() if end else len(text)
        text = f"{text[:cut]} ({'; '.join(rest)}){text[cut:]}"
    order = sorted(carried, key=lambda p: text.find(p) if p in text else len(text))
    return text, order


def _widest(carried: Sequence[str], names: Sequence[bool] | None) -> tuple[list[str], list[bool] | None]:
    """The carried phrases without those another one extends; an extending phrase takes the
    place of the first phrase it extends ("drinking", "binge drinking" -> "binge drinking")."""
    keys = [key_of(p) for p in carried]
    widest = [i for i, k in enumerate(keys) if not k or not any(k < o for o in keys)]
    out: list[int] = []
    for i, k in enumerate(keys):
        pick = i if i in widest else next(j for j in widest if k < keys[j])
        if pick not in out:
            out.append(pick)
    return [carried[i] for i in out], ([names[i] for i in out] if names is not None else None)
