"""``turnscope rewrite`` (SPEC section 6), ``turnscope datasets cast`` and ``turnscope chat``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope.cli import app

REPO = Path(__file__).resolve().parents[2]
SPEC_FIELDS = {"id", "query", "reference_class", "topic_shift", "entities", "scope", "backend",
               "fallback", "fallback_reason", "carried", "decided_by"}
WIDE = {"COLUMNS": "200"}

ORDINAL = {
    "id": "fu_ord",
    "lang": "en",
    "prefix": [
        {"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
        {"role": "assistant", "content": "Frankfurt and Dublin both support CMK for data at rest."},
    ],
    "follow_up": "What's the uptime SLA on the second one?",
    "screen": None,
    "gold": [],
    "reference_type": "ordinal",
    "forbidden_in_rewrite": [],
    "required_in_rewrite": ["Dublin"],
}
PIVOT = {
    "id": "fu_0211",
    "prefix": [
        {"role": "user", "content": "And the RPO for Dublin?"},
        {"role": "assistant", "content": "The documented RPO for Dublin is 15 minutes."},
    ],
    "follow_up": "ok different question — is the billing export API paginated?",
    "some_extra_field": {"ignored": True},
}
PAGE = {
    "id": "fu_page",
    "prefix": [],
    "follow_up": "what's on this page?",
    "screen": {"page_title": "Billing export API", "page_url": "https://docs.nimbus.example/x",
               "site": "docs.nimbus.example"},
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def jl(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def out_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- rewrite -------------------------------------------------------------------------

def test_rewrite_one_output_line_per_input_line_in_order(runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL), jl(PIVOT), jl(PAGE)])
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert [r["id"] for r in rows] == ["fu_ord", "fu_0211", "fu_page"]
    for r in rows:
        assert set(r) == SPEC_FIELDS
        assert r["backend"] == "embedded" and r["fallback"] is False
    assert "Dublin" in rows[0]["query"]
    assert "Dublin" not in rows[1]["query"] and rows[1]["topic_shift"] is True
    assert "Billing export API" in rows[2]["query"]
    assert rows[0]["scope"]["policy"] == "default"


def test_rewrite_bad_lines_are_reported_and_no_other_line_is_lost(
        runner: CliRunner, tmp_path: Path) -> None:
    no_follow_up = {k: v for k, v in ORDINAL.items() if k != "follow_up"} | {"id": "fu_missing"}
    items = write_lines(tmp_path / "items.jsonl", [
        jl(ORDINAL),
        '{"id": "fu_broken", "follow_up": ',  # invalid JSON
        jl(PIVOT),
        jl(no_follow_up),  # missing follow_up
        jl(PAGE),
    ])
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    rows = out_lines(res.stdout)
    # one output line per input line: the bad ones hold an error object in their place
    assert [r["id"] for r in rows] == ["fu_ord", None, "fu_0211", "fu_missing", "fu_page"]
    assert [r["error"]["line"] for r in rows if "error" in r] == [2, 4]
    assert rows[1]["error"]["type"] == "invalid_json"
    assert rows[3]["error"]["type"] == "invalid_item" and "follow_up" in rows[3]["error"]["message"]
    assert all("query" in r for r in (rows[0], rows[2], rows[4]))
    err = flat(res.stderr)
    assert re.search(r"line\s+2\b", err), err
    assert re.search(r"line\s+4\b", err), err
    assert "follow_up" in err
    assert not re.search(r"line\s+[135]\b", err), err


@pytest.mark.parametrize("bad", ['[1, 2, 3]', '{"id": "fu_x", "follow_up": ""}',
                                 '{"id": "fu_x", "follow_up": "hi", "prefix": [{"role": "bot", '
                                 '"content": "x"}]}'])
def test_rewrite_other_invalid_items_are_reported(runner: CliRunner, tmp_path: Path,
                                                  bad: str) -> None:
    items = write_lines(tmp_path / "items.jsonl", [bad, jl(ORDINAL)])
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    first, second = out_lines(res.stdout)
    assert first["error"]["line"] == 1 and "query" not in first
    assert second["id"] == "fu_ord" and "query" in second
    assert re.search(r"line\s+1\b", flat(res.stderr)), res.stderr


def test_rewrite_unknown_policy_is_a_clear_error(runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--policy", "nope"], env=WIDE)
    assert res.exit_code != 0
    msg = flat(res.output)
    assert "nope" in msg
    assert "liveness" in msg and "window" in msg  # names the valid choices
    assert "Traceback" not in res.output
    assert out_lines(res.stdout) == []


def test_rewrite_bad_window_is_a_clear_error(runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--policy", "window:x"], env=WIDE)
    assert res.exit_code != 0
    assert "window" in flat(res.output)


OPEN_DOMAIN = {
    "id": "fu_open",
    "prefix": [{"role": "user", "content": "What is throat cancer?"},
               {"role": "assistant",
                "content": "Throat cancer is cancer that develops in the pharynx or larynx."}],
    "follow_up": "Is it treatable?",
}


def test_rewrite_default_reads_open_domain_talk_with_the_learned_resolver(
        runner: CliRunner, tmp_path: Path) -> None:
    # the bundled (cloud) vocabulary is loaded by default, and names nothing here: the
    # conversation is open-domain, the learned resolver decides (it carries "throat
    # cancer" when its gate is asked for a low bar, nothing when asked for certainty)
    items = write_lines(tmp_path / "items.jsonl", [jl(OPEN_DOMAIN)])
    low = runner.invoke(app, ["rewrite", "--input", str(items), "--resolver-threshold", "0.3"],
                        env=WIDE)
    high = runner.invoke(app, ["rewrite", "--input", str(items), "--resolver-threshold", "1"],
                         env=WIDE)
    assert low.exit_code == 0 and high.exit_code == 0, low.output + high.output
    (lo,) = out_lines(low.stdout)
    (hi,) = out_lines(high.stdout)
    assert lo["query"] == "Is throat cancer treatable?" and lo["carried"] == ["throat cancer"]
    # asked for certainty the resolver carries nothing; the structural reading of "it" (the
    # subject of the last question, which the answer named) writes the same query, and
    # says it was the rules
    assert hi["query"] == "Is throat cancer treatable?" and hi["carried"] == ["throat cancer"]
    assert lo["decided_by"] == "resolver" and hi["decided_by"] == "rules"


@pytest.mark.parametrize("value", ["1.5", "-0.1", "high"])
def test_rewrite_bad_resolver_threshold_is_a_clear_error(runner: CliRunner, tmp_path: Path,
                                                          value: str) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(OPEN_DOMAIN)])
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--resolver-threshold", value],
                        env=WIDE)
    assert res.exit_code == 2
    assert "--resolver-threshold" in flat(res.output)
    assert out_lines(res.stdout) == []


@pytest.mark.parametrize("policy", ["full", "window:2", "segment:flag", "liveness", "relevant"])
def test_rewrite_policy_is_applied(runner: CliRunner, tmp_path: Path, policy: str) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--policy", policy], env=WIDE)
    assert res.exit_code == 0, res.output
    (row,) = out_lines(res.stdout)
    assert row["scope"]["policy"] == policy.split(":")[0]


def test_rewrite_output_file(runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL), jl(PIVOT)])
    out = tmp_path / "out.jsonl"
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--output", str(out)], env=WIDE)
    assert res.exit_code == 0, res.output
    assert out_lines(res.stdout) == []
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["fu_ord", "fu_0211"]
    assert all(set(r) == SPEC_FIELDS for r in rows)


def test_rewrite_output_file_keeps_good_lines_when_some_are_bad(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", ["not json", jl(PIVOT)])
    out = tmp_path / "out.jsonl"
    res = runner.invoke(app, ["rewrite", "-i", str(items), "-o", str(out)], env=WIDE)
    assert res.exit_code == 1
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [None, "fu_0211"]
    assert rows[0]["error"] == {"type": "invalid_json", "message": rows[0]["error"]["message"],
                                "line": 1}
    assert "query" in rows[1]


def test_rewrite_japanese_item_keeps_unicode(runner: CliRunner, tmp_path: Path) -> None:
    item = {"id": "ja_1", "lang": "ja",
            "prefix": [{"role": "user", "content": "アバター案内って何ができるの？"},
                       {"role": "assistant", "content": "アバター案内は声と画面で案内するAIアバターです。"}],
            "follow_up": "料金は？"}
    items = write_lines(tmp_path / "items.jsonl", [jl(item)])
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 0, res.output
    assert "アバター案内" in res.stdout  # written as UTF-8, not \u escapes
    (row,) = out_lines(res.stdout)
    assert "アバター案内" in row["query"]


def test_rewrite_missing_input_file(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["rewrite", "--input", str(tmp_path / "nope.jsonl")], env=WIDE)
    assert res.exit_code != 0
    assert "nope.jsonl" in flat(res.output)


# -- datasets cast -------------------------------------------------------------------

def _data_root() -> Path:
    env = os.environ.get("TURNSCOPE_DATA")
    return Path(env) if env else (REPO / ".." / "shared" / "data").resolve()


def test_datasets_cast_2019_writes_items(runner: CliRunner, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the public data must be there (set TURNSCOPE_DATA): a missing set fails, never skips
    assert (_data_root() / "trec-cast").is_dir(), f"CAsT data not found under {_data_root()}"
    monkeypatch.chdir(REPO)  # the default data root is ../shared/data relative to the CWD
    out = tmp_path / "cast19.jsonl"
    res = runner.invoke(app, ["datasets", "cast", "--year", "2019", "--output", str(out)],
                        env=WIDE)
    assert res.exit_code == 0, res.output
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(items) > 100
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    for it in items:
        assert {"id", "prefix", "follow_up", "required_in_rewrite", "forbidden_in_rewrite"} <= set(it)
        assert isinstance(it["follow_up"], str) and it["follow_up"].strip()
        assert all(t["role"] in ("user", "assistant") for t in it["prefix"])
    # the items are valid rewrite input
    head = tmp_path / "head.jsonl"
    head.write_text("".join(json.dumps(it) + "\n" for it in items[:5]), encoding="utf-8")
    res2 = runner.invoke(app, ["rewrite", "--input", str(head)], env=WIDE)
    assert res2.exit_code == 0, res2.output
    assert [r["id"] for r in out_lines(res2.stdout)] == ids[:5]


def test_datasets_cast_reads_turnscope_data(runner: CliRunner, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root = _data_root()
    assert (root / "trec-cast").is_dir(), f"CAsT data not found under {root}"
    monkeypatch.chdir(tmp_path)  # ../shared/data does not exist from here
    res = runner.invoke(app, ["datasets", "cast", "--year", "2019"],
                        env={**WIDE, "TURNSCOPE_DATA": str(root)})
    assert res.exit_code == 0, res.output
    assert len(out_lines(res.stdout)) > 100


def test_datasets_cast_missing_data_is_a_clear_error(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["datasets", "cast", "--year", "2019",
                              "--data-root", str(tmp_path / "nowhere")], env=WIDE)
    assert res.exit_code != 0
    assert "nowhere" in flat(res.output)


# -- chat ----------------------------------------------------------------------------

CHAT_SCRIPT = "\n".join([
    "Which EU regions support customer-managed encryption keys?",
    "a: Frankfurt and Dublin both support CMK for data at rest.",
    "What's the uptime SLA on the second one?",
    ":quit",
]) + "\n"


def test_chat_prints_one_compact_line_per_user_message(runner: CliRunner) -> None:
    res = runner.invoke(app, ["chat", "--vocabulary", "bundled:cloud"], input=CHAT_SCRIPT, env=WIDE)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "loading" in out.splitlines()[0]  # said before anything loads
    assert "→ What's the uptime SLA on Dublin?   resolved: Dublin" in out
    assert "(answer recorded)" in out
    # the scope and the slot table wait for --verbose
    assert "slots after turn" not in out and "scope=" not in out


def test_chat_verbose_shows_class_scope_and_slot_table(runner: CliRunner) -> None:
    # the slot table shows the declared vocabulary's types ("region")
    res = runner.invoke(app, ["chat", "--vocabulary", "bundled:cloud", "--verbose"],
                        input=CHAT_SCRIPT, env=WIDE)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "textual_immediate" in out and "scope=" in out
    assert "slots after turn 3" in out
    for col in ("type", "name", "introduced", "last_seen", "status"):
        assert col in out
    assert re.search(r"region\s*│\s*Dublin", out), out


ANSWER = ("Frankfurt and Dublin both support customer-managed keys for data at rest; Dublin "
          "also offers them for backups, and both regions rotate keys every ninety days by "
          "default, which you can shorten in the key policy settings.")


@pytest.mark.parametrize(("reply", "as_answer"), [("y", True), ("", True), ("n", False)])
def test_chat_asks_about_a_long_line_typed_after_a_question(runner: CliRunner, reply: str,
                                                            as_answer: bool) -> None:
    script = f"Which EU regions support customer-managed keys?\n{ANSWER}\n{reply}\n:quit\n"
    res = runner.invoke(app, ["chat"], input=script, env=WIDE)
    assert res.exit_code == 0, res.output
    assert "looks like the assistant's answer" in res.output
    assert ("(answer recorded)" in res.output) is as_answer
    assert (f"→ {ANSWER}" in flat(res.output)) is not as_answer


def test_chat_takes_an_answer_on_the_line_after_colon_a(runner: CliRunner) -> None:
    script = "Which EU regions support CMK?\n:a\nFrankfurt and Dublin.\nthe second one?\n:quit\n"
    res = runner.invoke(app, ["chat"], input=script, env=WIDE)
    assert res.exit_code == 0, res.output
    assert "(answer recorded)" in res.output
    assert "Dublin" in res.output.split("(answer recorded)")[1]


def test_chat_screen_command_feeds_situational_references(runner: CliRunner) -> None:
    script = ":screen Billing export API | https://docs.nimbus.example/x | docs.nimbus.example\n" \
             "what's on this page?\n:quit\n"
    res = runner.invoke(app, ["chat"], input=script, env=WIDE)
    assert res.exit_code == 0, res.output
    assert "Billing export API" in res.output
    assert "resolved: Billing export API" in res.output


def test_chat_ends_on_eof_without_quit(runner: CliRunner) -> None:
    res = runner.invoke(app, ["chat"], input="How do I rotate an API token?\n", env=WIDE)
    assert res.exit_code == 0, res.output
    assert "How do I rotate an API token?" in res.output


def test_chat_unknown_policy_is_a_clear_error(runner: CliRunner) -> None:
    res = runner.invoke(app, ["chat", "--policy", "nope"], input=":quit\n", env=WIDE)
    assert res.exit_code != 0
    assert "nope" in flat(res.output)


# -- vocabulary: none unless declared --------------------------------------------------

def test_rewrite_declares_no_vocabulary_by_default_and_loads_a_bundled_one(
        runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    plain = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    cloud = runner.invoke(app, ["rewrite", "--input", str(items), "--vocabulary", "bundled:cloud"],
                          env=WIDE)
    assert plain.exit_code == 0 and cloud.exit_code == 0, (plain.output, cloud.output)
    (p,), (c,) = out_lines(plain.stdout), out_lines(cloud.stdout)
    assert "Dublin" in p["query"] and "Dublin" in c["query"]
    # the cloud vocabulary types Dublin as a region and decides the conversation
    assert {"type": "region", "name": "Dublin", "status": "live"} in c["entities"]
    assert c["decided_by"] == "vocabulary"
    assert all(e["type"] != "region" for e in p["entities"])
    assert p["decided_by"] != "vocabulary"


@pytest.mark.parametrize("command", ["rewrite", "chat"])
def test_unknown_bundled_vocabulary_exits_2_naming_the_choices(
        runner: CliRunner, tmp_path: Path, command: str) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    args = ["rewrite", "--input", str(items)] if command == "rewrite" else ["chat"]
    res = runner.invoke(app, [*args, "--vocabulary", "bundled:nope"], input=":quit\n", env=WIDE)
    assert res.exit_code == 2, res.output
    msg = flat(res.output)
    assert "nope" in msg
    for choice in ("none", "bundled:cloud", "bundled:ja-site"):
        assert choice in msg, msg
    assert "Traceback" not in res.output


def test_a_bare_bundled_name_is_not_a_file(runner: CliRunner, tmp_path: Path) -> None:
    items = write_lines(tmp_path / "items.jsonl", [jl(ORDINAL)])
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--vocabulary", "cloud"], env=WIDE)
    assert res.exit_code == 2, res.output
    assert "bundled:cloud" in flat(res.output)
