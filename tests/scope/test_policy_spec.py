"""One policy-spec grammar (turnscope.scope.parse_policy), and every surface agreeing with it:
the library, the CLI's --policy options, ``eval``'s topic-set detectors and the service."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from turnscope import ConfigError, get_policy, policy_names
from turnscope.cli import app
from turnscope.scope import PolicySpec, SegmentPolicy, WindowPolicy, parse_policy, policy_grammar

VALID = [
    ("default", PolicySpec("default")),
    ("full", PolicySpec("full")),
    ("liveness", PolicySpec("liveness")),
    ("relevant", PolicySpec("relevant")),
    ("window", PolicySpec("window")),
    ("window:0", PolicySpec("window", 0)),
    ("window:3", PolicySpec("window", 3)),
    (" Window : 12 ", PolicySpec("window", 12)),
    ("window:", PolicySpec("window")),
    ("segment", PolicySpec("segment")),
    ("segment:flag", PolicySpec("segment", "flag")),
    ("segment:Learned", PolicySpec("segment", "learned")),
    ("segment-centroid", PolicySpec("segment", "centroid")),
    ("segment-flag", PolicySpec("segment", "flag")),
    ("segment-learned", PolicySpec("segment", "learned")),
]
INVALID = ["nope", "", "window:x", "window:2.5", "window:-1", "window:1e3", "segment:bogus",
           "full:3", "liveness:2", "segment-flag:centroid"]


@pytest.mark.parametrize(("text", "spec"), VALID)
def test_valid_specs_parse(text: str, spec: PolicySpec) -> None:
    assert parse_policy(text) == spec


@pytest.mark.parametrize("text", INVALID)
def test_invalid_specs_name_the_value_and_the_choices(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_policy(text)
    msg = str(info.value)
    assert repr(text) in msg or repr(text.partition(":")[2]) in msg
    assert "segment" in msg  # the valid choices (or the valid detectors) are listed


def test_every_listed_name_parses_and_builds_the_same_policy_as_before() -> None:
    for name in policy_names():
        spec = parse_policy(name)
        assert str(parse_policy(str(spec))) == str(spec)  # the canonical form round-trips
        assert type(get_policy(name)) is type(spec.build())


def test_built_policies_keep_their_arguments() -> None:
    w = get_policy("window:0")
    assert isinstance(w, WindowPolicy) and w.w == 0
    assert isinstance(get_policy("window"), WindowPolicy) and get_policy("window").w == 2  # type: ignore[attr-defined]
    seg = get_policy("segment-flag")
    assert isinstance(seg, SegmentPolicy) and seg.detector.name == "flag"
    assert isinstance(get_policy("segment"), SegmentPolicy)
    assert get_policy("segment").detector.name == "centroid"  # type: ignore[attr-defined]


def test_a_huge_spec_is_quoted_short() -> None:
    with pytest.raises(ConfigError) as info:
        parse_policy("x" * 100_000)
    assert len(str(info.value)) < 500
    with pytest.raises(ConfigError):
        parse_policy("window:" + "9" * 10_000)


def test_grammar_lists_every_base_policy_and_detector() -> None:
    g = policy_grammar()
    for word in ("default", "full", "window[:W]", "liveness", "relevant", "centroid", "flag", "learned"):
        assert word in g


def test_cli_help_texts_come_from_the_grammar() -> None:
    runner = CliRunner()
    for command in ("rewrite", "chat"):
        res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"})
        assert res.exit_code == 0
        # the help is wrapped at 80 columns whatever the terminal: compare the words
        assert " ".join(policy_grammar().split()) in " ".join(res.output.split()), command


@pytest.mark.parametrize("text", ["segment-learned", "window:0", "segment:flag"])
def test_cli_accepts_what_the_library_accepts(text: str) -> None:
    from turnscope.cli._common import check_policy

    assert check_policy(text) == text


@pytest.mark.parametrize("text", ["segment:bogus", "window:x", "nope"])
def test_cli_refuses_what_the_library_refuses(text: str) -> None:
    res = CliRunner().invoke(app, ["rewrite", "--input", "-", "--policy", text], input="",
                             env={"COLUMNS": "400"})
    assert res.exit_code == 2
    assert "segment" in res.output  # the choices are listed


def test_eval_topic_detectors_use_the_same_grammar() -> None:
    from turnscope.cli._eval import _topic_detectors

    assert _topic_detectors("segment-learned,segment:flag") == ("learned", "flag")
    assert _topic_detectors("segment") == ("centroid",)
    with pytest.raises(ConfigError):
        _topic_detectors("segment:bogus")


@pytest.mark.parametrize(("text", "ok"), [*((t, True) for t, _ in VALID if len(t) <= 100),
                                          *((t, False) for t in INVALID)])
def test_service_validation_agrees(text: str, ok: bool) -> None:
    pytest.importorskip("fastapi")
    from turnscope.service._exceptions import InvalidField
    from turnscope.service._models import CreateSessionIn, validate_model

    if ok:
        assert validate_model(CreateSessionIn, {"policy": text}).policy == text
    else:
        with pytest.raises(InvalidField) as info:
            validate_model(CreateSessionIn, {"policy": text})
        assert "segment" in str(info.value)
