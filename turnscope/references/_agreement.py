"""Agreement between a pronoun and the names a conversation offers it.

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

from turnscope._lexicon import has_cjk

__all__ = ["Agreement", "is_person", "person_names", "pronoun_agreement", "referring_it", "thing_subject"]

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

    >>> from turnscope.references._question import question_subject
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
