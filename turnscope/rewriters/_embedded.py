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
screen or recall cue; a relational noun; a fragment the ``fragment-ellipsis`` rule cannot
rewrite from an earlier question) is not a rule's choice: the learned
resolver (``turnscope.resolver``) makes it, in every conversation where the user has named
nothing of a declared vocabulary. Where the user has, the vocabulary's typed slots decide
with the rules above (the trace says ``"domain": "vocabulary"``).

Unguarded scopes (``full``, ``window``, ``segment``) additionally *carry*
qualifiers from the history, as a "condense the question" step told to keep
constraints that still apply does: the most salient entity of each type absent
from the message. That is exactly the behaviour whose contamination
the README describes, reproduced so policies can be compared on equal terms.

The rules live in ``turnscope.rewriters._rules``, a module per family of references. Each
is a :class:`~turnscope.rewriters._rules._base.Rule` (a ``name`` and ``apply(turn)``
returning a :class:`~turnscope.rewriters._rules._base.Rewrite` or ``None``), and
:meth:`EmbeddedRewriter.run` tries them in this order (a reference rule only on the route
it serves, which the ``route`` rule decides once):

1. ``after-pivot``, ``strip-preamble`` — openers go (``_open_domain``);
2. ``screen`` — "this page", "this site" (``_open_domain``);
3. ``pro-forms`` — "mine", a locative "there" in open-domain talk (``_open_domain``);
3b. ``fragment-ellipsis`` — "and in France?" in open-domain talk: the thread's earlier question
   with the part swapped (``_open_domain``; it abstains when the swap is not unique);
4. ``learned-resolver`` — open-domain English with no structural cue (``_open_domain``);
5. ``route`` — which store the reference rules read: the previous exchange and its lists,
   or an earlier exchange (here);
6. the immediate reference rules, first answer wins (``_immediate``: ordinal, centre,
   one-anaphora, modifier contrast, type anaphora, self-contained, zero anaphora,
   elaboration, echo, event or plural, typed carry, subject elaboration, anaphora,
   ellipsis, bridging, unresolved);
7. ``recall`` — "go back to Dublin" (``_recall``);
7b. ``clean-query`` — the preamble the message opened with goes from what the rules wrote,
   a back-reference's topic kept (``_open_domain``);
8. ``carry`` — unguarded scopes' qualifiers, then ``place`` — the place frame (``_open_domain``).

Shared reading (antecedents, the topic, writing a name in) is plain functions in
``_rules._base`` that take the session's extractor explicitly.
"""

from __future__ import annotations

import logging
import re

from turnscope._exceptions import ConfigError
from turnscope.conversation import Role
from turnscope.entities import EntityExtractor
from turnscope.language import Decider, decider_unavailable, load_parser, shared_decider, topic_anchor
from turnscope.references import Cue, ReferenceClass, english_pronoun
from turnscope.resolver import Resolver
from turnscope.rewriters._base import EMBEDDED, RewriteRequest, RewriteResult
from turnscope.rewriters._guard import brought_in, conversation_text
from turnscope.rewriters._rules._base import Rewrite, Route, Rule, TurnContext, primary_mention
from turnscope.rewriters._rules._immediate import IMMEDIATE_RULES
from turnscope.rewriters._rules._open_domain import (
    AfterPivot,
    Carry,
    CleanQuery,
    FragmentEllipsis,
    LearnedResolver,
    LocativeFrame,
    ProForms,
    ResolverBridge,
    ScreenDeixis,
    StripPreamble,
)
from turnscope.rewriters._rules._ordinals import _LIST_ORDINAL
from turnscope.rewriters._rules._recall import Recall
from turnscope.scope import TopicShift

__all__ = ["EmbeddedRewriter"]

log = logging.getLogger("turnscope.rewriters")

#: The decider and the topic anchor parse the message (spaCy, about linear in its length:
#: a 120,000-character paste took 43 s) and score it with the language model. A follow-up
#: whose reference needs deciding is a sentence or two (the longest user message of every
#: public set and the written corpus is 167 characters); a longer message is a pasted text,
#: and the rules' rewrite stands.
DEFAULT_MAX_DECIDED_CHARS = 1000


def _pasted(request: RewriteRequest) -> str | None:
    """Why the decider and the anchor leave this message alone (a pasted text), or None."""
    if len(request.message.text) > DEFAULT_MAX_DECIDED_CHARS:
        return f"the message is longer than {DEFAULT_MAX_DECIDED_CHARS} characters"
    return None


class RouteRule:
    """Which store the reference rules read, once the pro-forms and the learned resolver
    have had their say: an ordinal over a list ("back to the regions — the third one?")
    and an immediate reference read the previous exchange and the lists in scope; any
    other earlier reference is a recall; a situational message whose screen held nothing
    is read as immediate when it counts or points back."""

    name = "route"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.resolved:
            return None
        cls_used, c, text, lang = turn.cls_used, turn.c, turn.text, turn.lang
        if cls_used is ReferenceClass.EARLIER and Cue.ORDINAL in c.cues and _LIST_ORDINAL.search(text):
            return Rewrite(text, route=Route.IMMEDIATE)
        if cls_used is ReferenceClass.EARLIER:
            return Rewrite(text, route=Route.RECALL)
        if cls_used is ReferenceClass.IMMEDIATE or (
            cls_used in (ReferenceClass.PAGE, ReferenceClass.SITE)
            and (Cue.ORDINAL in c.cues or (Cue.PRONOUN in c.cues and lang == "en"
                                            and english_pronoun(text, turn.mentions_of(text))
                                            is not None))
        ):
            return Rewrite(text, route=Route.IMMEDIATE)
        return None


class EmbeddedRewriter:
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
                 resolver: Resolver | None | str = "default",
                 decider: Decider | None | str = "default") -> None:
        self.extractor = extractor or EntityExtractor()
        if isinstance(decider, str) and decider != "default":
            raise ConfigError(f"decider must be a Decider, None or 'default', got {decider!r}")
        # the learned reference decision (parser candidates scored by a small LM, one ranker
        # with abstention) reviews what the rules wrote for an English reference; None keeps
        # the rules' rewrite (the behaviour before issue 37)
        self._decider = decider
        # the learned resolver answers the open-domain question "which earlier phrase does
        # this message need?"; None keeps the rules alone (the behaviour before issue 8)
        if isinstance(resolver, str) and resolver != "default":
            raise ConfigError(f"resolver must be a Resolver, None or 'default', got {resolver!r}")
        self.bridge = ResolverBridge(self.extractor, resolver)
        #: the rules, in the order :meth:`run` tries them (see the module docstring)
        self.rules: tuple[Rule, ...] = (
            AfterPivot(), StripPreamble(), ScreenDeixis(), ProForms(self.bridge),
            FragmentEllipsis(self.bridge), LearnedResolver(self.bridge), RouteRule(), *IMMEDIATE_RULES,
            Recall(), CleanQuery(), Carry(), LocativeFrame(),
        )

    @property
    def resolver(self) -> Resolver | None:
        """The learned resolver (loaded on first use; ``None`` if disabled or unavailable)."""
        return self.bridge.resolver

    def run(self, request: RewriteRequest) -> RewriteResult:
        turn = TurnContext.start(request, self.extractor)
        for rule in self.rules:
            # a reference rule is tried only on the route it serves (decided by ``route``)
            if rule.route is None or rule.route is turn.route:
                turn.take(rule.apply(turn))
        self._decide(request, turn)
        self._anchor(request, turn)
        _ja_gapping(request.message.text, turn)
        _withhold_unreadable_attach(request.message.text, turn)
        return self._result(turn)

    @property
    def decider(self) -> Decider | None:
        """The learned reference decider (loaded on first use; ``None`` if disabled or
        its parts are not installed, ``decider_unavailable()`` says why)."""
        if isinstance(self._decider, str):
            return shared_decider()
        return self._decider

    def _decide(self, request: RewriteRequest, turn: TurnContext) -> None:
        """Let the learned decision review an English reference the rules read off the
        previous exchanges (not the screen, an explicit recall, a change of subject or a
        declared vocabulary's slots, which name their evidence themselves)."""
        if turn.lang != "en" or turn.c.pivot or turn.deixis or turn.route is Route.RECALL \
                or turn.trace.get("domain") == "vocabulary" or self._decider is None:
            return
        if turn.c.reference_class in (ReferenceClass.PAGE, ReferenceClass.SITE, ReferenceClass.EARLIER):
            return
        if Cue.ELABORATION in turn.c.cues or Cue.ORDINAL in turn.c.cues:
            # "in more detail" restates the previous question; "the second one" picks from a
            # list the rules read exactly: neither is a choice between phrases
            return
        if (pasted := _pasted(request)) is not None:
            turn.trace["decider"] = {"chosen": None, "reason": pasted}
            return
        decider = self.decider
        if decider is None:
            turn.trace["decider"] = {"status": "unavailable", "reason": decider_unavailable()}
            return
        history = [(t.role.value, t.content) for t in turn.state.turns]
        if not history:
            return
        try:
            decision = decider.decide(request.message.text, history, turn.text, turn.c.spec_class)
        except Exception as exc:  # noqa: BLE001 - a fault in the decider must not lose the turn
            log.warning("reference decider failed, the rules' rewrite stands: %r", exc)
            turn.trace["decider"] = {"status": "failed", "reason": repr(exc)}
            return
        turn.trace["decider"] = {
            "reference": decision.reference, "probability": round(decision.probability, 3),
            "candidates": decision.considered, "chosen": decision.phrase, "reason": decision.reason,
            **({"also": list(decision.phrases[1:])} if len(decision.phrases) > 1 else {}),
        }
        if decision.query is not None and decision.phrase is not None:
            # a reference resolved against the previous exchanges: the message goes on
            carried = decision.phrases or (decision.phrase,)
            turn.take(Rewrite(decision.query, tuple(f"lm-decider->{p}" for p in carried), final=True,
                              carried=carried, learned=True, continues=True))
            turn.carried = carried

    def _anchor(self, request: RewriteRequest, turn: TurnContext) -> None:
        """Append the subject the current segment opened with to an English follow-up that
        holds none of its own (:func:`turnscope.language.topic_anchor`); with the decider
        only (``decider=None`` keeps the rules alone)."""
        if self._decider is None or turn.lang != "en" or turn.c.pivot or turn.deixis \
                or turn.route is Route.RECALL or turn.trace.get("domain") == "vocabulary":
            return
        if turn.c.reference_class in (ReferenceClass.PAGE,
                                      ReferenceClass.SITE, ReferenceClass.EARLIER):
            return
        if (pasted := _pasted(request)) is not None:
            turn.trace["anchor"] = {"phrase": None, "reason": pasted}
            return
        segment = _segment(turn)
        if len(segment) < 2:
            return
        # answers longer than the decider was trained on bring subjects of their own (a
        # retrieved passage as the answer): a follow-up is then more often about one of
        # those than about the opening, so the anchor stands aside, as the decider does
        limit = getattr(self.decider, "max_answer_chars", None)
        if isinstance(limit, int) and any(role == "assistant" and len(text) > limit
                                          for role, text in segment):
            turn.trace["anchor"] = {"phrase": None, "reason": f"an answer is longer than {limit} characters"}
            return
        try:
            anchor, reason = topic_anchor(request.message.text, turn.text, segment, load_parser(),
                                          cue=turn.c.reference_class is not ReferenceClass.STANDALONE)
        except Exception as exc:  # noqa: BLE001 - a parser fault must not lose the turn
            log.warning("topic anchor failed, the query stands: %r", exc)
            turn.trace["anchor"] = {"status": "failed", "reason": repr(exc)}
            return
        turn.trace["anchor"] = {"phrase": anchor.phrase if anchor else None, "reason": reason}
        if anchor is not None:
            # the segment's subject carried in: the message goes on with it
            turn.take(Rewrite(anchor.query, (f"anchor->{anchor.phrase}",), carried=(anchor.phrase,),
                              continues=True))

    def _result(self, turn: TurnContext) -> RewriteResult:
        """The query, its entities and focus, and the rewriter's topic-shift flag
        (:meth:`TopicShift.rewriter_flag`)."""
        text, lang, c, trace = turn.text, turn.lang, turn.c, turn.trace
        entities = turn.mentions_of(text)
        named = [m for m in entities if not m.is_attribute]
        focus = turn.focus
        if focus is None:
            focus = primary_mention(named, text, lang)
        # (the probability as the trace rounds it: the flag has always compared that value)
        probability = trace.get("shift_probability")
        topic_shift = TopicShift.rewriter_flag(
            pivot=c.pivot, standalone=turn.cls_used is ReferenceClass.STANDALONE, named=named,
            carried=bool(turn.carried), deixis=turn.deixis,
            probability=float(probability) if isinstance(probability, float) else None,
            state=turn.state)
        return RewriteResult(
            query=text,
            reference_class=c.spec_class,
            topic_shift=topic_shift,
            entities=entities,
            focus=focus,
            backend=EMBEDDED,
            trace=trace,
            # (after the flag: the flag reads what the rules themselves said they carried)
            carried=turn.carried or brought_in(turn.request.message.text, text,
                                                [conversation_text(turn.request, evidence="")]),
            continues=_continues(turn),
        )


#: Japanese sentence ends and fillers a message may open with (not part of its question)
_JA_END = re.compile(r"[？?。!！…]+$")
_JA_FILLERS = ("じゃあ", "では", "なら", "で", "あと", "それで", "えっと", "あ")
_JA_OPENER = re.compile(rf"^(?:{'|'.join(_JA_FILLERS)})[、,]?\s*")
#: a message that still holds a reference word after 「Xの」 was put in front of it reads as
#: two subjects (「マイナンバーカードの彼って…」): pronouns, demonstratives, "the one that…" (方),
#: "the latter" (者) and ordinals
_JA_REFERRING = re.compile(r"彼|それ|これ|あれ|その|この|あの|方|者|最初|最後|番目|つ目")


#: how many of the segment's latest messages the anchor reads besides its opening
ANCHOR_WINDOW = 20


def _segment(turn: TurnContext) -> list[tuple[str, str]]:
    """The messages since the last change of subject, oldest first: the user message the
    current segment opened with, and every message after it."""
    turns = turn.state.turns
    start = 0
    for t in turns:
        resolved = turn.state.resolved.get(t.index)
        if t.role is Role.USER and (start == 0 or (resolved is not None and resolved.topic_shift)):
            start = t.index
    segment = [(t.role.value, t.content) for t in turns if start and t.index >= start]
    # the opening and the latest messages: a long segment is read in bounded time per turn
    return segment[:1] + segment[1:][-ANCHOR_WINDOW:]


#: a Japanese fragment that names one thing and asks the previous question of it:
#: 「大阪は？」, 「ラクマだと？」, 「公務員の場合は？」 (an opener may come first)
_JA_FRAGMENT = re.compile(rf"^(?:(?:{'|'.join(_JA_FILLERS)})[、,]?\s*)?(?P<y>[^\s、,？?。]{{2,15}}?)"
                          r"(?:は|って|だと|なら|の場合は|の方は)[？?]$")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
#: case and topic particles: what follows an argument of a Japanese question
_JA_PARTICLES = ("って", "は", "が", "を", "で", "に", "の", "と", "も", "から", "まで", "より")


def _ja_gapping(original: str, turn: TurnContext) -> None:
    """A Japanese fragment that names a peer of something the previous question asked about
    is that question again with the peer in its place (gapping): 「大阪は？」 after
    「東京で賃貸の更新料って相場どのくらい？」 is 「大阪で賃貸の更新料って相場どのくらい？」, not
    「東京の大阪は？」. Only for a fragment that is one noun (no kana particle inside: a
    condition such as 「学生で払えない場合は？」 is not a peer) and not a relational noun
    (「料金は？」 asks for the price of the topic: bridging stands); the peer replaced is the
    previous question's entity nearest to the fragment's noun in the multilingual e5 space."""
    if turn.lang != "ja" or turn.c.pivot or turn.deixis or turn.route is Route.RECALL:
        return
    if _attached_front(original, turn.text) is None:
        return  # gapping replaces a topic the rules put in front, nothing else
    m = _JA_FRAGMENT.match(original.strip())
    if m is None or _HIRAGANA.search(m.group("y")):
        return
    y = m.group("y")
    if any(mm.is_attribute for mm in turn.extractor.extract(y, "ja")):
        return
    before = [t for t in turn.state.resolved if t < turn.message.index]
    if not before:
        return
    prev = turn.state.resolved[max(before)]
    if prev.query.strip() != turn.state.turn(max(before)).content.strip():
        # the previous question was itself resolved: what a rule put in it may be a wrong
        # guess, and its arguments are no longer the user's (on the corpus's train part
        # both such cases swapped the wrong word)
        return
    # a peer is an argument of that question: a case or topic particle follows it there
    peers = [e.name for e in prev.entities if not e.is_attribute and e.name != y
             and y not in e.name and prev.query.count(e.name) == 1
             and prev.query[prev.query.index(e.name) + len(e.name):].startswith(_JA_PARTICLES)]
    if not peers:
        return
    try:
        from turnscope._encoder import default_encoder

        vectors = default_encoder().embed_queries([y, *peers])
    except Exception as exc:  # noqa: BLE001 - the embedding is evidence, not the turn
        log.warning("Japanese gapping skipped, the encoder failed: %r", exc)
        return
    x = peers[int((vectors[1:] @ vectors[0]).argmax())]
    turn.rules.append(f"ja-gapping:{x}->{y}")
    turn.text = prev.query.replace(x, y, 1)
    # what the question brought back from the previous one (the peer swapped out is gone)
    turn.carried = tuple(e.name for e in prev.entities if e.name != x and e.name in turn.text)
    turn.continues = True


def _attached_front(original: str, text: str) -> tuple[str, str] | None:
    """``(X, core)`` when ``text`` is 「Xの」 put in front of the message as typed (``core``:
    the message without its sentence end), else None."""
    core = _JA_END.sub("", original.strip())
    query = _JA_END.sub("", text.strip())
    if not core or not query.endswith(core) or len(query) <= len(core):
        return None
    front = query[: len(query) - len(core)]
    return (front[:-1].strip(), core) if front.endswith("の") else None


def _withhold_unreadable_attach(original: str, turn: TurnContext) -> None:
    """In Japanese a rewrite either puts the referent where the message refers, or leaves the
    message as typed and names the referent in ``carried``: 「Xの」 in front of a message that
    keeps its own reference word or opener (「マイナンバーカードの彼って…」, 「代用のえっと、…」)
    reads as two subjects. 「Xの」 in front of a message that names no referent of its own
    (「料金は？」 -> 「アバター案内の料金は？」) is kept."""
    if turn.lang != "ja" or turn.text == original:
        return
    attached = _attached_front(original, turn.text)
    if attached is None:
        return
    front, core = attached
    if not (_JA_REFERRING.search(core) or _JA_OPENER.match(core)):
        return
    turn.rules.append("ja-attach-withheld")
    turn.text = original
    turn.carried = (front,)


def _continues(turn: TurnContext) -> bool:
    """Whether the rewrite resolved a reference of the message against the previous exchange
    (the output's ``topic_shift`` is then false): a rule said so in its :class:`Rewrite`
    (an ordinal, pronoun or ellipsis rule answered, or the learned resolver carried a phrase
    in for a pronoun of the message)."""
    if turn.c.pivot or turn.route is Route.RECALL:
        return False
    return turn.continues
