"""Immediate reference: a message that continues the previous exchange (or counts in a list
in scope), resolved by the first of these rules that answers, in this order:

1. ``ordinal`` — "the second one" selects from a list;
2. ``centre`` — what a pronoun most likely continues (no rewrite: the later rules read it);
3. ``one-anaphora``, ``modifier-contrast``, ``type-anaphora`` — "that one", "the reporting
   one", "that region" name an entity (the message is then read with the name written in);
4. ``self-contained`` — once that name is in, nothing more is carried;
5. ``zero-anaphora`` — a Japanese message's dropped topic;
6. ``elaboration`` — "in more detail": the previous question and its answer;
7. ``echo`` — "why isn't it covered?": a clause of the answer says which entity;
8. ``event-or-plural`` — "is that logged?" (an event), "which of those" (a plural);
9. ``typed-carry`` — a declared vocabulary's typed slots fill the roles left unsaid;
10. ``subject-elaboration`` — elaboration about the previous exchange's subject;
11. ``anaphora`` — a pronoun or demonstrative takes the antecedent;
12. ``ellipsis`` — gapping over a parallel question, or the antecedent attached;
13. ``bridging`` — a relational noun takes the topic in force;
14. ``unresolved`` — nothing answered.

Each is a :class:`~turnscope.rewriters._rules._base.Rule`; the ones after a rule that
answered (``final``) stand aside (:attr:`TurnContext.immediate`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope._lexicon import is_plural, pronoun_number
from turnscope.conversation import ResolvedTurn
from turnscope.entities import Mention, SlotStatus
from turnscope.references import Cue, anchors, english_pronoun, find_ordinal_span
from turnscope.rewriters._rules._base import (
    JA_DEM_PERSON,
    Centre,
    Rewrite,
    Route,
    Rule,
    TurnContext,
    associated,
    attach,
    find_antecedent,
    gapping,
    parallel_records,
    scoped_user_records,
    substitute_pronouns,
    topic_in_scope,
)
from turnscope.rewriters._rules._elaboration import (
    elaboration,
    event_or_plural,
    predicate_echo,
    second_pronoun,
    subject_phrase,
)
from turnscope.rewriters._rules._ordinals import (
    _COUNTED_KIND,
    _NUMBER_WORDS,
    _NUMBERED_REF,
    _OF_THE_N,
    enumeration,
    list_frame,
    walked,
)
from turnscope.rewriters._rules._slots import contrastive_modifier, one_anaphora, resolve_one, type_reference
from turnscope.rewriters._rules._text import _SENT_END, DEFAULT_OTHER_LOOKBACK, DEFAULT_WORD_ASSOCIATION, _join
from turnscope.rewriters._rules._typed import typed_carry

__all__ = ["IMMEDIATE_RULES"]


class ListOrdinal:
    """1. Ordinals select from an enumeration."""

    name = "ordinal"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.ORDINAL not in turn.c.cues:
            return None
        text, lang, scope, state, msg = turn.text, turn.lang, turn.scope, turn.state, turn.message
        span = find_ordinal_span(text, lang)
        if span is not None:
            start, end, ordinal = span
            of_n = _OF_THE_N.search(text)
            total = _NUMBER_WORDS[of_n.group(1).lower()] if of_n else None
            noun = ordinal.noun
            counted = _COUNTED_KIND.search(text) if noun is None and lang == "en" else None
            if counted is not None:
                # "three periods ... the first one": the first of three periods
                total, noun = _NUMBER_WORDS[counted.group(1).lower()], counted.group(2)
            enum = walked(state, msg.index, ordinal.position or 3) \
                if noun is None and total is None else None
            if enum is None:
                enum = enumeration(turn.extractor, scope, noun, ordinal.position or 3, total,
                                   numbered=bool(_NUMBERED_REF.match(text[start:end])))
            if enum is not None and ordinal.position == 0:
                # "the middle one" of an odd-length list
                ordinal = type(ordinal)((len(enum.items) + 1) // 2, ordinal.count,
                                        ordinal.noun)
            if enum is not None and enum.items:
                idx = ordinal.position - 1 if ordinal.position > 0 else len(enum.items) + ordinal.position
                count = ordinal.count
                if ordinal.position < 0:
                    idx = len(enum.items) - count
                if 0 <= idx < len(enum.items):
                    chosen = list(enum.items[idx: idx + count])
                    name = _join([m.name for m in chosen], lang)
                    text = text[:start] + name + text[end:]
                    if lang == "en":
                        text = _coordinated(text, start + len(name), enum.items)
                    # which list the user counted in: "what about the second?" walks it on
                    state.enumeration_use[enum.turn] = msg.index
                    labels = [f"ordinal:{ordinal.position}x{count}@turn{enum.turn}"]
                    frame = list_frame(turn.extractor, enum, chosen, state, msg.index, text)
                    if frame:
                        # a list from a thread that has since closed: its items were
                        # chosen by a property ("regions that support CMK"); the
                        # selection means nothing without it
                        text = attach(text, lang, _join([m.name for m in frame], lang))
                        labels.append("ordinal-frame:" + ",".join(m.name for m in frame))
                    return Rewrite(text, tuple(labels), chosen[0], final=True, continues=True)
        return Rewrite(turn.text, ("ordinal-unresolved",))


_COORDINATOR = re.compile(r"\s*,?\s+(?:or|and|vs\.?|versus)\s+$", re.IGNORECASE)


def _coordinated(text: str, after: int, items: Sequence[Mention]) -> str:
    """"which is cheaper, avalanche or the second?": an ordinal coordinated with the one just
    written picks from the same list."""
    for _ in range(len(items)):
        span = find_ordinal_span(text, "en")
        if span is None or span[0] < after or not _COORDINATOR.fullmatch(text[after:span[0]]):
            break
        start, end, ordinal = span
        idx = ordinal.position - 1 if ordinal.position > 0 else len(items) + ordinal.position
        if ordinal.count != 1 or not 0 <= idx < len(items):
            break
        name = items[idx].name
        text = text[:start] + name + text[end:]
        after = start + len(name)
    return text


class CentreRule:
    """2. The pronoun of the message and what it most likely continues; the names the
    message holds. Records, for later turns, who "he"/"she"/"they" stood for."""

    name = "centre"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        text, lang, scope, state, msg = turn.text, turn.lang, turn.scope, turn.state, turn.message
        present = {m.name.casefold() for m in msg.mentions}
        pm = english_pronoun(text, msg.mentions) if lang == "en" else None
        word = pm.group(0).lower() if pm else ""
        kind = "person" if word in ("he", "she", "him", "his", "her") else (
            "place" if word == "there" else None)
        antecedent = find_antecedent(scope, state, present, lang,
                                     pronoun_number(word) if pm else None, kind)
        referents = state.rules.referents
        persons = referents.persons
        if kind == "person":
            # gender: who "she" stood for is not a "he" later, and the other way round
            female = word in ("she", "her")
            # … and what "they" stood for is a group ("the Dead"), not a "he"
            other = (referents.male if female else referents.female) | referents.groups
            if antecedent is not None and antecedent.name.casefold() in other:
                antecedent = find_antecedent(scope, state, present | other, lang, None, kind)
            if antecedent is not None:
                # animacy: what "he"/"his" stood for is a person, and "it" will not stand for it
                persons.add(antecedent.name.casefold())
                (referents.female if female else referents.male).add(antecedent.name.casefold())
        elif word in ("it", "its") and antecedent is not None \
                and antecedent.name.casefold() in persons:
            antecedent = find_antecedent(scope, state, present | persons, lang, "sg", None)
        elif word in ("they", "them", "their") and antecedent is not None \
                and not is_plural(antecedent.name):
            referents.groups.add(antecedent.name.casefold())
        prev = next(iter(scoped_user_records(scope, state)), None)
        topic = topic_in_scope(scope, state, present)
        if antecedent is not None and topic is not None and not anchors(antecedent):
            # a weak centre ("the system") yields to the conversation topic
            antecedent = topic
        return Rewrite(text, named=tuple(present),
                       centre=Centre(pm, word, kind, antecedent, prev, topic))


class OneAnaphora:
    """3. "that one", "set one up", "the admin one": one-anaphora selects an entity from
    the previous answer, or the entity in scope that carries the modifier."""

    name = "one-anaphora"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        one = resolve_one(turn.extractor, turn.text, turn.lang, turn.scope, turn.state, turn.message)
        if one is None:
            return None
        text, focus = one
        return Rewrite(text, (f"one-anaphora->{focus.name if focus else '?'}",), focus,
                       reread=turn.mentions_of(text), named=(focus.name,) if focus else (),
                       continues=True)


class ContrastiveModifier:
    """3. "the reporting one", "what about usage?": a contrastive modifier names a sibling
    of the antecedent."""

    name = "modifier-contrast"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        ex, text, lang = turn.extractor, turn.text, turn.lang
        contrastive = contrastive_modifier(ex, text, lang, turn.scope, turn.state,
                                           list(turn.mentions_of(text)))
        if contrastive is None:
            return None
        text, made = contrastive
        return Rewrite(text, (f"modifier-contrast->{made.name}",), reread=turn.mentions_of(text),
                       named=(made.name,))


class TypeAnaphora:
    """3. "that region", "the tier you suggested": the latest entity of that type."""

    name = "type-anaphora"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.TYPE not in turn.c.cues:
            return None
        typed_ref = type_reference(turn.extractor, turn.text, turn.lang, turn.scope, turn.state,
                                   set(turn.present))
        if typed_ref is None:
            return None
        text, focus = typed_ref
        return Rewrite(text, (f"type-anaphora->{focus.name}",), focus,
                       reread=turn.mentions_of(text), named=(focus.name,), continues=True)


class SelfContained:
    """4. Once the message's own reference is resolved ("go with the irish one — RPO
    there?" -> Dublin), what is left of it refers inside the message: nothing more is
    carried. (A fragment that names what it asks, "the max retention on the other db?",
    is complete once its referent is resolved: nothing to copy from earlier.)"""

    name = "self-contained"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or turn.lang != "en" or not any(
                r.startswith(("one-anaphora", "modifier-contrast", "type-anaphora"))
                for r in turn.rules):
            return None
        now_ms = turn.mentions_of(turn.text)
        if english_pronoun(turn.text, now_ms) is None \
                and (Cue.ELLIPSIS not in turn.c.cues or any(m.is_attribute for m in now_ms)):
            return Rewrite(turn.text, focus=turn.focus, final=True)
        return None


# the company or shop the user addresses, as the message's own subject
_JA_ADDRESSEE = re.compile(r"^\s*(?:(?:あと|じゃあ|では|それで)[、,]?\s*)?"
                           r"(?:御社|貴社|そちら|こちら|御店)(?:の|は|って|で)")


class ZeroAnaphora:
    """5. Japanese zero anaphora: the dropped topic is the topic in play, unless the domain
    knows another entity in scope goes with what the message asks about."""

    name = "zero-anaphora"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.ZERO not in turn.c.cues:
            return None
        ex, text, lang, scope, state = turn.extractor, turn.text, turn.lang, turn.scope, turn.state
        present = turn.present
        topic0 = topic_in_scope(scope, state, set(present), allow_stale=True)
        own0 = [m for m in turn.mentions_of(text) if not m.is_attribute
                or m.source == "vocab"]
        if lang == "ja" and _JA_ADDRESSEE.match(text):
            # 「御社の本社は？」: the message is about the company it addresses; nothing is
            # dropped (the product in play is not the company's possessor)
            return None
        subj = ex.vocabulary.subject_types
        if topic0 is not None and subj and topic0.type not in subj:
            topic0 = None  # the dropped argument is a subject, not an aspect
        cands0 = ([topic0] if topic0 is not None else []) + [
            Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
            for sl in sorted((*scope.slots, *scope.stale), key=lambda sl: -sl.last_seen)
            if sl.type != "attribute" and sl.name.casefold() not in present
            and (not subj or sl.type in subj)
            and sl.type not in {m.type for m in own0 if m.source == "vocab"}]
        if topic0 is None and cands0:
            topic0 = cands0[0]
        best0 = associated(ex, own0, cands0)
        if best0 is None:
            # a subject the newer one superseded can still be the one meant when the
            # domain ties what is asked to it alone ("入館証も出せる？" -> the kiosk)
            older = [Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                     for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                     if sl.status is SlotStatus.SUPERSEDED and (not subj or sl.type in subj)
                     and sl.name.casefold() not in present]
            best0 = associated(ex, own0, older, DEFAULT_WORD_ASSOCIATION) if older else None
        if best0 is not None:
            topic0 = best0
        if topic0 is None:
            return None
        return Rewrite(attach(text, lang, topic0.name), (f"zero-anaphora->{topic0.name}",),
                       topic0, final=True)


class Elaboration:
    """6. Elaboration: what the previous exchange was about, user *and* assistant."""

    name = "elaboration"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.ELABORATION not in turn.c.cues:
            return None
        elab = elaboration(turn.extractor, turn.text, turn.lang, turn.scope, turn.state)
        if elab is None:
            return None
        return Rewrite(elab[0], ("elaboration",), elab[1], final=True)


def _centre(turn: TurnContext) -> Centre:
    if turn.centre is None:  # the centre rule runs before every rule that reads it
        raise RuntimeError("the centre rule must run before " + repr(turn.rules))
    return turn.centre


class PredicateEcho:
    """7. "why isn't it covered?" after "…CMK in public preview, which isn't covered by the
    SLA": the pronoun's predicate echoes a clause of the answer; its subject is the entity
    that clause is about."""

    name = "echo"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or turn.lang != "en":
            return None
        ctr = _centre(turn)
        pm, prev = ctr.pronoun, ctr.prev
        if pm is None or prev is None or ctr.word not in ("it", "they", "them"):
            return None
        text, lang = turn.text, turn.lang
        echo = predicate_echo(text, pm, prev, turn.state, set(turn.present))
        if echo is None:
            return None
        echoed, rest = echo
        new_text, n = substitute_pronouns(turn.extractor, text, lang, echoed.name, allow_that=False)
        if not n:
            return None
        if rest:
            # the rest of that clause stays with it ("… covered by the SLA")
            new_text = attach(new_text, lang, _join([m.name for m in rest], lang))
        return Rewrite(new_text, (f"echo->{echoed.name}",), echoed, final=True, continues=True)


class EventOrPlural:
    """8. Event and plural reference to the previous exchange."""

    name = "event-or-plural"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or turn.lang != "en":
            return None
        ctr = _centre(turn)
        if ctr.pronoun is None or ctr.prev is None:
            return None
        event = event_or_plural(turn.text, ctr.word, ctr.pronoun, ctr.prev, turn.state)
        if event is None:
            return None
        text, focus_e, rule = event
        return Rewrite(text, (rule,), focus_e, final=True)


class TypedCarry:
    """9. Typed domains: carry the roles the message leaves open from the question it is
    parallel to (the same-type contrast if it names one, else the previous one)."""

    name = "typed-carry"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        labels: list[str] = []
        typed = typed_carry(turn.extractor, turn.text, turn.lang, turn.scope, turn.state,
                            turn.message, labels)
        if typed is not None:
            return Rewrite(typed[0], tuple(labels), typed[1], final=True)
        # (the thread it looked at is traced even when it wrote nothing)
        return Rewrite(turn.text, tuple(labels)) if labels else None


class SubjectElaboration:
    """10. Elaboration: the subject of the previous exchange."""

    name = "subject-elaboration"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.ELABORATION not in turn.c.cues:
            return None
        prev = _centre(turn).prev
        if prev is None:
            return None
        text, lang = turn.text, turn.lang
        subject = subject_phrase(prev, lang)
        if not subject:
            return None
        new, n = substitute_pronouns(turn.extractor, text, lang, subject, allow_that=True)
        if n:
            text = new
        else:
            core = _SENT_END.sub("", text)
            text = (f"{subject}について{core}" if lang == "ja"
                    else f"{core} about {subject}")
        return Rewrite(text, ("elaboration",), prev.focus, final=True)


class Anaphora:
    """11. Pronouns and demonstratives take the antecedent (a second pronoun of another
    person, number or animacy a second one)."""

    name = "anaphora"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        ctr = _centre(turn)
        antecedent = ctr.antecedent
        if antecedent is None or not (Cue.PRONOUN in turn.c.cues or Cue.DEMONSTRATIVE in turn.c.cues):
            return None
        text, lang = turn.text, turn.lang
        if lang == "ja" and JA_DEM_PERSON.search(text):
            # 「その人」: a person nothing here can name; no later rule may attach a thing
            return Rewrite(text, ("anaphora:person-unresolved",), final=True)
        new, n = substitute_pronouns(turn.extractor, text, lang, antecedent.name, allow_that=True)
        if not n:
            return None
        labels = [f"anaphora->{antecedent.name}"]
        if lang == "en":
            new = second_pronoun(turn.extractor, new, ctr.word, antecedent, turn.scope, turn.state,
                                 set(turn.present), ctr.topic, labels)
        return Rewrite(new, tuple(labels), antecedent, final=True, continues=True)


class Ellipsis:
    """12. Ellipsis: copy the antecedent question, substitute the contrasted element."""

    name = "ellipsis"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate or Cue.ELLIPSIS not in turn.c.cues:
            return None
        ctr = _centre(turn)
        prev, antecedent = ctr.prev, ctr.antecedent
        if prev is None:
            return None
        ex, text, lang, msg = turn.extractor, turn.text, turn.lang, turn.message
        new_ms = list(msg.mentions)
        labels: list[str] = []
        one_m = one_anaphora(ex, text, lang, prev, turn.scope)
        if one_m is not None:
            new_ms = [one_m]
            labels.append(f"one-anaphora->{one_m.name}")
        for rec in parallel_records(turn.scope, turn.state, msg.index):
            replaced = gapping(ex, rec, new_ms, lang)
            if replaced is not None:
                labels.append(f"ellipsis:gapping@turn{rec.turn}")
                return Rewrite(replaced[0], tuple(labels), replaced[1], final=True, continues=True)
        if lang == "ja":
            conditioned = ja_condition(text, msg.mentions, prev)
            if conditioned is not None:
                labels.append(f"ellipsis:condition@turn{prev.turn}")
                return Rewrite(conditioned, tuple(labels), prev.focus, final=True, continues=True)
        if lang == "ja" and any(_owner_name(text, m) for m in msg.mentions):
            # 「おもてなし受付の保証期間は？」 names whose 保証期間 it asks: a whole question
            # in the fragment's form, with no dropped owner to attach (nor a topic to bridge to)
            return Rewrite(text, (*labels, "ellipsis:own-owner"), final=True, continues=True)
        if antecedent is not None and antecedent.name.casefold() not in turn.present:
            labels.append(f"ellipsis:attach->{antecedent.name}")
            return Rewrite(attach(text, lang, antecedent.name), tuple(labels), antecedent, final=True,
                           continues=True)
        # the labels hold a "that one" resolved against the previous exchange
        return Rewrite(text, tuple(labels), continues=True) if labels else None


def _owner_name(text: str, m: Mention) -> bool:
    """Whether ``m`` is a name that owns what the message asks about (「おもてなし受付の保証
    期間」): followed by の, and a name, not a part (「バッテリーの充電時間」 still drops the
    product whose battery it is): a vocabulary entity, or a compound the extractor cut after
    its kana (「おもてなし」 + 「受付」: a product's name, not the common noun)."""
    if m.is_attribute or not text.startswith("の", m.end):
        return False
    return m.source == "vocab" or (m.start > 0 and "\u3041" <= text[m.start - 1] <= "\u309f"
                                   and not text[:m.start].endswith(("の", "は", "が", "を", "に", "で", "と", "も")))


# 「レンタルだと？」「エンタープライズなら？」: the previous question asked again under another
# condition, not a question about a new subject
_JA_CONDITION = re.compile(r"^(?:じゃあ|では|で|あと)?[、,]?\s*(?P<x>[^、。？?]+?)"
                           r"(?:だと|なら|だったら|の場合は?|では)[？?]?$")
_JA_OPENER = re.compile(r"^(?:じゃあ|では|で|あと|それで|ところで)[、,]\s*")
#: the head nouns that name a kind of offer: 「スタンダードプラン」 and 「エンタープライズ」 are two of them
_JA_KIND_HEADS = ("プラン", "モデル", "コース", "エディション", "タイプ", "サイズ", "バージョン", "版")
_KATAKANA_OR_LATIN = re.compile(r"[\u30a0-\u30ffA-Za-z0-9ー・ ]+")


def _ja_shape(name: str) -> str:
    """Katakana/Latin, kanji, or other: two names of one shape may be two of a kind (「大阪」
    and 「東京」), so a condition beside one of them is a swap nothing here can type."""
    if _KATAKANA_OR_LATIN.fullmatch(name):
        return "katakana"
    if all("\u4e00" <= ch <= "\u9fff" for ch in name):
        return "kanji"
    return "other"


def ja_condition(text: str, mentions: Sequence[Mention], prev: ResolvedTurn) -> str | None:
    """「エンタープライズだと？」 after 「スタンダードプランって会話数の上限ある？」 ->
    「エンタープライズプランって会話数の上限ある？」: the previous question (as resolved, its
    opening sentences and connective dropped) with the offer of the same kind swapped; with
    nothing of that kind in it, the condition goes in front (「レンタルだと、おもてなし受付の
    保証期間は？」). None when the message is not a bare condition, or when the previous
    question holds a name of the condition's shape that may be the part it replaces."""
    m = _JA_CONDITION.match(text.strip())
    if m is None or len(mentions) != 1 or mentions[0].name != m["x"]:
        return None
    x = m["x"]
    sentences = [t for t in re.split(r"(?<=[。！!])", prev.query) if t.strip()]
    if not sentences:
        return None
    question = _JA_OPENER.sub("", sentences[-1].strip())
    if not question or x in question:
        return None
    own = [e for e in prev.entities if e.name in question]
    for e in own:
        for head in _JA_KIND_HEADS:
            if e.name.endswith(head) and e.name != head and not x.endswith(head) \
                    and _ja_shape(e.name[:-len(head)]) == "katakana" == _ja_shape(x):
                return question.replace(e.name, x + head, 1)
    if any(_ja_shape(e.name) == _ja_shape(x) != "other" for e in own):
        return None
    core = question.rstrip("？?")
    return f"{x}だと、{core}？"


class Bridging:
    """13. Bridging: "the cost", "the main themes" -> about the topic in force; a "he" or
    "she" with no person to stand for is left as it is (a topic is not a person)."""

    name = "bridging"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        ctr = _centre(turn)
        anchor = ctr.topic or ctr.antecedent
        if ctr.kind == "person" and ctr.antecedent is None:
            anchor = None
        cues = turn.c.cues
        if not (Cue.BRIDGING in cues or Cue.ELLIPSIS in cues or Cue.PRONOUN in cues) \
                or anchor is None or anchor.name.casefold() in turn.present:
            return None
        return Rewrite(attach(turn.text, turn.lang, anchor.name), (f"bridging->{anchor.name}",),
                       anchor, final=True)


class Unresolved:
    """14. Nothing answered: the message stays as it is."""

    name = "unresolved"
    route: Route | None = Route.IMMEDIATE

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.immediate:
            return None
        return Rewrite(turn.text, ("unresolved",), turn.focus, final=True)


#: the immediate reference rules, in the order they are tried
IMMEDIATE_RULES: tuple[Rule, ...] = (
    ListOrdinal(), CentreRule(), OneAnaphora(), ContrastiveModifier(), TypeAnaphora(),
    SelfContained(), ZeroAnaphora(), Elaboration(), PredicateEcho(), EventOrPlural(),
    TypedCarry(), SubjectElaboration(), Anaphora(), Ellipsis(), Bridging(), Unresolved(),
)
