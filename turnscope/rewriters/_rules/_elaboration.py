"""The previous exchange as a referent (elaboration, an echoed predicate, an event, a plural),
and a second pronoun.
"""

from __future__ import annotations

import re

from turnscope._lexicon import DETERMINERS, FUNCTION_WORDS, is_plural, pronoun_number
from turnscope.conversation import ConversationState, ResolvedTurn, Role
from turnscope.entities import EntityExtractor, Mention
from turnscope.references import elaboration_query, english_pronoun, split_preamble
from turnscope.rewriters._rules._base import find_antecedent, scoped_user_records, substitute_pronouns
from turnscope.rewriters._rules._text import _SENT_END, _SENTENCE_SPLIT, _join
from turnscope.scope import Scope

_PART = re.compile(r"\b(?:the\s+)?(?:(?P<ord>first|second|third|last|final)\s+(?:part|bit|point|"
                   r"half|sentence)|(?:part|bit)\s+about\s+(?P<about>[^,.?!—–]+))", re.IGNORECASE)
#: "what happens if I disable a customer-managed key?": the event a later "that" names
_CONDITIONAL_EVENT = re.compile(
    r"\bwhat\s+(?:happens|would\s+happen|will\s+happen)\s+(?:if|when)\s+(?:i|we|you)\s+"
    r"(?P<verb>[a-z]+)\s+(?P<obj>(?:(?:a|an|the|my|our|its)\s+)?[^?.!,;]+)", re.IGNORECASE)
#: verbs too general to say which clause of an answer a follow-up echoes
VERBS_TOO_COMMON = frozenset("have does make take need want work used using come".split())


def _gerund(verb: str) -> str:
    """disable -> disabling, stop -> stopping, delete -> deleting, rotate -> rotating."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if len(v) >= 3 and v[-1] not in "aeiouwxy" and v[-2] in "aeiou" and v[-3] not in "aeiou" \
            and len(v) <= 4:
        return v + v[-1] + "ing"
    return v + "ing"


def elaboration(extractor: EntityExtractor, text: str, lang: str, scope: Scope,
                 state: ConversationState) -> tuple[str, Mention | None] | None:
    """"In more detail" asks about what the assistant just explained.

    The subject is the previous question as it was resolved; "the second part",
    "the last bit", "the bit about X" narrow it to that sentence of the answer. An English
    query names the question's subject ("Tell me more about Citizen Kane") rather than
    pasting the question, when its grammar names one (:func:`elaboration_query`).
    """
    records = scoped_user_records(scope, state)
    if not records:
        return None
    prev = records[0]
    answer = ""
    if prev.turn < len(state.turns) and state.turns[prev.turn].role is Role.ASSISTANT:
        answer = state.turns[prev.turn].content
    subject = _SENT_END.sub("", prev.query)
    part = _PART.search(text) if lang == "en" else None
    if part is not None and answer:
        sentences = [x.strip() for x in _SENTENCE_SPLIT.split(answer) if x.strip()]
        chosen = ""
        if part.group("about"):
            key = part.group("about").strip().lower()
            chosen = next((x for x in sentences if key in x.lower()), "")
        elif sentences:
            word = (part.group("ord") or "").lower()
            idx = {"first": 0, "second": 1, "third": 2, "last": -1, "final": -1}.get(word, -1)
            if -len(sentences) <= idx < len(sentences):
                chosen = sentences[idx]
        if chosen:
            words = chosen.split()
            subject = f"{subject}: {' '.join(words[:24])}"
    elif answer:
        # what the answer explained in its own terms: its first typed entities that the
        # question did not name ("owner ... billing stuff?" -> billing admin)
        asked = {m.name.casefold() for m in extractor.extract(subject, lang)}
        added = [m.name for m in state.mentions.get(prev.turn + 1, ())
                 if m.source == "vocab" and not m.is_attribute
                 and m.name.casefold() not in asked]
        added = list(dict.fromkeys(added))[:1]
        if added:
            subject = f"{subject} ({_join(added, lang)})" if lang == "en" else \
                f"{subject}（{_join(added, lang)}）"
    core = _SENT_END.sub("", text)
    end = "？" if lang == "ja" else "?"
    if lang == "ja":
        return f"{subject}について、{core}{end}", prev.focus
    if part is None and subject == _SENT_END.sub("", prev.query):
        # the previous question would be pasted whole: its subject (and its closing "in X"
        # setting) is the query instead ("Tell me more about Citizen Kane"), where the
        # question's grammar names one
        about = elaboration_query(text, prev.query)
        if about is not None and _headed(extractor, about, prev.query, lang):
            return about, prev.focus
    return f"{core} — {subject}{end}", prev.focus

_ABOUT = "Tell me more about "


def _headed(extractor: EntityExtractor, about: str, question: str, lang: str) -> bool:
    """Whether the subject :func:`elaboration_query` found ends on a head noun the question
    names: a capitalised word, or the last word of a phrase the extractor finds in it. A
    subject cut in the wrong place ("the", "the oceans salty") is not written in: the query
    then keeps the previous question whole, which is long but has no wrong word."""
    subject = about[len(_ABOUT):] if about.startswith(_ABOUT) else about
    words = [w for w in re.findall(r"[\w'’-]+", subject) if w.lower() not in DETERMINERS]
    if not words:
        return False
    core = split_preamble(question)[0].strip().rstrip(" ?.!")
    if re.match(r"^(?:why|how|when|where)\s+(?:is|are|was|were)\s", core, re.IGNORECASE) \
            and core.casefold().endswith(subject.casefold()):
        # "why are the oceans salty?": after "why is/are" the subject is followed by its
        # predicate, so a subject that runs to the end of the question swallowed it
        return False
    head = words[-1]
    # (a closing "in postgres" setting: the head is the word before it)
    setting = re.search(r"\s(?:in|on)\s+\S+(?:\s+\S+)?$", subject)
    if setting is not None:
        before = [w for w in re.findall(r"[\w'’-]+", subject[:setting.start()]) if w.lower() not in DETERMINERS]
        if before:
            head = before[-1]
    if head[:1].isupper():
        return True
    heads = {m.name.split()[-1].casefold() for m in extractor.extract(question, lang) if m.name.split()}
    return head.casefold() in heads


def subject_phrase(prev: ResolvedTurn, lang: str) -> str:
    """What the previous exchange was about: its question's entities and attributes."""
    names: list[str] = []
    for m in prev.entities:
        if m.is_attribute and m.source != "vocab":
            continue
        names.append(m.name if m.source == "vocab" else m.surface)
    if not names and prev.focus is not None:
        names = [prev.focus.name]
    if not names:
        return _SENT_END.sub("", prev.query)
    return ("の".join(names) if lang == "ja" else " ".join(dict.fromkeys(names)))

def predicate_echo(text: str, pm: re.Match[str], prev: ResolvedTurn,
                    state: ConversationState,
                    present: set[str]) -> tuple[Mention, list[Mention]] | None:
    """The vocabulary entity that a clause of the previous answer says the message's
    own predicate of (the last entity before the echoed word, in the same clause), and
    the entities that clause names after it."""
    if not prev.turn < len(state.turns) or state.turns[prev.turn].role is not Role.ASSISTANT:
        return None
    answer = state.turns[prev.turn].content
    mentions = [m for m in state.mentions.get(prev.turn + 1, ())
                if m.source == "vocab" and not m.is_attribute
                and m.name.casefold() not in present]
    words = [w for w in re.findall(r"[a-z]{4,}", text[pm.end():].lower())
             if w not in FUNCTION_WORDS and w not in VERBS_TOO_COMMON]
    for w in words:
        hit = re.search(rf"\b{re.escape(w)}\b", answer, re.IGNORECASE)
        if hit is None:
            continue
        clause_start = max(answer.rfind(sep, 0, hit.start()) for sep in (". ", "; ", "? ", "! "))
        ends = [i for i in (answer.find(sep, hit.end()) for sep in (". ", "; ", ", ")) if i >= 0]
        clause_end = min(ends) if ends else len(answer)
        before = [m for m in mentions if clause_start < m.start < hit.start()]
        if before:
            after = [m for m in mentions if hit.end() <= m.start < clause_end
                     and m.name.casefold() != before[-1].name.casefold()]
            return before[-1], after
    return None

def event_or_plural(text: str, word: str, pm: re.Match[str], prev: ResolvedTurn,
                     state: ConversationState) -> tuple[str, Mention | None, str] | None:
    """Two references to the previous exchange that no single entity fills:

    * event anaphora: after "what happens if I disable a key?", "is *that* logged?"
      is about the event, disabling the key (the conditional clause, as a gerund);
    * plural reference: after an answer that names several new entities ("use the
      billing export or the reporting export"), "which of *those*" is all of them.
    """
    if not 0 < prev.turn <= len(state.turns):
        return None
    if word in ("that", "this", "it"):
        asked = state.turns[prev.turn - 1].content
        cm = _CONDITIONAL_EVENT.search(asked)
        if cm is not None:
            phrase = f"{_gerund(cm.group('verb'))} {cm.group('obj').strip()}"
            return (text[: pm.start()] + phrase + text[pm.end():],
                    prev.focus, f"event->{phrase}")
    if word in ("those", "these", "them", "they") and prev.turn < len(state.turns) \
            and state.turns[prev.turn].role is Role.ASSISTANT:
        asked_names = {m.name.casefold() for m in prev.entities}
        for enum in state.enumerations:
            if enum.turn != prev.turn + 1:
                continue
            new = [m for m in enum.items if m.name.casefold() not in asked_names]
            if len(new) >= 2:
                phrase = _join([m.name for m in new], "en")
                return (text[: pm.start()] + phrase + text[pm.end():], new[0],
                        f"plural->{phrase}")
    return None

def second_pronoun(extractor: EntityExtractor, text: str, first: str, used: Mention, scope: Scope,
                    state: ConversationState, present: set[str], topic: Mention | None,
                    rules: list[str]) -> str:
    """"how did he cook it?", "what was their role in it?": a second pronoun of another
    person, number or animacy stands for a second antecedent (the topic first)."""
    pm = english_pronoun(text, extractor.extract(text, "en"))
    if pm is None:
        return text
    word = pm.group(0).lower()
    kinds = {w: ("person" if w in ("he", "she", "him", "his", "her") else "thing")
             for w in (first, word)}
    if kinds[first] == kinds[word] and pronoun_number(first) == pronoun_number(word):
        return text  # the same referent again
    exclude = present | {used.name.casefold()} | state.rules.referents.persons
    number = pronoun_number(word)
    second: Mention | None = None
    if kinds[word] == "thing" and topic is not None and topic.name.casefold() not in exclude \
            and (number is None or (number == "pl") == is_plural(topic.name)):
        second = topic
    if second is None:
        second = find_antecedent(scope, state, exclude, "en", number,
                                  "person" if kinds[word] == "person" else None)
    if second is None:
        return text
    new, n = substitute_pronouns(extractor, text, "en", second.name, allow_that=False)
    if n:
        rules.append(f"anaphora->{second.name}")
        return new
    return text
