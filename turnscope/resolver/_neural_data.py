"""Training examples for the neural resolver (issue 20, part 1), built from TopiOCQA train.

One JSON line per example::

    {"id": str, "source": str, "message": str,
     "history": [{"role": "user"|"assistant", "text": str}, ...],   # oldest first
     "targets": [str, ...],   # spans of history texts the message needs carried; [] = none
     "original": str | null}  # the unablated question, when made by ablation

**What is read.** Only the TopiOCQA train part of the shared snapshot
(``topiocqa/topiocqa_train_part.json``, through :func:`load_topiocqa_train`). Not CANARD,
not CAsT, not TopiOCQA dev: the development sets (CAsT 2019, CANARD, the even CAsT 2021
topics) train the downstream ranker and gate out of fold on this model's scores, so this
model must never have seen them; the check sets (CAsT 2020, the odd CAsT 2021 topics) are
never used for anything but figures.

**Kinds** (the last fields of ``id``; ``docs/neural_data.md`` says how each differs from a
real follow-up and gives the counts). A message is a turn's question; its history the real
turns before it (question, then answer cut to 400 characters; an unanswerable turn keeps
only its question), at most the last 12. The *subject* of a turn is its Topic title, the
title without its parenthetical or a leading "The", or the part before a comma, matched
case-insensitively on word boundaries; ``targets`` is always the subject as the history
writes it (newest mention).

- ``ablation:<form>`` (positive): a same-topic turn whose question names the subject,
  which the history also names. The mention becomes the pronoun the subject takes
  (he/she/they when the conversation clearly says so, else it; possessives too), or the
  definite description the title or question gives ("the film"), or it is dropped with
  its preposition ("what is the capital of italy" -> "what is the capital").
- ``named`` (negative): a same-topic turn's question that names its subject, as asked
  (the unablated twin of an ablation, or a question whose subject the history lacks).
- ``switch-named`` (negative): a topic switch whose question names the new topic.
- ``natural:<form>`` (positive; ``natural=True``, the default): a real follow-up that
  points at the subject one clear way: one third-person pronoun class (agreeing with the
  subject's when the conversation says which), else one description ("this country",
  "the above song", "the film"), else one locative "there"/"here"; no list reference
  ("the former", "the second").
- ``deablation`` (negative; with ``natural``): that question with the pointer replaced by
  the subject ("when was it released?" -> "when was Piece of Me released?").

Not emitted, only counted: same-topic turns that neither name the subject nor point at it
clearly (their label is unknown), and switches whose question does not name the new topic.
The latter are *not* "carry nothing" examples: in TopiOCQA a switch usually moves to
something the history named ("what is it?" after an answer naming a band), so labelling
them ``[]`` would teach the model not to carry where it must.

Why ``natural`` exists and is on: TopiOCQA questions rarely name their subject (about 1.4%
of same-topic turns do), so ablation alone gives a few hundred examples, not 40,000.
``natural=False`` keeps only the ablation kinds.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnscope._exceptions import DatasetError
from turnscope.datasets import STOP_WORDS, TopicTurn, load_topiocqa_train

__all__ = ["NeuralDataReport", "build_neural_data", "render_sample"]

SOURCE = "topiocqa-train"
#: answers are cut here in the history (a passage-length answer is mostly noise to a tagger)
ANSWER_CHARS = 400
#: turns (question + answer) of history kept before the message
HISTORY_TURNS = 12
#: the positive share outside which the larger class is thinned to an even split
BALANCE_BAND = (0.45, 0.55)
_UNANSWERABLE = "UNANSWERABLE"

# pronoun classes: subject, object, possessive forms
_FORMS = {"it": ("it", "it", "its"), "he": ("he", "him", "his"),
          "she": ("she", "her", "her"), "they": ("they", "them", "their")}
_PRONOUN_CLASS = {"it": "it", "its": "it", "itself": "it", "he": "he", "him": "he",
                  "his": "he", "himself": "he", "she": "she", "her": "she", "hers": "she",
                  "herself": "she", "they": "they", "them": "they", "their": "they",
                  "theirs": "they", "themselves": "they"}
_PRONOUN_RE = re.compile(r"\b(" + "|".join(_PRONOUN_CLASS) + r")\b", re.IGNORECASE)
# after these the subject is a grammatical subject ("when did X ...", "who is X")
_SUBJECT_CUES = frozenset("""is was are were did does do has have had can could will would
    should may might when where why how what who which whom and but that""".split())
_DROP_PREPS = frozenset("of in for on at from by".split())
# after these (prepositions, common verbs) the subject is an object: "who voiced her"
_OBJECT_CUES = _DROP_PREPS | frozenset("""about with to into over like than between against
    through under after before during around play sing sang write wrote direct found
    discover like love make made form use visit marry join beat defeat win won lead led
    produce create design describe define explain name call see watch read hear""".split())
# nouns a title's parenthetical or the question's "the <noun> X" turns into "the <noun>"
_CATEGORY = frozenset("""film movie band song album novel book series musical play poem game
    episode opera magazine newspaper company single character painting ship river group
    duo singer rapper actor actress planet show city country state team track artist
    player sitcom franchise comic manga""".split())
# a question pointing at a listed item of an answer: the topic title is then no label
_LIST_REFERENCE = re.compile(r"\b(former|latter|(first|second|third|last|other) one|"
                             r"(the|that|this) (first|second|third|fourth|fifth|last|other))\b",
                             re.IGNORECASE)
# "is it true that ...": an "it" that points at nothing
_EXPLETIVE_IT = re.compile(r"\b(it (is|was)|is it|was it) (true|possible|necessary|known|said|"
                           r"important|likely|common|safe|legal|hard|easy)\b", re.IGNORECASE)
# after "her" these words mean it was an object, not a possessive ("give her a", "her?")
_NOT_NOUN = frozenset("""a an the and or but to in on at for with from by of as than that
    this these those is was are were be been if when so""".split())
# "this <noun>", "the above(-mentioned) <noun>": a pointer at something the history named
_POINTER_RE = re.compile(r"\b(?:this|that|these|those|the\s+(?:above[- ]?mentioned|aforementioned|"
                         r"aforesaid|mentioned|above))\s+([a-z][a-z-]*)", re.IGNORECASE)
_THE_RE = re.compile(r"\bthe\s+([a-z]+)\b", re.IGNORECASE)
# words after a pointer that do not name a thing, or name a time or a part, not the subject
_NOT_HEAD = frozenset("""particular specific same new famous whole entire great year years
    time times period era day days decade century month week moment point case kind type
    sort part regard matter respect""".split())
# "how many people live there": a locative pointing at a place (not "is there", "from there")
_THERE_RE = re.compile(r"\b(there|here)\b", re.IGNORECASE)
_NOT_BEFORE_THERE = frozenset("is are was were re over from mentioned out".split())
_NOT_AFTER_THERE = frozenset("is are was were be been".split())
# "the country mentioned above": the afterword goes with the description it follows
_AFTERWORD = re.compile(r"\s+(?:(?:that\s+)?(?:you\s+)?(?:just\s+)?(?:mentioned|discussed)"
                        r"(?:\s+(?:above|earlier|before|here))?|above)\b", re.IGNORECASE)
_QUOTES = "\"'\u2018\u2019\u201c\u201d"


@dataclass(frozen=True)
class NeuralDataReport:
    """What :func:`build_neural_data` wrote and what it left out, by kind."""

    out: Path
    seed: int
    natural: bool
    turns_read: int
    examples: int
    positives: int
    by_source: dict[str, int]
    #: positives by how the message was made: "ablation:it", "ablation:drop", "natural:he", ...
    positive_kinds: dict[str, int]
    #: negatives by kind: "named", "switch-named", "deablation"
    negative_kinds: dict[str, int]
    #: turns not used, by reason: "first-turn", "unanswerable", "natural-same-topic" (names
    #: no subject, points at none clearly), "switch-unnamed", "ablation-unreadable"
    excluded: dict[str, int]
    #: named turns whose subject the (cut) history does not contain: no positive made
    dropped_no_history_span: int
    #: examples of the larger class left out to keep the positive share in the band
    dropped_for_balance: int = 0

    @property
    def positive_share(self) -> float:
        return self.positives / self.examples if self.examples else 0.0


@dataclass(frozen=True)
class _Example:
    conversation: int
    turn: int
    kind: str  # "ablation:<form>", "named", ...
    message: str
    history: tuple[tuple[str, str], ...]
    targets: tuple[str, ...]
    original: str | None

    @property
    def positive(self) -> bool:
        return bool(self.targets)

    def to_json(self) -> dict[str, Any]:
        return {"id": f"{SOURCE}:{self.conversation}:{self.turn}:{self.kind}", "source": SOURCE,
                "message": self.message,
                "history": [{"role": r, "text": t} for r, t in self.history],
                "targets": list(self.targets), "original": self.original}


def _variants(topic: str) -> list[str]:
    """The subject strings of a title, longest first: the title, without "(...)", without a
    leading "The", before "," (a surname alone is not used: a topic's answers say "he" of
    the people in it, so "English Reformation" would give "Reformation" a "he")."""
    out = [topic]
    bare = re.sub(r"\s*\([^)]*\)\s*$", "", topic).strip()
    out.append(bare)
    if bare.lower().startswith("the "):
        out.append(bare[4:])
    if "," in bare:
        out.append(bare.split(",")[0].strip())
    seen: list[str] = []
    for v in out:
        # a variant must be long enough to mean the subject ("US", "It" are not)
        if len(v) >= 3 and re.search(r"[A-Za-z]", v) and v.lower() not in (s.lower() for s in seen):
            seen.append(v)
    return sorted(seen, key=len, reverse=True)


def _pattern(variant: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(variant) + r"(?!\w)", re.IGNORECASE)


def _title_description(topic: str) -> str | None:
    """ "the film" for "X (film)", "the series" for "X (American TV series)"; else None."""
    m = re.search(r"\(([^)]*)\)\s*$", topic)
    if not m:
        return None
    last = m.group(1).strip().split()[-1].lower() if m.group(1).strip() else ""
    return f"the {last}" if last in _CATEGORY else None


def _history(turns: Sequence[TopicTurn], i: int) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for t in turns[max(0, i - HISTORY_TURNS):i]:
        out.append(("user", t.question.strip()))
        answer = t.answer.strip()
        # an unanswerable turn got no answer a user saw; "UNANSWERABLE" is a data-set marker
        if answer and answer != _UNANSWERABLE:
            out.append(("assistant", answer[:ANSWER_CHARS]))
    return tuple(out)


def _history_span(variants: Sequence[str], history: Sequence[tuple[str, str]]) -> str | None:
    """The subject as the history writes it (newest turn first, longest variant first)."""
    for _, text in reversed(history):
        for v in variants:
            m = _pattern(v).search(text)
            if m:
                return m.group(0)
    return None


def _pronoun_counts(turns: Sequence[TopicTurn], topic: str) -> Counter[str]:
    """Third-person pronouns of the conversation's turns on ``topic`` (questions and answers).

    The whole conversation is read (later turns too): this decides a label, it is not an
    input of the model, and a person's answers are often just a name or a date.
    """
    counts: Counter[str] = Counter()
    for t in turns:
        if t.topic == topic:
            counts.update(_classes(t.question) + _classes(t.answer))
    return counts


def _classes(text: str) -> list[str]:
    return [_PRONOUN_CLASS[w.lower()] for w in _PRONOUN_RE.findall(text)]


def _decide(counts: Counter[str], topic: str) -> tuple[str, bool]:
    """(class, clear): the dominant class when it is at least twice the next, else ("it", False).

    "they" needs more: the answers about a film or a show say "they" of its cast, so a
    title counts as plural only when "they" outnumbers "it" three to one.
    """
    ranked = counts.most_common()
    if not ranked:
        return "it", False
    best, n = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    if n < 2 or n < 2 * second:
        return "it", False
    if best == "they" and n < 3 * max(counts["it"], 1):
        return "it", False
    return best, True


def _cap(text: str, like: str) -> str:
    return text[:1].upper() + text[1:] if like[:1].isupper() else text


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"\s+([?.,!;:])", r"\1", text)


def _agree(before: str, after: str, cls: str) -> tuple[str, str]:
    """Verb agreement around a new "they" ("what is X" -> "what are they")."""
    if cls != "they":
        return before, after
    swap = {"is": "are", "was": "were", "has": "have", "does": "do"}
    before = re.sub(r"\b(is|was|has|does)(\s*)$", lambda m: swap[m.group(1).lower()] + m.group(2),
                    before, flags=re.IGNORECASE)
    after = re.sub(r"^(\s*)(is|was|has|does)\b", lambda m: m.group(1) + swap[m.group(2).lower()],
                   after, flags=re.IGNORECASE)
    return before, after


def _ablate(question: str, variant: str, cls: str, description: str | None,
            rng: random.Random) -> tuple[str, str] | None:
    """The question with its one mention of ``variant`` replaced; (message, form) or None."""
    matches = list(_pattern(variant).finditer(question))
    if len(matches) != 1 or _PRONOUN_RE.search(question):
        return None  # twice named, or a pronoun already there: which one means what is a guess
    start, end = matches[0].span()
    # swallow quotes around the title and a possessive after it
    while start > 0 and question[start - 1] in _QUOTES:
        start -= 1
    while end < len(question) and question[end] in _QUOTES and not question[end:].startswith("'s"):
        end += 1
    if sum(question[start:end].count(q) for q in _QUOTES) % 2:
        return None  # 'the "hanuman chalisa"': the title is only the start of a quoted name
    possessive = re.match(r"(['\u2019]s|['\u2019])(?!\w)", question[end:])
    if possessive:
        end += possessive.end()
    before, after = question[:start], question[end:]
    if re.match(r"\s+of\b", after):
        return None  # "the eye of a cyclone": the title is the head of a longer phrase
    words = before.lower().split()
    rest_is_end = not re.search(r"\w", after)
    if before.rstrip()[-1:] in ("-", ",", ":") and rest_is_end:
        # an apposition at the end ("the phrase, X"): the noun before it reads alone
        return _cap(_tidy(before.rstrip()[:-1] + after), question), "drop"
    if len(words) >= 2 and words[-2] == "the" and words[-1] in _CATEGORY:
        # "the book the sea of monsters" -> "the book": the question's own description
        return _tidy(before + after), "description"
    if words and words[-1] == "the" and not variant.lower().startswith("the "):
        before = before[: before.lower().rfind("the")]  # "the milky way" -> it
        words = words[:-1]
    prev = words[-1] if words else ""
    if cls in ("he", "she") and words[-2:] in (["what", "is"], ["what", "was"]):
        cls = "it"  # "what is selena?": the user's own word says thing, whatever the answers say
    if (not possessive and rest_is_end and prev in _DROP_PREPS and len(words) >= 4
            and rng.random() < 0.5):
        return _cap(_tidy(before[: before.lower().rfind(prev)] + after), question), "drop"
    subj, obj, poss = _FORMS[cls]
    if (description is not None and description.split()[-1] not in question.lower()
            and rng.random() < 0.5):
        form, word = "description", description + ("'s" if possessive else "")
    elif possessive:
        form, word = poss, poss
    elif not prev or prev in _SUBJECT_CUES:
        form, word = subj, subj
        before, after = _agree(before, after, cls)
    elif prev in _OBJECT_CUES or prev.endswith("ed"):
        form, word = obj, obj
    else:
        return None  # "male platypus": a modifier before the title; no pronoun fits there
    if not before.strip():
        word = _cap(word, question)
    return _tidy(f"{before} {word} {after}"), form


def _description(question: str, topic: str) -> re.Match[str] | None:
    """The one "this country" / "the above song" / "the film" of a question that can mean
    the subject: a pointer ("this", "the above") before any noun is preferred; a bare "the"
    counts only before a noun of the title or of :data:`_CATEGORY`."""
    pointed = [m for m in _POINTER_RE.finditer(question) if len(m.group(1)) >= 3
               and m.group(1).lower() not in _NOT_HEAD and m.group(1).lower() not in STOP_WORDS
               and not _relative_that(question, m)]
    if pointed:
        return pointed[0] if len(pointed) == 1 else None
    nouns = set(_CATEGORY)
    head = re.sub(r"\s*\([^)]*\)\s*$", "", topic).split()
    if head and len(head[-1]) >= 4:
        nouns.add(head[-1].lower())  # "Radioactive decay" -> "the decay"
    desc = _title_description(topic)
    if desc:
        nouns.add(desc.split()[-1])
    found = [m for m in _THE_RE.finditer(question) if m.group(1).lower() in nouns]
    return found[0] if len(found) == 1 else None


def _relative_that(question: str, m: re.Match[str]) -> bool:
    """ "the film that we talked about": "that" after a noun starts a clause, it points at
    nothing; as a pointer it follows a preposition or a verb ("in that city", "was that")."""
    if not m.group(0).lower().startswith("that"):
        return False
    prev = question[: m.start()].lower().split()[-1:]
    return not prev or prev[0] not in (_OBJECT_CUES | _SUBJECT_CUES)


def _deablate(question: str, cls: str, subject: str) -> str | None:
    """The question with its first pronoun of class ``cls`` replaced by ``subject``."""
    for m in _PRONOUN_RE.finditer(question):
        word = m.group(0).lower()
        if _PRONOUN_CLASS[word] != cls or word.endswith("self") or word.endswith("selves"):
            continue
        nxt = re.match(r"\s*([A-Za-z][\w-]*)", question[m.end():])
        possessive = word in ("its", "his", "their") or (
            word == "her" and nxt is not None and nxt.group(1).lower() not in _NOT_NOUN)
        name = subject + ("'" if possessive and subject.endswith("s") else
                          "'s" if possessive else "")
        return _tidy(question[: m.start()] + name + question[m.end():])
    return None


def _named(question: str, variants: Sequence[str]) -> str | None:
    for v in variants:
        if _pattern(v).search(question):
            return v
    return None


def _natural(question: str, topic: str, counts: Counter[str],
             span: str) -> tuple[str, str] | None:
    """(form, de-ablated question) when a real follow-up's reference to the subject is
    clear: one third-person pronoun class, agreeing with the subject's when that is
    known, or else one description of it; no list reference in sight."""
    if _LIST_REFERENCE.search(question):
        return None
    own = _classes(question)
    if own:
        cls, clear = _decide(counts - Counter(own), topic)  # not its own evidence
        if len(set(own)) != 1 or (clear and own[0] != cls):
            return None
        if own[0] == "it" and _EXPLETIVE_IT.search(question):
            return None
        made = _deablate(question, own[0], span)
        return (own[0], made) if made else None
    m = _description(question, topic)
    if m is not None:
        after = question[m.end():]
        tail = _AFTERWORD.match(after)
        after = after[tail.end():] if tail else after
        return "description", _tidy(question[: m.start()] + span + after)
    places = list(_THERE_RE.finditer(question))
    if len(places) != 1:
        return None
    m = places[0]
    before = question[: m.start()].lower().split()[-1:]
    after_word = question[m.end():].lower().split()[:1]
    if set(before) & _NOT_BEFORE_THERE or set(after_word) & _NOT_AFTER_THERE:
        return None
    return "there", _tidy(question[: m.start()] + "in " + span + question[m.end():])


def _examples(turns: Sequence[TopicTurn], rng: random.Random, natural: bool,
              counts: Counter[str]) -> Iterator[_Example]:
    """Every example of one conversation, in turn order; ``counts`` gets what was left out."""
    pronouns: dict[str, Counter[str]] = {}
    for i, turn in enumerate(turns):
        if i == 0:
            counts["excluded:first-turn"] += 1
            continue
        answer = turn.answer.strip()
        if not turn.topic or not answer or answer == _UNANSWERABLE:
            counts["excluded:unanswerable"] += 1
            continue
        question = turn.question.strip()
        history = _history(turns, i)
        if turn.topic not in pronouns:
            pronouns[turn.topic] = _pronoun_counts(turns, turn.topic)
        topic_counts = pronouns[turn.topic]
        variants = _variants(turn.topic)
        named = _named(question, variants)

        def make(kind: str, message: str, targets: tuple[str, ...] = (),
                 original: str | None = None, t: TopicTurn = turn,
                 h: tuple[tuple[str, str], ...] = history) -> _Example:
            return _Example(t.conversation, t.turn, kind, message, h, targets, original)

        if named and turn.is_switch:
            yield make("switch-named", question)
            continue
        if named:
            yield make("named", question)
            span = _history_span(variants, history)
            if span is None:
                counts["dropped-no-history-span"] += 1
                continue
            cls, _ = _decide(topic_counts, turn.topic)
            made = _ablate(question, named, cls, _title_description(turn.topic), rng)
            if made is None or made[0].lower() == question.lower() or len(made[0].split()) < 2:
                counts["excluded:ablation-unreadable"] += 1
                continue
            yield make(f"ablation:{made[1]}", made[0], (span,), question)
            continue
        reason = "excluded:switch-unnamed" if turn.is_switch else "excluded:natural-same-topic"
        span = _history_span(variants, history) if natural else None
        labelled = _natural(question, turn.topic, topic_counts, span) if span else None
        if span is None or labelled is None:
            counts[reason] += 1
            continue
        yield make(f"natural:{labelled[0]}", question, (span,))
        yield make("deablation", labelled[1])


def _check(example: _Example) -> bool:
    """Every target occurs (case-insensitively) in some history text."""
    texts = [t.lower() for _, t in example.history]
    return all(any(tg.lower() in t for t in texts) for tg in example.targets)


def _balance(examples: list[_Example], rng: random.Random) -> tuple[list[_Example], int]:
    """Thin the larger class at random to an even split when the share leaves the band."""
    pos = [e for e in examples if e.positive]
    if not examples or BALANCE_BAND[0] <= len(pos) / len(examples) <= BALANCE_BAND[1]:
        return examples, 0
    neg_n = len(examples) - len(pos)
    larger_positive = len(pos) > neg_n
    big = [k for k, e in enumerate(examples) if e.positive == larger_positive]
    drop = set(rng.sample(big, len(big) - min(len(pos), neg_n)))
    return [e for k, e in enumerate(examples) if k not in drop], len(drop)


def build_neural_data(data_root: Path | None, out: Path, *, seed: int = 13,
                      progress: bool = True, natural: bool = True) -> NeuralDataReport:
    """Write the neural resolver's training examples (JSON Lines) to ``out``.

    ``data_root`` is the shared data folder (``None``: ``$TURNSCOPE_DATA`` or
    ``../shared/data``). Same ``seed``, same file. ``natural`` (default) adds the real
    follow-ups labelled through their pronoun or description and their de-ablated twins;
    ``natural=False`` gives the ablation kinds only (see the module docstring).
    Raises :class:`DatasetError` naming the file when TopiOCQA train is missing or garbled.

    >>> report = build_neural_data(Path("/work/shared/data"), Path("/tmp/nd.jsonl"),
    ...                            progress=False)  # doctest: +SKIP
    >>> report.positive_kinds["ablation:it"] > 0, 0.45 <= report.positive_share <= 0.55  # doctest: +SKIP
    (True, True)
    """
    conversations = load_topiocqa_train(data_root)
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    examples: list[_Example] = []
    dropped_check = 0

    def run(step: Any) -> None:
        nonlocal dropped_check
        for conv in conversations:
            for ex in _examples(conv, rng, natural, counts):
                if _check(ex):
                    examples.append(ex)
                else:
                    dropped_check += 1
            step()

    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()) as bar:
            task = bar.add_task("neural training data", total=len(conversations))
            run(lambda: bar.advance(task))
    else:
        run(lambda: None)

    kept, dropped_balance = _balance(examples, rng)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with out.open("w", encoding="utf-8") as fh:
            for ex in kept:
                fh.write(json.dumps(ex.to_json(), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise DatasetError(f"{out}: cannot write the training examples ({exc})") from None

    pos_kinds = Counter(e.kind for e in kept if e.positive)
    neg_kinds = Counter(e.kind for e in kept if not e.positive)
    excluded = {k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("excluded:")}
    return NeuralDataReport(
        out=out, seed=seed, natural=natural,
        turns_read=sum(len(c) for c in conversations), examples=len(kept),
        positives=sum(pos_kinds.values()), by_source={SOURCE: len(kept)},
        positive_kinds=dict(sorted(pos_kinds.items())),
        negative_kinds=dict(sorted(neg_kinds.items())), excluded=excluded,
        # a target the history lacks can only come from a bug; it is dropped and counted too
        dropped_no_history_span=counts["dropped-no-history-span"] + dropped_check,
        dropped_for_balance=dropped_balance)


def render_sample(path: Path, n: int = 50, seed: int = 13) -> str:
    """A seeded random sample of a generated file, one compact Markdown block per item.

    >>> print(render_sample(Path("/tmp/nd.jsonl"), n=1))  # doctest: +SKIP
    1. `topiocqa-train:301:7:ablation:it` **when was it discovered?** → [Saturn] ...
    """
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read generated examples ({exc})") from None
    picked = sorted(random.Random(seed).sample(range(len(rows)), min(n, len(rows))))
    lines = []
    for k, idx in enumerate(picked, 1):
        r = rows[idx]
        last_q = next((h["text"] for h in reversed(r["history"]) if h["role"] == "user"), "")
        orig = f" (original: _{r['original']}_)" if r["original"] else ""
        lines.append(f"{k}. `{r['id']}` **{r['message']}** → {json.dumps(r['targets'], ensure_ascii=False)}"
                     f"{orig}<br>last user turn: _{last_q}_")
    return "\n".join(lines)
