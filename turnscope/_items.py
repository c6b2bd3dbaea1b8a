"""Follow-up items and rewrite outputs at the boundary (docs/output.md), validated with pydantic."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from turnscope._exceptions import InputError, ItemError
from turnscope._session import Session, TurnResult

__all__ = [
    "load_rewrites",
    "DEFAULT_MAX_MESSAGE_CHARS",
    "MAX_MESSAGE_CHARS_CONTEXT",
    "STRATA",
    "ScreenModel",
    "TurnModel",
    "FollowUpItem",
    "read_items",
    "load_items",
    "replay_conversations",
    "rewrite_item",
]

#: docs/output.md strata, in reporting order
STRATA: tuple[str, ...] = (
    "standalone",
    "post_pivot_standalone",
    "immediate",
    "ellipsis",
    "ordinal",
    "long_range",
    "interleaved",
    "elaboration",
    "explicit_recall",
    "situational",
)


#: the longest message an item may hold (its ``follow_up`` and each prefix turn's
#: ``content``), in characters; ``turnscope rewrite`` answers a longer one with an error
#: object naming this limit, the service with 422 ``too_long`` (``serve --max-message``
#: moves it). It bounds the CPU time one item can take: the e5 encoder's cost grows with
#: the square of a message's tokens past its 512-token window (about 13 s for 16 kB on two
#: shared cores, far past any sensible answer time for 1 MB), while the longest message of
#: the bundled and development sets is under 1,500 characters.
DEFAULT_MAX_MESSAGE_CHARS = 16_384
#: the pydantic validation-context key that overrides :data:`DEFAULT_MAX_MESSAGE_CHARS`
#: (``FollowUpItem.model_validate(data, context={MAX_MESSAGE_CHARS_CONTEXT: n})``)
MAX_MESSAGE_CHARS_CONTEXT = "max_message_chars"


def _check_length(value: str, info: ValidationInfo) -> str:
    limit = DEFAULT_MAX_MESSAGE_CHARS
    if isinstance(info.context, Mapping):
        limit = int(info.context.get(MAX_MESSAGE_CHARS_CONTEXT, limit))
    if len(value) > limit:
        # a type of its own: callers tell "too long" from other faults without parsing text
        raise PydanticCustomError("too_long", "{length} characters, more than the limit of {limit} "
                                  "(the maximum message length)", {"length": len(value), "limit": limit})
    return value


class ScreenModel(BaseModel):
    model_config = ConfigDict(extra="ignore")
    page_title: str | None = None
    page_url: str | None = None
    site: str | None = None


#: what the service's text checks accept, as an OpenAPI document states it (JSON Schema
#: patterns): at least one visible character and no control character (tab and line
#: breaks are fine); and any text with no control character. They document; the checks
#: themselves (``turnscope.service``) name the fault in their message
#: C0/C1 control characters other than tab, newline and carriage return (a regex class body)
CONTROL_CHARS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_NO_CONTROL = rf"[^{CONTROL_CHARS}]*"
TEXT_PATTERN = rf"^{_NO_CONTROL}[^\s\x00-\x1f\x7f-\x9f]{_NO_CONTROL}$"
PLAIN_PATTERN = rf"^{_NO_CONTROL}$"


class TurnModel(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant"]
    content: str
    screen: ScreenModel | None = None

    @field_validator("content")
    @classmethod
    def _not_too_long(cls, v: str, info: ValidationInfo) -> str:
        return _check_length(v, info)


class FollowUpItem(BaseModel):
    """One follow-up item. Extra fields are kept (``model_extra``) and otherwise ignored."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(json_schema_extra={"pattern": PLAIN_PATTERN})
    lang: str | None = None
    prefix: list[TurnModel] = Field(default_factory=list)
    follow_up: str = Field(min_length=1, json_schema_extra={"pattern": TEXT_PATTERN})
    screen: ScreenModel | None = None
    gold: list[str] = Field(default_factory=list)
    reference_type: str | None = None
    forbidden_in_rewrite: list[str] = Field(default_factory=list)
    required_in_rewrite: list[str | list[str]] = Field(default_factory=list)

    @field_validator("follow_up")
    @classmethod
    def _not_blank(cls, v: str, info: ValidationInfo) -> str:
        # the length first: it is the cheaper check, and the one a megabyte should hear
        _check_length(v, info)
        if not v.strip():
            raise ValueError("follow_up is blank")
        return v

    def prefix_dicts(self) -> list[dict[str, Any]]:
        return [t.model_dump() for t in self.prefix]


def _explain(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors()[:3]:
        loc = ".".join(str(x) for x in e["loc"]) or "(item)"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


def parse_item(line: str, *, line_no: int | None = None, source: str | None = None,
               max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS) -> FollowUpItem:
    """One JSONL line as an item; :class:`ItemError` naming the fault otherwise (``kind``
    ``too_long`` when a message is over ``max_message_chars``)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ItemError(f"not valid JSON ({exc.msg} at column {exc.colno})", line=line_no,
                        source=source, kind="invalid_json") from None
    except (ValueError, RecursionError) as exc:
        # json.loads raises these beyond JSONDecodeError: an integer past Python's digit
        # limit, or nesting deep enough to exhaust the stack
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ItemError(f"not valid JSON ({why})", line=line_no, source=source,
                        kind="invalid_json") from None
    if not isinstance(data, dict):
        raise ItemError("a follow-up item must be a JSON object", line=line_no, source=source,
                        kind="invalid_item")
    item_id = data.get("id") if isinstance(data.get("id"), str) else None
    try:
        return FollowUpItem.model_validate(data, context={MAX_MESSAGE_CHARS_CONTEXT: max_message_chars})
    except ValidationError as exc:
        ident = f" (id {item_id!r})" if item_id is not None else ""
        kind = "too_long" if any(e["type"] == "too_long" for e in exc.errors()) else "invalid_item"
        raise ItemError(f"invalid follow-up item{ident}: {_explain(exc)}", line=line_no,
                        source=source, kind=kind, item_id=item_id) from None


def read_items(source: str | Path | BinaryIO, *, name: str | None = None,
               max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
               ) -> Iterator[tuple[int, FollowUpItem | ItemError]]:
    """Yield ``(line_no, item or error)`` for each non-blank line; never stops on a bad line.

    ``source`` is a path or a binary stream (``name`` names it in errors). Lines are
    split on ``\\n`` as bytes and decoded one by one, so an invalid UTF-8 byte costs only
    its own line; a UTF-8 byte-order mark on the first line is ignored. Blank lines
    (only whitespace) are not items and yield nothing. A message over
    ``max_message_chars`` makes its line an error naming the limit (``kind`` ``too_long``).
    """
    if isinstance(source, (str, Path)):
        p = Path(source)
        with p.open("rb") as fh:
            yield from _read_stream(fh, name or str(p), max_message_chars)
    else:
        yield from _read_stream(source, name or str(getattr(source, "name", "<stream>")), max_message_chars)


def _read_stream(fh: BinaryIO, name: str,
                 max_message_chars: int) -> Iterator[tuple[int, FollowUpItem | ItemError]]:
    for n, raw in enumerate(fh, start=1):
        if n == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield n, ItemError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte "
                               f"{exc.start + 1} of the line)", line=n, source=name,
                               kind="invalid_utf8")
            continue
        if not line.strip():
            continue
        try:
            yield n, parse_item(line, line_no=n, source=name, max_message_chars=max_message_chars)
        except ItemError as exc:
            yield n, exc


def load_items(path: str | Path) -> list[FollowUpItem]:
    """All items of a file; the first bad line raises :class:`ItemError` naming it."""
    out = []
    for _, it in read_items(path):
        if isinstance(it, ItemError):
            raise it
        out.append(it)
    return out


def load_rewrites(path: str | Path, ids: Sequence[str]) -> list[str]:
    """The queries of a rewrites file (JSONL, one ``{"id": ..., "query": ...}`` per item),
    in the order of ``ids``. Every id needs exactly one line (lines of other ids are skipped);
    the first problem raises :class:`InputError` naming the file, the line and the id.

    >>> import json, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
    ...     _ = fh.write(json.dumps({"id": "a", "query": "uptime SLA of Dublin"}))
    >>> load_rewrites(fh.name, ["a"])
    ['uptime SLA of Dublin']
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"rewrites file {path}: cannot read it ({exc})") from None
    wanted = set(ids)
    found: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"rewrites file {path}, line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) \
                or not isinstance(obj.get("query"), str):
            raise InputError(f'{where}: expected {{"id": "<item id>", "query": "<your rewrite>"}}')
        rid = obj["id"]
        if rid not in wanted:
            continue  # an item outside the part scored (``--limit``)
        if rid in found:
            raise InputError(f"{where}: id {rid!r} appears twice")
        found[rid] = obj["query"]
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise InputError(f"rewrites file {path}: no rewrite for {len(missing)} item(s) of the "
                         f"set: {shown}{more}")
    return [found[i] for i in ids]


def rewrite_item(item: FollowUpItem, make_session: Callable[[], Session]) -> TurnResult:
    """Replay the item's prefix in a fresh session and rewrite its follow-up.

    Only the follow-up goes to the session's rewriter; the prefix's user turns are
    rewritten by the embedded one (one model call per item, however long the prefix)."""
    session = make_session()
    for t in item.prefix:
        session._feed(t.role, t.content, t.screen.model_dump() if t.screen else None)
    return session.user(item.follow_up, screen=item.screen.model_dump() if item.screen else None)


def replay_conversations(items: Sequence[Mapping[str, Any]], make_session: Callable[[], Session],
                         advance: Callable[[int], None] | None = None) -> list[TurnResult]:
    """The rewrite of every item's follow-up, replaying each conversation once.

    Items of one conversation (same ``conversation`` field, in turn order, each prefix
    extending the one before) share one session, which sees every earlier turn as a chat
    backend would feed it; an item without ``conversation`` gets a session of its own.
    Each item's follow-up goes to the session's rewriter; prefix turns that no earlier item
    rewrote go to the embedded one, so the model is called once per item.
    """
    out: list[TurnResult] = []
    session: Session | None = None
    conv: object = None
    fed = 0
    for item in items:
        if item.get("conversation") is None or item.get("conversation") != conv \
                or session is None or len(item["prefix"]) < fed:
            session, conv, fed = make_session(), item.get("conversation"), 0
        for turn in item["prefix"][fed:]:
            session._feed(turn["role"], turn["content"], turn.get("screen"))
        fed = len(item["prefix"])
        out.append(session.user(item["follow_up"], screen=item.get("screen")))
        fed += 1
        if advance is not None:
            advance(1)
    return out
