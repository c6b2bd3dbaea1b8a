"""Passages, corpora and how they are loaded from disk or from the package."""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, overload

from turnscope._exceptions import CorpusError, InputError

__all__ = ["Corpus", "Passage", "bundled_corpus", "bundled_corpus_names", "load_corpus"]

_FOLDER_SUFFIXES = (".md", ".txt")
_H2 = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_ANY_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_KANA = re.compile(r"[\u3040-\u30ff]")


@dataclass(frozen=True)
class Passage:
    """One retrievable unit of text.

    ``id`` is what gold labels refer to (``docs/api/billing-export#pagination``).
    """

    id: str
    text: str
    title: str = ""
    lang: str = "en"
    url: str | None = None
    site: str | None = None

    @property
    def indexed_text(self) -> str:
        """The text retrievers index: the title, when there is one, then the body."""
        return f"{self.title}\n{self.text}" if self.title else self.text


class Corpus(Sequence[Passage]):
    """An immutable, non-empty sequence of passages with unique ids.

    >>> c = Corpus([Passage("a", "Dublin is eu-west-1."), Passage("b", "Frankfurt is eu-central-1.")])
    >>> c.by_id["b"].text
    'Frankfurt is eu-central-1.'
    """

    def __init__(self, passages: Iterable[Passage], *, name: str = "corpus") -> None:
        self._passages: tuple[Passage, ...] = tuple(passages)
        self.name = name
        if not self._passages:
            raise CorpusError(f"{name}: the corpus has no passages")
        index: dict[str, Passage] = {}
        for p in self._passages:
            if p.id in index:
                raise CorpusError(f"{name}: duplicate passage id {p.id!r}")
            index[p.id] = p
        self._by_id: Mapping[str, Passage] = MappingProxyType(index)
        self._fingerprint: str | None = None

    @overload
    def __getitem__(self, index: int) -> Passage: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Passage]: ...

    def __getitem__(self, index: int | slice) -> Passage | Sequence[Passage]:
        return self._passages[index]

    def __len__(self) -> int:
        return len(self._passages)

    def __iter__(self) -> Iterator[Passage]:
        return iter(self._passages)

    def __repr__(self) -> str:
        return f"Corpus(name={self.name!r}, passages={len(self)})"

    @property
    def by_id(self) -> Mapping[str, Passage]:
        """Read-only mapping from passage id to passage."""
        return self._by_id

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self._passages)

    @property
    def fingerprint(self) -> str:
        """sha256 hex digest over every passage's id, title and text, in order.

        The title is included because it is indexed (:attr:`Passage.indexed_text`);
        a cached index is only reused when this value is unchanged.
        """
        if self._fingerprint is None:
            h = hashlib.sha256()
            for p in self._passages:
                for part in (p.id, p.title, p.text):
                    data = part.encode("utf-8")
                    # length-prefixed so that ("ab", "c") and ("a", "bc") differ
                    h.update(len(data).to_bytes(8, "big"))
                    h.update(data)
            self._fingerprint = h.hexdigest()
        return self._fingerprint


# ---------------------------------------------------------------------------- JSONL

_STR_FIELDS = ("id", "text", "title", "lang")
_OPT_FIELDS = ("url", "site")


def _passage_from_json(obj: Any) -> Passage:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    for key in ("id", "text"):
        if key not in obj:
            raise ValueError(f"missing required field {key!r}")
    kwargs: dict[str, Any] = {}
    for key in _STR_FIELDS:
        if key in obj:
            if not isinstance(obj[key], str):
                raise ValueError(f"field {key!r} must be a string")
            kwargs[key] = obj[key]
    for key in _OPT_FIELDS:
        if obj.get(key) is not None:
            if not isinstance(obj[key], str):
                raise ValueError(f"field {key!r} must be a string or null")
            kwargs[key] = obj[key]
    if not kwargs["id"].strip():
        raise ValueError("field 'id' is empty")
    return Passage(**kwargs)


def _parse_jsonl(lines: Iterable[str], source: str) -> Corpus:
    passages: list[Passage] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            passage = _passage_from_json(json.loads(line))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise CorpusError(f"{source}: line {lineno}: {exc}") from exc
        if passage.id in seen:
            raise CorpusError(f"{source}: line {lineno}: duplicate passage id {passage.id!r}")
        seen.add(passage.id)
        passages.append(passage)
    if not passages:
        raise CorpusError(f"{source}: no passages")
    return Corpus(passages, name=source)


# --------------------------------------------------------------------------- folder


def _slug(heading: str) -> str:
    """GitHub-style anchor: lower-case, punctuation dropped, spaces to hyphens.

    Letters of any script survive, so Japanese headings keep a readable slug.
    """
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return re.sub(r"\s", "-", text) or "section"


def _guess_lang(text: str) -> str:
    # Kana only occur in Japanese; kanji alone could be Chinese, so they do not count.
    return "ja" if _KANA.search(text) else "en"


def _split_markdown(rel: str, text: str, lang: str | None) -> list[Passage]:
    lines = text.splitlines()
    title, title_line = "", -1
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (m := _ANY_HEADING.match(line)):
            title, title_line = m.group(1), i
            break
    title = title or Path(rel).stem

    # sections[0] is the text before the first "##" heading (its heading is None)
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (m := _H2.match(line)):
            sections.append((m.group(1), [m.group(1)]))
            continue
        elif i == title_line:
            continue  # the title is carried by Passage.title, not repeated in the text
        sections[-1][1].append(line)

    passages: list[Passage] = []
    used: dict[str, int] = {}
    for heading, body in sections:
        if heading is None:
            content = "\n".join(body).strip()
            if content:
                passages.append(_make(rel, content, title, lang))
            continue
        slug = _slug(heading)
        # repeated headings get -1, -2, ... like GitHub anchors
        n = used.get(slug, 0)
        used[slug] = n + 1
        anchor = slug if n == 0 else f"{slug}-{n}"
        passages.append(_make(f"{rel}#{anchor}", "\n".join(body).strip(), title, lang))
    return passages


def _make(pid: str, text: str, title: str, lang: str | None) -> Passage:
    return Passage(id=pid, text=text, title=title, lang=lang or _guess_lang(title + text))


def _load_folder(root: Path, lang: str | None) -> Corpus:
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in _FOLDER_SUFFIXES
    )
    passages: list[Passage] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CorpusError(f"{path}: cannot read: {exc}") from exc
        if path.suffix.lower() == ".md":
            passages.extend(_split_markdown(rel, text, lang))
        elif text.strip():
            passages.append(_make(rel, text.strip(), path.stem, lang))
    if not passages:
        raise CorpusError(f"{root}: no non-empty .md or .txt files")
    return Corpus(passages, name=str(root))


# ----------------------------------------------------------------------------- API


def load_corpus(path: str | os.PathLike[str], *, lang: str | None = None) -> Corpus:
    """Load a JSONL file of passages or a folder of ``.md``/``.txt`` files.

    JSONL: one object per line with the fields of :class:`Passage` (``id`` and ``text``
    required, unknown fields ignored). Folder: each file's id is its relative path;
    Markdown is split at ``##`` headings into passages ``path#slug``; the title is the
    first heading or the file name. ``lang`` (folders only) is guessed per passage when
    not given: ``ja`` if it contains kana, else ``en``.

    >>> corpus = load_corpus("docs/")          # doctest: +SKIP
    >>> corpus.by_id["api/billing-export.md#pagination"].title   # doctest: +SKIP
    'Billing export API'

    Raises :class:`CorpusError` naming the file (and line) on any problem.
    """
    p = Path(path)
    if p.is_dir():
        return _load_folder(p, lang)
    if not p.is_file():
        raise CorpusError(f"{p}: no such file or directory")
    try:
        with p.open(encoding="utf-8") as fh:
            return _parse_jsonl(fh, str(p))
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{p}: not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise CorpusError(f"{p}: cannot read: {exc}") from exc


def _bundled_dir() -> Any:
    return resources.files("turnscope") / "data" / "corpus"


def bundled_corpus_names() -> list[str]:
    """Names of the corpora shipped inside the package (``cloud_docs``, ``ja_site``)."""
    folder = _bundled_dir()
    if not folder.is_dir():
        return []
    return sorted(
        entry.name.removesuffix(".jsonl")
        for entry in folder.iterdir()
        if entry.name.endswith(".jsonl")
    )


def bundled_corpus(name: str) -> Corpus:
    """A corpus shipped with the package: ``cloud_docs`` (English) or ``ja_site`` (Japanese).

    >>> bundled_corpus("cloud_docs").name
    'bundled:cloud_docs'
    """
    names = bundled_corpus_names()
    if name not in names:
        raise InputError(
            f"unknown bundled corpus {name!r}; available: {', '.join(names) or '(none)'}"
        )
    resource = _bundled_dir() / f"{name}.jsonl"
    return _parse_jsonl(resource.read_text(encoding="utf-8").splitlines(), f"bundled:{name}")


def as_corpus(passages: Corpus | Sequence[Passage]) -> Corpus:
    """Return ``passages`` as a :class:`Corpus` (no copy when it already is one)."""
    return passages if isinstance(passages, Corpus) else Corpus(passages)
