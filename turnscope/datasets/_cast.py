"""TREC CAsT 2019 / 2020 / 2021 and CANARD as follow-up items (docs/output.md and docs/benchmarks.md).

Each turn of each evaluation topic becomes one item: ``prefix`` holds the
earlier turns (user utterances, and for CAsT 2021 and CANARD the assistant's
response after each of them: 2021's canonical passage, QuAC's answer span),
``follow_up`` the raw utterance, and the required/forbidden terms are derived
from the human rewrite exactly as docs/benchmarks.md says:

- *required*: content words the human rewrite adds over the raw utterance that
  occur earlier in the conversation (a user or an assistant turn; by stem);
- *forbidden*: topic words (words some human rewrite of the topic carries over,
  or capitalised words of its user utterances) that occur earlier in the
  conversation and that neither this turn's human rewrite nor its raw
  utterance contains.

CAsT 2019 and 2020 ship no responses, so there the earlier conversation is the
earlier user utterances, as before.

Words are compared by stem, but the item lists surface forms, because the
matcher (``turnscope._lexicon``) works on text: a required word is
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
from turnscope._lexicon import TOKEN_RE, contains_term, is_content, stem, tokens

__all__ = [
    "CAST21_PARTS",
    "CAST_YEARS",
    "cast21_part",
    "load_canard",
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
CAST_YEARS = (2019, 2020, 2021)

_CAST19_TOPICS = Path("trec-cast/2019/data/evaluation/evaluation_topics_v1.0.json")
_CAST19_REWRITES = Path(
    "trec-cast/2019/data/evaluation/evaluation_topics_annotated_resolved_v1.0.tsv"
)
_CAST19_TYPES = (
    Path("cast2019-utterance-types/training_set.tsv"),
    Path("cast2019-utterance-types/test_set.tsv"),
)
_CAST20_TOPICS = Path("trec-cast/2020/2020_manual_evaluation_topics_v1.0.json")
_CAST21_TOPICS = Path("trec-cast/2021/2021_manual_evaluation_topics_v1.0.json")
_CANARD_DEV = Path("canard/dev.json")
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
    #: the assistant's response after this turn (CAsT 2021's canonical passage)
    response: str | None = None


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


def _load_manual(path: Path, *, with_passage: bool) -> list[list[_Turn]]:
    """CAsT 2020 / 2021 manual topics (same layout; 2021 adds the canonical passage)."""
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
                    response=_field(turn, "passage", str, where).strip() if with_passage else None,
                )
            )
        out.append(conv)
    return out


def _load_2020(root: Path) -> list[list[_Turn]]:
    return _load_manual(root / _CAST20_TOPICS, with_passage=False)


def _load_2021(root: Path) -> list[list[_Turn]]:
    return _load_manual(root / _CAST21_TOPICS, with_passage=True)


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


def _convert(prefix: str, conv: Sequence[_Turn], *, year: int | None = None,
             opening: str | None = None) -> list[dict[str, Any]]:
    """Items of one conversation; ``opening`` is a user turn before the first question
    (CANARD's "article title — section title", which its rewrites draw on)."""
    raws = [turn.raw for turn in conv]
    # every text before turn i, in order, with its role: what "earlier" means
    before: list[list[tuple[str, str]]] = []
    history: list[tuple[str, str]] = [("user", opening)] if opening else []
    for turn in conv:
        before.append(list(history))
        history.append(("user", turn.raw))
        if turn.response:
            history.append(("assistant", turn.response))
    earlier_stems = [set().union(*(_stems(t) for _, t in b)) for b in before]
    raw_stems = [_stems(text) for text in raws]
    human_stems = [_stems(turn.human) for turn in conv]

    # topic words: carried over by some human rewrite of the topic, or capitalised
    carried: list[str] = []
    for i, turn in enumerate(conv):
        carried.extend(s for _, s in tokens(turn.human)
                       if s not in raw_stems[i] and s in earlier_stems[i])
    user_texts = ([opening] if opening else []) + raws
    capitalised = _capitalised(user_texts)
    topic_words = _ordered_unique(
        [*carried, *(s for text in user_texts for _, s in tokens(text) if s in capitalised)]
    )

    items: list[dict[str, Any]] = []
    for i, turn in enumerate(conv):
        earlier_texts = [t for _, t in before[i]]
        earlier = earlier_stems[i]
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

        prev_user = [t for role, t in before[i] if role == "user"]
        prev_stems = _stems(prev_user[-1]) if prev_user else set()
        prev_response = conv[i - 1].response if i > 0 else None
        if prev_response:
            prev_stems |= _stems(prev_response)
        if not required_stems:
            reference_type = "standalone"
        elif before[i] and all(s in prev_stems for s in required_stems):
            reference_type = "immediate"
        else:
            reference_type = "long_range"

        item: dict[str, Any] = {
            "id": f"{prefix}_{turn.topic}_{turn.number}",
            "lang": "en",
            "prefix": [{"role": role, "content": text} for role, text in before[i]],
            "follow_up": turn.raw,
            "screen": None,
            "gold": [],
            "reference_type": reference_type,
            "forbidden_in_rewrite": _ordered_unique(forbidden),
            "required_in_rewrite": required,
            "human_rewrite": turn.human,
            "automatic_rewrite": turn.automatic,
            "utterance_type": turn.utterance_type,
            "conversation": f"{prefix}_{turn.topic}",
            # the human rewrite of every earlier user turn (the opening has none): what a
            # resolver that rewrote those turns perfectly would have as their queries
            "prefix_rewrites": [c.human for c in conv[:i]],
        }
        if year is not None:
            item["year"] = year
        items.append(item)
    return items


#: CAsT 2021's topics split in two before anything was tuned (see docs/splits.md): the
#: even-numbered topics are development data (read their failures, train on them), the
#: odd-numbered ones a check set (figures only; never read item by item, never trained on)
CAST21_PARTS = ("dev", "check")


def cast21_part(topic: int) -> str:
    """Which half of CAsT 2021 a topic number belongs to (``dev`` or ``check``)."""
    return "dev" if topic % 2 == 0 else "check"


def load_cast(year: int, data_root: Path | None = None, *, part: str | None = None) -> list[dict[str, Any]]:
    """CAsT evaluation topics of ``year`` (2019, 2020 or 2021) as follow-up items.

    >>> items = load_cast(2019, Path("../shared/data"))  # doctest: +SKIP
    >>> items[1]["follow_up"], items[1]["required_in_rewrite"]  # doctest: +SKIP
    ('Is it treatable?', [['cancer', 'throat']])

    ``part`` (2021 only) keeps one half of the topics: ``dev`` or ``check``.
    Raises ``InputError`` for an unknown year or part and ``DatasetError`` when a
    file is missing or malformed.
    """
    if year not in CAST_YEARS:
        raise InputError(f"unknown CAsT year {year!r}; expected one of {list(CAST_YEARS)}")
    if part is not None and (year != 2021 or part not in CAST21_PARTS):
        raise InputError(f"part {part!r} is only defined for 2021: one of {list(CAST21_PARTS)}")
    root = resolve_data_root(data_root)
    loaders = {2019: _load_2019, 2020: _load_2020, 2021: _load_2021}
    conversations = loaders[year](root)
    if part is not None:
        conversations = [c for c in conversations if c and cast21_part(c[0].topic) == part]
    return [item for conv in conversations
            for item in _convert(f"cast{year % 100:02d}", conv, year=year)]


def load_canard(data_root: Path | None = None) -> list[dict[str, Any]]:
    """CANARD dev (QuAC dialogues with human rewrites) as follow-up items.

    Each dialogue opens with a user turn "article title — section title" (the
    context every CANARD rewrite may draw on), then alternates QuAC's questions
    and answer spans; the last question of each dialogue carries the full history.

    >>> items = load_canard()  # doctest: +SKIP
    >>> items[1]["follow_up"], items[1]["required_in_rewrite"]  # doctest: +SKIP
    ('When did they disband?', ['zappa', 'mother', 'invention'])
    """
    root = resolve_data_root(data_root)
    path = root / _CANARD_DEV
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DatasetError(f"{path}: expected a non-empty JSON list")
    dialogues: dict[str, list[dict[str, Any]]] = {}
    for index, row in enumerate(data):
        where = f"{path}: entry #{index + 1}"
        dialog = _field(row, "QuAC_dialog_id", str, where)
        _field(row, "History", list, where)
        _field(row, "Question_no", int, where)
        dialogues.setdefault(dialog, []).append(row)
    items: list[dict[str, Any]] = []
    for number, (dialog, rows) in enumerate(dialogues.items(), start=1):
        rows.sort(key=lambda r: r["Question_no"])
        last = rows[-1]["History"]
        if len(last) < 2:
            raise DatasetError(f"{path}: dialogue {dialog}: history lacks title and section")
        answers = last[3::2]  # history: title, section, q1, a1, q2, a2, ...
        conv: list[_Turn] = []
        for k, row in enumerate(rows):
            where = f"{path}: dialogue {dialog}, question {row['Question_no']}"
            response = answers[k] if k < len(answers) else None
            conv.append(_Turn(
                topic=number, number=k + 1,
                raw=_field(row, "Question", str, where).strip(),
                human=_field(row, "Rewrite", str, where).strip(),
                automatic=None, utterance_type=None,
                response=str(response).strip() if response else None,
            ))
        items.extend(_convert("canard", conv, opening=f"{last[0]} — {last[1]}"))
    return items


def cast_baselines(items: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Baseline queries per item (docs/benchmarks.md), keyed by baseline name.

    ``raw`` (the utterance), ``prev_user`` (previous user turn prepended),
    ``all_user`` (whole user history prepended), for sets with responses
    ``prev_exchange`` (the last user turn and its response prepended) and
    ``all_history`` (every earlier turn prepended), ``automatic`` (the set's own
    automatic rewrite; only when every item has one, i.e. CAsT 2020) and
    ``human`` (the ceiling).

    >>> cast_baselines(load_cast(2020))["automatic"][1]  # doctest: +SKIP
    'Why did garage door opener stop working?'
    """
    out: dict[str, list[str]] = {"raw": [], "prev_user": [], "all_user": []}
    with_responses = any(t["role"] == "assistant" for item in items for t in item["prefix"])
    if with_responses:
        out["prev_exchange"] = []
        out["all_history"] = []
    for item in items:
        history = [turn["content"] for turn in item["prefix"] if turn["role"] == "user"]
        out["raw"].append(item["follow_up"])
        out["prev_user"].append(" ".join([*history[-1:], item["follow_up"]]))
        out["all_user"].append(" ".join([*history, item["follow_up"]]))
        if with_responses:
            # the last user turn and the response after it, then the message
            turns = item["prefix"]
            last_user = max((k for k, t in enumerate(turns) if t["role"] == "user"), default=None)
            tail = [t["content"] for t in turns[last_user:]] if last_user is not None else []
            out["prev_exchange"].append(" ".join([*tail, item["follow_up"]]))
            out["all_history"].append(" ".join([*(t["content"] for t in turns), item["follow_up"]]))
    automatic = [item.get("automatic_rewrite") for item in items]
    if items and all(isinstance(query, str) for query in automatic):
        out["automatic"] = [str(query) for query in automatic]
    if items and all(isinstance(item.get("human_rewrite"), str) for item in items):
        out["human"] = [str(item["human_rewrite"]) for item in items]
    return out
