"""Elliptical follow-ups: "and in France?", "what about the Pixel 9 Pro?", "and for children?".

Such a message is the previous question with one part swapped. The part is found by kind,
decided by structure and small closed lists, never by a model: a listed place, a year, a
season, an age group, a version number, a product (a capitalised head with a model number),
or a noun phrase that shares its head noun or its preposition with a phrase of the previous
question. When nothing of the same kind is there, a definite noun phrase ("and the
cinematographer?") is completed with the previous question's subject instead.

The replaced phrase is never kept, and every step abstains (None) when the evidence is not
unique: two places in the previous question, a phrase of no known kind, a fragment that is
a clause rather than a phrase.

English only: Japanese text gives None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from turnscope._lexicon import AUXILIARIES, PRONOUNS, VERBS, WH_WORDS, is_plural
from turnscope._matching import has_cjk
from turnscope.references._agreement import PERSON_NOUNS
from turnscope.references._places import canonical_place, find_places
from turnscope.references._preamble import last_question, question_subject, split_preamble

__all__ = ["Fragment", "FragmentKind", "named_kinds", "parse_fragment", "substitute", "substitute_in_thread",
           "which_of_pair"]

FragmentKind = Literal["place", "year", "season", "age_group", "version", "product", "other"]


@dataclass(frozen=True)
class Fragment:
    """One elliptical follow-up, taken apart.

    ``phrase`` is the new phrase as the query should spell it ("France", "the Pixel 9 Pro",
    "children"); ``preposition`` the one it came with ("in", "for"), if any; ``connective``
    the dropped opener ("and", "what about"), kept for tracing only.
    """

    phrase: str
    preposition: str | None
    kind: FragmentKind
    connective: str


_CONNECTIVE = (r"(?:and\s+)?(?:what|how)\s+about|what\s+of|and\s+also|but|and|also|same\s+(?:question\s+)?for|"
               r"ok(?:ay)?\s*,?\s*(?:and|what\s+about|how\s+about)")
_PREPS = r"in|for|to|with|of|on|at|during|from|under|over|after|before|without|per|by|via|into"
_FRAGMENT = re.compile(
    rf"^\s*(?P<conn>{_CONNECTIVE})\s*,?\s+(?:(?P<prep>{_PREPS})\s+)?(?P<phrase>(?:[^?!.,;:]|(?<=\d)\.(?=\d))+?)\s*[?!.]*\s*$",
    re.IGNORECASE)
# "is it different in version 12?", "is it the same for children?": a question about the
# previous answer that only swaps a part.
_SAME_OR_DIFFERENT = re.compile(
    rf"^\s*(?P<conn>(?:is|are|was|would)\s+(?:it|that|this|they|the\s+answer)\s+(?:any\s+)?"
    rf"(?:different|the\s+same|similar)|does\s+(?:it|that|this)\s+(?:differ|change|work\s+the\s+same))"
    rf"\s+(?P<prep>{_PREPS})\s+(?P<phrase>(?:[^?!.,;:]|(?<=\d)\.(?=\d))+?)\s*[?!.]*\s*$",
    re.IGNORECASE)
_MAX_FRAGMENT_WORDS = 6
_YEAR = re.compile(r"^(?:the\s+)?(?:year\s+)?(?P<year>1[89]\d\d|20\d\d)$", re.IGNORECASE)
_YEAR_IN_TEXT = re.compile(r"(?<![\w.-])(?:1[89]\d\d|20\d\d)(?![\w.-])")
_SEASON_WORDS = r"spring|summer|autumn|fall|winter"
_SEASON = re.compile(rf"^(?:the\s+)?(?P<season>{_SEASON_WORDS})(?:time)?$", re.IGNORECASE)
_SEASON_IN_TEXT = re.compile(rf"\b(?:the\s+)?(?:{_SEASON_WORDS})\b", re.IGNORECASE)
_AGE_WORDS = (r"children|child|kids|kid|adults|adult|teens|teenagers|teenager|toddlers|toddler|babies|baby|"
              r"infants|infant|seniors|the\s+elderly|elderly\s+people|older\s+adults|older\s+people|"
              r"pregnant\s+women|adolescents|newborns|under[- ]18s|over[- ]65s")
_AGE = re.compile(rf"^(?:(?:a|an|the)\s+)?(?:{_AGE_WORDS})$", re.IGNORECASE)
_AGE_IN_TEXT = re.compile(rf"\b(?:(?:a|an)\s+)?(?:{_AGE_WORDS})\b", re.IGNORECASE)
_VERSION = re.compile(r"^(?:(?:version|release|ver\.?|v)\s*)(?P<num>\d+(?:\.\d+)*)$|^(?P<bare>\d+\.\d+(?:\.\d+)*)$",
                      re.IGNORECASE)
# "PostgreSQL 16", "Python 3.12", "version 12", "v18": the number of a named release.
_VERSION_IN_TEXT = re.compile(
    r"\b(?:version|release|v)\s*(?P<a>\d+(?:\.\d+)*)\b|"
    r"\b[A-Z][\w.+#-]*\s+(?P<b>\d+(?:\.\d+)*)(?![\w.])(?!\s*(?:%|GB|MB|TB|kg|g|mg|km|m|days?|weeks?|"
    r"months?|years?|hours?|minutes?))", re.IGNORECASE)
# A product by shape: a capitalised (or iCamel) head followed, somewhere, by a model number
# or a one-letter model ("Pixel 9 Pro", "iPhone 16 Pro", "Model Y", "Galaxy S24 Ultra").
_HEAD = r"(?:[A-Z][\w+-]*|i[A-Z][\w+-]*|e[A-Z][\w+-]*)"
_MODEL = r"(?:\d[\w.+-]*|[A-Z]\d*|[A-Z]{1,3}\d[\w-]*)"
_PRODUCT = re.compile(rf"{_HEAD}(?:\s+{_HEAD})*\s+{_MODEL}(?:\s+(?:{_HEAD}|{_MODEL}))*|[A-Z][a-z]*\d+[A-Za-z]*")
_DET = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_BAD_FIRST = frozenset(w for w in PRONOUNS | AUXILIARIES | WH_WORDS if w not in {"one", "ones"}) | {
    "if", "when", "whether", "because", "not", "so", "then", "also", "maybe", "yes", "no"}


def _kind(phrase: str) -> FragmentKind | None:
    bare = _DET.sub("", phrase)
    if _YEAR.match(phrase):
        return "year"
    if _SEASON.match(phrase):
        return "season"
    if _AGE.match(phrase):
        return "age_group"
    if canonical_place(phrase) is not None or canonical_place(bare) is not None:
        return "place"
    if _VERSION.match(phrase):
        return "version"
    if _PRODUCT.fullmatch(bare):
        return "product"
    words = bare.split()
    if any(w.lower() in VERBS and w.lower() not in {"sale", "use", "cost", "support", "work"} and not w[:1].isupper()
           for w in words[1:]):
        return None  # a clause ("and the penalty is calculated how"), not a phrase
    return "other"


def parse_fragment(text: str) -> Fragment | None:
    """The parts of an elliptical follow-up, or None when ``text`` is not one.

    >>> parse_fragment("and in France?")
    Fragment(phrase='France', preposition='in', kind='place', connective='and')
    >>> parse_fragment("what about the Pixel 9 Pro?").kind
    'product'
    >>> parse_fragment("and if I already pushed them?") is None
    True
    """
    if has_cjk(text):
        return None
    m = _FRAGMENT.match(text) or _SAME_OR_DIFFERENT.match(text)
    if m is None:
        return None
    phrase = " ".join(m.group("phrase").split())
    words = phrase.split()
    if not words or len(words) > _MAX_FRAGMENT_WORDS or words[0].lower() in _BAD_FIRST:
        return None
    kind = _kind(phrase)
    if kind is None:
        return None
    if kind == "place":
        canon = canonical_place(phrase) or canonical_place(_DET.sub("", phrase))
        phrase = canon if canon is not None else phrase
    elif kind == "version":
        vm = _VERSION.match(phrase)
        phrase = (vm.group("num") or vm.group("bare")) if vm is not None else phrase
    prep = m.group("prep")
    return Fragment(phrase=phrase, preposition=prep.lower() if prep else None, kind=kind,
                    connective=" ".join(m.group("conn").lower().split()))


# Substitution --------------------------------------------------------------------------

def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _only(spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The one span, if exactly one (duplicates of the same text count once)."""
    return spans[0] if len(spans) == 1 else None


def _append(question: str, frag: Fragment) -> str | None:
    """"What is the standard tax rate?" + "in France" -> "What is the standard tax rate in
    France?"."""
    if frag.preposition is None or _MAY_HOLD_A_PART.search(question):
        # a question that already says when, where or for whom in words the closed lists do
        # not know ("in July", "a 30-year-old", "here") may hold the very part the fragment
        # swaps: adding the new part beside it would keep the old
        return None
    stem = question.rstrip(" ?.!")
    end = question[len(stem):].strip() or "?"
    return f"{stem} {frag.preposition} {frag.phrase}{end}"


_NOT_A_HEAD = frozenset("after before later earlier since then again too also instead back ago "
                        "first next last same other".split())
_MAY_HOLD_A_PART = re.compile(
    r"\d|\b(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"year|years|decade|century|month|months|week|weeks|today|tonight|tomorrow|yesterday|now|"
    r"old|aged?|ages|adults?|seniors?|elderly|teens?|infants?|people|person|someone|"
    r"here|there|abroad|locally|country|countries|city|cities|state|states|region|area)\b",
    re.IGNORECASE)


def _names_something(question: str) -> bool:
    """Whether a question holds a capitalised word other than its first and "I"."""
    return any(w not in _NOT_TOPIC for w in re.findall(r"(?<![\w'’-])[A-Z][\w'’-]*", question[1:]))


def _head(word: str) -> str:
    w = word.lower().strip(",.")
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


_NP_STOP = frozenset(PRONOUNS | AUXILIARIES | WH_WORDS) | {
    "in", "for", "to", "with", "of", "on", "at", "by", "from", "and", "or", "about", "per", "than"}


def _same_head(question: str, frag: Fragment) -> str | None:
    """Replace the noun phrase of ``question`` whose head noun is the fragment's ("a US
    passport" by "a UK passport", "a heat pump dryer" by "a condenser dryer")."""
    head = _head(frag.phrase.split()[-1])
    hits = [m for m in re.finditer(r"[\w'’-]+", question) if _head(m.group(0)) == head]
    if len(hits) != 1:
        return None
    hit = hits[0]
    # walk left over the modifiers of the head, up to and including a determiner
    start = hit.start()
    for m in reversed(list(re.finditer(r"[\w'’-]+", question[:hit.start()]))):
        low = m.group(0).lower()
        if question[m.end():start].strip():
            break  # punctuation between: the phrase ended
        if low in {"the", "a", "an", "my", "our", "your"}:
            start = m.start()
            break
        if low in WH_WORDS or low in AUXILIARIES:
            break  # "What factors led to …": the wh-word is not a modifier, whatever its case
        if m.group(0).islower() and (low in _NP_STOP or low in VERBS):
            break  # "US" in "a US passport" is a modifier, not the pronoun "us"
        start = m.start()
    old = question[start:hit.end()]
    if old.lower() == frag.phrase.lower():
        return None
    if frag.preposition is not None:
        before = question[:start].rstrip().rsplit(" ", 1)[-1].lower()
        if before != frag.preposition:
            return None
    new = frag.phrase
    if not _DET.match(new) and _DET.match(old) and frag.kind == "other":
        new = _DET.match(old).group(0) + new  # type: ignore[union-attr]
    return _replace(question, start, hit.end(), new)


_FINAL_PP = re.compile(
    rf"\b(?P<prep>{_PREPS})\s+(?P<np>(?:the\s+|a\s+|an\s+)?[\w'’-]+(?:\s+[\w'’-]+){{0,3}})\s*[?.!]*\s*$",
    re.IGNORECASE)


def _final_pp(question: str, frag: Fragment) -> str | None:
    """"What's your return policy for electronics?" + "for clothing" -> "... for clothing?";
    a bare phrase without a preposition ("sale items") only replaces a bare "for" object."""
    m = _FINAL_PP.search(question)
    if m is None:
        return None
    np = m.group("np")
    if any(w.lower() in _NP_STOP or w.lower() in VERBS for w in np.split()):
        return None
    if frag.preposition is not None:
        if m.group("prep").lower() != frag.preposition:
            return None
    elif not (m.group("prep").lower() == "for" and not _DET.match(np) and not _DET.match(frag.phrase)
              and frag.phrase.islower() and np.islower()):
        return None
    return _replace(question, m.start("np"), m.end("np"), frag.phrase)


_COPULA_OF = re.compile(r"^(?P<wh>what|who)(?P<cop>['’]s|\s+is|\s+are|\s+was|\s+were)\s+"
                        r"(?P<np>the\s+[\w\s'’-]+?)\s+(?P<rest>of\s+.+)$", re.IGNORECASE)
_CAP_SPAN = re.compile(r"(?<![\w'’-])(?:[A-Z][\w'’-]*|[a-z]+[A-Z][\w-]*)(?:\s+(?:[A-Z][\w'’-]*|\d[\w.]*))*")
_NOT_TOPIC = frozenset("I The A An What Who Which Why How When Where Is Are Do Does Did Can Could Should "
                       "January February March April May June July August September October November "
                       "December Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())


#: words capitalised only because they open the question ("Besides, …")
_OPENERS = frozenset("besides also however so then now okay ok well actually anyway thanks "
                     "and but or yes no finally first next still tell explain describe give show list "
                     "compare please".split())
_PRONOUN_WORDS = frozenset("it its they them their he him his she her this that these those one ones".split())


def _topic(question: str) -> str | None:
    """What the previous question is about, to complete a fragment with: its one proper
    name (or a coordination of two: "Django and Flask"), else its subject noun phrase."""
    body = last_question(question)
    names: list[tuple[int, int]] = []
    for m in _CAP_SPAN.finditer(body):
        words = m.group(0).split()
        while words and (words[0] in _NOT_TOPIC or "'" in words[0] or "’" in words[0]
                         or (m.start() == 0 and words[0].lower() in _OPENERS and len(words) == 1)):
            words.pop(0)
        if words:
            s = m.start() + m.group(0).index(words[0])
            names.append((s, s + len(" ".join(words))))
    if len(names) == 1:
        return body[names[0][0]:names[0][1]]
    if len(names) == 2:
        between = body[names[0][1]:names[1][0]].strip().lower()
        if between in {"and", "or", "vs", "vs.", "versus"}:
            return body[names[0][0]:names[1][1]]
    if names:
        return None
    subject = question_subject(body)
    if subject is None or any(w.lower() in _PRONOUN_WORDS for w in subject.split()):
        return None
    # "the difference between X and Y" is about X and Y
    pair = re.match(r"^the\s+differences?\s+between\s+(?P<pair>.+)$", subject, re.IGNORECASE)
    return pair.group("pair") if pair is not None else subject


def _complete(question: str, frag: Fragment) -> str | None:
    """"Who composed the music for Parasite?" + "the cinematographer" -> "Who is the
    cinematographer of Parasite?"; "What is the capital of New Zealand?" + "the official
    languages" -> "What are the official languages of New Zealand?"."""
    if frag.preposition is not None or not frag.phrase.lower().startswith("the "):
        return None
    if len(frag.phrase.split()) > 4 or any(w.lower() in _NP_STOP for w in frag.phrase.split()[1:]):
        return None  # "the causes in North America" has its own complement
    if frag.phrase.split()[-1].lower() in _NOT_A_HEAD:
        return None  # "the year after" is an adverbial, not a noun to complete
    if any(not w.islower() for w in frag.phrase.split()[1:]):
        # "and the Galaxy S24?": a name is swapped for a name, never completed with the
        # previous subject ("the Galaxy S24 of the iPhone 16" keeps what the user left)
        return None
    plural = is_plural(frag.phrase)
    q = question.strip().rstrip("?.! ")
    m = _COPULA_OF.match(q)
    if m is not None:
        cop = " are" if plural else " is"
        if m.group("cop").strip().lower() in {"was", "were"}:
            cop = " were" if plural else " was"
        return f"{m.group('wh')}{cop} {frag.phrase} {m.group('rest')}?"
    topic = _topic(q)
    if topic is None or topic.lower() in frag.phrase.lower():
        return None
    head = frag.phrase.split()[-1].lower()
    if head in PERSON_NOUNS:
        return f"Who is {frag.phrase} of {topic}?"
    return f"What {'are' if plural else 'is'} {frag.phrase} of {topic}?"


def substitute(previous_question: str, fragment: Fragment) -> str | None:
    """The previous question with the fragment's part swapped in, or completed by it.

    >>> substitute("What is the minimum wage in Germany?", parse_fragment("and in France?"))
    'What is the minimum wage in France?'
    >>> substitute("How much is the iPhone 16 Pro?", parse_fragment("what about the Pixel 9 Pro?"))
    'How much is the Pixel 9 Pro?'
    >>> substitute("Is Berlin bigger than Paris?", parse_fragment("and Rome?")) is None
    True
    """
    return _swap(previous_question, fragment, complete=True)


def substitute_in_thread(previous_questions: Sequence[str], fragment: Fragment, *, max_back: int = 3) -> str | None:
    """``substitute`` over a thread's previous questions (oldest first, as resolved).

    A part of the same kind is looked for in the latest question, then in up to
    ``max_back - 1`` before it ("and to australia?" after "what shipping options do you have
    to canada?" and "does the second one include tracking?"); only when none has one is the
    latest question completed or extended.

    >>> substitute_in_thread(["Shipping options to Canada?", "Is tracking included?"],
    ...                      parse_fragment("and to australia?"))
    'Shipping options to Australia?'
    """
    recent = [q for q in previous_questions if q.strip()][-max_back:]
    for question in reversed(recent):
        found = _swap(question, fragment, complete=False)
        if found is not None:
            return found
    return _swap(recent[-1], fragment, complete=True) if recent else None


def _swap(previous_question: str, fragment: Fragment, *, complete: bool) -> str | None:
    if has_cjk(previous_question):
        return None
    question = split_preamble(previous_question)[0].strip()
    if not question or parse_fragment(question) is not None:
        # the previous question is itself a fragment: nothing to swap a part of
        return None
    frag = fragment
    result: str | None = None
    if frag.kind == "place":
        places = find_places(question)
        if len({p[2] for p in places}) == 1 and not any(
                re.match(r"\s+[A-Z]", question[e:]) for _, e, _ in places):
            # (not when the place begins a longer name: "the London Underground")
            spans = [(s, e) for s, e, _ in places]
            result = question
            for s, e in reversed(spans):
                result = _replace(result, s, e, frag.phrase)
        elif not places and not _names_something(question):
            # (a name the list of places does not know, "the VAT rate in Ruritania", may be
            # the very part the fragment swaps: adding France beside it would keep it)
            result = _append(question, frag) if complete else None
    elif frag.kind == "year":
        years = [(m.start(), m.end()) for m in _YEAR_IN_TEXT.finditer(question)]
        year = _YEAR.match(frag.phrase)
        new = year.group("year") if year is not None else frag.phrase
        one = _only(years)
        if one is not None:
            result = _replace(question, one[0], one[1], new)
        elif not years:
            result = (_append(question, Fragment(new, frag.preposition, frag.kind, frag.connective))
                      if complete else None)
    elif frag.kind == "season":
        seasons = [(m.start(), m.end()) for m in _SEASON_IN_TEXT.finditer(question)]
        one = _only(seasons)
        if one is not None:
            result = _replace(question, one[0], one[1], frag.phrase)
        elif not seasons:
            result = _append(question, frag) if complete else None
    elif frag.kind == "age_group":
        groups = [(m.start(), m.end()) for m in _AGE_IN_TEXT.finditer(question)]
        one = _only(groups)
        if one is not None:
            result = _replace(question, one[0], one[1], _DET.sub("", frag.phrase))
        elif not groups:
            result = _append(question, frag) if complete else None
    elif frag.kind == "version":
        versions = [m for m in _VERSION_IN_TEXT.finditer(question)]
        if len(versions) == 1:
            vm = versions[0]
            group = "a" if vm.group("a") is not None else "b"
            result = _replace(question, vm.start(group), vm.end(group), frag.phrase)
    elif frag.kind == "product":
        products = [(m.start(), m.end()) for m in _PRODUCT.finditer(question)]
        one = _only(products)
        if one is not None:
            new = frag.phrase
            if _DET.match(new) and re.search(r"\b(?:the|a|an)\s+$", question[:one[0]], re.IGNORECASE):
                new = _DET.sub("", new)
            result = _replace(question, one[0], one[1], new)
    else:
        result = _same_head(question, frag) or _final_pp(question, frag) or (
            _complete(question, frag) if complete else None)
    if result is None or result.strip().lower() == question.lower():
        return None
    return result


# "Which one is faster?" ----------------------------------------------------------------

_WHICH = re.compile(r"^\s*(?:(?:so|and|ok(?:ay)?|then)\s*,?\s+)?which(?:\s+one)?"
                    r"(?:\s+of\s+(?:the\s+two|them|the\s+pair|both))?"
                    r"\s+(?:is|['’]s|would\s+be|should\s+i|do\s+you|would\s+you|works|runs|has|costs)\b"
                    r"[^,;:]*?[?.!]*\s*$",
                    re.IGNORECASE)
_PAIR = re.compile(r"^(?P<a>.+?)\s+(?:and|or|vs\.?|versus)\s+(?P<b>.+)$", re.IGNORECASE)


def which_of_pair(message: str, question: str) -> str | None:
    """"Which one is faster?" after a question about two named things: the message asks to
    choose between them, so the query names both.

    >>> which_of_pair("Which one is faster?", "What's the difference between Django and Flask?")
    'Which one is faster, Django or Flask?'
    >>> which_of_pair("Which one is faster?", "What is Django?") is None
    True
    """
    if has_cjk(message) or not _WHICH.match(message) or _CAP_SPAN.search(message[1:]):
        return None
    topic = _topic(question.strip().rstrip("?.! "))
    if topic is None:
        return None
    pair = _PAIR.match(topic)
    if pair is None:
        return None
    a, b = pair.group("a"), pair.group("b")
    if not (a[:1].isupper() and b[:1].isupper()) or len(a.split()) > 4 or len(b.split()) > 4:
        return None  # two proper names, not a phrase that happens to hold "and"
    stem = message.rstrip(" ?.!")
    return f"{stem}, {a} or {b}?"


def named_kinds(text: str) -> dict[FragmentKind, set[str]]:
    """The parts of ``text`` of a closed kind a fragment swaps (places, years, seasons, age
    groups, versions, products), each kind with what it names.

    >>> sorted(named_kinds("Is the minimum wage in Germany higher in 2024?"))
    ['place', 'year']
    """
    if has_cjk(text):
        return {}
    found: dict[FragmentKind, set[str]] = {}
    for kind, names in (
            ("place", {p[2] for p in find_places(text)}),
            ("year", set(_YEAR_IN_TEXT.findall(text))),
            ("season", {m.lower() for m in _SEASON_IN_TEXT.findall(text)}),
            ("age_group", {m.lower() for m in _AGE_IN_TEXT.findall(text)}),
            ("version", {m.group(m.lastgroup or 0) for m in _VERSION_IN_TEXT.finditer(text)
                         if not _YEAR_IN_TEXT.fullmatch(m.group(m.lastgroup or 0))}),
            ("product", set(_PRODUCT.findall(text)))):
        if names:
            found[kind] = names  # type: ignore[index]
    return found
