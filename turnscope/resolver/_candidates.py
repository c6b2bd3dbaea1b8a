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
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, field

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

__all__ = ["Candidate", "HistoryTurn", "Mention", "candidates", "clear_text_caches", "key_of", "may_name",
           "overlap", "sentences"]

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
