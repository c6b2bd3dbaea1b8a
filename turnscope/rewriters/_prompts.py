"""Prompt templates for LLM rewriters: one builder per scope policy, all in one place.

Every prompt is two chat messages: a *system* message (the task, the output
format, the rules) and a *user* message (the evidence the scope policy chose,
then the latest message). The evidence block is what differs between policies
(docs/architecture.md):

=============  ==================================================================
``full``       the whole transcript
``window``     the last ``w`` turns
``segment``    the turns of the current topical segment
``liveness``   the live entity slots + the last two turns + the latest message +
               "Use a live entity only if the latest message refers to it."
``default``    the liveness input, plus the earlier exchange recalled by topic key
``relevant``   (for explicit backward references) and the screen
=============  ==================================================================

Each builder exists with and without the *counterweight clause* ("If the latest
message introduces a new subject, earlier entities must not appear in the
query."). A contextualisation prompt otherwise only says what to do *with* the
history, never when to leave it alone, so a model resolving an ambiguous case
includes rather than omits. The clause helps on pivots that are obvious from
wording alone; it does not replace scoping the evidence.

The query follows the language of the user's message: a Japanese question gets
a Japanese query. The model answers with one JSON object (``query``,
``topic_shift``, ``reference_class``, ``entities``); the entities fill the
liveness slots, so one call per turn does both jobs.

>>> from turnscope import Session
>>> from turnscope.rewriters import build_messages
>>> captured = []
>>> class Capture:
...     name = "capture"
...     def run(self, request):
...         captured.append(build_messages(request, counterweight=True))
...         return s.embedded.run(request)
>>> s = Session(policy="liveness", rewriter=Capture())
>>> _ = s.user("Which EU regions support customer-managed keys?")
>>> s.assistant("Frankfurt and Dublin both support CMK.")
>>> _ = s.user("What's the SLA on the second one?")
>>> print(captured[-1][1]["content"].splitlines()[0])
LIVE ENTITIES:
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from turnscope._exceptions import TurnscopeError
from turnscope.conversation import ConversationState
from turnscope.entities import Enumeration, Slot, SlotStatus
from turnscope.rewriters._base import RewriteRequest
from turnscope.scope import Message, Scope

__all__ = [
    "CHARS_PER_TOKEN",
    "COUNTERWEIGHT_CLAUSE",
    "LIVENESS_INSTRUCTION",
    "PLACEHOLDER_PATTERN",
    "PROMPT_BUILDERS",
    "SHORT_CONVERSATION_TURNS",
    "PROMPT_PLACEHOLDERS",
    "REFERENCE_CLASSES",
    "REWRITE_JSON_SCHEMA",
    "SYSTEM_TEMPLATE",
    "build_messages",
    "merge_system",
    "prompt_size",
    "user_content",
]

# -- the templates ---------------------------------------------------------------------

#: The counterweight clause: the one instruction that authorises leaving history alone.
COUNTERWEIGHT_CLAUSE = "If the message starts a new subject, use nothing from earlier turns."

#: The liveness instruction (docs/architecture.md), placed right after the latest message.
LIVENESS_INSTRUCTION = "Use a live entity only if the latest message refers to it."

#: the reference classes of docs/output.md class names, in the order the prompt lists them.
REFERENCE_CLASSES = (
    "standalone",
    "textual_immediate",
    "textual_earlier",
    "situational_page",
    "situational_site",
)

#: ``{context_rule}`` depends on the policy; ``{counterweight}`` is the clause or nothing.
#: The example object uses placeholders, never a real entity name: a name in the
#: instructions would be one more thing the model could copy into a query. The reference
#: class is not asked for in words (it cost a fifth of the prompt): a schema-constrained
#: model fills it from the schema's enum, and where an answer has none the classifier's
#: class stands (``RewriteAnswer``).
SYSTEM_TEMPLATE = """\
Rewrite the latest message as a standalone search query.
- {context_rule}
- Keep the user's words; add only what the query needs, from the conversation; use the \
message's language.{counterweight}
Reply with JSON only: {{"query": "<standalone query>", "topic_shift": false, \
"entities": [{{"type": "<type>", "name": "<name>"}}]}}
(topic_shift: true if it starts a new subject; entities: the named things the query is \
about, spelled as in the conversation.)"""

#: An angle-bracketed placeholder such as ``<standalone query>``: the shape the example
#: object above uses. A small model copies the example instead of filling it in, so an
#: answer that contains one (and whose evidence does not) is rejected, see ``_guard``.
PLACEHOLDER_PATTERN = re.compile(r"<[^<>\n]{1,60}>")
#: the placeholders the example object itself uses
PROMPT_PLACEHOLDERS: frozenset[str] = frozenset(PLACEHOLDER_PATTERN.findall(SYSTEM_TEMPLATE))

#: the context rule of turn-based (unguarded) policies: the usual "condense the question" rule
_RULE_HISTORY = "Resolve its references from the conversation; keep constraints that still apply."
#: the context rule of slot-based (guarded) policies
_RULE_SCOPED = ("Resolve its references from the live entities, the recent turns and, when "
                "present, the earlier exchange and the screen.")

FULL_TEMPLATE = """\
CONVERSATION:
{turns}
{extras}
LATEST MESSAGE: {message}
QUERY LANGUAGE: {language}"""

WINDOW_TEMPLATE = """\
RECENT TURNS (the last {w}):
{turns}
{extras}
LATEST MESSAGE: {message}
QUERY LANGUAGE: {language}"""

SEGMENT_TEMPLATE = """\
TURNS OF THE CURRENT TOPIC (since turn {start}):
{turns}
{extras}
LATEST MESSAGE: {message}
QUERY LANGUAGE: {language}"""

LIVENESS_TEMPLATE = """\
LIVE ENTITIES:
{slots}

RECENT TURNS:
{turns}
{extras}
LATEST MESSAGE: {message}
QUERY LANGUAGE: {language}
{instruction}"""

#: the sections that only some scopes carry, separated by blank lines when present
RECALLED_SECTION = "EARLIER EXCHANGE THE MESSAGE REFERS TO{key}:\n{turns}{entities}"
RECALLED_ENTITIES = "\nENTITIES OF THAT EXCHANGE:\n{slots}"
LISTS_SECTION = "LISTS OFFERED EARLIER:\n{lists}"
#: the learned resolver's evidence: earlier phrases with how likely the message needs each
RANKED_SECTION = ("EARLIER PHRASES RANKED BY HOW LIKELY THE LATEST MESSAGE NEEDS THEM "
                  "(score 0-1; carry one only if the message refers to it; the resolver's "
                  "threshold is {threshold}):\n{lines}")
SCREEN_SECTION = "SCREEN: {screen}"

_NONE = "(none)"
_LANGUAGES = {"ja": "Japanese", "en": "English"}

#: The JSON schema sent as ``response_format`` where the server supports schemas.
#: ``strict`` schemas need every property listed as required and no extra keys.
REWRITE_JSON_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "topic_shift": {"type": "boolean"},
        "reference_class": {"type": "string", "enum": list(REFERENCE_CLASSES)},
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"type": {"type": "string"}, "name": {"type": "string"}},
                "required": ["type", "name"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["query", "topic_shift", "reference_class", "entities"],
    "additionalProperties": False,
}


# -- rendering helpers -------------------------------------------------------------------

def _render_turns(state: ConversationState, turns: Iterable[int]) -> str:
    lines = []
    for i in turns:
        if 1 <= i <= len(state.turns):
            t = state.turns[i - 1]
            lines.append(f"[{i}] {t.role.value}: {t.content}")
    return "\n".join(lines) or _NONE


def _render_slots(slots: Sequence[Slot], *, compact_after: str | None = None) -> str:
    """One line per slot. ``compact_after`` (the default policy's long prompt: the turns it
    shows) leaves out a slot whose name those turns already spell and writes its turn
    shorter: a long conversation's live slots were most of that prompt, half of them
    repeating the recent turns."""
    lines: list[str] = []
    seen: set[str] = set()
    shown = compact_after.casefold() if compact_after is not None else None
    for s in slots:
        # a name can have an older generation of the same slot; show the thing once
        if s.key.casefold() in seen or (shown is not None and s.name.casefold() in shown):
            continue
        seen.add(s.key.casefold())
        when = f"last mentioned turn {s.last_seen}" if shown is None else f"turn {s.last_seen}"
        lines.append(f"- {s.type}: {s.name} ({when})")
    return "\n".join(lines) or _NONE


def _render_lists(enums: Sequence[Enumeration], shown: set[int]) -> str:
    """Lists whose turn the prompt does not show: "the second one" still needs them."""
    lines = []
    for e in enums:
        if e.turn in shown:
            continue
        items = ", ".join(f"{k}. {m.name}" for k, m in enumerate(e.items, 1))
        lines.append(f"- turn {e.turn}: {items}")
    return LISTS_SECTION.format(lists="\n".join(lines)) if lines else ""


def _render_screen(scope: Scope) -> str:
    scr = scope.screen
    if scr is None or scr.is_empty():
        return ""
    parts = []
    if scr.page_title:
        parts.append(f'page "{scr.page_title}"')
    if scr.page_url:
        parts.append(f"at {scr.page_url}")
    if scr.site:
        parts.append(f"on site {scr.site}")
    return SCREEN_SECTION.format(screen=" ".join(parts))


def _render_ranked(request: RewriteRequest) -> str:
    """The ranked candidates of the learned resolver (English only: it was trained on
    English); empty when the resolver is unavailable, so the prompt degrades to slots."""
    msg = request.message
    if msg.lang != "en" or not request.state.turns:
        return ""
    try:
        from turnscope.resolver import default_resolver, ranked_for

        resolver = default_resolver()
        ranked = ranked_for(request.state, msg.index, msg.text, resolver)
    except TurnscopeError:
        return ""
    lines = [f"- {c.text} (turn {c.turn}, {c.role}): {c.score:.2f}" for c in ranked]
    if not lines:
        return ""
    return RANKED_SECTION.format(threshold=f"{resolver.threshold:.2f}", lines="\n".join(lines))


def _extras(*sections: str) -> str:
    present = [s for s in sections if s]
    # a blank line before, between and after the optional sections
    return "\n" + "\n\n".join(present) + "\n" if present else ""


def _system(counterweight: bool, *, guarded: bool) -> str:
    return SYSTEM_TEMPLATE.format(
        context_rule=_RULE_SCOPED if guarded else _RULE_HISTORY,
        counterweight=f"\n- {COUNTERWEIGHT_CLAUSE}" if counterweight else "",
    )


def _language(message: Message) -> str:
    return _LANGUAGES.get(message.lang, "the language of the latest message")


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- one builder per policy --------------------------------------------------------------

def _full(request: RewriteRequest, counterweight: bool) -> list[dict[str, str]]:
    return _whole(request, counterweight, list(request.scope.turns))


def _whole(request: RewriteRequest, counterweight: bool, turns: list[int]) -> list[dict[str, str]]:
    """``turns`` as one transcript, with the lists and the screen in scope."""
    msg, scope, state = request.message, request.scope, request.state
    user = FULL_TEMPLATE.format(
        turns=_render_turns(state, turns),
        extras=_extras(_render_lists(scope.enumerations, set(turns)), _render_screen(scope)),
        message=msg.text, language=_language(msg))
    return _messages(_system(counterweight, guarded=False), user)


def _window(request: RewriteRequest, counterweight: bool) -> list[dict[str, str]]:
    msg, scope, state = request.message, request.scope, request.state
    m = re.search(r"\bw=(\d+)", scope.note)
    w = int(m.group(1)) if m else len(scope.turns)
    user = WINDOW_TEMPLATE.format(
        w=w, turns=_render_turns(state, scope.turns),
        extras=_extras(_render_lists(scope.enumerations, set(scope.turns)),
                       _render_screen(scope)),
        message=msg.text, language=_language(msg))
    return _messages(_system(counterweight, guarded=False), user)


def _segment(request: RewriteRequest, counterweight: bool) -> list[dict[str, str]]:
    msg, scope, state = request.message, request.scope, request.state
    start = min(scope.turns) if scope.turns else msg.index
    user = SEGMENT_TEMPLATE.format(
        start=start, turns=_render_turns(state, scope.turns),
        extras=_extras(_render_lists(scope.enumerations, set(scope.turns)),
                       _render_screen(scope)),
        message=msg.text, language=_language(msg))
    return _messages(_system(counterweight, guarded=False), user)


def _liveness(request: RewriteRequest, counterweight: bool, *,
              long_default: bool = False) -> list[dict[str, str]]:
    """Live slots + recent turns + latest message + the liveness instruction; for the
    ``default`` and ``relevant`` scopes also the recalled exchange and the screen.

    ``long_default``: the default policy past :data:`SHORT_CONVERSATION_TURNS` turns, whose
    prompt must stay well under the whole history's: no resolver scores (replayed answers
    were as good without them, docs/llm.md) and the slots the recent turns already spell
    left out."""
    msg, scope, state = request.message, request.scope, request.state
    recalled: set[int] = set()
    for ex in scope.recalled:
        recalled.update(t for t in state.exchange_of(ex) if t in scope.turns)
    recent = [t for t in scope.turns if t not in recalled]
    # the default policy brings the recalled exchange's (stale or evicted) slots back
    # with it: they are shown with that exchange, not as live entities
    live = [s for s in scope.slots if s.status is SlotStatus.LIVE]
    brought_back = [s for s in scope.slots if s.status is not SlotStatus.LIVE]
    recalled_section = ""
    if recalled:
        key = re.search(r"key='([^']*)'|key=\"([^\"]*)\"", scope.note)
        key_text = next((g for g in key.groups() if g), "") if key else ""
        recalled_section = RECALLED_SECTION.format(
            key=f' (found by topic key "{key_text}")' if key_text else "",
            turns=_render_turns(state, sorted(recalled)),
            entities=RECALLED_ENTITIES.format(
                slots=_render_slots(brought_back, compact_after="" if long_default else None))
            if brought_back else "")
    turns = _render_turns(state, recent)
    user = LIVENESS_TEMPLATE.format(
        slots=_render_slots(live, compact_after=turns if long_default else None),
        turns=turns,
        extras=_extras("" if long_default else _render_ranked(request), recalled_section,
                       _render_lists(scope.enumerations, set(scope.turns)), _render_screen(scope)),
        message=msg.text, language=_language(msg), instruction=LIVENESS_INSTRUCTION)
    return _messages(_system(counterweight, guarded=True), user)


#: the default policy shows the whole conversation (with the counterweight clause) up to this
#: many earlier turns: with a capable model the whole history gave the cleanest rewrites, and
#: its prompt is the size of a condense prompt; longer conversations get the scoped sections
#: (issue 38, docs/llm.md)
SHORT_CONVERSATION_TURNS = 10


def _default(request: RewriteRequest, counterweight: bool) -> list[dict[str, str]]:
    """The whole conversation for a short one (what the ``full`` policy shows), the scoped
    sections (:func:`_liveness`) for a long one."""
    msg, state = request.message, request.state
    earlier = [t.index for t in state.turns if t.index < msg.index]
    if len(earlier) > SHORT_CONVERSATION_TURNS:
        return _liveness(request, counterweight, long_default=True)
    return _whole(request, counterweight, earlier)


#: policy name -> builder(request, counterweight). Unknown (custom) policies use the
#: liveness builder when their scope is guarded, the full-transcript one otherwise.
PROMPT_BUILDERS: Mapping[str, Callable[[RewriteRequest, bool], list[dict[str, str]]]] = {
    "full": _full,
    "window": _window,
    "segment": _segment,
    "liveness": _liveness,
    "default": _default,
    "relevant": _liveness,
}


def build_messages(request: RewriteRequest, *, counterweight: bool = True) -> list[dict[str, str]]:
    """The chat messages for one rewrite, chosen by the request's scope policy.

    >>> from turnscope import Session
    >>> seen = []
    >>> class Capture:
    ...     name = "capture"
    ...     def run(self, request):
    ...         seen.append(request)
    ...         return s.embedded.run(request)
    >>> s = Session(policy="full", rewriter=Capture())
    >>> _ = s.user("Is the billing export API paginated?")
    >>> msgs = build_messages(seen[0], counterweight=False)
    >>> [m["role"] for m in msgs]
    ['system', 'user']
    >>> "earlier entities must not appear" in msgs[0]["content"]
    False
    """
    scope = request.scope
    builder = PROMPT_BUILDERS.get(scope.policy)
    if builder is None:
        builder = _liveness if scope.guarded else _full
    return builder(request, counterweight)


def merge_system(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """The messages with the system text moved to the start of the first user message.

    For chat templates without a system role: some reject it, others drop it without a
    word, and the model then never reads the task or the output format.

    >>> merge_system([{"role": "system", "content": "Rules."},
    ...               {"role": "user", "content": "LATEST MESSAGE: hi"}])
    [{'role': 'user', 'content': 'Rules.\\n\\nLATEST MESSAGE: hi'}]
    """
    system = "\n\n".join(m.get("content", "") for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for m in rest:
        if m.get("role") == "user":
            m["content"] = system + "\n\n" + m.get("content", "")
            return rest
    return [{"role": "user", "content": system}, *rest]


def user_content(messages: Sequence[Mapping[str, str]]) -> str:
    """The evidence the model was shown: every non-system message, joined."""
    return "\n".join(m.get("content", "") for m in messages if m.get("role") != "system")


# -- size --------------------------------------------------------------------------------

#: Latin-script text: about four characters per token (the usual rule of thumb for
#: English with BPE tokenizers such as cl100k / o200k).
CHARS_PER_TOKEN = 4
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


def prompt_size(messages: Sequence[Mapping[str, str]]) -> tuple[int, int]:
    """``(characters, estimated tokens)`` of a prompt's message contents.

    The estimate needs no tokenizer: one token per CJK character (BPE vocabularies
    split Japanese into roughly one token per kana or kanji) plus one per
    :data:`CHARS_PER_TOKEN` characters of everything else, rounded up. Per-message
    framing tokens are ignored; they do not depend on the conversation.

    >>> prompt_size([{"role": "user", "content": "abcdefgh"},
    ...              {"role": "user", "content": "日本語"}])
    (11, 5)
    """
    chars = 0
    cjk = 0
    for m in messages:
        text = m.get("content", "")
        chars += len(text)
        cjk += len(_CJK.findall(text))
    return chars, cjk + math.ceil((chars - cjk) / CHARS_PER_TOKEN)


def schema_json() -> str:
    """The response schema as compact JSON (used in docs and for debugging)."""
    return json.dumps(REWRITE_JSON_SCHEMA, separators=(",", ":"))
