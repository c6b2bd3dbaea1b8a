"""TREC CAsT 2019 / 2020 as follow-up items (SPEC sections 4 and 7).

Each turn of each evaluation topic becomes one item: ``prefix`` holds the
earlier *user* utterances (these files carry no assistant texts), ``follow_up``
the raw utterance, and the required/forbidden terms are derived from the human
rewrite exactly as SPEC section 7 says:

- *required*: content words the human rewrite adds over the raw utterance that
  occur in an earlier utterance of the topic (compared by stem);
- *forbidden*: topic words (words some human rewrite of the topic carries over,
  or capitalised words of its utterances) that occur in an earlier utterance
  and that neither this turn's human rewrite nor its raw utterance contains.

Words are compared by stem, but the item lists surface forms, because the
matcher (``turnscope.evaluation._matching``) works on text: a required word is
a list of alternatives (every lower-cased form seen in the earlier utterances
and the human rewrite, plus the stem when it is longer than two letters, so
"shark" satisfies "sharks"), and each form of a forbidden word is a forbidden
term of its own. A forbidden form the matcher finds in this turn's raw
utterance or human rewrite is dropped ("term" inside "long-term"): the raw
utterance and the human rewrite are never contaminated, by definition.

Capitalised words: a token with an upper-case letter. A sentence-initial token
is capitalised by convention, so a word counts only when it is written with a
capital inside a sentence somewhere in the topic's utterances ("Describe" does
not become a topic word; "Netflix" at the start of a question still does if
it is capitalised elsewhere).

The files are read in place from the data root; nothing is copied.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turnscope._exceptions import DatasetError, InputError
from turnscope.datasets._textwords import TOKEN_RE, is_content, stem, tokens
from turnscope.evaluation._matching import contains_term

__all__ = [
    "CAST_YEARS",
    "DATA_ENV_VAR",
    "DEFAULT_DATA_ROOT",
    "cast_baselines",
    "load_cast",
    "resolve_data_root",
]

#: environment variable naming the shared data folder
DATA_ENV_VAR = "TURNSCOPE_DATA"
#: the data root when nothing else is given (relative paths resolve against the CWD)
DEFAULT_DATA_ROOT = Path(os.environ.get(DATA_ENV_VAR) or "../shared/data")
#: the CAsT years this loader knows
CAST_YEARS = (2019, 2020)

_CAST19_TOPICS = Path("trec-cast/2019/data/evaluation/evaluation_topics_v1.0.json")
_CAST19_REWRITES = Path(
    "trec-cast/2019/data/evaluation/evaluation_topics_annotated_resolved_v1.0.tsv"
)
_CAST19_TYPES = (
    Path("cast2019-utterance-types/training_set.tsv"),
    Path("cast2019-utterance-types/test_set.tsv"),
)
_CAST20_TOPICS = Path("trec-cast/2020/2020_manual_evaluation_topics_v1.0.json")
_UTTERANCE_TYPES = frozenset({"SE", "FT", "PT"})
_SENTENCE_END = ".?!"


def resolve_data_root(path: Path | None = None) -> Path:
    """The shared data folder: ``path``, else ``$TURNSCOPE_DATA``, else ``../shared/data``.

    >>> resolve_data_root(Path("/work/shared/data"))  # doctest: +SKIP
    PosixPath('/work/shared/data')

    Raises ``DatasetError`` naming the path tried when it is not a directory.
    """
    if path is None:
        # read the variable now, not at import, so a test or CLI can set it late
        path = Path(os.environ.get(DATA_ENV_VAR) or "../shared/data")
    if not path.is_dir():
        raise DatasetError(
            f"data root {path} (resolved: {path.absolute()}) is not a directory; "
            f"pass the data folder explicitly or set {DATA_ENV_VAR}"
        )
    return path.absolute()


@dataclass(frozen=True)
class _Turn:
    topic: int
    number: int
    raw: str
    human: str
    automatic: str | None
    utterance_type: str | None


def read_json(path: Path) -> Any:
    """Parsed JSON of ``path`` (package-internal; shared with the other loaders)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def _read_tsv(path: Path, columns: int) -> list[tuple[int, list[str]]]:
    """Rows of a TSV file as ``(line number, fields)``; blank lines skipped."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    out: list[tuple[int, list[str]]] = []
    for lineno, row in enumerate(rows, start=1):
        if not row or all(not field.strip() for field in row):
            continue
        if len(row) != columns:
            raise DatasetError(
                f"{path}:{lineno}: expected {columns} tab-separated fields, got {len(row)}"
            )
        out.append((lineno, [field.strip() for field in row]))
    return out


def _field(obj: Any, key: str, kind: type, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DatasetError(f"{where}: missing field {key!r}")
    value = obj[key]
    # bool is an int subclass; a topic number of `true` is still malformed
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DatasetError(f"{where}: field {key!r} should be {kind.__name__}, got {value!r}")
    return value


def _topic_turns(path: Path) -> list[tuple[int, list[tuple[int, dict[str, Any]]]]]:
    """``(topic number, [(turn number, turn object)])`` from a CAsT topics file."""
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty JSON list of topics")
    topics: list[tuple[int, list[tuple[int, dict[str, Any]]]]] = []
    for index, topic in enumerate(data):
        where = f"{path}: topic #{index + 1}"
        number = _field(topic, "number", int, where)
        where = f"{path}: topic {number}"
        raw_turns = _field(topic, "turn", list, where)
        turns: list[tuple[int, dict[str, Any]]] = []
        for t_index, turn in enumerate(raw_turns):
            t_number = _field(turn, "number", int, f"{where}, turn #{t_index + 1}")
            turns.append((t_number, turn))
        numbers = [n for n, _ in turns]
        # turn order defines what is "earlier"; a gap or shuffle would silently corrupt it
        if numbers != list(range(1, len(numbers) + 1)):
            raise DatasetError(f"{where}: turn numbers should run 1..n, got {numbers}")
        topics.append((number, turns))
    return topics


def _load_utterance_types(root: Path) -> dict[str, str]:
    labels: dict[str, str] = {}
    for rel in _CAST19_TYPES:
        path = root / rel
        for lineno, (turn_id, _utterance, label) in _read_tsv(path, 3):
            # the utterance column has placeholder artefacts ("rewrite_coref1"), so the
            # join is by id only
            if label not in _UTTERANCE_TYPES:
                raise DatasetError(
                    f"{path}:{lineno}: unknown utterance type {label!r} "
                    f"(expected one of {sorted(_UTTERANCE_TYPES)})"
                )
            if labels.get(turn_id, label) != label:
                raise DatasetError(
                    f"{path}:{lineno}: turn {turn_id} labelled {label}, elsewhere {labels[turn_id]}"
                )
            labels[turn_id] = label
    return labels


def _load_2019(root: Path) -> list[list[_Turn]]:
    topics_path = root / _CAST19_TOPICS
    rewrites_path = root / _CAST19_REWRITES
    rewrites: dict[str, str] = {}
    for lineno, (turn_id, rewrite) in _read_tsv(rewrites_path, 2):
        if turn_id in rewrites:
            raise DatasetError(f"{rewrites_path}:{lineno}: duplicate turn id {turn_id}")
        rewrites[turn_id] = rewrite
    labels = _load_utterance_types(root)
    out: list[list[_Turn]] = []
    for topic, turns in _topic_turns(topics_path):
        conv: list[_Turn] = []
        for number, turn in turns:
            where = f"{topics_path}: topic {topic}, turn {number}"
            turn_id = f"{topic}_{number}"
            if turn_id not in rewrites:
                raise DatasetError(f"{rewrites_path}: no manual rewrite for turn {turn_id}")
            conv.append(
                _Turn(
                    topic=topic,
                    number=number,
                    raw=_field(turn, "raw_utterance", str, where).strip(),
                    human=rewrites[turn_id],
                    automatic=None,
                    utterance_type=labels.get(turn_id),
                )
            )
        out.append(conv)
    return out


def _load_2020(root: Path) -> list[list[_Turn]]:
    path = root / _CAST20_TOPICS
    out: list[list[_Turn]] = []
    for topic, turns in _topic_turns(path):
        conv: list[_Turn] = []
        for number, turn in turns:
            where = f"{path}: topic {topic}, turn {number}"
            conv.append(
                _Turn(
                    topic=topic,
                    number=number,
                    raw=_field(turn, "raw_utterance", str, where).strip(),
                    human=_field(turn, "manual_rewritten_utterance", str, where).strip(),
                    automatic=_field(turn, "automatic_rewritten_utterance", str, where).strip(),
                    utterance_type=None,
                )
            )
        out.append(conv)
    return out


def _stems(text: str) -> set[str]:
    return {stemmed for _, stemmed in tokens(text)}


def _capitalised(texts: Iterable[str]) -> set[str]:
    """Stems of the content words written with a capital inside a sentence of ``texts``.

    Sentence-initial tokens are skipped: their capital is convention. A word that
    is also capitalised mid-sentence still counts everywhere, since topic words
    are compared by stem.
    """
    out: set[str] = set()
    for text in texts:
        for match in TOKEN_RE.finditer(text):
            word = match.group()
            if word == word.lower() or not is_content(word.lower()):
                continue
            before = text[: match.start()].rstrip().rstrip("\"'“‘(")
            if before and before[-1] not in _SENTENCE_END:
                out.add(stem(word.lower()))
    return out


def _ordered_unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _forms(stemmed: str, texts: Iterable[str]) -> list[str]:
    """Lower-cased surface forms of ``stemmed`` in ``texts``, plus the stem itself."""
    forms = [surface for text in texts for surface, s in tokens(text) if s == stemmed]
    if len(stemmed) > 2:
        forms.append(stemmed)
    return sorted(set(forms))


def _convert(year: int, conv: Sequence[_Turn]) -> list[dict[str, Any]]:
    raws = [turn.raw for turn in conv]
    raw_stems = [_stems(text) for text in raws]
    human_stems = [_stems(turn.human) for turn in conv]

    # topic words: carried over by some human rewrite of the topic, or capitalised
    carried: list[str] = []
    for i, turn in enumerate(conv):
        earlier = set().union(*raw_stems[:i])
        carried.extend(s for _, s in tokens(turn.human) if s not in raw_stems[i] and s in earlier)
    capitalised = _capitalised(raws)
    topic_words = _ordered_unique(
        [*carried, *(s for text in raws for _, s in tokens(text) if s in capitalised)]
    )

    items: list[dict[str, Any]] = []
    for i, turn in enumerate(conv):
        earlier_texts = raws[:i]
        earlier = set().union(*raw_stems[:i])
        required_stems = _ordered_unique(
            s for _, s in tokens(turn.human) if s not in raw_stems[i] and s in earlier
        )
        required: list[str | list[str]] = []
        for s in required_stems:
            forms = _forms(s, [*earlier_texts, turn.human])
            required.append(forms[0] if len(forms) == 1 else forms)

        forbidden: list[str] = []
        for s in topic_words:
            if s not in earlier or s in human_stems[i] or s in raw_stems[i]:
                continue
            for form in _forms(s, earlier_texts):
                if not contains_term(turn.raw, form) and not contains_term(turn.human, form):
                    forbidden.append(form)

        if not required_stems:
            reference_type = "standalone"
        elif i > 0 and all(s in raw_stems[i - 1] for s in required_stems):
            reference_type = "immediate"
        else:
            reference_type = "long_range"

        items.append(
            {
                "id": f"cast{year % 100:02d}_{turn.topic}_{turn.number}",
                "lang": "en",
                "prefix": [{"role": "user", "content": text} for text in earlier_texts],
                "follow_up": turn.raw,
                "screen": None,
                "gold": [],
                "reference_type": reference_type,
                "forbidden_in_rewrite": _ordered_unique(forbidden),
                "required_in_rewrite": required,
                "human_rewrite": turn.human,
                "automatic_rewrite": turn.automatic,
                "utterance_type": turn.utterance_type,
                "year": year,
            }
        )
    return items


def load_cast(year: int, data_root: Path | None = None) -> list[dict[str, Any]]:
    """CAsT evaluation topics of ``year`` (2019 or 2020) as follow-up items.

    >>> items = load_cast(2019, Path("../shared/data"))  # doctest: +SKIP
    >>> items[1]["follow_up"], items[1]["required_in_rewrite"]  # doctest: +SKIP
    ('Is it treatable?', [['cancer', 'throat']])

    Raises ``InputError`` for an unknown year and ``DatasetError`` when a file
    is missing or malformed.
    """
    if year not in CAST_YEARS:
        raise InputError(f"unknown CAsT year {year!r}; expected one of {list(CAST_YEARS)}")
    root = resolve_data_root(data_root)
    conversations = _load_2019(root) if year == 2019 else _load_2020(root)
    return [item for conv in conversations for item in _convert(year, conv)]


def cast_baselines(items: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Baseline queries per item (SPEC section 7), keyed by baseline name.

    ``raw`` (the utterance), ``prev_user`` (previous user turn prepended),
    ``all_user`` (whole user history prepended), ``automatic`` (the set's own
    automatic rewrite; only when every item has one, i.e. CAsT 2020) and
    ``human`` (the ceiling).

    >>> cast_baselines(load_cast(2020))["automatic"][1]  # doctest: +SKIP
    'Why did garage door opener stop working?'
    """
    out: dict[str, list[str]] = {"raw": [], "prev_user": [], "all_user": []}
    for item in items:
        history = [turn["content"] for turn in item["prefix"] if turn["role"] == "user"]
        out["raw"].append(item["follow_up"])
        out["prev_user"].append(" ".join([*history[-1:], item["follow_up"]]))
        out["all_user"].append(" ".join([*history, item["follow_up"]]))
    automatic = [item.get("automatic_rewrite") for item in items]
    if items and all(isinstance(query, str) for query in automatic):
        out["automatic"] = [str(query) for query in automatic]
    out["human"] = [str(item["human_rewrite"]) for item in items]
    return out
