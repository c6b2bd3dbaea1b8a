"""How a question is put, apart from what it refers to: the openers it is stripped of, the
screen it points at, and the context it is framed by.

* **Openers** — a change-of-subject cue ("unrelated to all that —") and a preamble ("ok
  so", "quick question:") go, and what is left is written as a sentence; the preamble an
  English message opened with goes from what the rules wrote, a back-reference's topic
  kept.
* **Screen deixis** — "this page" / 「このページ」 read the screen, "this site" the site.
* **Frame** — the place a conversation is set in, and (unguarded scopes only) the
  qualifiers a condense step would carry.
"""

from __future__ import annotations

import re

from turnscope._lexicon import ANAPHORIC_PRONOUNS
from turnscope.conversation import ConversationState
from turnscope.entities import EntityExtractor
from turnscope.references import SITE_EN, SITE_JA, ReferenceClass, after_pivot, attach_topic, split_preamble
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.rewriters._rules._text import _PLACE_NAME, _SENT_END, _TIME_NAMES, _join
from turnscope.scope import Scope

_PREAMBLE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|hmm+|so|alright|right|anyway|also|btw|by\s+the\s+way|oh|um+|"
    r"(?:a\s+)?(?:totally\s+)?(?:different|unrelated|separate|another|new|other)\s+"
    r"(?:question|topic|thing|subject|q)|unrelated(?:\s+but)?|changing\s+(?:the\s+)?"
    r"(?:topic|subject)|switching\s+gears|on\s+another\s+note|moving\s+on|quick\s+question|"
    r"ところで|話は変わりますが|話が変わりますが|別の質問(?:です)?(?:が|けど)|別件(?:です)?(?:が|けど)?|"
    r"それとは別に)[\s,，、:：—–\-.!…]*)+",
    re.IGNORECASE,
)
#: a conjunction left at the front once the opener it joined is dropped ("unrelated, but
#: what's …"): it joined the opener to the question, and the question does not need it
_DANGLING = re.compile(r"^(?:(?:but|and|so|or|then)(?:\s*,\s*|\s+))+", re.IGNORECASE)


def _after_pivot(text: str) -> str:
    """The question after a change-of-subject cue ("unrelated to all that — how …?")."""
    cut = after_pivot(text)
    if cut is not None and len(cut[1].strip()) > 3:
        return cut[1].strip()
    return text


def _as_sentence(rest: str, lang: str) -> str:
    """The question left after a dropped opener, written as a sentence: a conjunction that
    joined the opener to it goes too, and its first word takes a capital unless the word
    is a name spelt with a small first letter ("iOS", "eBay").

    >>> _as_sentence("but what's the capital of Peru?", "en")
    "What's the capital of Peru?"
    >>> _as_sentence("eBay fees for sellers?", "en")
    'eBay fees for sellers?'
    """
    if lang != "en":
        return rest
    out = _DANGLING.sub("", rest).strip() or rest
    first = out.split(maxsplit=1)[0]
    if any(ch.isupper() for ch in first[1:]):
        return out  # "iOS", "eBay", "macOS": the small letter is the name's own
    return out[0].upper() + out[1:]


class AfterPivot:
    """An explicit change of subject: the question after it starts the query."""

    name = "after-pivot"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not turn.c.pivot:
            return None
        cut = _after_pivot(turn.text)
        if cut == turn.text:
            return None
        return Rewrite(_as_sentence(cut, turn.lang), ("after-pivot",))


class StripPreamble:
    """A preamble ("ok so", "quick question:") goes from a pivot or a standalone question."""

    name = "strip-preamble"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if not (turn.c.pivot or turn.c.reference_class is ReferenceClass.STANDALONE):
            return None
        stripped = _PREAMBLE.sub("", turn.text).strip()
        if not stripped or stripped == turn.text:
            return None
        return Rewrite(_as_sentence(stripped, turn.lang), ("strip-preamble",))


def _names_topic(query: str, topic: str) -> bool:
    """Whether ``query`` still names the back-reference's topic: its head noun (the last
    word of "the training plan") is a word of the query."""
    words = topic.split()
    head = words[-1].casefold() if words else ""
    return bool(head) and re.search(rf"(?<![\w'’-]){re.escape(head)}(?![\w'’-])", query, re.IGNORECASE) is not None


class CleanQuery:
    """What the rules wrote, without the conversational preamble an English message opened
    with ("thanks!", "ok, another thing:", "going back to the UK,"): none of that is a search
    word. A back-reference's topic stays in the query: where the query already names it,
    the preamble simply goes; else, where the rules left the message as typed, the topic
    takes the place of its one "it" or, for a place, is attached ("… in the UK?")
    (:func:`attach_topic`); else the query is left as the rules wrote it (dropping the
    topic would lose the subject, and overriding what the rules wrote needs more evidence
    than the user's words)."""

    name = "clean-query"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.lang != "en":
            return None
        typed = turn.request.message.text.strip()
        typed_clean, topic = split_preamble(typed)
        if typed_clean == typed:
            return None  # the user opened with no preamble: nothing to clean
        clean, written_topic = split_preamble(turn.text)
        if clean == turn.text:
            return None  # an earlier rule already dropped it
        topic = topic or written_topic
        if topic is None:
            return Rewrite(clean, ("clean-query",))
        if _names_topic(clean, topic):
            return Rewrite(clean, ("clean-query",))
        if turn.text.strip() != typed or topic.split()[-1].casefold() in _NOT_A_TOPIC:
            # the rules wrote something in that is not the named topic (the thread "the
            # other thing" names was read by the recall rule), or the back-reference names
            # no subject: the query stays as they wrote it
            return None
        attached = attach_topic(typed_clean, topic)
        if attached is not None and not turn.carried:
            # the topic the user named stands where the message had "it" (or closes a
            # place): "back to the curry, can I freeze it?" -> "Can I freeze the curry?"
            return Rewrite(attached, ("clean-query:topic",))
        return None


#: heads of back-references that point at a thread or a turn, not at a subject
_NOT_A_TOPIC = frozenset("thing things topic topics question questions one ones stuff part bit point "
                         "earlier before that this it".split())


_EN_PAGE = re.compile(r"\b(?:this|current)\s+(?:page|article|doc|screen|section)\b(?![\w-])|"
                      r"\bthe\s+(?:page|article)(?=\s+(?:i'?m|i\s+am|you'?re)\b)", re.IGNORECASE)
_JA_PAGE = re.compile(r"(?:この|今の|今見ている|表示中の|こちらの)(?:ページ|画面|記事)")
_EN_PROXIMAL = re.compile(r"\b(?:this|these)\b(?!\s+(?:page|site|article)\b)", re.IGNORECASE)
_JA_PROXIMAL_NP = re.compile(r"この(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
_JA_PROXIMAL = re.compile(r"これ|ここ|こちら")


# what a page's title says besides its subject: the site after a bar (a dash as often
# joins the subject's own parts: 「マニュアル — 画面連動」), a closing
# 「商品ページ」 or 「ページ」
_TITLE_SITE = re.compile(r"\s*[|｜].*$")
_TITLE_PAGE = re.compile(r"\s*(?:の)?(?:商品|製品)?(?:ページ|詳細)$")
_JA_PAGE_THING = re.compile(_JA_PAGE.pattern + r"(?:の|で紹介している|に載っている)(?:商品|製品)")


def page_subject(title: str) -> str:
    """The subject a page's title names, without the site or a closing 「商品ページ」.

    >>> page_subject("ワイヤレスイヤホン AirSound Pro 3 商品ページ")
    'ワイヤレスイヤホン AirSound Pro 3'
    >>> page_subject("配送・送料について | ソラネオ公式ストア")
    '配送・送料について'
    """
    subject = _TITLE_PAGE.sub("", _TITLE_SITE.sub("", title)).strip()
    return subject or title


def situational(text: str, lang: str, scope: Scope, cls: ReferenceClass) -> str | None:
    screen = scope.screen
    if screen is None or screen.is_empty():
        return None
    if cls is ReferenceClass.SITE:
        site = screen.site or screen.page_url or ""
        if not site:
            return None
        pat = SITE_JA if lang == "ja" else SITE_EN
        site_rep = f"{site}のサイト" if lang == "ja" else f"the {site} site"
        # replacements are functions: a backslash in user text is literal, not a template
        return pat.sub(lambda _m: site_rep, text, count=1)
    title = screen.page_title or screen.page_url or ""
    if not title:
        return None
    if lang == "ja":
        # 「このページの商品の値段は？」: the page is about its subject, which the query names
        # as the subject (「…」のページ would make the page, not the product, the focus)
        subject = page_subject(title)
        out, n = _JA_PAGE_THING.subn(lambda _m: subject, text, count=1)
        if not n:
            out, n = _JA_PAGE.subn(lambda _m: f"「{subject}」", text, count=1)
        if n:
            return out
    pat = _JA_PAGE if lang == "ja" else _EN_PAGE
    rep = f"「{title}」のページ" if lang == "ja" else f"the page \"{title}\""
    out, n = pat.subn(lambda _m: rep, text, count=1)
    if n:
        return out
    # a proximal demonstrative for what is on screen: "is this available in London?"
    if lang == "ja":
        out, n = _JA_PROXIMAL_NP.subn(lambda _m: f"「{title}」の", text, count=1)
        if not n:
            out, n = _JA_PROXIMAL.subn(lambda _m: f"「{title}」", text, count=1)
        return out if n else None
    out, n = _EN_PROXIMAL.subn(lambda _m: title, text, count=1)
    return out if n else None


class ScreenDeixis:
    """"this page" / 「このページ」 read the screen, "this site" the site; with nothing on
    the screen to read, the message is answered as an immediate reference."""

    name = "screen"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        cls = turn.c.reference_class
        if cls not in (ReferenceClass.PAGE, ReferenceClass.SITE):
            return None
        new = situational(turn.text, turn.lang, turn.scope, cls)
        if new is None:
            return Rewrite(turn.text, ("screen-missing",), screen_missing=True)
        return Rewrite(new, (f"screen:{cls.value}",))


#: a general proper name after a locative preposition: the place a question is set in
#: (not a time: "in June", "at Christmas")
_PLACE_IN = re.compile(r"\b(?:in|around|near|visit|visiting|at)\s+(?:downtown\s+|mt\.?\s+|mount\s+)?"
                       rf"(?!(?:{'|'.join(sorted(_TIME_NAMES))})\b)"
                       r"(?P<place>[A-Z][\w.\-]*[A-Za-z](?:\s+[A-Z][\w.\-]*[A-Za-z]){0,3})")
#: things a question asks about that are somewhere: what a place frame applies to
_LOCATABLE = re.compile(
    r"\b(?:museums?|parks?|trails?|festivals?|restaurants?|bars?|clubs?|hotels?|beach(?:es)?|"
    r"tours?|attractions?|events?|nightlife|shops?|shopping|markets?|neighbou?rhoods?|downtown|"
    r"distiller(?:y|ies)|brewer(?:y|ies)|galler(?:y|ies)|theat(?:er|re)s?|schools?|classes|"
    r"things\s+to\s+do|to\s+do|the\s+city|sights?|landmarks?|collections?|concerts?)\b",
    re.IGNORECASE)
#: a question about someone, not a place: one that points back ("did he perform at
#: Woodstock?") or names its subject after the auxiliary ("what did Jacobs do in NYC?")
_REFERS_BACK = re.compile(rf"\b(?:{'|'.join(sorted(ANAPHORIC_PRONOUNS))})\b", re.IGNORECASE)
_NAMED_SUBJECT = re.compile(r"\b(?i:did|does|do|was|is|were|are|has|had|will|would|can|could)\s+"
                            r"(?:[A-Z][\w.\-]*\s+){1,3}[a-z]")
#: a settlement's own name ("Salt Lake City", "Jefferson County") replaces the frame
_SETTLEMENT = re.compile(r"\b(?:[A-Z][\w\-]*\s+){1,3}(?:City|Town|County|Village|Borough)\b")


def locative_frame(extractor: EntityExtractor, text: str, original: str, pivot: bool, state: ConversationState,
                    rules: list[str]) -> str:
    """The place a conversation is set in ("what is there to do in Chattanooga?") frames
    later questions about places and things to do that name no place of their own
    ("are there any film festivals?", "what is Rock City?" -> in Chattanooga). A new
    place replaces it, a change of subject clears it. General names only: a domain
    vocabulary's places are typed slots and are carried as such."""
    memo = state.rules
    own = _PLACE_IN.search(original) or _PLACE_IN.search(text)
    place: str | None = None if pivot else memo.place
    out = text
    if place is not None and own is None and place.casefold() not in text.casefold() \
            and (_LOCATABLE.search(text) or _PLACE_NAME.search(text)):
        core = _SENT_END.sub("", text)
        end = text[len(core):].strip() or "?"
        out = f"{core} in {place}{end}"
        rules.append(f"place->{place}")
    settlement = _SETTLEMENT.search(original)
    if own is not None and not extractor.vocabulary.find(own.group("place")) \
            and not _REFERS_BACK.search(original) and not _NAMED_SUBJECT.search(original):
        # a place sets the frame when the question is about the place ("interesting
        # things around Ann Arbor"); a question about someone, already given or named as
        # its subject, only locates what they did ("did he perform at Woodstock?",
        # "what did Jacobs do in NYC?")
        memo.place = own.group("place")
    elif settlement is not None and place is not None:
        memo.place = settlement.group(0)  # "how does Salt Lake City differ?"
    elif pivot:
        memo.place = None
    return out

def carry(extractor: EntityExtractor, text: str, lang: str, scope: Scope, state: ConversationState,
           rules: list[str]) -> str:
    if not scope.turns:
        return text
    present_ms = extractor.extract(text, lang)
    present = {m.name.casefold() for m in present_ms}
    present_types = {m.type for m in present_ms}
    score: dict[tuple[str, str], float] = {}
    newest = max(scope.turns)
    for t in scope.turns:
        recency = 1.0 / (1 + newest - t)
        for m in state.mentions.get(t, ()):
            if m.is_attribute:
                continue
            score[(m.type, m.name)] = score.get((m.type, m.name), 0.0) + 1.0 + recency
    best: dict[str, tuple[float, str]] = {}
    for (typ, name), sc in score.items():
        if name.casefold() in present or typ in present_types and typ not in ("phrase", "name", "term"):
            continue
        if typ not in best or sc > best[typ][0]:
            best[typ] = (sc, name)
    carried = [name for typ, (sc, name) in sorted(best.items(), key=lambda kv: -kv[1][0])
               if sc >= 2.0][:2]
    if not carried:
        return text
    rules.append("carry:" + ",".join(carried))
    core = _SENT_END.sub("", text)
    end = text[len(core):].strip() or ("？" if lang == "ja" else "?")
    if lang == "ja":
        return f"{_join(carried, lang)}の{core}{end}"
    return f"{core} ({_join(carried, lang)}){end}"


class Carry:
    """Unguarded scopes (``full``, ``window``, ``segment``) carry the most salient entity of
    each type absent from the message, as a "condense the question" step does (not after a
    change of subject, the learned resolver or a pro-form)."""

    name = "carry"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.scope.guarded or turn.c.pivot or turn.learned or turn.deixis:
            return None
        labels: list[str] = []
        text = carry(turn.extractor, turn.text, turn.lang, turn.scope, turn.state, labels)
        return Rewrite(text, tuple(labels))


class LocativeFrame:
    """English: the place the conversation is set in frames a question about things that
    are somewhere (see :func:`locative_frame`)."""

    name = "place"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        if turn.lang != "en":
            return None
        labels: list[str] = []
        text = locative_frame(turn.extractor, turn.text, turn.message.text, turn.c.pivot,
                              turn.state, labels)
        return Rewrite(text, tuple(labels))
