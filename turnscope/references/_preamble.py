"""A clean query from a chatty message, and the subject of a question.

People open follow-ups with thanks, pivot cues and back-references ("thanks! another thing:",
"going back to the UK, ..."); none of that belongs in a search query, but a back-reference
names the topic the rest of the message is about, so it is handed back rather than lost.
The subject of a previous question is what an elaboration request ("can you go into more
detail on that?") or a completed ellipsis ("and the cinematographer?") is about: a short noun
phrase, never the whole previous question pasted in.

English only: Japanese text is returned as it is (``split_preamble``) or gives None.
"""

from __future__ import annotations

import re

from turnscope._lexicon import ADVERBS, PREPOSITIONS, VERBS, predicate_word
from turnscope._matching import has_cjk

__all__ = ["attach_topic", "elaboration_query", "last_question", "question_subject", "split_preamble"]

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
    from turnscope.references._places import canonical_place

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
