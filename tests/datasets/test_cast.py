"""TREC CAsT conversion (SPEC section 7) on the real data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from turnscope._exceptions import DatasetError, InputError
from turnscope._lexicon import content_words
from turnscope.datasets import cast_baselines, load_cast, resolve_data_root
from turnscope.evaluation import check_terms, contains_any, contains_term

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data_root() -> Path:
    env = os.environ.get("TURNSCOPE_DATA")
    return resolve_data_root(Path(env) if env else REPO / "../shared/data")


@pytest.fixture(scope="module")
def cast19(data_root: Path) -> list[dict[str, Any]]:
    return load_cast(2019, data_root)


@pytest.fixture(scope="module")
def cast20(data_root: Path) -> list[dict[str, Any]]:
    return load_cast(2020, data_root)


def _by_id(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in items}


def _rates(items: list[dict[str, Any]], queries: list[str]) -> tuple[float, float]:
    pairs = [(i, q) for i, q in zip(items, queries, strict=True) if i["prefix"]]
    checks = [check_terms(q, i["required_in_rewrite"], i["forbidden_in_rewrite"]) for i, q in pairs]
    n = len(checks)
    return sum(c.covered for c in checks) / n, sum(c.contaminated for c in checks) / n


def test_sizes_ids_and_item_format(
    cast19: list[dict[str, Any]], cast20: list[dict[str, Any]]
) -> None:
    assert len(cast19) == 479
    assert len(cast20) == 216
    assert len({i["id"] for i in cast19}) == 479
    first = cast19[0]
    assert first["id"] == "cast19_31_1"
    assert first["prefix"] == []
    assert first["reference_type"] == "standalone"
    assert first["required_in_rewrite"] == []
    assert first["forbidden_in_rewrite"] == []
    for item in cast19 + cast20:
        assert item["lang"] == "en"
        assert item["gold"] == []
        assert item["screen"] is None
        assert all(turn["role"] == "user" for turn in item["prefix"])
        json.dumps(item)  # one JSON object per line must be possible


def test_prefix_is_the_earlier_user_utterances(cast19: list[dict[str, Any]]) -> None:
    items = _by_id(cast19)
    item = items["cast19_31_4"]
    assert [t["content"] for t in item["prefix"]] == [
        "What is throat cancer?",
        "Is it treatable?",
        "Tell me about lung cancer.",
    ]
    assert item["follow_up"] == "What are its symptoms?"
    assert item["human_rewrite"] == "What are lung cancer's symptoms?"
    assert item["year"] == 2019
    assert item["automatic_rewrite"] is None


def test_required_and_forbidden_follow_the_spec(cast19: list[dict[str, Any]]) -> None:
    items = _by_id(cast19)
    # "Is it treatable?" -> "Is throat cancer treatable?": both words came from turn 1
    assert items["cast19_31_2"]["required_in_rewrite"] == ["throat", "cancer"]
    assert items["cast19_31_2"]["reference_type"] == "immediate"
    # after the switch to lung cancer, "throat" is a finished-with topic word
    assert items["cast19_31_3"]["required_in_rewrite"] == []
    assert items["cast19_31_3"]["forbidden_in_rewrite"] == ["throat"]
    assert items["cast19_31_4"]["forbidden_in_rewrite"] == ["throat"]
    # "lung cancer" is two turns back: not in the previous user turn
    assert items["cast19_31_5"]["required_in_rewrite"] == ["lung", "cancer"]
    assert items["cast19_31_5"]["reference_type"] == "long_range"
    assert items["cast19_31_5"]["forbidden_in_rewrite"] == []


def test_required_lists_surface_alternatives(cast19: list[dict[str, Any]]) -> None:
    item = _by_id(cast19)["cast19_52_10"]
    assert item["required_in_rewrite"] == [["supertanker", "supertankers"]]
    assert contains_any("crude oil washing on a supertanker", item["required_in_rewrite"][0])


def test_invariants_hold_on_every_item(
    cast19: list[dict[str, Any]], cast20: list[dict[str, Any]]
) -> None:
    for item in cast19 + cast20:
        history = " ".join(t["content"] for t in item["prefix"])
        earlier = set(content_words(history))
        raw_words = set(content_words(item["follow_up"]))
        for req in item["required_in_rewrite"]:
            alternatives = [req] if isinstance(req, str) else req
            # taken from the human rewrite, absent from the raw utterance, said earlier
            assert contains_any(item["human_rewrite"], alternatives), item["id"]
            assert not contains_any(item["follow_up"], alternatives), item["id"]
            assert contains_any(history, alternatives), item["id"]
            assert not raw_words & set(content_words(" ".join(alternatives))), item["id"]
        for term in item["forbidden_in_rewrite"]:
            assert not contains_term(item["follow_up"], term), item["id"]
            assert not contains_term(item["human_rewrite"], term), item["id"]
            assert set(content_words(term)) <= earlier, item["id"]
        if not item["required_in_rewrite"]:
            assert item["reference_type"] == "standalone"
        else:
            assert item["reference_type"] in {"immediate", "long_range"}


def test_utterance_types_and_automatic_rewrites(
    cast19: list[dict[str, Any]], cast20: list[dict[str, Any]]
) -> None:
    items = _by_id(cast19)
    assert items["cast19_31_1"]["utterance_type"] == "SE"
    assert items["cast19_31_2"]["utterance_type"] == "FT"
    assert items["cast19_31_4"]["utterance_type"] == "PT"
    assert {i["utterance_type"] for i in cast19} == {"SE", "FT", "PT"}
    item = _by_id(cast20)["cast20_81_2"]
    assert item["follow_up"] == "Now it stopped working. Why?"
    assert item["human_rewrite"] == "Now my garage door opener stopped working. Why?"
    assert item["automatic_rewrite"] == "Why did garage door opener stop working?"
    assert item["required_in_rewrite"] == ["garage", "door", "opener"]
    assert all(i["utterance_type"] is None and i["year"] == 2020 for i in cast20)


def test_baselines_shape(cast19: list[dict[str, Any]], cast20: list[dict[str, Any]]) -> None:
    b19 = cast_baselines(cast19)
    b20 = cast_baselines(cast20)
    assert list(b19) == ["raw", "prev_user", "all_user", "human"]
    assert list(b20) == ["raw", "prev_user", "all_user", "automatic", "human"]
    assert all(len(v) == len(cast19) for v in b19.values())
    k = [i["id"] for i in cast19].index("cast19_31_3")
    assert b19["raw"][k] == "Tell me about lung cancer."
    assert b19["prev_user"][k] == "Is it treatable? Tell me about lung cancer."
    assert b19["all_user"][k] == (
        "What is throat cancer? Is it treatable? Tell me about lung cancer."
    )


def test_spec_figures_on_cast2019(cast19: list[dict[str, Any]]) -> None:
    # SPEC section 7, computed over follow-up turns (items with a non-empty prefix)
    baselines = cast_baselines(cast19)
    cov, cont = _rates(cast19, baselines["all_user"])
    assert cov == 1.0
    assert round(cont, 2) == 0.68
    cov, cont = _rates(cast19, baselines["raw"])
    assert round(cov, 2) == 0.21
    assert cont == 0.0
    assert _rates(cast19, baselines["human"]) == (1.0, 0.0)


def test_human_is_the_ceiling_on_cast2020(cast20: list[dict[str, Any]]) -> None:
    baselines = cast_baselines(cast20)
    assert _rates(cast20, baselines["human"]) == (1.0, 0.0)
    cov, cont = _rates(cast20, baselines["all_user"])
    assert cov == 1.0 and cont > 0.5
    auto_cov, _ = _rates(cast20, baselines["automatic"])
    raw_cov, _ = _rates(cast20, baselines["raw"])
    assert raw_cov < auto_cov < 1.0


def test_unknown_year_is_an_input_error(data_root: Path) -> None:
    with pytest.raises(InputError, match="2019"):
        load_cast(2022, data_root)


def test_missing_data_root_names_path_and_env_var(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(DatasetError, match="TURNSCOPE_DATA") as info:
        resolve_data_root(missing)
    assert str(missing) in str(info.value)


def test_env_var_is_read_at_call_time(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSCOPE_DATA", str(data_root))
    assert resolve_data_root(None) == data_root
    monkeypatch.setenv("TURNSCOPE_DATA", "/nonexistent/turnscope-data")
    with pytest.raises(DatasetError, match="/nonexistent/turnscope-data"):
        resolve_data_root(None)


def _fake_root(tmp_path: Path) -> Path:
    """A synthetic one-turn CAsT 2019 data root, to exercise the error paths."""
    ev = tmp_path / "trec-cast/2019/data/evaluation"
    ev.mkdir(parents=True)
    types = tmp_path / "cast2019-utterance-types"
    types.mkdir()
    topics = [{"number": 1, "turn": [{"number": 1, "raw_utterance": "What is X?"}]}]
    (ev / "evaluation_topics_v1.0.json").write_text(json.dumps(topics), encoding="utf-8")
    (ev / "evaluation_topics_annotated_resolved_v1.0.tsv").write_text(
        "1_1\tWhat is X?\n", encoding="utf-8"
    )
    (types / "training_set.tsv").write_text("1_1\tWhat is X?\tSE\n", encoding="utf-8")
    (types / "test_set.tsv").write_text("", encoding="utf-8")
    return tmp_path


def test_small_valid_root_loads(tmp_path: Path) -> None:
    items = load_cast(2019, _fake_root(tmp_path))
    assert [i["id"] for i in items] == ["cast19_1_1"]
    assert items[0]["utterance_type"] == "SE"


def test_malformed_files_name_the_file(tmp_path: Path) -> None:
    root = _fake_root(tmp_path)
    tsv = root / "trec-cast/2019/data/evaluation/evaluation_topics_annotated_resolved_v1.0.tsv"
    tsv.write_text("1_1 no tab here\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"resolved_v1\.0\.tsv:1: expected 2"):
        load_cast(2019, root)
    tsv.write_text("2_1\tsomething else\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no manual rewrite for turn 1_1"):
        load_cast(2019, root)
    tsv.write_text("1_1\tWhat is X?\n", encoding="utf-8")
    labels = root / "cast2019-utterance-types/test_set.tsv"
    labels.write_text("1_1\tWhat is X?\tXX\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="test_set.tsv:1: unknown utterance type 'XX'"):
        load_cast(2019, root)
    labels.write_text("", encoding="utf-8")
    topics = root / "trec-cast/2019/data/evaluation/evaluation_topics_v1.0.json"
    topics.write_text("[{", encoding="utf-8")
    with pytest.raises(DatasetError, match="evaluation_topics_v1.0.json: invalid JSON"):
        load_cast(2019, root)
    topics.write_text(json.dumps([{"number": 1, "turn": [{"number": 2}]}]), encoding="utf-8")
    with pytest.raises(DatasetError, match="turn numbers should run 1..n"):
        load_cast(2019, root)
    topics.unlink()
    with pytest.raises(DatasetError, match="file not found"):
        load_cast(2019, root)
