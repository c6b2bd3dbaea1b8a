"""Questions taken apart: the places they name, their preamble and subject, and the
elliptical follow-up that is a previous question with one part swapped. English only:
Japanese text is returned as it is (``split_preamble``) or gives None.

* **Places** — a small bundled list of place names: countries (with their everyday short
  forms), US states and major cities. It decides one thing only: whether the phrase of an
  elliptical follow-up ("and in France?") and a phrase of the previous question ("in
  Germany") are of the same kind, so that one may replace the other. A place the list
  lacks makes the substitution abstain, which is the safe failure.
* **Preambles and subjects** — a clean query from a chatty message, and the subject of a
  question. People open follow-ups with thanks, pivot cues and back-references ("thanks!
  another thing:", "going back to the UK, ..."); none of that belongs in a search query,
  but a back-reference names the topic the rest of the message is about, so it is handed
  back rather than lost. The subject of a previous question is what an elaboration
  request ("can you go into more detail on that?") or a completed ellipsis ("and the
  cinematographer?") is about: a short noun phrase, never the whole previous question
  pasted in.
* **Ellipsis** — "and in France?", "what about the Pixel 9 Pro?", "and for children?": the
  previous question with one part swapped. The part is found by kind, decided by
  structure and small closed lists, never by a model: a listed place, a year, a season, an
  age group, a version number, a product (a capitalised head with a model number), or a
  noun phrase that shares its head noun or its preposition with a phrase of the previous
  question. When nothing of the same kind is there, a definite noun phrase ("and the
  cinematographer?") is completed with the previous question's subject instead. The
  replaced phrase is never kept, and every step abstains (None) when the evidence is not
  unique: two places in the previous question, a phrase of no known kind, a fragment that
  is a clause rather than a phrase.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
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
from turnscope.references._agreement import PERSON_NOUNS

__all__ = ["PLACES", "canonical_place", "find_places",
           "attach_topic", "elaboration_query", "last_question", "question_subject", "split_preamble",
           "Fragment", "FragmentKind", "named_kinds", "parse_fragment", "substitute", "substitute_in_thread",
           "which_of_pair"]


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
