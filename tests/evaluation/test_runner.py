"""run_eval: sessions per policy, term checks on rewrite and input, retrieval, summaries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from turnscope import Session
from turnscope._exceptions import ConfigError, InputError
from turnscope._items import FollowUpItem, rewrite_item
from turnscope.evaluation import (
    MEAN,
    EvalConfig,
    _runner,
    bundled_session_vocabulary,
    run_eval,
)
from turnscope.retrieval import Corpus


def _config(corpus: Corpus, *policies: str, **kw: Any) -> EvalConfig:
    return EvalConfig(policies=policies, retriever="bm25", corpus=corpus,
                      vocabulary=bundled_session_vocabulary(), resamples=200, **kw)


def test_run_eval_records_and_rows(mixed_items: list[FollowUpItem], tiny_corpus: Corpus) -> None:
    result = run_eval(mixed_items, _config(tiny_corpus, "default", "window:1"), progress=False,
                      dataset="tiny")
    assert result.policy_names == ["default", "window:1"]
    assert result.retriever == "bm25"
    default = result.policy("default")
    assert [r.id for r in default.records] == [i.id for i in mixed_items]
    # SPEC order for the strata, the mean last
    assert [row.stratum for row in default.rows] == ["standalone", "long_range", MEAN]
    lr = default.row("long_range")
    assert lr is not None and lr.n == 5 and lr.share == pytest.approx(5 / 7)
    mean = default.row(MEAN)
    assert mean is not None and mean.share == 1.0 and mean.n == 7
    for metric in ("R@1", "R@5", "R@10", "MRR", "contamination", "coverage",
                   "input_contamination", "input_coverage"):
        fig = default.figure(MEAN, metric)
        assert fig is not None and fig.low <= fig.value <= fig.high
    rec = default.records[0]
    assert rec.hits and rec.gold_rank == 1
    assert rec.backend == "embedded" and rec.scope_turns
    # the long-range antecedent sits four turns back: the default reaches it, window:1 not
    assert default.figure("long_range", "coverage").value == 1.0  # type: ignore[union-attr]
    w1 = result.policy("window:1")
    assert w1.figure("long_range", "input_coverage").value < 0.5  # type: ignore[union-attr]
    json.dumps(result.to_json())  # serialisable as is


def test_input_checks_see_the_evidence_not_the_rewrite(
        long_range_items: list[FollowUpItem], tiny_corpus: Corpus) -> None:
    result = run_eval(long_range_items, _config(tiny_corpus, "full"), progress=False)
    for rec in result.policy("full").records:
        # the whole transcript holds the digression about invoices
        assert rec.input_forbidden_hits
        assert rec.input_required_missing == ()


def test_history_only_skips_checks_on_first_turns(mixed_items: list[FollowUpItem],
                                                  tiny_corpus: Corpus) -> None:
    result = run_eval(mixed_items, _config(tiny_corpus, "default", history_only=True),
                      progress=False)
    p = result.policy("default")
    idx = [r.id for r in p.records].index("st_2")  # the item without a prefix
    assert p.scores["contamination"][idx] is None
    assert p.scores["R@5"][idx] is not None  # retrieval is still scored


def test_baselines_are_scored_beside_policies(mixed_items: list[FollowUpItem],
                                              tiny_corpus: Corpus) -> None:
    raw = [i.follow_up for i in mixed_items]
    result = run_eval(mixed_items, _config(tiny_corpus, "default"), baselines={"raw": raw},
                      progress=False)
    base = result.policy("baseline:raw")
    assert [r.query for r in base.records] == raw
    assert base.figure(MEAN, "input_coverage") is None  # no rewriter input for a baseline
    assert base.figure(MEAN, "R@5") is not None
    with pytest.raises(InputError, match="baseline 'raw' has 1 queries"):
        run_eval(mixed_items, _config(tiny_corpus, "default"), baselines={"raw": raw[:1]},
                 progress=False)


def test_a_failing_item_is_kept_as_a_failure(mixed_items: list[FollowUpItem],
                                             tiny_corpus: Corpus,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target = next(i for i in mixed_items if i.id == "lr_2").follow_up
    real = Session.user

    def flaky(self: Session, content: str, **kw: Any) -> Any:
        if content == target:
            raise RuntimeError("backend exploded")
        return real(self, content, **kw)

    monkeypatch.setattr(Session, "user", flaky)
    result = run_eval(mixed_items, _config(tiny_corpus, "default"), progress=False)
    recs = {r.id: r for r in result.policy("default").records}
    assert recs["lr_2"].error == "RuntimeError: backend exploded"
    assert recs["lr_2"].query == "" and recs["lr_2"].gold_rank is None
    assert recs["lr_1"].error is None
    assert any("raised an error" in n for n in result.notes)


def _turn_by_turn() -> list[FollowUpItem]:
    # written as TREC CAsT is: each item's prefix is the previous item's prefix and follow-up
    msgs = ["Who directed the film Parasite?", "How old is he?", "What else did he direct?",
            "Which of those won an award?", "Tell me about the Palme d'Or."]
    return [FollowUpItem(id=f"t{k}", lang="en", follow_up=m,
                         prefix=[{"role": "user", "content": p} for p in msgs[:k]])
            for k, m in enumerate(msgs)]


def test_items_written_turn_by_turn_share_a_session_with_the_same_rewrites(
        tiny_corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _turn_by_turn()
    made: list[int] = []
    real_init = Session.__init__

    def counting_init(self: Session, *a: Any, **kw: Any) -> None:
        made.append(1)
        real_init(self, *a, **kw)

    monkeypatch.setattr(Session, "__init__", counting_init)
    chained = run_eval(items, _config(tiny_corpus, "default"), progress=False)
    assert len(made) == 1  # one fresh session for the five items; the rest are forks of it
    alone = [rewrite_item(i, lambda: Session(policy="default")) for i in items]
    assert [r.query for r in chained.policy("default").records] == [r.query for r in alone]
    assert [r.scope_turns for r in chained.policy("default").records] == \
        [tuple(r.scope.turns) for r in alone]


def test_a_backend_rewriter_sees_every_item_alone(tiny_corpus: Corpus) -> None:
    # a backend is called once per item, with that item's follow-up; the prefix goes to the
    # embedded rewriter, so each record is what rewrite_item gives for the item on its own
    seen: list[str] = []

    class Failing:
        name = "failing"

        def run(self, request: Any) -> Any:
            seen.append(request.message.text)
            raise RuntimeError("no backend here")  # the session falls back to the embedded path

    items = _turn_by_turn()
    result = run_eval(items, _config(tiny_corpus, "default"), rewriter=Failing(), progress=False)
    assert seen == [i.follow_up for i in items]
    alone = [rewrite_item(i, lambda: Session(policy="default", rewriter=Failing())) for i in items]
    assert [r.query for r in result.policy("default").records] == [r.query for r in alone]
    assert all(r.fallback for r in result.policy("default").records)


def test_gold_missing_from_the_corpus_is_noted(tiny_corpus: Corpus) -> None:
    item = FollowUpItem(id="x", lang="en", follow_up="When are invoices issued?",
                        gold=["no/such#passage"], reference_type="standalone")
    result = run_eval([item], _config(tiny_corpus, "default"), progress=False)
    assert any("no/such#passage" in n for n in result.notes)


def test_items_pick_the_bundled_corpus_of_their_language() -> None:
    items = [
        FollowUpItem(id="en", lang="en", follow_up="Is the billing export API paginated?",
                     gold=["x"]),
        FollowUpItem(id="ja", lang="ja", follow_up="アバター案内の料金は？", gold=["y"]),
    ]
    r = _runner._Retrievers(EvalConfig(retriever="bm25"))
    assert [r.corpus_key(i) for i in items] == ["cloud_docs", "ja_site"]
    with pytest.raises(ConfigError, match="no bundled corpus for language 'fr'"):
        r.corpus_key(FollowUpItem(id="fr", lang="fr", follow_up="Bonjour ?", gold=["z"]))


def test_no_gold_means_no_retrieval(tiny_corpus: Corpus) -> None:
    item = FollowUpItem.model_validate({
        "id": "x", "lang": "en", "follow_up": "what about its symptoms?",
        "required_in_rewrite": ["cancer"], "reference_type": "immediate",
        "prefix": [{"role": "user", "content": "what is throat cancer?"}]})
    result = run_eval([item], EvalConfig(retriever="bm25", resamples=50), progress=False)
    assert result.retriever is None
    assert result.policy("default").figure(MEAN, "R@5") is None
    assert result.policy("default").figure(MEAN, "coverage") is not None


@pytest.mark.parametrize("kwargs, match", [
    ({"policies": ()}, "at least one policy"),
    ({"policies": ("default", "default")}, "named twice"),
    ({"policies": ("widnow:2",)}, "unknown policy"),
    ({"retriever": "splade"}, "unknown retriever 'splade'; valid: bm25, dense, hybrid"),
    ({"metrics": ("nDCG@10",)}, "unknown metric"),
])
def test_config_validation(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        EvalConfig(**kwargs)


def test_no_items_is_an_error() -> None:
    with pytest.raises(InputError, match="no follow-up items"):
        run_eval([], progress=False)
