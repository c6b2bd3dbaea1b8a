"""The grammar a follow-up's references are read by, in two parts: agreement between a
pronoun and the names a conversation offers it, then questions taken apart (the places
they name, their preamble and subject, ellipsis; the section "Questions" below).

"How old is *he*?" after "Parasite (2019) was directed by Bong Joon-ho" needs a person, and
only one of the two names is a person. Nothing here guesses from the look of a name alone
(a capitalised pair of words is as often a company or a film as a person): a name counts as a
person only when the sentence that introduces it says so by its grammar ("directed by X",
"X was born", "X, the CEO of", "CEO X", "X (born 1969)", "Dr X", "X is a singer", "X ... his"),
and as a thing when the grammar says that instead ("X was directed by", "the X", "X (2019)",
"X is a film"). Everything else is unknown, and the functions say so with None: a pronoun
resolved to the wrong kind of name puts a wrong word in the query, which is worse than none.

English only: Japanese text gives None / no names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from turnscope._lexicon import (
    ADVERBS,
    AUXILIARIES,
    PREPOSITIONS,
    PRONOUNS,
    VERBS,
    WH_WORDS,
    has_cjk,
    is_plural,
    predicate_word,
)

__all__ = [
    "Agreement",
    "Fragment",
    "FragmentKind",
    "PLACES",
    "attach_topic",
    "canonical_place",
    "elaboration_query",
    "find_places",
    "is_person",
    "last_question",
    "named_kinds",
    "parse_fragment",
    "person_names",
    "pronoun_agreement",
    "question_subject",
    "referring_it",
    "split_preamble",
    "substitute",
    "substitute_in_thread",
    "thing_subject",
    "which_of_pair",
]

Agreement = Literal["person", "thing", "plural"]

_PERSON_PRONOUNS = frozenset("he she him her his hers himself herself".split())
_THING_PRONOUNS = frozenset("it its itself".split())
_PLURAL_PRONOUNS = frozenset("they them their theirs themselves".split())
_PRONOUN_RE = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself|it|its|itself|"
                         r"they|them|their|theirs|themselves)\b", re.IGNORECASE)
# "it" that points at nothing: weather, time and extraposition ("how long does it take to",
# "is it worth it to", "it's raining", "is it possible to"). Such an "it" says nothing about
# the antecedent's kind, so it is not counted.
_DUMMY_IT = re.compile(
    r"\bit\s+(?:takes?|took|costs?\s+to|rains?|snows?|seems?|appears?|depends|matters)\b|"
    r"\b(?:is|was|will|would|does|did)\s+it\s+(?:be\s+)?(?:possible|worth|better|best|okay|ok|"
    r"safe|necessary|true|hard|easy|normal|bad|wise|legal|allowed|too\s+late|too\s+early)\b|"
    r"\bit(?:'s|’s|\s+is|\s+was)\s+(?:possible|worth|better|best|okay|ok|safe|necessary|true|"
    r"hard|easy|normal|raining|snowing|late|early|time)\b|"
    r"\b(?:make|makes|made)\s+it\s+(?:to|through)\b",
    re.IGNORECASE,
)


def _dummy_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _DUMMY_IT.finditer(text)]


def _refers(m: re.Match[str], text: str, dummy_spans: list[tuple[int, int]]) -> bool:
    """Whether a pronoun found in ``text`` points at something: not the field "IT" ("IT
    support"), not the dummy "it" of "how long does it take to"."""
    word = m.group(0)
    if word == "IT" and not text.isupper():
        return False
    return not (word.lower() == "it" and any(a <= m.start() < b for a, b in dummy_spans))


def pronoun_agreement(text: str) -> Agreement | None:
    """The kind of antecedent the third-person pronouns of ``text`` need.

    he/she/him/her/his/himself/herself -> "person"; it/its/itself -> "thing";
    they/them/their -> "plural" (a group, several things, or an organisation). None when
    the message has none of them, only a dummy "it" ("how long does it take to ..."), or
    pronouns of two kinds ("is he still in it?": the evidence does not agree).

    >>> pronoun_agreement("How old is he?")
    'person'
    >>> pronoun_agreement("is it still used today?")
    'thing'
    >>> pronoun_agreement("is he in it?") is None
    True
    """
    if has_cjk(text):
        return None
    dummy_spans = _dummy_spans(text)
    kinds: set[Agreement] = set()
    for m in _PRONOUN_RE.finditer(text):
        if not _refers(m, text, dummy_spans):
            continue
        low = m.group(0).lower()
        if low in _PERSON_PRONOUNS:
            kinds.add("person")
        elif low in _THING_PRONOUNS:
            kinds.add("thing")
        elif low in _PLURAL_PRONOUNS:
            kinds.add("plural")
    return kinds.pop() if len(kinds) == 1 else None


# Names ---------------------------------------------------------------------------------

#: nouns that name a person by role or occupation ("X is a director", "architect X")
PERSON_NOUNS = frozenset(
    "director actor actress singer songwriter singer-songwriter musician composer writer author "
    "novelist poet playwright painter artist sculptor architect chef cook baker player footballer "
    "athlete runner swimmer cyclist boxer golfer cricketer coach manager captain president "
    "vice-president minister senator congressman congresswoman governor mayor king queen prince "
    "princess emperor empress pope bishop priest ceo cfo cto coo chairman chairwoman chairperson "
    "founder co-founder cofounder executive engineer scientist physicist chemist biologist "
    "mathematician philosopher economist historian inventor entrepreneur businessman businesswoman "
    "journalist reporter presenter host comedian rapper drummer guitarist pianist violinist "
    "conductor producer filmmaker screenwriter cinematographer designer photographer doctor "
    "physician surgeon nurse lawyer judge professor teacher student mvp man woman boy girl son "
    "daughter father mother wife husband brother sister widow officer general soldier saint "
    "explorer astronaut pilot dancer model youtuber streamer influencer politician leader diplomat "
    "activist dictator monarch lyricist vocalist frontman frontwoman bassist keyboardist "
    "quarterback striker goalkeeper midfielder defender pitcher batter jockey driver champion "
    "monk nun prophet researcher psychologist psychiatrist astronomer geologist botanist "
    "zoologist anthropologist sociologist linguist critic editor publisher illustrator animator "
    "choreographer chancellor premier sheriff detective spy assassin heir descendant "
    "grandson granddaughter nephew niece uncle aunt cousin friend partner girlfriend boyfriend "
    "colleague mentor apprentice pupil disciple protagonist narrator".split()
)
_PERSON_NOUN_PLURALS = frozenset(
    {n + "s" for n in PERSON_NOUNS if not n.endswith(("s", "man", "woman", "child"))}
    | {"men", "women", "children", "people"})

#: nouns that name a thing: "X is a film" makes X not a person
THING_NOUNS = frozenset(
    "film movie documentary book novel cookbook song album single record company corporation firm "
    "startup brand band group team club city town village country state region island river "
    "mountain lake framework library language database tool app application product phone car "
    "model game show series sitcom painting sculpture building tower bridge museum university "
    "college school hospital vaccine drug medicine medication software service platform website "
    "site restaurant dish recipe festival event war battle treaty law act party organisation "
    "organization agency network channel magazine newspaper journal play opera musical ballet "
    "programme program system protocol format standard device console engine ship train airline "
    "airport station hotel park church cathedral temple palace castle stadium disease virus "
    "condition syndrome species breed plant tree animal element compound chemical planet star "
    "galaxy comet satellite spacecraft rocket award prize prize-winning character franchise "
    "trilogy anthology poem essay article study report theory religion movement genre".split()
)

_ORG_SUFFIX = frozenset(
    "inc inc. ltd ltd. llc plc corp corp. corporation company co co. group foundation institute "
    "university college school labs lab laboratories research studios studio records press "
    "team project association society council agency bank motors systems technologies "
    "technology software games entertainment pictures films media network networks airlines "
    "airways holdings partners capital ventures industries international united city fc "
    "club hospital museum gallery park street road avenue river mountain mountains lake bay "
    "island islands county state square bridge airport station hall tower palace cathedral "
    "church temple centre center stadium arena award awards prize festival league cup "
    "championship series fund trust party army navy force forces ministry department office "
    "committee commission court service services church war act treaty empire kingdom "
    "republic dynasty pass app cloud stack store".split()
)
_HONORIFICS = frozenset(
    "mr mrs ms miss mx dr sir dame prof professor lord lady president senator governor judge "
    "justice pope rev reverend saint king queen prince princess emperor empress chancellor "
    "minister archbishop bishop father sister brother uncle aunt gen brig col lt sgt capt maj adm gov sen "
    "rep".split()
)
#: titles that belong to the name and mark a person only beside other evidence (bands, places
#: and ships carry them too: "King Crimson", "Prince Edward Island")
_TITLES_OF_NAMES = frozenset("king queen prince princess lord lady emperor empress saint sir dame".split())
#: role nouns too general to mark the next capitalised word as a name ("leading man Hollywood")
_GENERIC_ROLES = frozenset("man woman boy girl model host leader star".split())
#: capitalised words that start sentences or name months and days, never a person's name
_NOT_NAME = frozenset(
    "the a an in on at this that these those it he she they we you i his her their its our my "
    "your yes no and but or if when where what who whom whose why how which after before since "
    "during under over from to for with by as then so there here also both each every all some "
    "many most first later today tomorrow yesterday however although though while because "
    "once another other such one two three four five six seven eight nine ten is are was were "
    "do does did can could will would should may might must not please thanks thank hi hello "
    "hey ok okay sure well oh unlike like despite among between through without within about "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday christmas easter best "
    "founded born died north south east west new old great whenever wherever whatever unless until "
    "upon following according whilst meanwhile eventually finally initially soon".split()
)
_PARTICLES = frozenset("da de del della di van von der den le la bin al el dos das du ter ten y st.".split())

# A word of a name: a capital letter (any script with case), then letters, apostrophes and
# hyphens ("Joon-ho", "O'Brien", "Jokić", "Émile").
_WORD = r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*"
_SPAN_RE = re.compile(rf"(?<![\w'’\-]){_WORD}(?:\s+{_WORD})*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(]?[A-Z])|\n+")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    text: str

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.text.split())


_INNER_CAPITAL_PREFIXES = ("Mc", "Mac", "O'", "O’", "Di", "De", "Le", "La", "Van", "Von", "Du")


def _is_name_word(word: str) -> bool:
    if not word[:1].isupper():
        return False
    core = word.replace("-", "").replace("'", "").replace("’", "")
    # "NBA", "US", "HNSW": acronyms are organisations, leagues, standards, not people
    if len(core) > 1 and core.isupper():
        return False
    # "McDonald", "O'Brien", "DiCaprio" carry one capital inside; "PostgreSQL", "YouTube",
    # "RediSearch" carry one elsewhere and read as product names
    inner = [c for c in core[1:] if c.isupper()]
    if inner and not (len(inner) == 1 and word.startswith(_INNER_CAPITAL_PREFIXES)):
        return False
    return word.lower() not in _NOT_NAME


def _name_spans(text: str) -> list[_Span]:
    """Runs of capitalised words (with lower-case particles inside: "Leonardo da Vinci"),
    leading non-name words ("The", "In") trimmed."""
    out: list[_Span] = []
    for m in _SPAN_RE.finditer(text):
        words = m.group(0).split()
        pos = m.start()
        run: list[tuple[int, str]] = []
        cursor = pos
        for w in words:
            idx = text.index(w, cursor)
            cursor = idx + len(w)
            run.append((idx, w))
        current: list[tuple[int, str]] = []

        def flush(cur: list[tuple[int, str]]) -> None:
            while cur and cur[-1][1].lower() in _PARTICLES:
                cur.pop()
            if cur:
                s, e = cur[0][0], cur[-1][0] + len(cur[-1][1])
                out.append(_Span(s, e, text[s:e]))

        for idx, w in run:
            if w.endswith(("'s", "’s")) and _is_name_word(w[:-2]):
                # a possessive ends the name: "Gustave Eiffel's engineering company"
                current.append((idx, w[:-2]))
                flush(current)
                current = []
            elif _is_name_word(w):
                current.append((idx, w))
            elif w.lower() in _PARTICLES and current:
                current.append((idx, w))
            else:
                flush(current)
                current = []
        flush(current)
    return out


def _clean(span: _Span) -> tuple[str, bool] | None:
    """The span's name without a leading honorific, and whether an honorific was there;
    None when the span cannot be a person's name (an organisation or place suffix)."""
    words = list(span.words)
    honorific = False
    if len(words) == 1 and words[0].lower() in _HONORIFICS:
        return None  # "Brig." of "Brig. Gen. Warren": an abbreviation, not a name
    while words and words[0].lower().rstrip(".") in _HONORIFICS and len(words) > 1:
        if words[0].lower() in _TITLES_OF_NAMES:
            break  # "Queen Rania", "Lady Gaga", "King Crimson": the title is part of the name
        words.pop(0)
        honorific = True
    # "Percussionist Fehn is ...": a capitalised role word at the start of a sentence
    while len(words) > 1 and words[0].lower() not in _TITLES_OF_NAMES \
            and (words[0].lower() in PERSON_NOUNS or words[0].lower().endswith("ing")):
        honorific = honorific or words[0].lower() in PERSON_NOUNS
        words.pop(0)
    if not words or len(words) > 5:
        return None
    if len(words[-1]) == 1:
        return None  # "Tom T. Hall" cut at the initial: where the name ends is unknown

    if words[-1].lower() in _ORG_SUFFIX:
        return None
    return " ".join(words), honorific


_PN = "|".join(sorted(PERSON_NOUNS, key=len, reverse=True))
_PNS = "|".join(sorted(_PERSON_NOUN_PLURALS, key=len, reverse=True))
_TN = "|".join(sorted(THING_NOUNS, key=len, reverse=True))

# Strong "by" phrases: only a person directs, composes or paints. Weak ones ("created by",
# "developed by") take companies as often as people, so they need a two-word name.
_BY_STRONG = re.compile(
    r"\b(?:directed|written|co-written|co-directed|composed|painted|sung|narrated|illustrated|"
    r"authored|sculpted|voiced|coached|choreographed|photographed|penned|portrayed|played|"
    r"performed|invented|discovered|founded|co-founded|murdered|assassinated|married|"
    r"fathered|mothered|sired|raised)\s+by\s+$",
    re.IGNORECASE)
_BY_WEAK = re.compile(r"\b(?:created|developed|designed|built|made|produced|led|started|proposed|"
                      r"coined|formulated|pioneered|introduced|edited|translated|hosted|presented|"
                      r"won|owned|signed)\s+by\s+$", re.IGNORECASE)
_PN_SPECIFIC = "|".join(sorted(PERSON_NOUNS - _GENERIC_ROLES, key=len, reverse=True))
_ROLE_BEFORE = re.compile(rf"(?:^|[^\w'’-])(?:{_PN_SPECIFIC}|ceo|cto|cfo|coo)\s+$", re.IGNORECASE)
# lower case only: "Sheryl Crow and Friends: Live From ..." is a title, not a list of people
_ROLES_BEFORE = re.compile(rf"(?:^|[^\w'’-])(?:{_PNS}),\s+$")
_AND_BEFORE = re.compile(r"\s+and\s+$")
_APPOSITION_AFTER = re.compile(
    rf"^\s*,\s+(?:the|a|an|his|her|its|their)\s+(?:[\w'’-]+\s+){{0,3}}?(?:{_PN})\b", re.IGNORECASE)
_WHO_AFTER = re.compile(r"^\s*,\s+who(?:se)?\b")
_BORN_AFTER = re.compile(r"^\s*\((?:born|b\.|née|né)\s+[^)]*\d{4}[^)]*\)|"
                         r"^\s*\(\s*(?:c\.\s*)?\d{4}\s*[–—-]\s*(?:c\.\s*)?\d{4}\s*\)", re.IGNORECASE)
_VERB_STRONG_AFTER = re.compile(
    r"^\s+(?:(?:was|is)\s+born|died|grew\s+up|(?:was|is)\s+raised|married|divorced|studied|"
    r"graduated|retired|resigned|co-wrote|co-founded|composed|painted|directed|starred|sang|"
    r"himself|herself|and\s+(?:his|her)\b|(?:was|is)\s+(?:buried|knighted|elected|"
    r"assassinated|murdered|sentenced)|spent\s+(?:his|her)|turned\s+\d+|aged\s+\d+)\b",
    re.IGNORECASE)
_VERB_WEAK_AFTER = re.compile(
    r"^\s+(?:said|says|told|tells|wrote|writes|argued|argues|explained|recalled|believed|"
    r"founded|invented|discovered|developed|created|designed|lived|worked|joined|left|became)\b",
    re.IGNORECASE)
_COPULA_PERSON_AFTER = re.compile(
    rf"^\s*,?\s+(?:is|was|has\s+been|had\s+been|became|becomes|remains|served\s+as|was\s+named|"
    rf"is\s+now|was\s+once|was\s+also|is\s+also)\s+(?:(?:a|an|the)\s+)?"
    rf"(?:(?!(?:by|of|for|from|with|about|in|on|at|to|that|which|who|and)\b)[\w'’-]+\s+){{0,4}}?"
    rf"(?:{_PN})\b",
    re.IGNORECASE)
_POSSESSIVE_PERSON_AFTER = re.compile(
    r"^['’]s\s+(?:\w+\s+)?(?:wife|husband|son|daughter|mother|father|parents|brother|sister|"
    r"children|career|life|death|birth|birthday|childhood|funeral|widow|girlfriend|boyfriend|"
    r"biography|memoir|family|grave)\b",
    re.IGNORECASE)
_AGE_AFTER = re.compile(r"^\s*,\s+(?:aged\s+)?\d{1,3}\s*(?:,|and\b|years?\s+old\b)")

# Thing evidence: the name is what someone made, a dated work, or a definite description.
_PASSIVE_AFTER = re.compile(
    r"^\s*(?:\(\d{4}\)\s*)?(?:is|was|were|are|has\s+been|had\s+been)\s+(?:\w+ly\s+)?"
    r"(?:directed|written|composed|painted|created|developed|designed|built|made|founded|"
    r"invented|produced|released|published|launched|established|opened|constructed|"
    r"discovered|sung|recorded|filmed|shot|started|owned|acquired|bought|sold|manufactured|"
    r"named\s+after|located|based|headquartered|declared|approved)\b",
    re.IGNORECASE)
_YEAR_AFTER = re.compile(r"^\s*\((?:\d{4}|film|movie|album|song|book|novel|band|company|TV series)\)")
_THING_COPULA_AFTER = re.compile(
    rf"^\s*,?\s+(?:is|was|are|were)\s+(?:also\s+)?(?:a|an|the)\s+"
    rf"(?:(?!(?:by|of|for|from|with|about|in|on|at|to|that|which|who|and)\b)[\w'’-]+\s+){{0,3}}?"
    rf"(?:{_TN})s?\b",
    re.IGNORECASE)
_WHICH_AFTER = re.compile(r"^\s*,\s+which\b")
# an organisation by the roles it has: "Apple's chief executive", "the CEO of Apple",
# "Apple's founder" (a person's "father" or "wife" is a relation, not a role of an office)
_ORG_ROLES = (r"(?:chief\s+executive|chief\s+\w+\s+officer|ceo|cto|cfo|coo|chairman|chairwoman|"
              r"chairperson|founder|co-?founder|president|board|shareholders|headquarters|employees|"
              r"staff|spokesperson|spokesman|spokeswoman)")
_ORG_ROLE_AFTER = re.compile(rf"^['’]s?\s+(?:\w+\s+)?{_ORG_ROLES}\b", re.IGNORECASE)
_ORG_ROLE_BEFORE = re.compile(rf"(?:^|[^\w]){_ORG_ROLES}\s+(?:of|at)\s+$", re.IGNORECASE)
_THE_BEFORE = re.compile(r"(?:^|[^\w])(?:the|a|an|this|that|its|their)\s+(?:[a-z][\w-]*\s+){0,2}$")
_THING_BEFORE = re.compile(rf"(?:^|[^\w])(?:the\s+)?(?:{_TN})\s+$", re.IGNORECASE)
_PRONOUN_PERSON = re.compile(r"\b(?:he|she|his|her|him|himself|herself)\b", re.IGNORECASE)


def _sentences(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    return out


def _person_cue(text: str, span: _Span, name: str, honorific: bool) -> bool:
    """Whether the grammar around ``span`` says it names a person."""
    left, right = text[:span.start], text[span.end:]
    multi = len(name.split()) >= 2
    if right.startswith(("'s", "’s")) and not _POSSESSIVE_PERSON_AFTER.match(right):
        # "designed by Gustave Eiffel's engineering company": the by-phrase names the company
        return False
    if _THE_BEFORE.search(left) or _THING_BEFORE.search(left):
        return False
    if _PASSIVE_AFTER.match(right) or _YEAR_AFTER.match(right) or _THING_COPULA_AFTER.match(right):
        return False
    if honorific:
        return True
    if _BY_STRONG.search(left) or _ROLE_BEFORE.search(left) or _ROLES_BEFORE.search(left):
        return True
    if _BY_WEAK.search(left) and multi:
        return True
    if (_APPOSITION_AFTER.match(right) or _VERB_STRONG_AFTER.match(right)
            or _COPULA_PERSON_AFTER.match(right) or _POSSESSIVE_PERSON_AFTER.match(right)):
        return True
    # "of Screen Anarchy wrote", "at Yonsei University said": a name governed by a
    # preposition is not the subject of the verb after it
    governed = re.search(r"\b(?:of|at|from|for|in|on|with)\s+$", left) is not None
    # a heading "Sean Waltman — National Wrestling Alliance (2006-2008)" dates a section, not a life
    line = left[left.rfind("\n") + 1:]
    if "—" in line or " - " in line:
        governed = governed or bool(_BORN_AFTER.match(right))
    if multi and not governed and (_WHO_AFTER.match(right) or _VERB_WEAK_AFTER.match(right)
                                   or _AGE_AFTER.match(right) or _BORN_AFTER.match(right)):
        return True
    return False


def _subject_then_pronoun(text: str, spans: Sequence[_Span]) -> set[int]:
    """Starts of sentence-initial two-word names that the next words refer to as he/she: a
    person pronoun later in the same sentence, or in the next sentence before any other
    name, with no other name in between ("Enzo Ferrari founded the company. He started ...")."""
    found: set[int] = set()
    sentences = _sentences(text)
    for i, (s_start, sentence) in enumerate(sentences):
        lead = len(sentence) - len(sentence.lstrip())
        first = next((sp for sp in spans if sp.start == s_start + lead), None)
        if first is None or len(first.words) < 2:
            continue
        after = text[first.end:]
        if not re.match(r"^\s+(?:[a-z]|\(|,)", after) or _PASSIVE_AFTER.match(after) \
                or _THING_COPULA_AFTER.match(after) or _YEAR_AFTER.match(after):
            continue
        s_end = s_start + len(sentence)
        others = [sp.start for sp in spans if first.end <= sp.start < s_end]
        pm = _PRONOUN_PERSON.search(text, first.end, s_end)
        if pm is not None and not any(o < pm.start() for o in others):
            found.add(first.start)
            continue
        if pm is None and i + 1 < len(sentences):
            n_start, nxt = sentences[i + 1]
            pm = _PRONOUN_PERSON.search(nxt)
            if pm is not None and not any(n_start <= sp.start < n_start + pm.start() for sp in spans):
                found.add(first.start)
    return found


def _persons(text: str) -> list[tuple[int, str]]:
    if has_cjk(text) or not text.strip():
        return []
    spans = _name_spans(text)
    subject_persons = _subject_then_pronoun(text, spans)
    found: list[tuple[int, str]] = []
    previous_person: _Span | None = None
    for sp in spans:
        cleaned = _clean(sp)
        if cleaned is None:
            previous_person = None
            continue
        name, honorific = cleaned
        left = text[:sp.start]
        person = _person_cue(text, sp, name, honorific) or sp.start in subject_persons
        # "directed by X and Y", "engineers, X and Y": the cue covers the coordinated name too
        joined = _AND_BEFORE.search(left)
        if not person and previous_person is not None and joined is not None and len(name.split()) >= 2 \
                and left[:joined.start()].rstrip(",").endswith(previous_person.text) \
                and not _PASSIVE_AFTER.match(text[sp.end:]):
            person = True
        if person:
            found.append((sp.start, name))
            previous_person = sp
        else:
            previous_person = None
    return found


@lru_cache(maxsize=2048)
def person_names(text: str) -> tuple[str, ...]:
    """The person names ``text`` introduces, in order of first mention, each once (cached:
    the rewriter asks about the same turns for every candidate of every later message).

    >>> person_names("Parasite (2019) was directed by Bong Joon-ho, who also co-wrote it.")
    ('Bong Joon-ho',)
    >>> person_names("Laravel was created by Taylor Otwell in 2011.")
    ('Taylor Otwell',)
    >>> person_names("Redis Stack ships the Redis Query Engine.")
    ()
    """
    seen: dict[str, None] = {}
    for _, name in _persons(text):
        seen.setdefault(_unstutter(name), None)
    return tuple(seen)


def _unstutter(name: str) -> str:
    """"Johnny Bench Johnny Lee Bench" -> "Johnny Bench": a page title glued to the text
    that repeats it (passages often open so) is one name, not a longer one."""
    words = name.split()
    again = next((i for i in range(1, len(words)) if words[i] == words[0]), None)
    return " ".join(words[:again]) if again is not None else name


def _same_name(a: str, b: str) -> bool:
    """"Cohen" and "Leonard Cohen" are one name: equal, or one is the other's last words."""
    wa, wb = a.casefold().split(), b.casefold().split()
    if wa == wb:
        return True
    short, long_ = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    return bool(short) and long_[-len(short):] == short


@lru_cache(maxsize=8192)
def _thing_cue(text: str, name: str) -> bool:
    # (cached: the agreement filter asks it for every candidate against every earlier turn,
    # and a conversation's later messages ask the same pairs again; most names are not in
    # most turns, which a plain search tells before any pattern is built)
    if name.lower() not in text.lower():
        return False
    # (a possessive "Apple's" is the name too)
    for m in re.finditer(rf"(?<![\w'’-]){re.escape(name)}(?=['’]s\b|(?![\w'’-]))", text, re.IGNORECASE):
        left, right = text[:m.start()], text[m.end():]
        if (_PASSIVE_AFTER.match(right) or _YEAR_AFTER.match(right) or _THING_COPULA_AFTER.match(right)
                or _WHICH_AFTER.match(right) or _THING_BEFORE.search(left)
                or _ORG_ROLE_AFTER.match(right) or _ORG_ROLE_BEFORE.search(left)
                or re.search(r"(?:^|[^\w])the\s+$", left, re.IGNORECASE)):
            return True
    return False


def is_person(name: str, texts: Iterable[str]) -> bool | None:
    """Whether ``name`` names a person, by the grammar of the texts that mention it.

    True when some sentence introduces it as a person and none as a thing, False for the
    opposite, None when nothing is said or the texts disagree.

    >>> is_person("Parasite", ["Parasite (2019) was directed by Bong Joon-ho."])
    False
    >>> is_person("Bong Joon-ho", ["Parasite (2019) was directed by Bong Joon-ho."])
    True
    >>> is_person("Okja", ["He worked with Bong before on Okja."]) is None
    True
    >>> is_person("Apple", ["Tim Cook has been Apple's chief executive since 2011."])
    False
    """
    name = " ".join(name.split())
    if not name or has_cjk(name):
        return None
    person = thing = False
    for text in texts:
        if has_cjk(text):
            continue
        if any(_same_name(name, found) for found in person_names(text)):
            person = True
        if _thing_cue(text, name):
            thing = True
    if person == thing:
        return None
    return person


# The subject a thing pronoun continues ------------------------------------------------

# (not the "it" of "it's": "it is" and "it has" take no possessive, and which one it is
# decides the verb a subject needs)
_IT = re.compile(r"\b(?P<word>it|its)\b(?!['’])", re.IGNORECASE)
#: words a subject phrase must not hold: it would point elsewhere itself, or it is a clause
_NOT_IN_SUBJECT = frozenset(
    "it its they them their he him his she her this that these those one ones i you we my your our "
    "what which who whom whose why how when where".split())
_DETERMINERS = frozenset("the a an some any all every each no most more much many".split())
_SUBJECT_PREPOSITION = frozenset("in on at for to with of from by about into over under".split())


def referring_it(text: str) -> list[re.Match[str]]:
    """The "it"/"its" of ``text`` that point at something (not the dummy "it" of "how long
    does it take to ...")."""
    dummy_spans = _dummy_spans(text)
    return [m for m in _IT.finditer(text) if _refers(m, text, dummy_spans)]


def thing_subject(message: str, questions: Sequence[tuple[str, str | None]],
                  subject_of: Callable[[str], str | None], *,
                  rival: str | None = None) -> tuple[str, str] | None:
    """"who composed the music for it?": the message with its one "it" (or "its") replaced
    by the subject of the last question, and that subject.

    ``questions`` are the earlier exchanges, newest first, each (the user's question as
    resolved, the answer or None); ``subject_of`` reads a question's subject noun phrase.
    The last question is read, or, when it was about a person ("How old is he?"), the one
    before it. Nothing is written unless the message needs a thing (one referring "it",
    no other pronoun), the subject is one singular noun phrase that is not a person and
    holds no pronoun, wh-word or opening preposition, and the answer names the subject's
    head word (the exchange stayed on it). ``rival`` is a phrase other evidence prefers
    (the learned resolver's best candidate, when it scores well): one that shares no word
    with the subject leaves the message as typed ("does Redis support vector search?" ...
    "how do I enable it?": the object, not the subject).

    >>> from turnscope.references._grammar import question_subject
    >>> thing_subject("who composed the music for it?",
    ...               [("Who directed the film Parasite?", "Parasite was directed by Bong Joon-ho.")],
    ...               question_subject)
    ('who composed the music for the film Parasite?', 'the film Parasite')
    """
    if pronoun_agreement(message) != "thing":
        return None
    found = referring_it(message)
    if len(found) != 1 or len(re.findall(r"\bits?\b", message, re.IGNORECASE)) != 1:
        return None  # (a second "it", even a dummy one, would be left half resolved)
    known = [t for q, a in questions for t in ((q, a) if a else (q,))]
    people = {p.casefold() for t in known for p in person_names(t)}
    for n, (question, answer) in enumerate(questions[:2]):
        subject = subject_of(question)
        if subject is None:
            return None
        if subject.casefold() in people or is_person(subject, known) is True:
            if n == 0:
                # a question about a person ("How old is Bong Joon-ho?"): "it" is what the
                # conversation was about before it
                continue
            return None
        words = subject.split()
        if not words or words[0].lower() in _SUBJECT_PREPOSITION \
                or any(w.lower().strip(",.") in _NOT_IN_SUBJECT | {"and", "or"} for w in words) \
                or len(words) > 6 or all(w.lower() in _DETERMINERS for w in words):
            return None  # a clause, a coordination, or no noun at all
        # the head of "the benefits of cow milk" is "benefits"
        of = next((i for i, w in enumerate(words) if w.lower() == "of"), len(words))
        head = words[max(of - 1, 0)].strip(",.")
        if is_plural_word(head) or head.lower() in PERSON_NOUNS or head.lower() in _DETERMINERS \
                or (head.islower() and head.lower().endswith("est") and len(head) > 5):
            return None  # a plural, a person, or a superlative with no noun ("the smallest")
        if answer is None or not re.search(rf"(?<![\w-]){re.escape(head)}(?![\w-])", answer, re.IGNORECASE):
            return None  # the answer moved on from the subject (or there is none)
        if subject.casefold() in message.casefold():
            return None
        if rival is not None and not _content(rival) & _content(subject):
            return None
        m = found[0]
        rep = f"{subject}'s" if m.group("word").lower() == "its" else subject
        return message[:m.start()] + rep + message[m.end():], subject
    return None


def _content(phrase: str) -> set[str]:
    return {w.casefold().strip(",.'’") for w in phrase.split()} - _DETERMINERS - {"of", "s"}


def is_plural_word(word: str) -> bool:
    """A plural common noun by its ending ("films", "cities"); names and -ss/-us/-is words
    are not."""
    low = word.lower()
    return word[:1].islower() and len(low) > 3 and low.endswith("s") \
        and not low.endswith(("ss", "us", "is", "ics", "news"))


# Questions: places, preambles, ellipsis -----------------------------------------------
# Questions taken apart: the places they name, their preamble and subject, and the
# elliptical follow-up that is a previous question with one part swapped. English only:
# Japanese text is returned as it is (``split_preamble``) or gives None.
#
# * **Places** — a small bundled list of place names: countries (with their everyday short
#   forms), US states and major cities. It decides one thing only: whether the phrase of an
#   elliptical follow-up ("and in France?") and a phrase of the previous question ("in
#   Germany") are of the same kind, so that one may replace the other. A place the list
#   lacks makes the substitution abstain, which is the safe failure.
# * **Preambles and subjects** — a clean query from a chatty message, and the subject of a
#   question. People open follow-ups with thanks, pivot cues and back-references ("thanks!
#   another thing:", "going back to the UK, ..."); none of that belongs in a search query,
#   but a back-reference names the topic the rest of the message is about, so it is handed
#   back rather than lost. The subject of a previous question is what an elaboration
#   request ("can you go into more detail on that?") or a completed ellipsis ("and the
#   cinematographer?") is about: a short noun phrase, never the whole previous question
#   pasted in.
# * **Ellipsis** — "and in France?", "what about the Pixel 9 Pro?", "and for children?": the
#   previous question with one part swapped. The part is found by kind, decided by
#   structure and small closed lists, never by a model: a listed place, a year, a season, an
#   age group, a version number, a product (a capitalised head with a model number), or a
#   noun phrase that shares its head noun or its preposition with a phrase of the previous
#   question. When nothing of the same kind is there, a definite noun phrase ("and the
#   cinematographer?") is completed with the previous question's subject instead. The
#   replaced phrase is never kept, and every step abstains (None) when the evidence is not
#   unique: two places in the previous question, a phrase of no known kind, a fragment that
#   is a clause rather than a phrase.

_COUNTRIES = """
Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|Australia|Austria|Azerbaijan|Bahamas|
Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|
Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|Chad|
Chile|China|Colombia|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|Czechia|Denmark|Djibouti|
Dominican Republic|Ecuador|Egypt|El Salvador|Estonia|Eswatini|Ethiopia|Fiji|Finland|France|Gabon|
Gambia|Georgia|Germany|Ghana|Greece|Guatemala|Guinea|Guyana|Haiti|Honduras|Hong Kong|Hungary|
Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory Coast|Jamaica|Japan|Jordan|
Kazakhstan|Kenya|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|
Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|Mauritania|
Mauritius|Mexico|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Namibia|Nepal|
Netherlands|the Netherlands|New Zealand|Nicaragua|Niger|Nigeria|North Korea|North Macedonia|
Norway|Oman|Pakistan|Palestine|Panama|Papua New Guinea|Paraguay|Peru|Philippines|the Philippines|
Poland|Portugal|Puerto Rico|Qatar|Romania|Russia|Rwanda|Saudi Arabia|Senegal|Serbia|Singapore|
Slovakia|Slovenia|Somalia|South Africa|South Korea|Korea|South Sudan|Spain|Sri Lanka|Sudan|
Suriname|Sweden|Switzerland|Syria|Taiwan|Tajikistan|Tanzania|Thailand|Togo|Trinidad and Tobago|
Tunisia|Turkey|Türkiye|Turkmenistan|Uganda|Ukraine|United Arab Emirates|UAE|United Kingdom|
the United Kingdom|UK|the UK|Britain|Great Britain|England|Scotland|Wales|Northern Ireland|
United States|the United States|US|the US|USA|the USA|America|Uruguay|Uzbekistan|Venezuela|
Vietnam|Yemen|Zambia|Zimbabwe|Europe|Asia|Africa|South America|North America|Latin America|
the EU|EU|European Union|Scandinavia|the Middle East|Middle East
"""

_US_STATES = """
Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|Idaho|
Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|
Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|North Carolina|
North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|
Texas|Utah|Vermont|Virginia|Washington State|West Virginia|Wisconsin|Wyoming|Ontario|Quebec|
British Columbia|Alberta|Bavaria|Catalonia|New South Wales|Queensland|Victoria
"""

_CITIES = """
London|Paris|Berlin|Madrid|Barcelona|Rome|Milan|Lisbon|Porto|Amsterdam|Brussels|Vienna|Prague|
Budapest|Warsaw|Krakow|Copenhagen|Stockholm|Oslo|Helsinki|Dublin|Edinburgh|Manchester|Munich|
Frankfurt|Hamburg|Zurich|Geneva|Athens|Istanbul|Moscow|Kyiv|New York|New York City|NYC|
Los Angeles|San Francisco|Chicago|Boston|Seattle|Miami|Washington|Washington DC|Las Vegas|
Toronto|Montreal|Vancouver|Mexico City|Rio de Janeiro|Sao Paulo|São Paulo|Buenos Aires|Lima|
Bogota|Santiago|Tokyo|Osaka|Kyoto|Seoul|Beijing|Shanghai|Taipei|Bangkok|Hanoi|Manila|Jakarta|
Bali|Kuala Lumpur|Mumbai|Delhi|New Delhi|Bangalore|Dubai|Abu Dhabi|Doha|Tel Aviv|Cairo|
Cape Town|Johannesburg|Nairobi|Marrakech|Sydney|Melbourne|Brisbane|Perth|Auckland|Wellington|
Canberra
"""


def _entries(block: str) -> list[str]:
    return [p.strip() for p in block.replace("\n", "").split("|") if p.strip()]


#: every listed place, spelt as it should appear in a query
PLACES: tuple[str, ...] = tuple(_entries(_COUNTRIES) + _entries(_US_STATES) + _entries(_CITIES))
_BY_LOWER: dict[str, str] = {p.lower(): p for p in PLACES}
# Longest first, so "New Zealand" wins over a shorter entry inside it, and "the UK" over "UK".
_PLACE_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in sorted(PLACES, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)
# "US" lower-cased is the pronoun "us" ("what about for us?"): only its capital form is a place.
_CASE_SENSITIVE = frozenset({"us"})


def canonical_place(phrase: str) -> str | None:
    """The listed spelling of ``phrase`` when it is a place of the list, else None.

    >>> canonical_place("new zealand")
    'New Zealand'
    >>> canonical_place("us") is None
    True
    """
    text = " ".join(phrase.split())
    found = _BY_LOWER.get(text.lower())
    if found is None:
        return None
    if text.lower() in _CASE_SENSITIVE and not text.isupper():
        return None
    return found


def find_places(text: str) -> list[tuple[int, int, str]]:
    """Listed places in ``text`` as (start, end, canonical spelling), left to right.

    >>> find_places("What is the minimum wage in Germany?")
    [(28, 35, 'Germany')]
    """
    out: list[tuple[int, int, str]] = []
    for m in _PLACE_RE.finditer(text):
        canon = canonical_place(m.group(0))
        if canon is not None:
            out.append((m.start(), m.end(), canon))
    return out


_SEP = r"(?:\s*[,.:;!…]+\s*|\s*[—–]\s*|\s+-\s+|\s+)"
# Openers that carry no content: thanks, acknowledgements, and pivot cues ("another thing").
# Words that are openers only when punctuation follows ("great, ..." but "great white sharks",
# "right triangles", "interesting facts about ...").
_PUNCTUATED_OPENERS = (r"cheers|great|cool|nice|perfect|awesome|got\s+it|gotcha|alright|all\s+right|right|well|"
                       r"sounds\s+good|makes\s+sense|understood|interesting|k|ty")
_OPENER_WORDS = (
    rf"(?:{_PUNCTUATED_OPENERS})(?=\s*[,.:;!…—–-])|"
    r"ok(?:ay)?|thanks(?:\s+a\s+lot)?|thank\s+you|thx|so|anyway|anyhow|hmm+|um+|also|btw|by\s+the\s+way|"
    r"oh|"
    r"(?:one\s+)?(?:more|other|another|different|new|separate|unrelated|quick|last|final|"
    r"totally\s+(?:different|unrelated)|completely\s+(?:different|unrelated))\s+"
    r"(?:question|thing|topic|subject|q)|(?:totally\s+|completely\s+)?unrelated(?:\s+but)?|"
    r"changing\s+(?:the\s+)?(?:topic|subject)|switching\s+gears|on\s+another\s+note|moving\s+on|"
    r"(?:and\s+)?now\s+for\s+something\s+(?:else|different)|something\s+(?:else|different)"
)
_OPENER = re.compile(rf"^\s*(?:(?:{_OPENER_WORDS}){_SEP})+", re.IGNORECASE)
# A back-reference that names a topic: "going back to the UK, ...", "back to the stew, ...".
_BACK_TO = re.compile(
    r"^\s*(?:(?:going|coming|getting|let'?s\s+go|go|to\s+go)\s+back\s+to|back\s+to|returning\s+to|"
    r"(?:let'?s\s+)?return\s+to|as\s+for|regarding|re:)\s+"
    r"(?P<topic>[^,:;—–?!.]{2,60}?)\s*(?:[,:;—–]|\s-\s|\.\s)\s*(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_SAID_ABOUT = re.compile(
    r"^(?:what\s+you\s+(?:said|mentioned|told\s+me|wrote)\s+about|the\s+(?:part|bit)\s+about|"
    r"your\s+(?:answer|point)\s+about)\s+(?P<topic>.+)$", re.IGNORECASE)
# The question after a dropped opener must still read as one: at least two words.
_MIN_REST_WORDS = 2


def _as_sentence(rest: str) -> str:
    """Capitalise the first word unless it is spelt with a small first letter on purpose
    ("iOS", "eBay", "npm" stays as typed only when it has an inner capital)."""
    rest = re.sub(r"^(?:(?:but|and|so|then)\s*,?\s+)", "", rest.strip(), flags=re.IGNORECASE)
    first = rest.split(" ", 1)[0]
    if not first or any(c.isupper() for c in first[1:]):
        return rest
    return rest[:1].upper() + rest[1:]


def split_preamble(text: str) -> tuple[str, str | None]:
    """The message without its conversational preamble, and the topic a back-reference names.

    >>> split_preamble("going back to the UK, can my employer refuse my holiday?")
    ('Can my employer refuse my holiday?', 'the UK')
    >>> split_preamble("thanks! another thing: what's a good Python linter?")
    ("What's a good Python linter?", None)
    >>> split_preamble("Is the API paginated?")
    ('Is the API paginated?', None)
    """
    if has_cjk(text):
        return text, None
    body = text.strip()
    topic: str | None = None
    changed = False
    for _ in range(3):  # "ok, thanks. back to the stew, ..." peels in turns
        m = _OPENER.match(body)
        if m is not None and len(body[m.end():].split()) >= _MIN_REST_WORDS:
            body = body[m.end():]
            changed = True
            continue
        b = _BACK_TO.match(body)
        if b is not None and topic is None and len(b.group("rest").split()) >= _MIN_REST_WORDS:
            topic = b.group("topic").strip()
            said = _SAID_ABOUT.match(topic)
            if said is not None:
                topic = said.group("topic").strip()
            body = b.group("rest")
            changed = True
            continue
        break
    if not changed:
        return text, None
    return _as_sentence(body), topic


_PLACE_TOPIC = re.compile(r"^(?:the\s+)?[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,3}$")


def attach_topic(question: str, topic: str) -> str | None:
    """Put a back-reference's topic into the question it was split from.

    A third-person "it" of the question stands for the topic ("can I make it a day ahead?"
    with "the stew" -> "can I make the stew a day ahead?"); a question without one gets a
    place topic ("the UK") as "in the UK". None when neither fits: appending an arbitrary
    noun phrase would read as a different question.

    >>> attach_topic("Can I make it a day ahead?", "the stew")
    'Can I make the stew a day ahead?'
    >>> attach_topic("Can my employer refuse my holiday?", "the UK")
    'Can my employer refuse my holiday in the UK?'
    """
    if has_cjk(question) or has_cjk(topic) or not topic.strip():
        return None
    its = list(re.finditer(r"\b(?:it|its)\b", question))
    if len(its) == 1:
        m = its[0]
        word = topic + "'s" if m.group(0) == "its" else topic
        return question[:m.start()] + word + question[m.end():]
    if its:
        return None
    bare = re.sub(r"^the\s+", "", topic.strip(), flags=re.IGNORECASE)
    if canonical_place(topic) is not None or canonical_place(bare) is not None:
        place = topic.strip()
        if place.lower() in question.lower():
            return question
        stem = question.rstrip(" ?.!")
        end = question[len(stem):] or "?"
        return f"{stem} in {place}{end}"
    return None


# Subjects ------------------------------------------------------------------------------

_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|can|could|should|would|will|may|might|must)"
_WH = r"(?:what|who|which|why|how|when|where)"
_COPULA_WH = re.compile(r"^(?:what|who|which)(?:['’]s|\s+is|\s+are|\s+was|\s+were)\s+(?P<np>.+)$",
                        re.IGNORECASE)
_ABOUT = re.compile(
    r"^(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?(?:tell\s+me\s+(?:more\s+)?about|explain|describe|"
    r"what\s+do\s+you\s+know\s+about|give\s+me\s+an\s+overview\s+of)\s+(?P<np>.+)$", re.IGNORECASE)
_WH_AUX = re.compile(rf"^{_WH}(?:\s+[\w-]+){{0,3}}?\s+{_AUX}\s+(?P<rest>.+)$", re.IGNORECASE)
_AUX_FIRST = re.compile(rf"^{_AUX}\s+(?P<rest>.+)$", re.IGNORECASE)
_COPULA_AFTER_WORDS = re.compile(rf"^{_WH}(?:\s+[\w-]+){{1,3}}?\s+(?:is|are|was|were)\s", re.IGNORECASE)
_NP_START = re.compile(r"^(?:the|a|an|this|that|[A-Z0-9])", re.IGNORECASE)
_WH_VERB = re.compile(r"^(?:what|who|which)\s+(?P<verb>[a-z]+)\s+(?P<np>.+)$", re.IGNORECASE)
_SUBJECT_PRONOUNS = frozenset("i you we he she it they this that these those there one someone "
                              "me us".split())
_CONTEXT_DETERMINERS = frozenset("my our your his her its their this that these those".split())
_CLAUSE_CUT = re.compile(r"\s*(?:,|;|\bthat\b|\bwhich\b|\bwhen\b|\bif\b|\bbecause\b|\bso\b)\s*",
                         re.IGNORECASE)
_MAX_SUBJECT_WORDS = 9


def last_question(text: str) -> str:
    """The sentence of ``text`` that asks: the last one ending in "?", else the last one."""
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    if not parts:
        return ""
    asks = [p for p in parts if p.endswith("?")]
    return (asks[-1] if asks else parts[-1]).rstrip(" ?.!")


def _subject_np(rest: str) -> str | None:
    """The noun phrase at the front of ``rest`` (what follows an auxiliary): a capitalised
    name as a whole ("Citizen Kane considered ..."), else the words up to the first verb,
    predicate word or preposition other than "of"."""
    words = rest.split()
    if not words:
        return None
    if words[0].lower() in _SUBJECT_PRONOUNS:
        return None
    out: list[str] = []
    for i, w in enumerate(words):
        low = w.lower().strip(",")
        # a verb followed by another verb is a noun of the phrase: "how does the congestion
        # *charge* work", "does the rate limit apply"
        nominal = low in VERBS and i + 1 < len(words) and words[i + 1].lower().strip(",") in VERBS
        if i > 0 and not nominal and (low in VERBS or low in ADVERBS or predicate_word(low)
                                      or (low in PREPOSITIONS and low != "of")):
            break
        out.append(w.rstrip(","))
        if w.endswith(","):
            break
    if not out or len(out) > _MAX_SUBJECT_WORDS:
        return None
    if len(out) == 1 and predicate_word(out[0]):
        return None  # "is it faster": an adjective, not a subject
    return " ".join(out)


def _trim_object(np: str) -> str | None:
    np = _CLAUSE_CUT.split(np, maxsplit=1)[0].strip()
    words = np.split()
    if not words or len(words) > _MAX_SUBJECT_WORDS:
        return None
    if words[0].lower() in _SUBJECT_PRONOUNS:
        return None
    return np


def question_subject(question: str) -> str | None:
    """The noun phrase a question is about, as typed.

    >>> question_subject("What is retrieval-augmented generation?")
    'retrieval-augmented generation'
    >>> question_subject("Why is Citizen Kane considered one of the greatest films ever made?")
    'Citizen Kane'
    >>> question_subject("how does the japan rail pass work?")
    'the japan rail pass'
    >>> question_subject("How do I center a div?") is None
    True
    """
    if has_cjk(question):
        return None
    q = last_question(split_preamble(question)[0])
    if not q:
        return None
    np: str | None = None
    m = _COPULA_WH.match(q) or _ABOUT.match(q)
    if m is not None:
        np = _trim_object(m.group("np"))
    elif (m := _WH_AUX.match(q) or _AUX_FIRST.match(q)) is not None:
        rest = m.group("rest")
        if m.re is _WH_AUX and _COPULA_AFTER_WORDS.match(q) and not _NP_START.match(rest):
            # "which one is faster": the words after the wh-word are the subject, and what
            # follows the copula is its predicate, not a noun phrase
            return None
        name = re.match(r"^(?:the\s+)?[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|\d[\w.]*|of|the|and))*", rest)
        if name is not None and rest[:1].isupper() and len(name.group(0).split()) >= 1 \
                and name.group(0).split()[0].lower() not in _SUBJECT_PRONOUNS:
            np = re.sub(r"\s+(?:of|the|and)$", "", name.group(0))
        else:
            np = _subject_np(rest)
    elif (m := _WH_VERB.match(q)) is not None and (m.group("verb").lower() in VERBS
                                                    or m.group("verb").lower().endswith("ed")):
        np = _trim_object(m.group("np"))
    if np is None:
        return None
    if np.split()[0].lower() in _CONTEXT_DETERMINERS:
        # "my plan", "this one": the phrase leans on context and says nothing on its own
        return None
    return np


_ELABORATE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|thanks|great|cool|interesting|hmm+|so|and|wow|nice)[\s,.!]+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?"
    r"(?:go\s+(?:into\s+)?(?:more|further|a\s+bit\s+more|a\s+little\s+more)\s+(?:detail|depth)|"
    r"go\s+(?:a\s+bit\s+|a\s+little\s+)?deeper|elaborate|expand|say\s+more|tell\s+me\s+more|"
    r"explain(?:\s+(?:that|this|it))?\s+(?:in\s+)?(?:more|further|greater)\s+detail|"
    r"more\s+details?|give\s+me\s+more\s+details?|dig\s+deeper|explain\s+further)"
    r"(?:\s+(?:on|about|into|in)\s+(?:that|this|it|those|these))?"
    r"(?:\s*,?\s*please)?\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# the setting a question closes on ("... do in postgres", "... on Windows"): one or two words
_TRAILING_CONTEXT = re.compile(r"\b(?P<prep>in|on)\s+(?P<np>[\w.+#-]+(?:\s+[\w.+#-]+)?)$", re.IGNORECASE)


def elaboration_query(message: str, previous_question: str) -> str | None:
    """A query for "can you go into more detail on that?": the previous question's subject
    (and its closing "in X" setting), never the previous question pasted whole.

    >>> elaboration_query("can you go into more detail on that?",
    ...                   "why is Citizen Kane considered one of the greatest films ever made?")
    'Tell me more about Citizen Kane'
    >>> elaboration_query("tell me more about the Model Y", "how fast is the Model 3?") is None
    True
    """
    if has_cjk(message) or has_cjk(previous_question) or not _ELABORATE.match(message):
        return None
    subject = question_subject(previous_question)
    if subject is None:
        return None
    query = f"Tell me more about {subject}"
    q = last_question(split_preamble(previous_question)[0])
    tail = _TRAILING_CONTEXT.search(q)
    if tail is not None and tail.group(0).lower() not in subject.lower() and subject in q \
            and not any(w.lower() in ADVERBS or w.lower() in PREPOSITIONS for w in tail.group("np").split()) \
            and q.index(subject) + len(subject) < tail.start():
        query += " " + " ".join(tail.group(0).split())
    return query


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
_POSSESSIVE_END = re.compile(r"['’]s?$")
#: what a capitalised word with an apostrophe is, when it is not a possessive name
_CONTRACTED = frozenset("what who where when how why it that there here let he she i you we they "
                        "isn aren don doesn didn can couldn won wouldn shouldn".split())


def _contraction(word: str) -> bool:
    """"What's", "Who's", "Don't": an opener with a contraction, not a name."""
    m = re.match(r"^(\w+)['’]", word)
    return m is not None and m.group(1).lower() in _CONTRACTED


def _topic(question: str) -> str | None:
    """What the previous question is about, to complete a fragment with: its one proper
    name (or a coordination of two: "Django and Flask"), else its subject noun phrase."""
    body = last_question(question)
    names: list[tuple[int, int]] = []
    for m in _CAP_SPAN.finditer(body):
        words = m.group(0).split()
        while words and (words[0] in _NOT_TOPIC or _contraction(words[0])
                         or (m.start() == 0 and words[0].lower() in _OPENERS and len(words) == 1)):
            words.pop(0)
        # "Who composed Parasite's music?" is about Parasite: a possessive ends the name (and
        # "the music" it owns is the question's attribute, not its subject)
        # — when what it owns is one word ("Bong Joon-ho's new film" is not about him)
        owner = next((i for i, w in enumerate(words) if _POSSESSIVE_END.search(w)), None)
        if owner is not None:
            owned = re.search(rf"(?<![\w'’-]){re.escape(words[owner])}\s+[a-z][\w-]*"
                              r"(?:\s*[?.!]?\s*$|\s+(?:in|on|for|of|to|at|from|by|with)\b)", body)
            words = words[:owner] + [_POSSESSIVE_END.sub("", words[owner])] if owned else []
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
    if subject is None or any(w.lower() in _PRONOUN_WORDS for w in subject.split()) \
            or _POSSESSIVE_END.search(subject):
        return None  # (a possessive is the start of a phrase, not a phrase)
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
