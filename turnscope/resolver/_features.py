"""Features of (message, candidate) pairs for the learned ranker.

The features follow the seeds' account of where an antecedent lives and how a
message signals that it needs one:

* **where the candidate lives**: the role of its newest mention, how many turns
  and exchanges back, the previous question, the previous answer and its first
  sentence, the conversation's opening turn, a list line or an "A, B, C" series,
  and whether it is the first noun chunk of its sentence (where a question or a
  title names its subject: "What is Chattanooga famous for?", CANARD's "Fleet
  Foxes — Formation"); with these the session-replay objective on the development
  sets was 0.221 / 0.226 / 0.213 (seeds 13 / 7 / 21), without 0.208 / 0.209 (13 / 7);
* **its liveness**: turns since its own last mention, how often and in how many
  turns it was mentioned, and whether the previous rewrites carried it (a topic
  the last query needed is usually still needed);
* **similarity**: e5 similarity of the message to the previous question, the
  opening question and the user's questions so far (each user turn is embedded
  once, as a query, and reused by every later message); the word overlap (cosine
  of content-word stem sets) of the candidate's sentences with the message (its best
  and its newest sentence, and its rank among the candidates) and of the message
  with the previous answer. Sentences of answers are not embedded: with e5
  sentence vectors in those places the session-replay objective on the
  development sets was 0.158 / 0.132 / 0.138 (seeds 13 / 7 / 21), with word
  overlap 0.150 / 0.152 (seeds 13 / 7), and embedding every sentence of a long
  answer was most of the cost of a turn (``benchmarks/resolver_cost.py``). The
  phrase itself is not embedded either (out-of-fold objective 0.182 without, 0.162
  with);
* **what the message does**: an anaphoric pronoun, a demonstrative, "one(s)",
  an ordinal, how many of its content words and capitalised names are new to
  the conversation, whether it opens with "and"/"what about", its length; and the
  reference classifier's cues (``turnscope.references``, the structural rules a
  reader recognises): a relational noun with no complement ("what are the side
  effects?": bridging), a fragment (ellipsis), a pronoun that refers, "that
  region", and whether the message leans on the turns just before. With these the
  session-replay objective on the development sets was 0.231 / 0.231 / 0.231 at
  seeds 13 / 7 / 21, without 0.221 / 0.226 / 0.213;
* **what the phrase is**: length, capitalised name, digits, a lone participle;
* **the topic-shift evidence**: the learned detector's probability that the
  message opens a new subject (``turnscope.resolver._shift``).

Every feature is a number computed from the text alone; the weights come from
training (``turnscope train``), none is set by hand.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

import numpy as np

from turnscope._lexicon import ANAPHORIC_PRONOUNS
from turnscope.entities import EntityExtractor
from turnscope.references import ReferenceClass, classify
from turnscope.resolver._candidates import Candidate, HistoryTurn, key_of
from turnscope.resolver._neural import EMPTY_EVIDENCE, NeuralEvidence

__all__ = ["FEATURES", "MessageSignals", "Embedder", "featurize", "message_signals", "overlap"]

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


def overlap(a: Set[str], b: Set[str]) -> float:
    """Cosine of two sets of content-word stems: ``|a & b| / sqrt(|a| |b|)``.

    >>> overlap(frozenset({"lobular", "carcinoma"}), frozenset({"carcinoma", "treat"}))
    0.5
    """
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def featurize(message: str, history: Sequence[HistoryTurn], cands: Sequence[Candidate],
              embed_query: Embedder, shift: float = 0.0,
              neural: NeuralEvidence | None = None) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate (``history`` oldest first).

    ``embed_query`` is e5 with its query prefix; callers pass a caching wrapper, so
    each user turn is embedded once (as the message, then as history). ``neural`` is the
    tagger's evidence for the message (``_neural``); without it its columns are 0 (a
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
