"""The text forms of the neural resolver's training examples (private): a topic's variants,
the subject as the history writes it, pronoun agreement, ablation and its inverse, and the
real follow-ups that point at the subject one clear way. :mod:`.neural_data` builds the
examples from these; the patterns are documented where they are set.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

from turnscope.datasets import STOP_WORDS, TopicTurn

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

