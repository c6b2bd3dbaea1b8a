"""A conversation session: feed it turns, get a standalone query per user turn.

In reading order: the normalisation every turn passes as it enters
(:func:`normalize_message`), then the session itself (:class:`TurnResult`,
:class:`Session`), whose ``user`` method is the whole turn (docs/architecture.md).
"""

from __future__ import annotations

import copy
import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, TypeVar

from turnscope import _tracing
from turnscope._exceptions import InputError
from turnscope.conversation import (
    ConversationState,
    ResolvedTurn,
    Role,
    Screen,
    Turn,
    detect_language,
)
from turnscope.entities import EntityExtractor, LivenessConfig, Mention, SlotTable, Vocabulary, search_before
from turnscope.language import Decider
from turnscope.references import anchors, classify
from turnscope.resolver import Resolver
from turnscope.rewriters import EMBEDDED, EmbeddedRewriter, Rewriter, RewriteRequest, RewriteResult
from turnscope.scope import Message, Scope, ScopePolicy, TopicShift, get_policy

__all__ = ["Session", "TurnResult", "normalize_message", "has_visible_text"]

logger = logging.getLogger("turnscope.session")

# "the database" in an answer: the tail of the text before a kind noun (searched from
# the end only: searching every prefix made a long answer quadratic)
_DEF_BEFORE = re.compile(r"\b(?:the|this|that)\s+$", re.IGNORECASE)

_P = ParamSpec("_P")
_R = TypeVar("_R")


# Text as it enters a session -----------------------------------------------------------
# The same word always looks the same to the matchers.
#
# Users paste text from anywhere: half-width katakana from old forms (ｸﾗｳﾄﾞ), full-width
# Latin letters (ＡＰＩ), zero-width spaces and byte-order marks from web pages and editors,
# stray control characters from terminals. Every extractor and pattern in turnscope is
# written for the ordinary forms, so the session normalises each turn once, on entry,
# and everything after it (extraction, ordinals, classification, the query itself) reads
# the normalised text:
#
# - **width**: full-width ASCII letters and digits become ASCII, half-width katakana
#   (with its sound marks) becomes full-width katakana (NFKC on those ranges only).
#   Full-width punctuation such as ``？`` and ``（`` is left alone: it is the normal form in
#   Japanese text and the queries keep it;
# - **composition**: NFC, so a decomposed ``か`` + ``゛`` is the same ``が`` as a typed one;
# - **invisible characters**: zero-width spaces/joiners, word joiners, byte-order marks,
#   soft hyphens and bidirectional controls are removed (they sit inside words: "Dub\u200blin");
# - **control characters**: terminal escape sequences and C0/C1 controls other than line
#   breaks and tabs are removed;
#   in a user message (one line of query text) line breaks and tabs become spaces.
#
# Every step maps characters one by one or by a single regex pass, so it is linear in the
# length of the text.

# full-width 0-9 A-Z a-z, and the half-width katakana block (with its punctuation and
# sound marks, which NFKC composes with the kana before them)
_WIDTH = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff61-\uff9f]+")
# zero-width space/non-joiner/joiner, LRM/RLM, bidi embeddings and isolates, word joiner
# and invisible operators, BOM / zero-width no-break space, soft hyphen, Mongolian vowel
# separator
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e]+")
# C0 and C1 controls except tab, line feed and carriage return (kept for assistant text:
# lists are split on line breaks); DEL too
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]+")
# line and paragraph breaks of every kind, and tabs: in a user message they separate words
_BREAK = re.compile(r"[\t\n\r\x0b\x0c\x85\u2028\u2029]+")
# a terminal escape sequence (colours pasted from a terminal): CSI ... final byte, or ESC + one
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# a lone surrogate (from a JSON "\ud800" escape) is not a character and cannot be encoded
_SURROGATE = re.compile(r"[\ud800-\udfff]+")


def normalize_message(text: str, *, single_line: bool) -> str:
    """``text`` with width, composition, invisible and control characters normalised.

    ``single_line`` (user messages, screen fields) also turns line breaks and tabs into
    spaces, so the query built from the message stays one line.

    >>> normalize_message("ｸﾗｳﾄﾞの料金は？", single_line=True)
    'クラウドの料金は？'
    >>> normalize_message("Is Dub\\u200blin\\x07 up?\\n", single_line=True)
    'Is Dublin up? '
    """
    text = _WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = _INVISIBLE.sub("", text)
    text = _SURROGATE.sub("", text)
    if single_line:
        text = _BREAK.sub(" ", text)
    else:
        # the breaks kept in assistant text are plain line feeds
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = re.sub(r"[\x0b\x0c\x85\u2028\u2029]", "\n", text)
    text = _CONTROL.sub("", _ANSI.sub("", text))
    return unicodedata.normalize("NFC", text)


def has_visible_text(text: str) -> bool:
    """True when ``text`` (already normalised) holds something other than whitespace."""
    return bool(text.strip())


# The session ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TurnResult:
    """The rewrite of one user turn, with the evidence that produced it."""

    turn: int
    query: str
    reference_class: str
    topic_shift: bool
    entities: tuple[dict[str, str], ...]
    scope: Scope
    backend: str
    fallback: bool
    fallback_reason: str | None
    leaks: tuple[str, ...] = ()
    slot_table: tuple[dict[str, object], ...] = ()
    trace: Mapping[str, object] = field(default_factory=dict)
    #: what the rewrite brought in from earlier turns or the screen, in query order
    carried: tuple[str, ...] = ()
    #: which path wrote the query (see :func:`_decided_by`)
    decided_by: str = "rules"

    def to_output(self, item_id: str | None = None) -> dict[str, Any]:
        """The rewrite-output object of docs/output.md."""
        out: dict[str, Any] = {}
        if item_id is not None:
            out["id"] = item_id
        out.update({
            "query": self.query,
            "reference_class": self.reference_class,
            "topic_shift": self.topic_shift,
            "entities": [dict(e) for e in self.entities],
            "scope": self.scope.to_json(),
            "backend": self.backend,
            "fallback": self.fallback,
            "fallback_reason": self.fallback_reason,
            "carried": list(self.carried),
            "decided_by": self.decided_by,
        })
        if self.leaks:
            out["leaks"] = list(self.leaks)
        return out


def _screen_field(value: object, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"screen {key} must be a string or None, got {type(value).__name__}")
    # a screen field goes into the query as it is: same normalisation as a user message
    return normalize_message(value, single_line=True).strip() or None


def _screen(value: Screen | Mapping[str, Any] | None) -> Screen | None:
    if value is None:
        return None
    if isinstance(value, Screen):
        fields = (value.page_title, value.page_url, value.site)
    elif isinstance(value, Mapping):
        fields = (value.get("page_title"), value.get("page_url"), value.get("site"))
    else:
        raise InputError(f"screen must be an object with page_title/page_url/site, got {value!r}")
    title, url, site = (_screen_field(v, k)
                        for v, k in zip(fields, ("page_title", "page_url", "site"), strict=True))
    return Screen(title, url, site)


def _check_arguments(policy: object, rewriter: object, vocabulary: object, liveness: object,
                     extractor: object, resolver: object) -> None:
    """Wrong argument types fail here, naming the argument, not turns later as an
    AttributeError deep inside a rewrite."""
    if not isinstance(policy, str) and not (callable(getattr(policy, "run", None))
                                            and isinstance(getattr(policy, "name", None), str)):
        raise InputError("policy must be a policy name (default, full, window[:W], "
                         "segment[:centroid|flag|learned], liveness, relevant) or a ScopePolicy "
                         f"(with .name and .run), got {policy!r}")
    if rewriter is not None and not callable(getattr(rewriter, "run", None)):
        raise InputError("rewriter must be a Rewriter (an object with a run(request) method) "
                         f"or None for the embedded one, got {rewriter!r}")
    if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
        hint = (" (for a bundled vocabulary use turnscope.entities.bundled_vocabulary"
                f"({vocabulary!r}))" if isinstance(vocabulary, str) else "")
        raise InputError(f"vocabulary must be a Vocabulary or None, got {vocabulary!r}{hint}")
    if liveness is not None and not isinstance(liveness, LivenessConfig):
        raise InputError(f"liveness must be a LivenessConfig or None, got {liveness!r}")
    if extractor is not None:
        if not all(callable(getattr(extractor, a, None)) for a in ("extract", "enumerations")) \
                or not isinstance(getattr(extractor, "vocabulary", None), Vocabulary):
            raise InputError("extractor must be an EntityExtractor (extract, enumerations and "
                             f"a vocabulary) or None, got {extractor!r}")
        if vocabulary is not None:
            raise InputError("give vocabulary or extractor, not both: the extractor "
                             "brings its own vocabulary")
    # (an unknown name such as "learned" is the embedded rewriter's ConfigError)
    if resolver is not None and not isinstance(resolver, (str, Resolver)):
        raise InputError("resolver must be a Resolver, None (rules only) or 'default', "
                         f"got {resolver!r}")


def _name(rewriter: object) -> str:
    """A rewriter's name for traces (a Rewriter has one; a duck-typed one may not)."""
    name = getattr(rewriter, "name", None)
    return name if isinstance(name, str) else type(rewriter).__name__


def _decided_by(result: RewriteResult) -> str:
    """Which path wrote a turn's query, read off the rewrite's backend and trace.

    ``resolver``: the learned resolver chose what to carry (open-domain English);
    ``vocabulary``: the user has named entities of the declared vocabulary in this
    conversation, so the learned resolver stood aside and the rules decided over the
    vocabulary's typed slots (English messages); ``rules``: the rules alone (a pivot, a
    Japanese message, the screen or explicit recall, an ordinal over a list or an
    elaboration in open-domain talk, or a session without a resolver);
    ``llm``: the configured LLM rewriter; ``rewriter``: another configured backend;
    ``fallback``: a configured backend failed and the embedded rewriter answered. A
    rewriter may name its path itself with a ``"path"`` entry in its trace.
    """
    named = result.trace.get("path")
    if isinstance(named, str) and named:
        return named
    if result.fallback:
        return "fallback"
    if result.backend != EMBEDDED:
        return "llm" if result.backend.startswith("llm") else "rewriter"
    rules = result.trace.get("rules")
    if isinstance(rules, list) and any(str(r).startswith("lm-decider->") for r in rules):
        return "decider"
    if isinstance(rules, list) and "learned-resolver" in rules:
        return "resolver"
    if result.trace.get("domain") == "vocabulary":
        return "vocabulary"
    return "rules"


def _locked(method: Callable[Concatenate[Session, _P], _R]) -> Callable[Concatenate[Session, _P], _R]:
    """Run ``method`` holding the session's lock: a turn reads and extends the state in
    several steps, and two threads interleaving them would share a turn index."""
    def run(self: Session, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)
    functools.update_wrapper(run, method)  # keeps the name and docstring for help()
    return run


class Session:
    """One conversation.

    >>> s = Session()
    >>> _ = s.user("Which EU regions support customer-managed encryption keys?")
    >>> s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
    >>> s.user("What's the uptime SLA on the second one?").query
    "What's the uptime SLA on Dublin?"

    ``policy`` is a name (``default``, ``full``, ``window:2``, ``segment:flag``…) or a
    :class:`~turnscope.scope.ScopePolicy`; ``rewriter`` any :class:`Rewriter`
    (the embedded one by default); ``vocabulary`` a domain :class:`Vocabulary`, none
    unless declared (``bundled_vocabulary("cloud")`` is a demo domain, not a default:
    it decides every conversation that names its entities); ``resolver`` the learned
    resolver the embedded rewriter consults (the shipped model by default; ``None`` for
    rules only). When a configured rewriter fails, the embedded rewriter answers and the
    result says so (``fallback``); ``decided_by`` says which path wrote each query and
    ``topic_shift`` is the learned detector's decision (docs/output.md). A wrong
    argument raises :class:`~turnscope.InputError` naming it.

    Every turn is normalised as it enters (:func:`normalize_message`):
    half-width katakana and full-width Latin letters take their ordinary width,
    zero-width and control characters are removed, and a user message becomes one line.
    Extraction, ordinals and the query all read that normalised text, so the query is
    built from it (``ｸﾗｳﾄﾞ`` comes back as ``クラウド``). A message with nothing visible
    left is an :class:`~turnscope.InputError`.

    A session may be shared by threads: turns are taken one at a time (a re-entrant
    lock), so turn indices stay unique and in order of arrival.
    """

    def __init__(
        self,
        *,
        policy: str | ScopePolicy = "default",
        rewriter: Rewriter | None = None,
        vocabulary: Vocabulary | None = None,
        liveness: LivenessConfig | None = None,
        extractor: EntityExtractor | None = None,
        resolver: Resolver | None | str = "default",
        decider: Decider | None | str = "default",
    ) -> None:
        _check_arguments(policy, rewriter, vocabulary, liveness, extractor, resolver)
        self._lock = threading.RLock()
        self.extractor = extractor or EntityExtractor(vocabulary)
        self.policy = get_policy(policy)
        use_vocab = getattr(self.policy, "use_vocabulary", None)
        if callable(use_vocab):
            use_vocab(self.extractor.vocabulary)
        self.embedded = EmbeddedRewriter(self.extractor, resolver=resolver, decider=decider)
        self.rewriter: Rewriter = rewriter or self.embedded
        # a backend that canonicalises entity names wants the session's vocabulary
        bind = getattr(self.rewriter, "use_extractor", None)
        if callable(bind):
            bind(self.extractor)
        self.state = ConversationState(slots=SlotTable(liveness))
        # "that region", "the other db": type names and kind nouns are both type anaphors
        self._types = self.extractor.vocabulary.types | self.extractor.vocabulary.kinds
        self._last_user: int | None = None

    # -- feeding turns -------------------------------------------------------------
    @_locked
    def add(self, role: str | Role, content: str,
            screen: Screen | Mapping[str, Any] | None = None) -> TurnResult | None:
        """Add a turn of either role; user turns are rewritten and returned."""
        try:
            r = Role(role)
        except ValueError:
            raise InputError(f"role must be 'user' or 'assistant', got {role!r}") from None
        if r is Role.USER:
            return self.user(content, screen=screen)
        self.assistant(content, screen=screen)
        return None

    @_locked
    def assistant(self, content: str, *, screen: Screen | Mapping[str, Any] | None = None) -> None:
        if not isinstance(content, str):
            raise InputError(f"assistant content must be a string, got {type(content).__name__}")
        content = normalize_message(content, single_line=False)
        if not content.strip():
            raise InputError("an assistant message must contain visible text (it is empty, "
                             "whitespace or invisible characters only)")
        idx = self.state.last_index + 1
        lang = detect_language(content)
        mentions = self._kind_references(self.extractor.extract(content, lang), content)
        self._append(Turn(idx, Role.ASSISTANT, content, lang, _screen(screen)), mentions)
        self.state.slots.observe(idx, mentions, by_user=False)
        if self._last_user is not None:
            self.state.index_exchange_text(self._last_user, content)

    @_locked
    def user(self, content: str, *, screen: Screen | Mapping[str, Any] | None = None,
             rewriter: Rewriter | None = None) -> TurnResult:
        """Rewrite a user turn and record it. ``rewriter`` overrides the session's for this
        turn only: replaying a prefix passes ``self.embedded`` so that an item of a
        thousand earlier turns costs one model call, not a thousand."""
        with _tracing.span("turnscope.turn") as sp:
            out = self._user(content, screen, rewriter)
            if sp is not None:
                rw = self.rewriter if rewriter is None else rewriter
                _tracing.set_turn(sp, out.turn, self.policy.name, _name(rw), out, out.decided_by)
            return out

    def _user(self, content: str, screen: Screen | Mapping[str, Any] | None,
              rewriter: Rewriter | None) -> TurnResult:
        if not isinstance(content, str):
            raise InputError(f"a user message must be a string, got {type(content).__name__}")
        content = normalize_message(content, single_line=True).strip()
        if not content:
            raise InputError("a user message must be a non-empty string with visible text "
                             "(it is empty, whitespace or invisible characters only)")
        state = self.state
        idx = state.last_index + 1
        scr = _screen(screen)
        lang = detect_language(content)
        mentions = tuple(self.extractor.extract(content, lang))
        c = classify(content, lang, mentions, has_history=bool(state.turns),
                     has_screen=scr is not None, known_types=self._types,
                     subject_types=self.extractor.vocabulary.subject_types)
        message = Message(idx, content, lang, mentions, c, scr)
        state.slots.advance(idx)
        with _tracing.span("turnscope.scope") as sp:
            scope = self.policy.run(state, message)
            if sp is not None:
                _tracing.set_scope(sp, scope, message)
        result = self._rewrite(RewriteRequest(message, scope, state), rewriter)
        # scored before the turn is appended (the detector scores a message, not a turn)
        shift = TopicShift.decide(state, message, result.topic_shift, self.embedded.resolver,
                                  continues=result.continues)

        entities = result.entities
        self._append(Turn(idx, Role.USER, content, lang, scr), entities)
        state.slots.observe(idx, entities, by_user=True)
        # the record keeps the turn's one decision, the output's (later turns' rules read it);
        # segment:flag alone is defined as the flag riding on the rewrite
        state.resolved[idx] = ResolvedTurn(idx, result.query, entities, result.focus,
                                           shift.shift, self._topic(result))
        state.index_exchange_text(idx, content + " " + result.query)
        if shift.rewriter_flag:
            # the flag detector: the flag riding on this rewrite opens a new segment
            state.segment_start["flag"] = idx
        decided_by = _decided_by(result)
        self._last_user = idx
        out = TurnResult(
            turn=idx,
            query=result.query,
            reference_class=result.reference_class,
            topic_shift=shift.shift,
            entities=self._entity_rows(entities),
            scope=scope,
            backend=result.backend,
            fallback=result.fallback,
            fallback_reason=result.fallback_reason,
            leaks=result.leaks,
            slot_table=tuple(self.slot_rows()),
            trace={**result.trace, "decided_by": decided_by, **shift.notes},
            carried=result.carried,
            decided_by=decided_by,
        )
        logger.info("turn %d %s -> %r | slots: %s", idx, c.spec_class, result.query,
                    "; ".join(f"{r['type']}:{r['name']}={r['status']}" for r in out.slot_table))
        return out

    # -- internals -----------------------------------------------------------------
    def _kind_references(self, mentions: list[Mention], content: str) -> tuple[Mention, ...]:
        """An answer's "the support plan", "the database": a definite kind noun names the
        entity of that kind the conversation is on (the newest current slot of it)."""
        vocab = self.extractor.vocabulary
        kinds = vocab.kinds
        if not kinds:
            return tuple(mentions)
        out: list[Mention] = []
        for m in mentions:
            # ("your database" is the user's own instance, not a reference back)
            if m.source == "general" and m.definite and m.name.casefold() in kinds \
                    and search_before(_DEF_BEFORE, content, m.start, 4):
                of_kind = [sl for sl in self.state.slots.current()
                           if m.name.casefold() in vocab.kinds_of(sl.name)]
                if of_kind:
                    sl = max(of_kind, key=lambda x: x.last_seen)
                    m = Mention(sl.type, sl.name, m.surface, m.start, m.end, "vocab")
            out.append(m)
        return tuple(out)

    def _topic(self, result: RewriteResult) -> Mention | None:
        """The topic after this turn: a standalone question's subject sets it; otherwise
        the previous topic continues while its slot is not terminal."""
        f = result.focus
        if result.reference_class == "standalone" and f is not None and (
                anchors(f) or (f.type == "phrase" and not f.definite
                               and not f.name.endswith(("ing", "ed")))):
            # the subject of a standalone question; a bare noun ("what is anemia?") names
            # its subject as well as a longer phrase does, "the system" does not
            return f
        rules = result.trace.get("rules")
        if f is not None and not f.is_attribute and isinstance(rules, list) \
                and "screen:situational_page" in rules:
            # "what does the product on this page cost?" written with the page's subject:
            # the page names what the conversation is now about
            return f
        prev = self.state.resolved.get(self._last_user) if self._last_user else None
        topic = prev.topic if prev is not None else None
        if topic is not None and self.state.slots.get(topic.type, topic.name) is None:
            return f if f is not None and anchors(f) else None
        if topic is None and f is not None and not f.is_attribute and not self.state.resolved:
            return f  # the opening question sets the topic, whatever kind of noun it is
        if topic is None and f is not None and anchors(f):
            return f
        return topic

    def _append(self, turn: Turn, mentions: tuple[Mention, ...]) -> None:
        self.state.turns.append(turn)
        self.state.mentions[turn.index] = mentions
        for enum in self.extractor.enumerations(turn.content, turn.index, turn.lang, mentions):
            self.state.enumerations.append(enum)

    def _rewrite(self, request: RewriteRequest, rewriter: Rewriter | None = None) -> RewriteResult:
        rw = self.rewriter if rewriter is None else rewriter
        with _tracing.span("turnscope.rewrite") as sp:
            result = self._run_rewriter(rw, request)
            if sp is not None:
                _tracing.set_rewrite(sp, _name(rw), result, _decided_by(result))
        return result

    def _run_rewriter(self, rw: Rewriter, request: RewriteRequest) -> RewriteResult:
        if rw is self.embedded:
            return self.embedded.run(request)
        try:
            return rw.run(request)
        except Exception as exc:  # any backend fault degrades to the embedded path
            reason = f"{type(exc).__name__}: {exc}"
            logger.warning("rewriter %s failed (%s); using the embedded rewriter",
                           getattr(rw, "name", "?"), reason)
            with _tracing.fallback_span(_name(rw), reason):
                r = self.embedded.run(request)
            # the trace says which backend was tried and why it was replaced, as the LLM
            # rewriter's own fallback does
            trace = {**r.trace, "attempted": _name(rw), "fallback_reason": reason}
            return RewriteResult(r.query, r.reference_class, r.topic_shift, r.entities, r.focus,
                                 backend=r.backend, fallback=True, fallback_reason=reason,
                                 trace=trace, carried=r.carried)

    def _entity_rows(self, entities: tuple[Mention, ...]) -> tuple[dict[str, str], ...]:
        rows: list[dict[str, str]] = []
        seen: set[str] = set()
        for m in entities:
            if m.is_attribute or m.key.casefold() in seen:
                continue
            seen.add(m.key.casefold())
            slot = self.state.slots.get(m.type, m.name)
            rows.append({"type": m.type, "name": m.name,
                         "status": slot.status.value if slot else "live"})
        return tuple(rows)

    @_locked
    def slot_rows(self, *, include_terminal: bool = False) -> list[dict[str, object]]:
        """The slot table (current slots; terminal ones too if asked)."""
        if include_terminal:
            return self.state.slots.table()
        return [{"type": s.type, "name": s.name, "introduced": s.introduced,
                 "last_seen": s.last_seen, "status": s.status.value}
                for s in self.state.slots.current()]

    @property
    def turn_count(self) -> int:
        """How many turns (of both roles) the session has taken."""
        with self._lock:
            return len(self.state.turns)

    def __getstate__(self) -> dict[str, Any]:
        # a lock cannot be pickled or copied; a copy gets a fresh one
        d = self.__dict__.copy()
        d.pop("_lock", None)
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self._lock = threading.RLock()

    #: attributes a fork shares with its parent: configuration and the rewriters, which
    #: keep per-conversation state in ``state``, never on themselves, and
    #: whose caches (extractions, embeddings) are keyed by text, so sharing them changes
    #: no answer and saves recomputing them. Any other attribute is copied (``fork``)
    _FORK_SHARED = frozenset({"extractor", "policy", "embedded", "rewriter", "_types"})

    @_locked
    def fork(self) -> Session:
        """An independent session that has seen exactly the turns this one has.

        What either session takes afterwards does not reach the other, and the fork
        rewrites its next turn exactly as this session would (the same query, trace and
        slot table). It is much cheaper than replaying the turns into a new session:
        turn records are shared, the conversation state's containers are copied
        (:meth:`ConversationState.copy`), and the extractor, policy and rewriters are the
        same objects. Batch rewriting (:class:`turnscope.BatchRewriter`) forks the
        session of a shared history for each item that continues it.

        >>> s = Session(resolver=None)
        >>> _ = s.user("Which EU regions support customer-managed encryption keys?")
        >>> s.assistant("Frankfurt and Dublin both support CMK for data at rest.")
        >>> f = s.fork()
        >>> f.user("What's the uptime SLA on the second one?").query
        "What's the uptime SLA on Dublin?"
        >>> s.turn_count, f.turn_count
        (2, 3)
        """
        new = object.__new__(type(self))
        for key, value in self.__dict__.items():
            if key == "_lock":
                continue
            if key == "state":
                value = self.state.copy()
            elif key not in self._FORK_SHARED:
                # _last_user, and whatever per-session attribute is added later: copied,
                # so a fork never shares mutable state with its parent by accident
                value = copy.deepcopy(value)
            new.__dict__[key] = value
        new._lock = threading.RLock()
        return new

    @classmethod
    def replay(cls, prefix: list[Mapping[str, Any]], **kwargs: Any) -> Session:
        """A session that has already seen ``prefix`` (list of {role, content, screen}).

        The prefix's user turns are rewritten by the embedded rewriter whatever the
        session's rewriter is: their rewrites are history, not answers anyone reads, and
        a model call per earlier turn would make long prefixes cost one call per turn."""
        s = cls(**kwargs)
        for i, t in enumerate(prefix):
            if not isinstance(t, Mapping) or "role" not in t or "content" not in t:
                raise InputError(f"prefix[{i}] needs 'role' and 'content'")
            s._feed(t["role"], t["content"], t.get("screen"))
        return s

    def _feed(self, role: str | Role, content: str,
              screen: Screen | Mapping[str, Any] | None = None) -> None:
        """Add a prefix turn: like :meth:`add`, with user turns rewritten by the embedded
        rewriter (see :meth:`replay`)."""
        if role == Role.USER or role == "user":
            self.user(content, screen=screen, rewriter=self.embedded)
        else:
            self.add(role, content, screen)


