"""Elliptical fragments in open-domain talk: "and in France?", "what about the Pixel 9 Pro?",
"and the cinematographer?". The message is an earlier question of the thread with one part
swapped, or completed (:mod:`turnscope.references._ellipsis` decides which part, by kind and
structure, and abstains when the evidence is not unique).

The rule runs before the learned resolver: the resolver chooses an earlier *phrase* to write
into a message, and a fragment needs an earlier *question* with a phrase taken out, which it
does not do (it leaves "and in France?" as typed). When the fragment reading abstains, the
message goes on to the resolver and the immediate rules as before.
"""

from __future__ import annotations

from turnscope.conversation import ConversationState, ResolvedTurn
from turnscope.references import Fragment, parse_fragment, substitute_in_thread
from turnscope.resolver import session_shift, shift_threshold
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.rewriters._rules._bridge import ResolverBridge

__all__ = ["FragmentEllipsis", "thread_questions"]

#: how many earlier questions of the thread a fragment may be parallel to (SPEC 1: a
#: fragment continues the last few questions, not the whole conversation)
_MAX_BACK = 3
#: the shift probability from which a fragment of no closed kind is a new subject
_NEW_SUBJECT = 0.5


def thread_questions(state: ConversationState, now: int, max_back: int = _MAX_BACK) -> list[ResolvedTurn]:
    """The user turns before ``now`` as resolved, newest first, back to (and including) the
    one that started the current topic: a fragment is not parallel to a question the user
    has since changed the subject from."""
    out: list[ResolvedTurn] = []
    for t in sorted((t for t in state.resolved if t < now), reverse=True):
        rec = state.resolved[t]
        out.append(rec)
        if rec.topic_shift or len(out) >= max_back:
            break
    return out


class FragmentEllipsis:
    """An English fragment in open-domain talk is the thread's earlier question with the
    fragment's part swapped in (or the question completed with it); what it kept of that
    question is ``carried``. Abstains (the message goes on unchanged) when the fragment
    reading is not unique."""

    name = "fragment-ellipsis"
    route: Route | None = None

    def __init__(self, bridge: ResolverBridge) -> None:
        self.bridge = bridge

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.resolved or turn.cls_used is not turn.c.reference_class \
                or not self.bridge._open_domain(turn.request):
            return None
        frag = parse_fragment(turn.text)
        if frag is None:
            return None
        if frag.kind == "other" and self._new_subject(turn):
            # "what about the weather tomorrow?" is as often a new subject as an ellipsis:
            # a phrase of no closed kind is read as one only where the one topic-shift
            # detector says the subject goes on
            return Rewrite(turn.text, ("fragment-ellipsis:new-subject",))
        records = thread_questions(turn.state, turn.message.index)
        if not records:
            return None
        # substitute_in_thread reads the thread oldest first
        questions = [r.query for r in reversed(records)]
        query = substitute_in_thread(questions, frag, max_back=_MAX_BACK)
        if query is None:
            return None
        source = next((r for r in records if _kept_from(r.query, query, frag)), records[0])
        mentions = turn.mentions_of(query)
        carried = _carried(query, turn.text, frag, tuple(m.name for m in mentions))
        focus = next((m for m in mentions if frag.phrase.casefold() in m.name.casefold()), source.focus)
        return Rewrite(query, (f"fragment-ellipsis:{frag.kind}@turn{source.turn}",), focus,
                       final=True, reread=mentions, carried=carried)


    def _new_subject(self, turn: TurnContext) -> bool:
        resolver = self.bridge.resolver
        if resolver is None:
            return True  # no detector to ask: not rewritten
        p = session_shift(turn.state, turn.message.index, turn.message.text, resolver)
        # more likely a new subject than not (the detector's own threshold is set low, for
        # the output's topic_shift; a fragment reads the previous question when in doubt)
        return p >= max(shift_threshold(), _NEW_SUBJECT)


def _kept_from(question: str, query: str, frag: Fragment) -> bool:
    """Whether ``query`` was written from ``question`` (it keeps the question's words but
    the swapped part)."""
    words = {w.casefold().strip("?.!,") for w in question.split()}
    new = {w.casefold().strip("?.!,") for w in query.split()} - {
        w.casefold() for w in frag.phrase.split()}
    return bool(new) and new <= words


def _carried(query: str, message: str, frag: Fragment, names: tuple[str, ...]) -> tuple[str, ...]:
    """What the query holds from the earlier question, in query order: its named phrases
    that neither the message nor the fragment wrote."""
    said = message.casefold()
    out: list[str] = []
    for name in sorted(names, key=lambda n: query.casefold().find(n.casefold())):
        low = name.casefold()
        if low in said or low in frag.phrase.casefold() or frag.phrase.casefold() in low or name in out:
            continue
        out.append(name)
    return tuple(out)
