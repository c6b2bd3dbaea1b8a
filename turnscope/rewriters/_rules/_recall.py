"""Explicit recall: "go back to Dublin", "the first api you described", "going back to the
cache" read the conversation's earlier exchanges and slots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnscope.conversation import ConversationState, char_bigrams
from turnscope.entities import EntityExtractor, Mention, Slot, SlotStatus
from turnscope.references import ORDINALS_EN, anchors
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext, attach, of_kind, substitute_pronouns
from turnscope.rewriters._rules._text import DEFAULT_OTHER_LOOKBACK, _join, _the
from turnscope.scope import Scope

#: "the first api you described": an order over the conversation, not over one list
_HISTORY_ORDINAL = re.compile(
    r"\bthe\s+(?P<ord>first|second|third|last)\s+(?P<noun>[a-z]+)\s+(?:you|we)\s+"
    r"(?:described|mentioned|discussed|talked\s+about|covered|brought\s+up)\b", re.IGNORECASE)


def _strip_recall(text: str, lang: str) -> str:
    if lang == "ja":
        return re.sub(r"(?:さっき|先ほど|先程|前に|以前)[^、。？?]*(?:ですが|けど|について)?[、,]?", "", text)
    return re.sub(r"\b(?:go(?:ing)?\s+back\s+to|back\s+to|earlier|you\s+(?:mentioned|said)|"
                  r"what\s+you\s+said\s+about)\b", "", text, flags=re.IGNORECASE)


def recall(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
            mentions: Sequence[Mention], rules: list[str],
            msg_key: str | None = None) -> tuple[str, Mention | None]:
    by_order = history_ordinal(extractor, text, state) if lang == "en" else None
    if by_order is not None:
        text, ent = by_order
        rules.append(f"recall:order->{ent.name}")
        return text, ent
    by_kind = recalled_kind(extractor, text, state, msg_key) if lang == "en" else None
    if by_kind is not None:
        text, ent = by_kind
        rules.append(f"recall:kind->{ent.name}")
        return text, ent
    if not scope.recalled:
        rules.append("recall-unresolved")
        return text, None
    ex = scope.recalled[0]
    rec = state.resolved.get(ex)
    key_ms = [m for m in state.mentions.get(ex, ()) if not m.is_attribute]
    for t in state.exchange_of(ex)[1:]:
        key_ms += [m for m in state.mentions.get(t, ()) if not m.is_attribute]
    if rec is not None and rec.focus is not None:
        key_ms.insert(0, rec.focus)
    present = {m.name.casefold() for m in mentions}
    key = msg_key or ""
    kg = char_bigrams(key)

    def score(m: Mention) -> tuple[float, int]:
        names = extractor.vocabulary.surfaces_of(m.name) if m.source == "vocab" \
            else (m.name,)
        best = max((len(kg & char_bigrams(n)) / max(1, len(kg)) for n in names), default=0.0)
        return best, int(m.source == "vocab")

    # the recalled entity: a vocabulary entity of that exchange the message does not
    # name yet, the one the topic key names best ("the cache sla" -> managed Redis);
    # a general phrase only if the key names it well
    vocab_c = [m for m in key_ms if m.source == "vocab" and m.name.casefold() not in present]
    general_c = [m for m in key_ms if m.source != "vocab" and m.name.casefold() not in present
                 and kg and score(m)[0] >= 0.5]
    target = max(vocab_c, key=score) if vocab_c else (max(general_c, key=score)
                                                      if general_c else None)
    if target is None:
        # everything recalled is named already; an alias ("アバター") gets the canonical
        # name the documents use
        named_alias = [m for m in key_ms if m.source == "vocab"
                       and m.name.casefold() in present
                       and m.name.casefold() not in text.casefold()]
        rules.append("recall:named")
        if named_alias:
            return attach(text, lang, named_alias[0].name), named_alias[0]
        return text, key_ms[0] if key_ms else None
    new, n = substitute_pronouns(extractor, text, lang, target.name, allow_that=False)
    if n:
        rules.append(f"recall:anaphora->{target.name}")
        return new, target
    has_question = bool(re.search(r"[?？]|\b(?:what|how|is|are|does|do|can|which|why|when)\b",
                                  _strip_recall(text, lang), re.IGNORECASE))
    if rec is not None and not has_question:
        rules.append(f"recall:repeat-turn{ex}")
        repeated = rec.query
        have = {m.name.casefold() for m in extractor.extract(repeated, lang)}
        # what the user named ("... about Dublin") stays in the query
        keep = [m.name for m in mentions if not m.is_attribute and anchors(m)
                and m.name.casefold() not in have]
        if target.name.casefold() not in have and not keep:
            keep = [target.name]
        if keep:
            repeated = attach(repeated, lang, _join(keep, lang))
        return repeated, target
    rules.append(f"recall:attach->{target.name}")
    return attach(text, lang, target.name), target

def recalled_kind(extractor: EntityExtractor, text: str, state: ConversationState,
                   key: str | None) -> tuple[str, Mention] | None:
    """"going back to the cache": a kind noun as the recalled topic names the latest
    entity of that kind the conversation had, even one a newer one superseded."""
    vocab = extractor.vocabulary
    if not key or key.casefold() not in vocab.kinds:
        return None
    noun = key.casefold()
    for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK):
        if of_kind(extractor, sl, {noun}) and sl.status is not SlotStatus.EVICTED:
            ent = Mention(sl.type, sl.name, sl.name, 0, 0, "slot")
            m = re.search(rf"\bthe\s+{re.escape(key)}\b", text, re.IGNORECASE)
            if m is not None:
                return text[: m.start()] + _the(sl.name, "en") + text[m.end():], ent
            return attach(text, "en", sl.name), ent
    return None

def history_ordinal(extractor: EntityExtractor, text: str, state: ConversationState) -> tuple[str, Mention] | None:
    """"the first api you described": of the entities of that kind the conversation has
    had (bounded look-back, in order of introduction), the one at that position."""
    m = _HISTORY_ORDINAL.search(text)
    if m is None:
        return None
    noun = m.group("noun").lower()
    nouns = {noun, noun.rstrip("s")}
    seen: dict[str, Slot] = {}
    for sl in state.slots.recent(DEFAULT_OTHER_LOOKBACK):
        if of_kind(extractor, sl, nouns):
            prev = seen.get(sl.name.casefold())
            if prev is None or sl.introduced < prev.introduced:
                seen[sl.name.casefold()] = sl
    ordered = sorted(seen.values(), key=lambda sl: sl.introduced)
    pos = ORDINALS_EN.get(m.group("ord").lower(), 0)
    if not ordered or pos == 0 or pos > len(ordered):
        return None
    pick = ordered[-1] if m.group("ord").lower() == "last" else ordered[pos - 1]
    ent = Mention(pick.type, pick.name, pick.name, 0, 0, "slot")
    return text[: m.start()] + _the(pick.name, "en") + text[m.end():], ent


class Recall:
    """An explicit recall ("go back to Dublin", "the first api you described"): the
    exchange found by topic key, the kind it names or its position."""

    name = "recall"
    route: Route | None = Route.RECALL

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.route is not Route.RECALL or turn.resolved:
            return None
        labels: list[str] = []
        text, focus = recall(turn.extractor, turn.text, turn.lang, turn.scope, turn.state,
                             turn.message.mentions, labels, turn.c.topic_key)
        return Rewrite(text, tuple(labels), focus, final=True)
