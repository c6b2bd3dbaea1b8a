"""Immediate reference: a message that continues the previous exchange, resolved by the rules
in order (ordinal, one-anaphora, type noun, zero anaphora, elaboration, echo, event,
typed slots, pronoun, ellipsis, bridging).
"""

from __future__ import annotations

from turnscope.conversation import ConversationState
from turnscope.entities import Mention, SlotStatus
from turnscope.entities._lexicon import is_plural, pronoun_number
from turnscope.references import Cue, anchors, find_ordinal_span
from turnscope.references._classify import english_pronoun
from turnscope.rewriters._rules._elaboration import ElaborationRules
from turnscope.rewriters._rules._ordinals import _COUNTED_KIND, _NUMBER_WORDS, _NUMBERED_REF, _OF_THE_N, OrdinalRules
from turnscope.rewriters._rules._slots import SlotRules
from turnscope.rewriters._rules._text import _SENT_END, DEFAULT_OTHER_LOOKBACK, DEFAULT_WORD_ASSOCIATION, _join
from turnscope.rewriters._rules._typed import TypedRules
from turnscope.scope import Message, Scope


class ImmediateRules(OrdinalRules, SlotRules, TypedRules, ElaborationRules):
    """The order in which the rules answer a message that refers to the previous exchange."""

    def _immediate(self, text: str, lang: str, scope: Scope, state: ConversationState, msg: object,
                   rules: list[str]) -> tuple[str, Mention | None]:
        if not isinstance(msg, Message):  # internal call; keeps mypy precise
            raise TypeError("msg must be a Message")
        c = msg.classification
        present = {m.name.casefold() for m in msg.mentions}
        focus: Mention | None = None

        # 1. ordinals select from an enumeration
        if Cue.ORDINAL in c.cues:
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
                enum = self._walked(state, msg.index, ordinal.position or 3) \
                    if noun is None and total is None else None
                if enum is None:
                    enum = self._enumeration(scope, noun, ordinal.position or 3, total,
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
                        focus = chosen[0]
                        state.enumeration_use[enum.turn] = msg.index
                        rules.append(f"ordinal:{ordinal.position}x{count}@turn{enum.turn}")
                        frame = self._list_frame(enum, chosen, state, msg.index, text)
                        if frame:
                            # a list from a thread that has since closed: its items were
                            # chosen by a property ("regions that support CMK"); the
                            # selection means nothing without it
                            text = self._attach(text, lang, _join([m.name for m in frame], lang))
                            rules.append("ordinal-frame:" + ",".join(m.name for m in frame))
                        return text, focus
                rules.append("ordinal-unresolved")

        pm = english_pronoun(text, msg.mentions) if lang == "en" else None
        word = pm.group(0).lower() if pm else ""
        kind = "person" if word in ("he", "she", "him", "his", "her") else (
            "place" if word == "there" else None)
        antecedent = self._antecedent(scope, state, present, lang,
                                      pronoun_number(word) if pm else None, kind)
        persons: set[str] = state.memo.setdefault("persons", set())
        if kind == "person":
            # gender: who "she" stood for is not a "he" later, and the other way round
            gender = "female" if word in ("she", "her") else "male"
            other: set[str] = state.memo.setdefault("male" if gender == "female" else "female",
                                                    set())
            # … and what "they" stood for is a group ("the Dead"), not a "he"
            other = other | state.memo.setdefault("groups", set())
            if antecedent is not None and antecedent.name.casefold() in other:
                antecedent = self._antecedent(scope, state, present | other, lang, None, kind)
            if antecedent is not None:
                # animacy: what "he"/"his" stood for is a person, and "it" will not stand for it
                persons.add(antecedent.name.casefold())
                state.memo.setdefault(gender, set()).add(antecedent.name.casefold())
        elif word in ("it", "its") and antecedent is not None \
                and antecedent.name.casefold() in persons:
            antecedent = self._antecedent(scope, state, present | persons, lang, "sg", None)
        elif word in ("they", "them", "their") and antecedent is not None \
                and not is_plural(antecedent.name):
            state.memo.setdefault("groups", set()).add(antecedent.name.casefold())
        prev = next(iter(self._scoped_user_records(scope, state)), None)
        topic = self._topic(scope, state, present)
        if antecedent is not None and topic is not None and not anchors(antecedent):
            # a weak centre ("the system") yields to the conversation topic
            antecedent = topic

        # 1'. "that one", "set one up", "the admin one": one-anaphora selects an entity
        #     from the previous answer, or the entity in scope that carries the modifier
        one = self._resolve_one(text, lang, scope, state, msg)
        if one is not None:
            text, focus = one
            rules.append(f"one-anaphora->{focus.name if focus else '?'}")
            present = present | ({focus.name.casefold()} if focus else set())
            msg = Message(msg.index, text, msg.lang, tuple(self.extractor.extract(text, lang)),
                          c, msg.screen)

        # 1a. "the reporting one", "what about usage?": a contrastive modifier names a
        #     sibling of the antecedent
        contrastive = self._contrastive_modifier(text, lang, scope, state,
                                                 list(self.extractor.extract(text, lang)))
        if contrastive is not None:
            text, made = contrastive
            rules.append(f"modifier-contrast->{made.name}")
            present = present | {made.name.casefold()}
            msg = Message(msg.index, text, msg.lang, tuple(self.extractor.extract(text, lang)),
                          c, msg.screen)

        # 1b. "that region", "the tier you suggested": the latest entity of that type
        if Cue.TYPE in c.cues:
            typed_ref = self._type_reference(text, lang, scope, state, present)
            if typed_ref is not None:
                text, focus = typed_ref
                rules.append(f"type-anaphora->{focus.name}")
                present = present | {focus.name.casefold()}
                msg = Message(msg.index, text, msg.lang,
                              tuple(self.extractor.extract(text, lang)), c, msg.screen)

        # once the message's own reference is resolved ("go with the irish one — RPO there?"
        # -> Dublin), what is left of it refers inside the message: nothing more is carried
        now_ms = self.extractor.extract(text, lang)
        if any(r.startswith(("one-anaphora", "modifier-contrast", "type-anaphora"))
               for r in rules) and lang == "en" and english_pronoun(text, now_ms) is None \
                and (Cue.ELLIPSIS not in c.cues or any(m.is_attribute for m in now_ms)):
            # (a fragment that names what it asks, "the max retention on the other db?",
            # is complete once its referent is resolved: nothing to copy from earlier)
            return text, focus

        # 1c. Japanese zero anaphora: the dropped topic is the topic in play, unless the
        #     domain knows another entity in scope goes with what the message asks about
        if Cue.ZERO in c.cues:
            topic0 = self._topic(scope, state, present, allow_stale=True)
            own0 = [m for m in self.extractor.extract(text, lang) if not m.is_attribute
                    or m.source == "vocab"]
            subj = self.extractor.vocabulary.subject_types
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
            best0 = self._associated(own0, cands0)
            if best0 is None:
                # a subject the newer one superseded can still be the one meant when the
                # domain ties what is asked to it alone ("入館証も出せる？" -> the kiosk)
                older = [Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
                         for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK)
                         if sl.status is SlotStatus.SUPERSEDED and (not subj or sl.type in subj)
                         and sl.name.casefold() not in present]
                best0 = self._associated(own0, older, DEFAULT_WORD_ASSOCIATION) if older else None
            if best0 is not None:
                topic0 = best0
            if topic0 is not None:
                rules.append(f"zero-anaphora->{topic0.name}")
                return self._attach(text, lang, topic0.name), topic0

        # 1d. elaboration: what the previous exchange was about, user *and* assistant
        if Cue.ELABORATION in c.cues:
            elab = self._elaboration(text, lang, scope, state)
            if elab is not None:
                rules.append("elaboration")
                return elab

        # 1e'. "why isn't it covered?" after "…CMK in public preview, which isn't covered by
        #      the SLA": the pronoun's predicate echoes a clause of the answer; its subject
        #      is the entity that clause is about
        if lang == "en" and pm is not None and prev is not None and word in ("it", "they", "them"):
            echo = self._predicate_echo(text, pm, prev, state, present)
            if echo is not None:
                echoed, rest = echo
                new_text, n = self._substitute_pronouns(text, lang, echoed.name, allow_that=False)
                if n:
                    rules.append(f"echo->{echoed.name}")
                    if rest:
                        # the rest of that clause stays with it ("… covered by the SLA")
                        new_text = self._attach(new_text, lang, _join([m.name for m in rest], lang))
                    return new_text, echoed

        # 1e. event and plural reference to the previous exchange
        if lang == "en" and pm is not None and prev is not None:
            event = self._event_or_plural(text, word, pm, prev, state)
            if event is not None:
                text, focus_e, rule = event
                rules.append(rule)
                return text, focus_e

        # 2'. typed domains: carry the roles the message leaves open from the question it
        #     is parallel to (the same-type contrast if it names one, else the previous one)
        typed = self._typed_carry(text, lang, scope, state, msg, rules)
        if typed is not None:
            return typed

        # 2. elaboration: the subject of the previous exchange
        if Cue.ELABORATION in c.cues and prev is not None:
            subject = self._subject_phrase(prev, lang)
            if subject:
                new, n = self._substitute_pronouns(text, lang, subject, allow_that=True)
                if n:
                    text = new
                else:
                    core = _SENT_END.sub("", text)
                    text = (f"{subject}について{core}" if lang == "ja"
                            else f"{core} about {subject}")
                rules.append("elaboration")
                return text, prev.focus

        # 3. pronouns and demonstratives
        if antecedent is not None and (Cue.PRONOUN in c.cues or Cue.DEMONSTRATIVE in c.cues):
            new, n = self._substitute_pronouns(text, lang, antecedent.name, allow_that=True)
            if n:
                rules.append(f"anaphora->{antecedent.name}")
                if lang == "en":
                    new = self._second_pronoun(new, word, antecedent, scope, state, present,
                                               topic, rules)
                return new, antecedent

        # 4. ellipsis: copy the antecedent question, substitute the contrasted element
        if Cue.ELLIPSIS in c.cues and prev is not None:
            new_ms = [m for m in msg.mentions]
            one_m = self._one_anaphora(text, lang, prev, scope)
            if one_m is not None:
                new_ms = [one_m]
                rules.append(f"one-anaphora->{one_m.name}")
            for rec in self._parallel_records(scope, state, msg.index):
                replaced = self._gapping(rec, new_ms, lang)
                if replaced is not None:
                    rules.append(f"ellipsis:gapping@turn{rec.turn}")
                    return replaced
            if antecedent is not None and antecedent.name.casefold() not in present:
                rules.append(f"ellipsis:attach->{antecedent.name}")
                return self._attach(text, lang, antecedent.name), antecedent

        # 5. bridging: "the cost", "the main themes" -> about the topic in force; a "he" or
        #    "she" with no person to stand for is left as it is (a topic is not a person)
        anchor = topic or antecedent
        if kind == "person" and antecedent is None:
            anchor = None
        if (Cue.BRIDGING in c.cues or Cue.ELLIPSIS in c.cues or Cue.PRONOUN in c.cues) \
                and anchor is not None and anchor.name.casefold() not in present:
            rules.append(f"bridging->{anchor.name}")
            return self._attach(text, lang, anchor.name), anchor
        rules.append("unresolved")
        return text, focus
