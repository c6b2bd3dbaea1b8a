"""``turnscope rewrite`` and ``turnscope chat`` against hostile but realistic input (issue 9)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from turnscope.cli import app

WIDE = {"COLUMNS": "200"}
GOOD_A = {"id": "fu_a", "follow_up": "How do I rotate an API token?"}
GOOD_B = {"id": "fu_b", "prefix": [
    {"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
    {"role": "assistant", "content": "Frankfurt and Dublin both support CMK for data at rest."}],
    "follow_up": "What's the uptime SLA on the second one?"}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def jl(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- 1. never write over the input; stdin -----------------------------------------------

@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "relative"])
def test_output_onto_the_input_is_refused_and_the_input_is_untouched(
        runner: CliRunner, tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    items = tmp_path / "items.jsonl"
    content = jl(GOOD_A) + jl(GOOD_B)
    items.write_bytes(content)
    out: Path | str = items
    if how == "symlink":
        out = tmp_path / "link.jsonl"
        out.symlink_to(items)
    elif how == "hardlink":
        out = tmp_path / "hard.jsonl"
        os.link(items, out)
    elif how == "relative":
        monkeypatch.chdir(tmp_path)
        out = "./sub/../items.jsonl"
        (tmp_path / "sub").mkdir()
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--output", str(out)], env=WIDE)
    assert res.exit_code == 2, res.output
    assert "--output" in res.output and "input" in flat(res.output)
    assert "Traceback" not in res.output
    assert items.read_bytes() == content


def test_stdin_redirected_from_the_output_file_is_refused(tmp_path: Path) -> None:
    # a real process: only a real stdin file descriptor shows that the input is the output
    import subprocess
    import sys

    items = tmp_path / "items.jsonl"
    content = jl(GOOD_A)
    items.write_bytes(content)
    with items.open("rb") as stdin:
        cmd = [sys.executable, "-c", "from turnscope.cli import main; main()",
               "rewrite", "--input", "-", "--output", str(items)]
        proc = subprocess.run(cmd, stdin=stdin, capture_output=True,
                              text=True, env={**os.environ, **WIDE}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "input" in flat(proc.stderr) and "Traceback" not in proc.stderr
    assert items.read_bytes() == content


def test_input_dash_reads_stdin(runner: CliRunner) -> None:
    res = runner.invoke(app, ["rewrite", "--input", "-"], input=jl(GOOD_A) + jl(GOOD_B), env=WIDE)
    assert res.exit_code == 0, res.output
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["fu_a", "fu_b"]
    assert "Dublin" in out[1]["query"]


def test_input_dash_bad_line_names_stdin(runner: CliRunner) -> None:
    res = runner.invoke(app, ["rewrite", "-i", "-"], input=b"nope\n" + jl(GOOD_A), env=WIDE)
    assert res.exit_code == 1
    assert re.search(r"<stdin>:line 1\b", flat(res.stderr)), res.stderr
    assert [r["id"] for r in rows(res.stdout)] == [None, "fu_a"]


def test_input_directory_is_a_clear_error(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["rewrite", "--input", str(tmp_path)], env=WIDE)
    assert res.exit_code == 2
    assert "directory" in flat(res.output) and "--input" in res.output
    assert "Traceback" not in res.output


# -- 3. Rich markup in user text -----------------------------------------------------------

def test_markup_like_id_in_a_bad_item_is_printed_verbatim(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl({"id": "[/x]", "follow_up": ""}) + jl({"id": "[/]", "follow_up": ""})
                      + jl(GOOD_A))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "'[/x]'" in res.stderr and "'[/]'" in res.stderr
    assert [r["id"] for r in rows(res.stdout)] == ["[/x]", "[/]", "fu_a"]


def test_markup_like_query_is_kept_in_rewrite_output(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl({"id": "[bold]", "follow_up": "what does [/] mean in [red]rich[/x]?"}))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 0, res.output
    (row,) = rows(res.stdout)
    assert row["id"] == "[bold]" and "[/]" in row["query"] and "[/x]" in row["query"]


def test_chat_prints_markup_like_messages_verbatim(runner: CliRunner) -> None:
    script = "what does [/] mean?\na: [/x] closes [bold]x[/bold].\nand [/x]?\n:quit\n"
    res = runner.invoke(app, ["chat", "--verbose"], input=script, env=WIDE)
    assert res.exit_code == 0, res.output
    assert "what does [/] mean?" in res.output
    assert "[/x]" in res.output
    assert "slots after turn 3" in res.output


def test_chat_does_not_highlight_user_text(runner: CliRunner) -> None:
    # FORCE_COLOR makes Rich emit styles; the user's numbers and URLs must come back as typed
    # (highlighting them is what made a long pasted line freeze the loop)
    line = "is port 8080 open on https://nimbus.example/x for 10.0.0.1? " * 50
    res = runner.invoke(app, ["chat"], input=line + "\n:quit\n",
                        env={**WIDE, "FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert res.exit_code == 0, res.output
    assert "\x1b[" in res.output  # styles are on (the arrow before the query)...
    assert "port 8080 open on https://nimbus.example/x for 10.0.0.1?" in res.output  # ...not here


def test_chat_whitespace_only_assistant_turn_is_reported_not_a_crash(runner: CliRunner) -> None:
    res = runner.invoke(app, ["chat"], input="a: \u200b\u200b\nHow do I rotate an API token?\n",
                        env=WIDE)
    assert res.exit_code == 0, res.output
    assert "How do I rotate an API token?" in res.output


# -- 4/5. invalid UTF-8 and one output line per input line -----------------------------------

def test_invalid_utf8_costs_only_its_own_line(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A) + b'{"id": "fu_bad", "follow_up": "caf\xe9?"}\n' + jl(GOOD_B))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    assert "Traceback" not in res.output
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["fu_a", None, "fu_b"]
    assert out[1]["error"]["type"] == "invalid_utf8" and out[1]["error"]["line"] == 2
    assert "UTF-8" in out[1]["error"]["message"]
    assert re.search(r"line 2\b.*UTF-8", flat(res.stderr)), res.stderr
    assert "query" in out[0] and "query" in out[2]


def test_utf8_bom_on_the_first_line_is_ignored(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(b"\xef\xbb\xbf" + jl(GOOD_A))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 0, res.output
    assert [r["id"] for r in rows(res.stdout)] == ["fu_a"]


def test_error_objects_take_the_place_of_bad_lines(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(
        jl(GOOD_A)
        + b"\n"  # blank: not an item, no output line
        + b"[" * 100_000 + b"\n"  # nesting deep enough to exhaust the parser's stack
        + jl({"id": "fu_missing"})
        + b'{"id": "fu_big", "follow_up": "x", "n": ' + b"1" * 5000 + b"}\n"
        + jl(GOOD_B))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    assert "Traceback" not in res.output
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["fu_a", None, "fu_missing", None, "fu_b"]
    errors = [r for r in out if "error" in r]
    assert [e["error"]["line"] for e in errors] == [3, 4, 5]
    assert [e["error"]["type"] for e in errors] == ["invalid_json", "invalid_item", "invalid_json"]
    for e in errors:
        assert set(e) == {"id", "error"} and set(e["error"]) == {"type", "message", "line"}
        assert re.search(rf"line {e['error']['line']}\b", flat(res.stderr))


def test_an_item_whose_rewrite_fails_gets_an_error_object(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import turnscope.cli._rewrite as cli_rewrite
    from turnscope._session import Session

    real = Session.user

    def user(self: Session, content: str, **kw: Any) -> Any:
        if "explode" in content:
            raise RuntimeError("boom")
        return real(self, content, **kw)

    monkeypatch.setattr(cli_rewrite.Session, "user", user)
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A) + jl({"id": "fu_x", "follow_up": "explode please"}) + jl(GOOD_B))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["fu_a", "fu_x", "fu_b"]
    assert out[1]["error"] == {"type": "internal_error", "message": "RuntimeError: boom", "line": 2}
    assert re.search(r"line 2\b.*boom", flat(res.stderr))


def test_lone_surrogate_in_an_id_still_gives_a_json_line(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(b'{"id": "x\\udc80", "follow_up": ""}\n' + jl(GOOD_A))
    res = runner.invoke(app, ["rewrite", "--input", str(items)], env=WIDE)
    assert res.exit_code == 1
    out = rows(res.stdout)
    assert [r["id"] for r in out] == ["x\udc80", "fu_a"]


# -- 8. option values and file-system errors -------------------------------------------

@pytest.mark.parametrize("command", ["rewrite", "chat", "eval"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e9"])
def test_bad_timeout_is_a_usage_error(runner: CliRunner, tmp_path: Path, command: str,
                                      value: str) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A))
    args = [command, "--timeout", value] + (["--input", str(items)] if command == "rewrite" else [])
    res = runner.invoke(app, args, input=":quit\n", env=WIDE)
    assert res.exit_code == 2, res.output
    assert "--timeout" in res.output and "Traceback" not in res.output
    assert not [line for line in res.stdout.splitlines() if line.startswith("{")]


def test_good_timeout_is_accepted(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A))
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--timeout", "2.5"], env=WIDE)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("where", ["missing_folder", "directory"])
def test_unusable_output_path_is_a_clear_error(runner: CliRunner, tmp_path: Path,
                                               where: str) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A))
    out = tmp_path / "nowhere" / "out.jsonl" if where == "missing_folder" else tmp_path
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--output", str(out)], env=WIDE)
    assert res.exit_code == 2, res.output
    assert str(out) in res.output
    assert "--output" in res.output and "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_unwritable_output_file_is_a_clear_error(runner: CliRunner, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A))
    out = tmp_path / "locked.jsonl"
    out.write_text("keep\n")
    real_open = Path.open

    def deny(self: Path, mode: str = "r", *a: Any, **kw: Any) -> Any:
        # permission bits do not stop root (which the test may run as): refuse as the OS would
        if self == out and "w" in mode:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, mode, *a, **kw)

    monkeypatch.setattr(Path, "open", deny)
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--output", str(out)], env=WIDE)
    assert res.exit_code == 2, res.output
    assert "locked.jsonl" in res.output and "Permission denied" in flat(res.output)
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_write_failure_mid_run_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(jl(GOOD_A))
    res = runner.invoke(app, ["rewrite", "--input", str(items), "--output", "/dev/full"], env=WIDE)
    assert res.exit_code == 1
    assert "/dev/full" in res.stderr and "space" in res.stderr
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
