"""Training on a small fixture: the pipeline runs end to end, is deterministic, and learns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from turnscope.datasets._cast import _convert, _Turn
from turnscope.resolver import HistoryTurn, Resolver
from turnscope.resolver._calibration import CALIBRATION_PAIRS, CALIBRATION_SEEDS
from turnscope.resolver._features import BASE_FEATURES, FEATURES, LATENT_FEATURES
from turnscope.resolver._ranker import BAG_SEPARATOR, GATE_SEPARATOR, Bag
from turnscope.resolver._replay import latent_of_result, own_history_items, replayed, session_items, with_rewrites
from turnscope.resolver._train import (
    GATE_SET_WEIGHTS,
    OWN_HISTORY_PAIR,
    train_resolver,
)

# (raw, human rewrite, response): each conversation has a subject the follow-ups point
# back to with a pronoun, and a standalone question that needs nothing
_CONVERSATIONS = [
    [("What is lobular carcinoma?", "What is lobular carcinoma?",
      "Lobular carcinoma is a cancer that begins in the lobules of the breast."),
     ("How is it treated?", "How is lobular carcinoma treated?",
      "Treatment of lobular carcinoma includes surgery and hormone therapy."),
     ("What is the capital of Peru?", "What is the capital of Peru?", "Lima is the capital of Peru.")],
    [("Tell me about the Grateful Dead.", "Tell me about the Grateful Dead.",
      "The Grateful Dead were an American rock band formed in 1965 in Palo Alto."),
     ("What was their first album?", "What was the Grateful Dead's first album?",
      "Their debut album, The Grateful Dead, came out in 1967."),
     ("How do volcanoes form?", "How do volcanoes form?", "Volcanoes form where magma rises.")],
    [("What are mako sharks?", "What are mako sharks?",
      "Mako sharks are large fast sharks of the open ocean."),
     ("Are they endangered?", "Are mako sharks endangered?",
      "Shortfin mako sharks are listed as endangered by the IUCN."),
     ("How tall is Mount Everest?", "How tall is Mount Everest?", "Everest is 8,849 metres tall.")],
    [("Who was Marie Curie?", "Who was Marie Curie?",
      "Marie Curie was a physicist and chemist who studied radioactivity."),
     ("What did she discover?", "What did Marie Curie discover?",
      "Marie Curie discovered polonium and radium."),
     ("What is the boiling point of water?", "What is the boiling point of water?",
      "Water boils at 100 degrees Celsius at sea level.")],
]


def _items() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, conv in enumerate(_CONVERSATIONS * 3, start=1):
        turns = [_Turn(n, k + 1, raw, human, None, None, resp) for k, (raw, human, resp) in enumerate(conv)]
        out.extend(_convert("fixture", turns))
    return out


#: leaves small enough for a fixture of a few hundred rows (the shipped settings ask for
#: 100 rows a leaf, more than some of its folds hold)
TINY_PARAMS = {"min_data_in_leaf": 5}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("model") / "resolver.txt"
    report = train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                            params=TINY_PARAMS)
    return out, report


def test_training_writes_a_loadable_model_with_its_threshold(trained: tuple[Path, Any]) -> None:
    path, report = trained
    r = Resolver.load(path)
    assert r.threshold == report.threshold and r.max_carried == report.max_carried
    assert r.slot_threshold == report.slot_threshold
    # the pair was chosen on the mean of the calibration seeds' session replays
    rows = r.meta["calibration"]
    assert {(row["slot_threshold"], row["threshold"]) for row in rows} == set(CALIBRATION_PAIRS)
    assert all(len(row["objectives"]) == CALIBRATION_SEEDS for row in rows)
    top = max(rows, key=lambda row: (row["objective"], row["threshold"], row["slot_threshold"]))
    assert (top["slot_threshold"], top["threshold"]) == (r.slot_threshold, r.threshold)
    assert r.meta["trained_on"] == {"fixture": len(_items())}
    assert report.positives > 0 and report.rows > report.positives


def test_training_is_deterministic(trained: tuple[Path, Any], tmp_path: Path) -> None:
    path, _ = trained
    again = tmp_path / "again.txt"
    train_resolver(None, again, items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                   params=TINY_PARAMS)
    assert again.read_text() == path.read_text()


def test_the_trained_model_prefers_the_subject_for_a_pronoun(trained: tuple[Path, Any]) -> None:
    path, _ = trained
    r = Resolver.load(path)
    hist = [HistoryTurn(1, "user", "Who was Ada Lovelace?"),
            HistoryTurn(2, "assistant", "Ada Lovelace was a mathematician who wrote about the engine.")]
    cands, scores = r.score("What did she write?", hist)
    best = cands[int(scores.argmax())]
    assert best.text == "Ada Lovelace"


# --- own histories: the gate also learns from conversations as the resolver rewrote them ---

def test_with_rewrites_reads_earlier_turns_as_the_sessions_queries() -> None:
    items = _items()[:3]  # one conversation: subject, pronoun follow-up, standalone question
    queries = ["What is lobular carcinoma?", "How is it treated?", "What is the capital of Peru?"]
    out = with_rewrites(items, queries)
    assert [it["prefix_rewrites"] for it in out] == [[], queries[:1], queries[:2]]
    # the labels still come from the human rewrite
    for before, after in zip(items, out, strict=True):
        assert after["human_rewrite"] == before["human_rewrite"]
        assert after["required_in_rewrite"] == before["required_in_rewrite"]
        assert after["forbidden_in_rewrite"] == before["forbidden_in_rewrite"]
    assert items[2]["prefix_rewrites"][1] == "How is lobular carcinoma treated?"  # input untouched


def test_with_rewrites_names_a_count_mismatch() -> None:
    items = _items()[:3]
    with pytest.raises(ValueError, match="3 items but 2 rewrites"):
        with_rewrites(items, ["a", "b"])
    # an item whose conversation is not all there: its earlier rewrites cannot be replaced
    with pytest.raises(ValueError, match="fixture_1_3: 2 earlier rewrites"):
        with_rewrites(items[2:], ["x"])


def test_own_history_items_replays_each_conversation_with_its_fold_model(trained: tuple[Path, Any]) -> None:
    from turnscope._items import replay_conversations
    from turnscope._session import Session

    path, _ = trained
    r = Resolver.load(path)
    items = _items()
    own = own_history_items({"fixture": items}, {0: r._booster}, {0: r._gate}, 1, r.max_carried,
                            r.embedder, r.nn_rewrites, pair=(r.slot_threshold, r.threshold))["fixture"]
    expected = [res.query for res in replay_conversations(items, lambda: Session(resolver=r))]
    assert own == with_rewrites(items, expected)
    # a fold with no models keeps the human rewrites
    kept = own_history_items({"fixture": items}, {}, {}, 1, r.max_carried, r.embedder, r.nn_rewrites,
                             OWN_HISTORY_PAIR)["fixture"]
    assert kept == items


def test_training_adds_the_own_history_examples_when_asked(trained: tuple[Path, Any], tmp_path: Path) -> None:
    _, human_only = trained  # the default: human rewrites only (own histories are not shipped)
    assert human_only.own_examples == 0
    out = tmp_path / "own.txt"
    report = train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                            params=TINY_PARAMS, calibrate=False, own_histories=True)
    assert report.own_examples > 0
    assert report.examples == human_only.examples + report.own_examples
    assert Resolver.load(out).meta["own_histories"] == {"examples": report.own_examples,
                                                        "pair": list(OWN_HISTORY_PAIR)}


# --- the gate's set weights ---

def test_gate_rows_weigh_by_set() -> None:
    import numpy as np

    from turnscope.resolver._train import Example, _gate_data

    def example(set_name: str) -> Example:
        keys = [frozenset({"lobular", "carcinoma"}), frozenset({"peru"})]
        x = np.zeros((2, len(FEATURES)), dtype=np.float32)
        return Example(set_name, "c", "How is it treated?", [], [], ["lobular carcinoma", "Peru"], keys, x,
                       np.array([1.0, 0.0], dtype=np.float32))

    exs = [example("cast19"), example("canard"), example("fixture")]
    scores = [np.array([0.9, 0.1])] * 3
    # shipped: every message weighs the same
    assert _gate_data(exs, scores).w == [GATE_SET_WEIGHTS.get(s, 1.0) for s in ("cast19", "canard", "fixture")]
    g = _gate_data(exs, scores, {"cast19": 3.0, "fixture": 2.5})
    assert g.w == [3.0, 1.0, 2.5]
    assert g.subset([2, 0]).w == [2.5, 3.0]


def test_gate_weights_change_the_gate_not_the_ranker(trained: tuple[Path, Any], tmp_path: Path) -> None:
    path, _ = trained
    out = tmp_path / "weighted.txt"
    train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS,
                   calibrate=False, gate_weights={"fixture": 3.0})
    plain = tmp_path / "plain.txt"
    train_resolver(None, plain, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS,
                   calibrate=False)
    w, p = Resolver.load(out), Resolver.load(plain)
    assert w.meta["gate_set_weights"] == {"fixture": 3.0}
    assert p.meta["gate_set_weights"] == dict(GATE_SET_WEIGHTS)
    ranker_w, _, gate_w = out.read_text().partition("\n")[2].partition(GATE_SEPARATOR)
    ranker_p, _, gate_p = plain.read_text().partition("\n")[2].partition(GATE_SEPARATOR)
    assert ranker_w == ranker_p
    assert gate_w != gate_p


# --- the latent subject: what a session's earlier turns were probably about ---

def test_with_rewrites_hands_each_item_the_latent_subjects_of_its_earlier_turns() -> None:
    items = _items()[:3]
    latents = [(), (("lobular carcinoma", 0.7),), None]
    out = with_rewrites(items, None, latents)
    assert [it["prefix_latent"] for it in out] == [[], [()], [(), (("lobular carcinoma", 0.7),)]]
    # None: the human rewrites stay
    assert [it["prefix_rewrites"] for it in out] == [it["prefix_rewrites"] for it in items]


def test_session_items_read_the_replay_s_queries_and_latent_subjects(trained: tuple[Path, Any]) -> None:
    from turnscope._items import replay_conversations
    from turnscope._session import Session
    from turnscope.resolver._train import _history

    path, _ = trained
    r = Resolver.load(path)
    items = _items()
    run = replayed({"fixture": items}, {0: r._booster}, {0: r._gate}, 1, r.max_carried, r.embedder,
                   r.nn_rewrites, (r.slot_threshold, r.threshold))["fixture"]
    results = replay_conversations(items, lambda: Session(resolver=r))
    latents = [latent_of_result(res) for res in results]
    assert all(lat is not None for lat in latents)  # the resolver decided every English turn here
    assert any(latents)
    both = session_items(run, own=True, latent=True)
    assert both == with_rewrites(items, [res.query for res in results], latents)
    human = session_items(run, own=False, latent=True)
    assert [it["prefix_rewrites"] for it in human] == [it["prefix_rewrites"] for it in items]
    # the history a training example reads: each earlier user turn with its own latent subject
    third = human[2]
    hist = _history(third)
    users = [t for t in hist if t.role == "user"]
    assert [t.latent for t in users] == [latents[0], latents[1]]
    assert all(t.latent is None for t in hist if t.role == "assistant")


def test_the_default_model_reads_no_latent_columns(trained: tuple[Path, Any]) -> None:
    path, _ = trained
    meta = Resolver.load(path).meta
    assert meta["features"] == list(BASE_FEATURES) and "latent_state" not in meta


def test_training_with_the_latent_state(tmp_path: Path) -> None:
    out = tmp_path / "latent.txt"
    report = train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                            params=TINY_PARAMS, calibrate=False, latent="all")
    r = Resolver.load(out)
    assert r.meta["features"] == list(FEATURES)
    assert set(LATENT_FEATURES) <= set(r._booster.feature_name())
    assert r.meta["latent_state"]["pair"] == list(OWN_HISTORY_PAIR)
    assert r.meta["latent_state"]["examples"] == "all"
    assert report.own_examples == 0
    # the replay's latent subjects reached the training rows: LightGBM records a value range
    # for a column with values, "none" for a column that was missing on every row
    ranker = out.read_text().partition("\n")[2].partition(GATE_SEPARATOR)[0]
    infos = dict(zip(next(line for line in ranker.splitlines() if line.startswith("feature_names=")).split("=")[1]
                     .split(), next(line for line in ranker.splitlines() if line.startswith("feature_infos="))
                     .split("=")[1].split(), strict=True))
    assert all(infos[f] != "none" for f in ("latent_same", "latent_top"))


def test_the_own_latent_mode_gives_the_state_to_the_own_history_examples_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs own_histories"):
        train_resolver(None, tmp_path / "x.txt", items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                       params=TINY_PARAMS, calibrate=False, latent="own")
    with pytest.raises(ValueError, match="'none', 'all' or 'own', got 'yes'"):
        train_resolver(None, tmp_path / "x.txt", items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                       params=TINY_PARAMS, calibrate=False, latent="yes")  # type: ignore[arg-type]
    out = tmp_path / "own.txt"
    report = train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                            params=TINY_PARAMS, calibrate=False, own_histories=True, latent="own")
    meta = Resolver.load(out).meta
    assert report.own_examples > 0
    assert meta["features"] == list(FEATURES) and meta["latent_state"]["examples"] == "own"


def test_a_second_latent_stage_refits_on_the_state_the_first_refit_left(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="latent_stages must be at least 1, got 0"):
        train_resolver(None, tmp_path / "x.txt", items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                       params=TINY_PARAMS, calibrate=False, latent="all", latent_stages=0)
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    for out, stages in ((one, 1), (two, 2)):
        train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS,
                       calibrate=False, latent="all", latent_stages=stages)
    assert Resolver.load(two).meta["latent_state"]["stages"] == 2
    # the second stage learned from other latent subjects: other trees
    assert one.read_text().partition("\n")[2] != two.read_text().partition("\n")[2]


def test_shadow_rewrites_reach_the_own_history_examples_and_the_model(tmp_path: Path,
                                                                      trained: tuple[Path, Any]) -> None:
    from turnscope.resolver._ranker import Shadow, shadow_rewrite

    with pytest.raises(ValueError, match="need own_histories"):
        train_resolver(None, tmp_path / "x.txt", items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                       params=TINY_PARAMS, calibrate=False, shadow=Shadow(0.5))
    path, _ = trained
    r = Resolver.load(path)
    items = _items()
    run = replayed({"fixture": items}, {0: r._booster}, {0: r._gate}, 1, r.max_carried, r.embedder,
                   r.nn_rewrites, (r.slot_threshold, r.threshold))["fixture"]
    _, results = run
    # low: the fixture's standalone questions (left as they were) still shortlist a phrase
    # the tiny gate scores a few hundredths
    floor = Shadow(0.03)
    shadows = [shadow_rewrite(it["follow_up"], res.query, latent_of_result(res), floor)
               for it, res in zip(items, results, strict=True)]
    assert any(s != res.query for s, res in zip(shadows, results, strict=True))
    assert session_items(run, own=True, latent=False, shadow=floor) == with_rewrites(items, shadows)
    out = tmp_path / "shadow.txt"
    train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS,
                   calibrate=False, own_histories=True, shadow=Shadow(0.5, slots_only=True))
    assert Resolver.load(out).shadow == Shadow(0.5, slots_only=True)
    assert Resolver.load(path).shadow is None and "shadow" not in Resolver.load(path).meta


# --- bagging: every ranker and gate the mean of several seeds ---


def test_a_bagged_model_averages_its_members_and_loads_as_a_bag(trained: tuple[Path, Any], tmp_path: Path) -> None:
    import lightgbm as lgb

    out = tmp_path / "bag.txt"
    train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS,
                   calibrate=False, bag=3)
    r = Resolver.load(out)
    assert r.meta["bag"] == 3
    assert isinstance(r._booster, Bag) and isinstance(r._gate, Bag)
    assert len(r._booster.members) == len(r._gate.members) == 3
    ranker_text, _, _ = out.read_text().partition("\n")[2].partition(GATE_SEPARATOR)
    members = [lgb.Booster(model_str=t) for t in ranker_text.split(BAG_SEPARATOR)]
    hist = [HistoryTurn(1, "user", "Who was Ada Lovelace?"),
            HistoryTurn(2, "assistant", "Ada Lovelace was a mathematician who wrote about the engine.")]
    cands, scores = r.score("What did she write?", hist)
    x = r._score("What did she write?", hist, None)[2]
    each = np.array([m.predict(x) for m in members])
    # the members differ (their seeds move the row and column sampling) and the bag is their mean
    assert not np.allclose(each[0], each[1])
    assert np.allclose(scores, each.mean(axis=0))
    assert cands[int(scores.argmax())].text == "Ada Lovelace"
    # a single model's file holds no bag separator and loads as one booster, as before
    single = trained[0].read_text()
    assert BAG_SEPARATOR not in single and "bag" not in Resolver.load(trained[0]).meta
    assert not isinstance(Resolver.load(trained[0])._booster, Bag)


def test_a_bag_of_one_is_the_single_model_and_none_is_refused(trained: tuple[Path, Any], tmp_path: Path) -> None:
    out = tmp_path / "one.txt"
    train_resolver(None, out, items={"fixture": _items()}, folds=3, rounds=40, seed=7, params=TINY_PARAMS, bag=1)
    assert out.read_text() == trained[0].read_text()
    with pytest.raises(ValueError, match="bag must be at least 1, got 0"):
        train_resolver(None, tmp_path / "x.txt", items={"fixture": _items()}, folds=3, rounds=40, seed=7,
                       params=TINY_PARAMS, bag=0)
    assert not (tmp_path / "x.txt").exists()
