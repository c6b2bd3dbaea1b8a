"""What an OpenAI-compatible server answers, and how it is read: the chat-completion
envelope, the rewrite object the model must return (:class:`RewriteAnswer`), and a lenient
JSON extraction for servers without a JSON mode."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from turnscope.rewriters._llm_config import LLMConfig, OutputMode
from turnscope.rewriters._prompts import REWRITE_JSON_SCHEMA

__all__ = [
    "request_body",
    "RewriteAnswer",
    "extract_json_object",
]

class _ChoiceMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    message: _ChoiceMessage
    finish_reason: str | None = None


class _Completion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    choices: list[_Choice] = Field(min_length=1)
    usage: dict[str, Any] | None = None


class _EntityOut(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    type: str = "name"
    name: str = Field(min_length=1)


class RewriteAnswer(BaseModel):
    """The JSON object the model must return (validated; extra keys ignored).

    Only ``query`` is required: a missing flag or class falls back to the
    classifier's decision, and malformed entities are dropped rather than failing
    the whole answer, since they only feed the slot table.
    """

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)
    query: str = Field(min_length=1)
    topic_shift: bool | None = None
    reference_class: str | None = None
    entities: list[_EntityOut] = Field(default_factory=list)

    @field_validator("entities", mode="before")
    @classmethod
    def _lenient_entities(cls, value: object) -> object:
        if value is None:
            return []
        if not isinstance(value, list):
            return value
        out: list[object] = []
        for item in value:
            if isinstance(item, str) and item.strip():
                out.append({"type": "name", "name": item})
            elif isinstance(item, Mapping) and isinstance(item.get("name"), str) \
                    and item["name"].strip():
                typ = item.get("type")
                out.append({"type": typ if isinstance(typ, str) and typ.strip() else "name",
                            "name": item["name"]})
        return out


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (models wrap JSON in prose or code fences).

    >>> extract_json_object('Sure! ```json\\n{"query": "x"}\\n``` done')
    {'query': 'x'}
    """
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    return None


def _schema_reason(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "answer"
    kind = err["type"]
    if kind == "missing":
        return f"schema: missing {loc}"
    if kind == "string_too_short":
        return f"schema: empty {loc}"
    if kind == "model_type":
        return "schema: not an object"
    return f"schema: {loc}: {kind}"


def _parse_answer(content: str | None) -> RewriteAnswer | str:
    """The validated answer, or a short failure reason."""
    if content is None or not content.strip():
        return "invalid json"
    data: object
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = extract_json_object(content)
        if data is None:
            return "invalid json"
    try:
        return RewriteAnswer.model_validate(data)
    except ValidationError as exc:
        return _schema_reason(exc)


# -- the response cache ------------------------------------------------------------------


def request_body(config: LLMConfig, messages: list[dict[str, str]], mode: OutputMode) -> dict[str, object]:
    """The chat-completions payload for one rung of the output ladder: the model, the
    messages, ``max_tokens`` always (a runaway answer is cut by the server), and the
    ``response_format`` the rung asks for; ``extra_body`` last, so a user's setting wins."""
    body: dict[str, object] = {"model": config.model, "messages": messages, "max_tokens": config.max_tokens}
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if mode == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "rewrite", "strict": True, "schema": REWRITE_JSON_SCHEMA}}
    elif mode == "json_object_schema":
        body["response_format"] = {"type": "json_object", "schema": REWRITE_JSON_SCHEMA}
    elif mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    body.update(config.extra_body)
    return body
