"""The embedded rewriter: rules a reader recognises, no model, no network.

Each rule is a general pattern of English or Japanese reference, applied only to
the evidence the scope policy allowed:

* **ordinal reference** — "the second one", "the last two", 「2つ目」 select from
  the most recent enumeration in scope;
* **pronoun / demonstrative anaphora** — "it", "that", それ, その〜 take the
  *focus* of the previous user turn (the centring principle: a pronoun most often
  continues the centre of the preceding utterance), else the most recent entity;
* **ellipsis** — "what about the RTO?", "and for Paris?", 「英語は？」 copy the
  antecedent question and substitute the contrasted element of the same type
  (gapping), or attach the focus when no element is contrasted;
* **bridging** — a relational noun with no complement ("what's the cost?",
  「料金は？」) takes the focus as its complement;
* **elaboration** — "in more detail", 詳しく: the subject is what the previous
  exchange was about (user *and* assistant), i.e. the previous question's subject;
* **explicit recall** — "go back to Dublin": the exchange found by topic key;
* **situational** — "this page" / 「このページ」 read the screen, "this site" the site;
* **locative and possessive pro-forms** — in open-domain talk, a locative "there" names
  the place the conversation named ("visiting Kyoto … the weather there?"), a possessive
  "mine" / "ours" the thing the user called "my …" / "our …" (the existential "is there"
  and "a friend of mine" name nothing);
* **pivot** — an explicit change of subject carries nothing over; the opener goes, with a
  conjunction left dangling ("unrelated, but what's …?" -> "What's …?").

Which earlier phrase an open-domain English message needs (a pronoun with no ordinal,
screen or recall cue; a relational noun; a fragment) is not a rule's choice: the learned
resolver (``turnscope.resolver``) makes it, in every conversation where the user has named
nothing of a declared vocabulary. Where the user has, the vocabulary's typed slots decide
with the rules above (the trace says ``"domain": "vocabulary"``).

Unguarded scopes (``full``, ``window``, ``segment``) additionally *carry*
qualifiers from the history, as a "condense the question" step told to keep
constraints that still apply does: the most salient entity of each type absent
from the message. That is exactly the behaviour whose contamination SPEC
section 1 describes, reproduced so policies can be compared on equal terms.

The rules live in ``turnscope.rewriters._rules``, one module per kind of reference
(ordinals, typed slots, elaboration, openers and pivot, recall, screen, place frame,
locative and possessive pro-forms, the resolver bridge); :class:`EmbeddedRewriter`
composes them and decides which one a message takes.
"""

from __future__ import annotations

from collections.abc import Sequence

from turnscope._exceptions import ConfigError
from turnscope.conversation import ConversationState
from turnscope.entities import EntityExtractor, Mention
from turnscope.references import Cue, ReferenceClass
from turnscope.references._classify import english_pronoun
from turnscope.resolver import Resolver
from turnscope.resolver._ranker import shift_threshold
from turnscope.rewriters._base import EMBEDDED, RewriteRequest, RewriteResult
from turnscope.rewriters._rules._bridge import ResolverBridge
from turnscope.rewriters._rules._frame import FrameRules
from turnscope.rewriters._rules._immediate import ImmediateRules
from turnscope.rewriters._rules._opener import _PREAMBLE, _after_pivot, _as_sentence
from turnscope.rewriters._rules._ordinals import _LIST_ORDINAL
from turnscope.rewriters._rules._recall import RecallRules
from turnscope.rewriters._rules._screen import ScreenRules
from turnscope.scope import Message, Scope

__all__ = ["EmbeddedRewriter"]


class EmbeddedRewriter(ImmediateRules, RecallRules, ScreenRules, FrameRules, ResolverBridge):
    """Offline rewriter. See the module docstring for its rules.

    >>> from turnscope import Session
    >>> s = Session()
    >>> _ = s.user("Which EU regions support customer-managed keys?")
    >>> s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    >>> s.user("What's the uptime SLA on the second one?").query
    "What's the uptime SLA on Dublin?"
    """

    name = EMBEDDED

    def __init__(self, extractor: EntityExtractor | None = None, *,
                 resolver: Resolver | None | str = "default") -> None:
        self.extractor = extractor or EntityExtractor()
        # the learned resolver answers the open-domain question "which earlier phrase does
        # this message need?"; None keeps the rules alone (the behaviour before issue 8)
        if isinstance(resolver, str) and resolver != "default":
            raise ConfigError(f"resolver must be a Resolver, None or 'default', got {resolver!r}")
        self._resolver = resolver
        self._unavailable: str | None = None

    def run(self, request: RewriteRequest) -> RewriteResult:
        msg, scope, state = request.message, request.scope, request.state
        c = msg.classification
        lang = msg.lang
        text = msg.text.strip()
        trace: dict[str, object] = {"rules": []}
        rules: list[str] = trace["rules"]  # type: ignore[assignment]
        focus: Mention | None = None

        if c.pivot:
            cut = _after_pivot(text)
            if cut != text:
                # the question after the change of subject starts the query
                text = _as_sentence(cut, lang)
                rules.append("after-pivot")
        if c.pivot or c.reference_class is ReferenceClass.STANDALONE:
            stripped = _PREAMBLE.sub("", text).strip()
            if stripped and stripped != text:
                text = _as_sentence(stripped, lang)
                rules.append("strip-preamble")

        cls = c.reference_class
        cls_used: ReferenceClass = cls
        if cls in (ReferenceClass.PAGE, ReferenceClass.SITE):
            new = self._situational(text, lang, scope, cls)
            if new is not None:
                text = new
                rules.append(f"screen:{cls.value}")
            else:
                rules.append("screen-missing")
                cls_used = ReferenceClass.IMMEDIATE

        # a possessive "mine" or a locative "there" names what structure fixes; what else
        # an open-domain message refers to ("what did he do there?") is the learned
        # resolver's to decide, on the message with those names written in
        deixis = self._deixis(request, text) if cls_used is cls else []
        carried: tuple[str, ...] = ()
        if deixis:
            text, carried = deixis[-1].text, tuple(d.phrase for d in deixis)
            rules.extend(d.rule for d in deixis)
            # what is left is read as the message the user would have typed with the names
            msg = Message(msg.index, text, lang, tuple(self.extractor.extract(text, lang)), c,
                          msg.screen)
        refers = not deixis or english_pronoun(text, self.extractor.extract(text, lang)) is not None
        learned = self._learned(request, text, trace) if cls_used is cls and refers else None
        if learned is not None:
            text, more = learned
            carried = (*carried, *more)
            rules.append("learned-resolver")
        elif deixis and not refers:
            pass  # the pro-forms were all the message referred to
        elif cls_used is ReferenceClass.EARLIER and Cue.ORDINAL in c.cues \
                and _LIST_ORDINAL.search(text):
            # "back to the regions — the third one?": the list is the store
            text, focus = self._immediate(text, lang, scope, state, msg, rules)
        elif cls_used is ReferenceClass.EARLIER:
            text, focus = self._recall(text, lang, scope, state, msg.mentions, rules,
                                       c.topic_key)
        elif cls_used is ReferenceClass.IMMEDIATE or (
            cls_used in (ReferenceClass.PAGE, ReferenceClass.SITE)
            and (Cue.ORDINAL in c.cues or (Cue.PRONOUN in c.cues and lang == "en"
                                            and english_pronoun(text, self.extractor.extract(
                                                text, lang)) is not None))
        ):
            text, focus = self._immediate(text, lang, scope, state, msg, rules)

        if not scope.guarded and not c.pivot and learned is None and not deixis:
            text = self._carry(text, lang, scope, state, rules)
        if lang == "en":
            text = self._locative_frame(text, msg.text, c.pivot, state, rules)

        entities = tuple(self.extractor.extract(text, lang))
        named = [m for m in entities if not m.is_attribute]
        if focus is None:
            focus = self._primary(named, text, lang)
        if deixis:
            topic_shift = False  # it names what the conversation named
        elif "shift_probability" in trace:
            # the learned detector replaces the "every name is new" rule; a message that
            # needed an earlier phrase continues its subject whatever the detector says
            # (it scores drift into the previous answer as a shift: see its module)
            topic_shift = cls_used is ReferenceClass.STANDALONE and not carried \
                and float(trace["shift_probability"]) >= shift_threshold()  # type: ignore[arg-type]
        else:
            topic_shift = self._topic_shift(msg.classification.pivot, cls_used, named, scope, state)
        return RewriteResult(
            query=text,
            reference_class=c.spec_class,
            topic_shift=topic_shift,
            entities=entities,
            focus=focus,
            backend=EMBEDDED,
            trace=trace,
            carried=carried,
        )

    @staticmethod
    def _topic_shift(pivot: bool, cls: ReferenceClass, named: Sequence[Mention], scope: Scope,
                     state: ConversationState) -> bool:
        if pivot:
            return True
        if cls is not ReferenceClass.STANDALONE or not named or not state.turns:
            return False
        known = {s.name.casefold() for s in state.slots.current()}
        return all(m.name.casefold() not in known for m in named)
