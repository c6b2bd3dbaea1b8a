"""Request and response bodies of the HTTP API, and the checks applied to them.

Bodies are parsed by hand (not by FastAPI's body injection) so that every failure gets
the right status and the documented error shape: malformed JSON or invalid UTF-8 is a 400, a
field of the wrong type or value a 422 naming the field, an oversized body a 413 —
decided before the body is read into memory.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.config import JsonDict

from turnscope._exceptions import ConfigError
from turnscope._items import CONTROL_CHARS, PLAIN_PATTERN, TEXT_PATTERN, FollowUpItem
from turnscope.scope import parse_policy, policy_grammar
from turnscope.service._exceptions import BadRequest, InvalidField

__all__ = [
    "ScreenIn",
    "TurnIn",
    "CreateSessionIn",
    "SessionCreated",
    "RewriteOutput",
    "AssistantTurnOutput",
    "TurnView",
    "SessionView",
    "ErrorDetail",
    "ErrorBody",
    "Status",
    "parse_json",
    "validate_model",
    "check_text",
    "check_screen",
    "check_item",
    "REQUEST_MODELS",
]

M = TypeVar("M", bound=BaseModel)

# C0/C1 control characters other than tab, newline and carriage return, and UTF-16
# surrogates (JSON's "\ud800" decodes to one; it is not text and cannot be stored as UTF-8)
_BAD_CHARS = re.compile(rf"[{CONTROL_CHARS}\ud800-\udfff]")


#: a screen field as the document states it: any text without control characters, or null
_SCREEN_FIELD: JsonDict = {"anyOf": [{"type": "string", "pattern": PLAIN_PATTERN},
                           {"type": "null"}]}


class ScreenIn(BaseModel):
    """What the user is looking at (docs/output.md ``screen``)."""

    model_config = ConfigDict(extra="ignore", strict=True)
    page_title: str | None = Field(default=None, json_schema_extra=_SCREEN_FIELD)
    page_url: str | None = Field(default=None, json_schema_extra=_SCREEN_FIELD)
    site: str | None = Field(default=None, json_schema_extra=_SCREEN_FIELD)


class TurnIn(BaseModel):
    """``POST /v1/sessions/{id}/turns`` body."""

    model_config = ConfigDict(extra="ignore", strict=True,
                              json_schema_extra={"example": {"role": "user",
                                                             "content": "What's the uptime SLA on the second one?"}})
    role: Literal["user", "assistant"]
    content: str = Field(json_schema_extra={"pattern": TEXT_PATTERN, "minLength": 1},
                         description="the turn's text: at least one visible character, no "
                                     "control characters (tab and line breaks are fine)")
    screen: ScreenIn | None = None


class CreateSessionIn(BaseModel):
    """``POST /v1/sessions`` body (optional)."""

    model_config = ConfigDict(extra="ignore", strict=True,
                              json_schema_extra={"example": {"policy": "default",
                                                             "vocabulary": "bundled:cloud"}})
    policy: str | None = Field(default=None, max_length=100,
                               description=f"the scope policy: {policy_grammar()}")
    vocabulary: str | None = Field(default=None, max_length=100,
                                   description="none (default), bundled, bundled:cloud or "
                                               "bundled:ja-site")

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, v: str | None) -> str | None:
        # the one grammar of turnscope.scope.parse_policy; the spec is kept as the client
        # wrote it (GET /v1/sessions/{id} answers it back)
        if v is not None:
            try:
                parse_policy(v)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return v


class SessionCreated(BaseModel):
    session_id: str


class RewriteOutput(BaseModel):
    """docs/output.md rewrite output (plus ``turn`` for a session turn)."""

    model_config = ConfigDict(extra="allow")
    query: str
    reference_class: str
    topic_shift: bool
    entities: list[dict[str, Any]]
    scope: dict[str, Any]
    backend: str
    fallback: bool
    fallback_reason: str | None


class TurnRewriteOutput(RewriteOutput):
    turn: int


class AssistantTurnOutput(BaseModel):
    turn: int


class TurnView(BaseModel):
    model_config = ConfigDict(extra="allow")
    turn: int
    role: str
    content: str
    screen: dict[str, Any] | None
    rewrite: dict[str, Any] | None = None


class SessionView(BaseModel):
    session_id: str
    policy: str
    vocabulary: str
    version: int
    turns: list[TurnView]
    slots: list[dict[str, Any]]


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None


class ErrorBody(BaseModel):
    error: ErrorDetail


class Status(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str


#: models whose JSON schema the OpenAPI document names as request bodies
REQUEST_MODELS: tuple[type[BaseModel], ...] = (TurnIn, CreateSessionIn, FollowUpItem)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(raw: bytes) -> Any:
    """The JSON value of a body: 400 ``invalid_utf8`` / ``malformed_json`` otherwise.

    >>> parse_json(b'{"a": 1}')
    {'a': 1}
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"body is not valid UTF-8 (invalid byte at offset {exc.start})",
                         code="invalid_utf8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                         code="malformed_json") from None
    except RecursionError:
        raise BadRequest("malformed JSON: nested too deeply", code="malformed_json") from None
    except ValueError as exc:  # NaN/Infinity, integers over Python's digit limit
        raise BadRequest(f"malformed JSON: {exc}", code="malformed_json") from None


def _loc(loc: tuple[int | str, ...]) -> str | None:
    return ".".join(str(x) for x in loc) or None


def first_error(exc: ValidationError) -> tuple[str, str | None, str]:
    """(message, field, code) for the first problem pydantic found."""
    e = exc.errors(include_url=False)[0]
    field = _loc(tuple(e["loc"]))
    if e["type"] == "missing":
        return f"{field}: field required", field, "missing_field"
    if e["type"] in ("model_type", "model_attributes_type", "dict_type") and field is None:
        return "body must be a JSON object", None, "invalid_body"
    msg = e["msg"]
    if e["type"] == "too_long":  # turnscope._items' message-length check: it names the limit
        return f"{field or 'body'}: {msg}", field, "too_long"
    if e["type"] == "literal_error":
        msg = f"{msg}, got {e.get('input')!r:.80}"
    return f"{field or 'body'}: {msg}", field, "invalid_field"


def validate_model(model: type[M], data: Any) -> M:
    """``model`` from decoded JSON; 422 naming the first bad field otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message, field, code = first_error(exc)
        raise InvalidField(message, field=field, code=code) from None


def check_text(value: str, field: str, max_chars: int, *, blank_ok: bool = False) -> None:
    """A message's text: not blank, not too long, no control characters or surrogates."""
    if len(value) > max_chars:
        raise InvalidField(f"{field}: {len(value)} characters, more than the limit of {max_chars}",
                           field=field, code="too_long")
    if not blank_ok and not value.strip():
        raise InvalidField(f"{field}: must not be empty or whitespace only", field=field, code="empty")
    m = _BAD_CHARS.search(value)
    if m is not None:
        ch = m.group()
        kind = "an unpaired surrogate" if "\ud800" <= ch <= "\udfff" else "a control character"
        raise InvalidField(f"{field}: contains {kind} (U+{ord(ch):04X}) at position {m.start()}",
                           field=field, code="invalid_character")


def check_screen(screen: ScreenIn | None, field: str, max_chars: int) -> dict[str, Any] | None:
    if screen is None:
        return None
    for name in ("page_title", "page_url", "site"):
        v = getattr(screen, name)
        if v is not None:
            check_text(v, f"{field}.{name}", max_chars, blank_ok=True)
    return screen.model_dump()


def check_item(item: FollowUpItem, max_chars: int, max_turns: int) -> None:
    """The limits and text checks of a session turn, applied to a follow-up item."""
    check_text(item.id, "id", 1000, blank_ok=True)
    check_text(item.follow_up, "follow_up", max_chars)
    if len(item.prefix) >= max_turns:
        raise InvalidField(f"prefix: {len(item.prefix)} turns, more than the limit of {max_turns - 1}",
                           field="prefix", code="too_long")
    for i, t in enumerate(item.prefix):
        check_text(t.content, f"prefix.{i}.content", max_chars, blank_ok=t.role == "assistant")
        if t.screen is not None:
            check_screen(ScreenIn.model_validate(t.screen.model_dump()), f"prefix.{i}.screen", max_chars)
    if item.screen is not None:
        check_screen(ScreenIn.model_validate(item.screen.model_dump()), "screen", max_chars)
