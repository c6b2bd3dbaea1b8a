"""The request models' OpenAPI schema states what the server's own checks accept."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscope.service._exceptions import InvalidField
from turnscope.service._models import PLAIN_PATTERN, TEXT_PATTERN, TurnIn, check_text

# every code point but the surrogates (JSON text cannot carry an unpaired one)
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def _accepted(value: str, *, blank_ok: bool = False) -> bool:
    try:
        check_text(value, "content", 10_000, blank_ok=blank_ok)
    except InvalidField:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_the_documented_pattern_is_what_the_check_accepts(value: str) -> None:
    assert (re.fullmatch(TEXT_PATTERN, value) is not None) == _accepted(value)
    assert (re.fullmatch(PLAIN_PATTERN, value) is not None) == _accepted(value, blank_ok=True)


@pytest.mark.parametrize("value,ok", [("What about the second one?", True), ("  ", False),
                                      ("", False), ("tab\tand\nlines", True), ("bell\x07", False),
                                      ("\u3000", False), ("それは？", True)])
def test_examples_of_the_pattern(value: str, ok: bool) -> None:
    assert (re.fullmatch(TEXT_PATTERN, value) is not None) is ok
    assert _accepted(value) is ok


def test_the_turn_schema_states_the_pattern() -> None:
    content = TurnIn.model_json_schema()["properties"]["content"]
    assert content["pattern"] == TEXT_PATTERN and content["minLength"] == 1


def test_an_item_over_the_message_limit_is_422_too_long_naming_the_limit() -> None:
    from turnscope._items import DEFAULT_MAX_MESSAGE_CHARS, FollowUpItem
    from turnscope.service._exceptions import InvalidField
    from turnscope.service._models import validate_model

    with pytest.raises(InvalidField) as info:
        validate_model(FollowUpItem, {"id": "a", "follow_up": "x" * (DEFAULT_MAX_MESSAGE_CHARS + 1)})
    assert info.value.code == "too_long" and info.value.field == "follow_up"
    assert str(DEFAULT_MAX_MESSAGE_CHARS) in str(info.value)
