"""The bundled follow-up set, shipped as package data (``turnscope/data/followups``)."""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

from turnscope._exceptions import ItemError
from turnscope._items import FollowUpItem, parse_item

__all__ = ["bundled_item_files", "bundled_items"]


def _folder() -> Traversable:
    return resources.files("turnscope") / "data" / "followups"


def bundled_item_files() -> list[str]:
    """Names of the bundled follow-up files (``en_a.jsonl``, ``ja.jsonl``…), sorted.

    The everyday set (``everyday_*.jsonl``, see ``EVERYDAY.md`` there) lives in the same
    folder but is not part of the bundled set: it is scored on its own, and its check half
    must not enter the bundled figures, reports or gate."""
    folder = _folder()
    if not folder.is_dir():
        return []
    return sorted(e.name for e in folder.iterdir()
                  if e.name.endswith(".jsonl") and not e.name.startswith("everyday_"))


def bundled_items() -> list[FollowUpItem]:
    """Every item of every bundled follow-up file, files in name order.

    >>> items = bundled_items()
    >>> len(items) > 0 and items[0].reference_type is not None
    True

    Raises :class:`ItemError` naming the file and line of a malformed item, and when
    two items share an id (per-item failures are reported by id).
    """
    items: list[FollowUpItem] = []
    seen: dict[str, str] = {}
    folder = _folder()
    for name in bundled_item_files():
        source = f"bundled:{name}"
        text = (folder / name).read_text(encoding="utf-8")
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            item = parse_item(line, line_no=line_no, source=source)
            if item.id in seen:
                raise ItemError(f"duplicate item id {item.id!r} (first in {seen[item.id]})",
                                line=line_no, source=source)
            seen[item.id] = source
            items.append(item)
    return items
