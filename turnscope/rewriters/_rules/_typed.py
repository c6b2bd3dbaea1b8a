"""Role filling with a declared vocabulary's typed slots: a follow-up keeps the roles of the
question it continues that it leaves unsaid ("is it free?", "what about Singapore?").
"""

from __future__ import annotations

import re

from turnscope._lexicon import (
    ADJECTIVES,
    FUNCTION_WORDS,
    LOCATION_TYPES,
    is_plural,
    pronoun_number,
)
from turnscope.conversation import ConversationState, ResolvedTurn, Role
from turnscope.entities import EntityExtractor, Mention
from turnscope.references import Cue, english_pronoun
from turnscope.rewriters._rules._base import associated, attach, gapping, parallel_records, substitute_pronouns
from turnscope.rewriters._rules._text import _SENTENCE_SPLIT, DEFAULT_WORD_ASSOCIATION, _join
from turnscope.scope import Message, Scope

#: how many earlier questions compete when the domain knows which thread fits (bounded)
DEFAULT_THREADS = 4
_LOCATIVE = re.compile(r"\b(?:there|down\s+there|over\s+there)\b", re.IGNORECASE)
_DEMONSTRATIVE_WORDS = frozenset("that this those these".split())
_JA_DEMONSTRATIVE = re.compile(r"(?:それ|その|そちら|そっち)")
_WHO_QUESTION = re.compile(r"^\W*(?:(?:and|ok|so|but)\W+)*(?:who|whom)\b", re.IGNORECASE)
_ADDITIVE = re.compile(r"\b(?:too|also|as\s+well|either|instead|same)\b|も[？?]?$|もそう", re.IGNORECASE)


def typed_carry(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
                 msg: Message, rules: list[str]) -> tuple[str, Mention | None] | None:
    """Role filling with typed slots.

    A follow-up leaves some roles of the question it continues unsaid ("is it free?"
    keeps the service, "what about Singapore?" keeps the metric and swaps the region).
    The question it continues is the latest one that has an entity of a type the
    message names (a contrast), else the previous one. Every vocabulary entity of that
    question whose type the message does not fill is carried; in guarded scopes only
    non-terminal ones. Untyped (general) mentions are left to centring and the topic.
    """
    c = msg.classification
    # (the message's own mentions while it is read as written: extracted once, by the session)
    own = list(msg.mentions) if text == msg.text else extractor.extract(text, lang)
    own_types = {m.type for m in own if m.source == "vocab"}
    own_names = {m.name.casefold() for m in own}
    records = parallel_records(scope, state, msg.index)
    if not records:
        return None
    chosen: ResolvedTurn | None = None
    contrast = False
    # a named entity is a contrast (the earlier question asked again about it) only in
    # an elliptical or additive question ("what about Singapore?", "Redis too?"); in
    # "what's its DR pair?" the named thing is what is asked, not a replacement
    if own_types and (Cue.ELLIPSIS in c.cues or _ADDITIVE.search(text)):
        for r in records:
            if any(m.source == "vocab" and m.type in own_types
                   and m.name.casefold() not in own_names for m in r.entities):
                chosen, contrast = r, True
                break
    if chosen is None:
        chosen = records[0]
        # of the open threads, the one whose subject the domain associates with what
        # the message asks about ("is the warranty …?" goes with the kiosk thread)
        own_vocab = [m for m in own if m.source == "vocab"
                     or (not m.is_attribute and len(m.name) >= 4)]
        if not own_vocab and lang == "en":
            # a message that names nothing still says which thread it continues by its
            # words: "does it fail over automatically?" goes where failover is discussed
            own_vocab = [Mention("phrase", w, w, 0, 0, "general")
                         for w in dict.fromkeys(re.findall(r"[a-z][a-z\-]{3,}", text.lower()))
                         if w not in FUNCTION_WORDS and w not in ADJECTIVES
                         and not w.endswith("ly")]
            words_only = True
        else:
            words_only = False
        if own_vocab and len(records) > 1:
            heads = [(r, r.focus) for r in records[:DEFAULT_THREADS] if r.focus is not None]
            best = associated(extractor, own_vocab, [h for _, h in heads],
                                    DEFAULT_WORD_ASSOCIATION if words_only else 0.0)
            if best is not None:
                chosen = next(r for r, h in heads if h is best)
                if chosen is not records[0]:
                    rules.append(f"thread@turn{chosen.turn}")
    def usable(m: Mention) -> bool:
        if m.type in own_types or m.name.casefold() in own_names:
            return False
        # evicted or superseded entities are never carried
        return m.is_attribute or not scope.guarded or \
            state.slots.get(m.type, m.name) is not None

    def store(rec: ResolvedTurn) -> tuple[list[Mention], list[Mention], list[Mention],
                                           Mention | None]:
        """The exchange as a store: the question's entities, the answer's, the
        question's attributes, and its head."""
        answer: list[Mention] = []
        if rec.turn < len(state.turns) and state.turns[rec.turn].role is Role.ASSISTANT:
            answer = [m for m in state.mentions.get(rec.turn + 1, ()) if m.source == "vocab"]
        question = [m for m in rec.entities if m.source == "vocab"]
        q_e = [m for m in question if not m.is_attribute and usable(m)]
        a_e = [m for m in answer if not m.is_attribute and usable(m)]
        if len(a_e) > 1 and 0 < rec.turn <= len(state.turns) \
                and _WHO_QUESTION.match(state.turns[rec.turn - 1].content):
            # the answer to "who can …?" opens with who (the role that fills the slot);
            # what the exchange is about is the rest of it ("… can change the plan")
            a_e = a_e[1:] + a_e[:1]
        at = [m for m in question if m.is_attribute and usable(m)]
        if contrast:
            # "does that apply to Redis too?": the property asked about stays, only the
            # contrasted entity changes; it may be a plain noun ("backups")
            at += [m for m in rec.entities if m.source == "general" and m.type == "phrase"
                   and m.name.casefold() not in own_names]
        if any(m.is_attribute and m.source == "vocab" for m in own):
            at = []  # the message's own attribute wins ("what about rate limits?")
        f = rec.focus
        if f is not None and f.source == "vocab" and not f.is_attribute and usable(f):
            hd: Mention | None = f
        else:
            hd = (q_e or a_e)[0] if (q_e or a_e) else None
        return q_e, a_e, at, hd

    q_ents, a_ents, attrs, head = store(chosen)
    if head is None and not attrs and not contrast:
        # the question it continues named nothing typed ("who can make the switch?"):
        # the next open question in scope is the store
        for rec in records[:DEFAULT_THREADS]:
            if rec is chosen:
                continue
            q2, a2, at2, hd2 = store(rec)
            if hd2 is not None:
                chosen, q_ents, a_ents, attrs, head = rec, q2, a2, at2, hd2
                rules.append(f"store@turn{rec.turn}")
                break
    if contrast and Cue.ELLIPSIS in c.cues and Cue.PRONOUN not in c.cues:
        gap = gapping(extractor, chosen, [m for m in own if m.source == "vocab"], lang)
        if gap is not None:
            rules.append(f"typed:gapping@turn{chosen.turn}")
            return gap
    if head is None and not attrs:
        return None
    out = text
    rheme = rheme_of(chosen, state) if chosen is records[0] else None
    if rheme is not None and rheme.name.casefold() in own_names:
        rheme = None
    pron = english_pronoun(text, own) if lang == "en" else None
    demonstrative = (pron is not None and pron.group(0).lower() in _DEMONSTRATIVE_WORDS) \
        or (lang == "ja" and bool(_JA_DEMONSTRATIVE.search(text)))
    if contrast and attrs and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
        phrase = _join([m.name for m in attrs[:2]], lang)
        new, n = substitute_pronouns(extractor, out, lang, phrase, allow_that=True)
        if n:
            rules.append(f"typed:contrast@turn{chosen.turn}->{phrase}")
            return new, head
    if rheme is not None and demonstrative and not contrast:
        # givenness: "it" continues what is in focus (the question's subject), while
        # "that"/"those" point at what was just activated, the answer's new entity
        new, n = substitute_pronouns(extractor, out, lang, rheme.name, allow_that=True)
        if n:
            rules.append(f"typed:demonstrative@turn{chosen.turn + 1}->{rheme.name}")
            return new, rheme
    if head is not None and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
        # the pronoun stands for what was asked about: the subject with its attribute
        # ("can I make it shorter?" after "how does CMK rotation work?")
        number = pronoun_number(pron.group(0)) if pron is not None else None
        # ("private endpoints", "audit logs" are names of one service each: "is it
        # billed per hour?" may take them; "they" still wants a plural)
        named_service = head.source == "vocab" and number == "sg" \
            and head.type in extractor.vocabulary.subject_types
        if number is not None and lang == "en" and not named_service \
                and (number == "pl") != is_plural(head.name):
            # agreement: "who can create them?" wants a plural antecedent, from this
            # exchange or, failing that, from the other open questions
            agreeing = [m for m in q_ents + a_ents if (number == "pl") == is_plural(m.name)]
            if not agreeing:
                for rec in records[:DEFAULT_THREADS]:
                    q2, a2, _, _ = store(rec)
                    agreeing = [m for m in q2 if (number == "pl") == is_plural(m.name)]
                    if agreeing:
                        break
            if agreeing:
                head = agreeing[0]
                attrs = []
        phrase = (f"{head.name}の{attrs[0].name}" if lang == "ja" else
                  f"{head.name} {attrs[0].name}") if attrs else head.name
        # the other entities of that question qualify the head, as a reader would
        # say it: "the uptime SLA for managed Redis", 「マネージドRedisのSLA」
        others = [m.name for m in q_ents if m.name.casefold() != head.name.casefold()
                  and m.type != head.type][:1]
        head_in_question = any(m.name.casefold() == head.name.casefold() for m in q_ents)
        if others and head_in_question:
            phrase = (f"{others[0]}の{phrase}" if lang == "ja" else f"{phrase} for {others[0]}")
        if _LOCATIVE.search(text) and head.type not in LOCATION_TYPES:
            # "there" wants a place: of that exchange, else the latest the scope holds
            places = [m for m in q_ents + a_ents if m.type in LOCATION_TYPES]
            if not places:
                held = sorted((sl for sl in (*scope.slots, *scope.stale)
                               if sl.type in LOCATION_TYPES), key=lambda sl: -sl.last_seen)
                places = [Mention(sl.type, sl.name, sl.name, 0, 0, "slot") for sl in held]
            if places:
                head, phrase = places[0], places[0].name
        new, n = substitute_pronouns(extractor, out, lang, phrase, allow_that=True)
        if n:
            rules.append(f"typed:anaphora@turn{chosen.turn}->{phrase}")
            return new, head
    if head is None and rheme is not None and (Cue.PRONOUN in c.cues
                                               or Cue.DEMONSTRATIVE in c.cues):
        # the question named nothing typed: the pronoun takes what the answer brought in
        new, n = substitute_pronouns(extractor, out, lang, rheme.name, allow_that=True)
        if n:
            rules.append(f"typed:rheme@turn{chosen.turn + 1}->{rheme.name}")
            return new, rheme
    # an elliptical or bridging question keeps the subject and, if it names no
    # attribute of its own, the attribute that was asked about
    carried = ([head] if head is not None else []) + attrs[:1]
    out = attach(out, lang, _join([m.name for m in carried], lang))
    rules.append(f"typed:attach@turn{chosen.turn}:" + ",".join(m.name for m in carried))
    return out, head

def rheme_of(question: ResolvedTurn, state: ConversationState) -> Mention | None:
    """The new information of the answer to ``question``, if it introduced any.

    Thematic progression: the new element an answer introduces (its rheme) is what
    the next question most often takes up as its theme ("Use Infrequent Access
    instead." -> "what's the minimum duration on that one?"). End focus puts the
    rheme late in the sentence, so the last introduced entity of the answer's first
    sentence is taken.
    """
    t = question.turn + 1
    if t > len(state.turns) or state.turns[t - 1].role is not Role.ASSISTANT:
        return None
    asked = {m.name.casefold() for m in question.entities}
    asked |= {m.name.casefold() for m in state.mentions.get(question.turn, ())}
    content = state.turns[t - 1].content
    first_end = len(content)
    mm = _SENTENCE_SPLIT.search(content)
    if mm is not None:
        first_end = mm.start()
    new = [m for m in state.mentions.get(t, ())
           if m.source == "vocab" and m.name.casefold() not in asked and m.start < first_end]
    if not new:
        return None
    return new[-1]
