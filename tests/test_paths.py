"""replace_atomically: the old entry or the whole new one, and no temporary sibling left."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from turnscope._paths import replace_atomically


def test_a_file_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "entry.json"
    replace_atomically(target, lambda tmp: tmp.write_text("first", encoding="utf-8"))
    replace_atomically(target, lambda tmp: tmp.write_text("second", encoding="utf-8"))
    assert target.read_text(encoding="utf-8") == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.json"]


def test_a_failed_write_keeps_the_old_entry_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "entry.json"
    target.write_text("old", encoding="utf-8")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half", encoding="utf-8")
        raise ValueError("the writer failed")

    with pytest.raises(ValueError, match="the writer failed"):
        replace_atomically(target, half_then_fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]


def test_a_folder_replaces_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "index"

    def write(files: dict[str, str]) -> Callable[[Path], None]:
        def fill(tmp: Path) -> None:
            for name, text in files.items():
                (tmp / name).write_text(text, encoding="utf-8")
        return fill

    replace_atomically(target, write({"a.txt": "1", "b.txt": "2"}), is_dir=True)
    replace_atomically(target, write({"c.txt": "3"}), is_dir=True)
    assert sorted(p.name for p in target.iterdir()) == ["c.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


def test_a_failed_folder_write_leaves_no_temporary_folder(tmp_path: Path) -> None:
    def fail(tmp: Path) -> None:
        (tmp / "partial").write_text("x", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_atomically(tmp_path / "index", fail, is_dir=True)
    assert list(tmp_path.iterdir()) == []
