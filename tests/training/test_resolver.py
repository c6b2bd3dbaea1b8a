"""Training the resolver (turnscope.training.resolver) on a small fixture: the pipeline runs end to
end, is deterministic, and learns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from turnscope.datasets._cast import _convert, _Turn
from turnscope.resolver import HistoryTurn, Resolver
from turnscope.resolver._ranker import FEATURES, GATE_EXTRA, GATE_SEPARATOR
from turnscope.training.calibration import CALIBRATION_PAIRS, CALIBRATION_SEEDS, conversation_of, fold_of
from turnscope.training.resolver import train_resolver

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


def test_the_model_names_the_columns_it_reads_and_nothing_it_does_not(trained: tuple[Path, Any]) -> None:
    path, _ = trained
    meta = Resolver.load(path).meta
    assert meta["features"] == list(FEATURES)
    assert meta["gate_extra"] == list(GATE_EXTRA)
    assert meta["nn_reads_rewrites"] is True
    # the ranker's trees, then the gate's, one model each
    body = path.read_text().partition("\n")[2]
    assert body.count(GATE_SEPARATOR) == 1
    # no header key of the experiments that never shipped (stacking, own histories, the
    # latent subject, shadow rewrites, gate set weights, bagging)
    assert not {"fold_taggers", "own_histories", "latent_state", "shadow", "gate_set_weights", "bag"} & set(meta)


def test_a_conversation_keeps_its_fold_across_runs() -> None:
    # md5 of the id, not Python's salted hash(): the same fold in every process
    assert [fold_of(f"conv-{k}", 5) for k in range(6)] == [fold_of(f"conv-{k}", 5) for k in range(6)]
    assert {fold_of(f"conv-{k}", 5) for k in range(50)} == set(range(5))
    assert conversation_of({"id": "c_2", "conversation": "c"}) == "c"
    assert conversation_of({"id": "c_2"}) == "c_2"
