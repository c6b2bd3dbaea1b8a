"""Shared fixtures for the evaluation harness: a tiny corpus and hand-written items.

The long-range items put the antecedent four turns back (a list, then a two-exchange
digression, then "the third one"): a one-turn window cannot reach it, the default
policy's live enumeration does.
"""

from __future__ import annotations

from typing import Any

import pytest

from turnscope._items import FollowUpItem
from turnscope.evaluation import (
    DEFAULT_METRICS,
    EvalResult,
    ItemRecord,
    PolicyResult,
    score_records,
    summarize,
)
from turnscope.retrieval import Corpus, Passage


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


DIGRESSION = [
    u("quick unrelated one: when are invoices issued?"),
    a("Invoices are issued on the 3rd of each month for the previous calendar month."),
    u("and how long do we have to pay them?"),
    a("Payment is due within 30 days of the invoice date."),
]
NO_INVOICES = ["invoice", "invoices"]

LONG_RANGE: list[dict[str, Any]] = [
    {"id": "lr_1", "lang": "en", "reference_type": "long_range",
     "prefix": [u("list the asia pacific regions with their codes"),
                a("Nimbus Cloud has three Asia Pacific regions: Tokyo (ap-northeast-1), "
                  "Singapore (ap-southeast-1) and Sydney (ap-southeast-2)."), *DIGRESSION],
     "follow_up": "right. the third region, what's its DR pair?",
     "gold": ["regions/sydney#dr"], "required_in_rewrite": [["Sydney", "ap-southeast-2"]],
     "forbidden_in_rewrite": NO_INVOICES},
    {"id": "lr_2", "lang": "en", "reference_type": "long_range",
     "prefix": [u("how can we lower our compute bill?"),
                a("Three options: 1) committed use discounts of up to 45%; 2) spot instances, "
                  "which are up to 70% cheaper but can be reclaimed; 3) rightsizing idle "
                  "machines."), *DIGRESSION],
     "follow_up": "ok. the second option, how much notice do we get before a reclaim?",
     "gold": ["compute/spot#reclaim"],
     "required_in_rewrite": [["spot instance", "spot instances", "spot"]],
     "forbidden_in_rewrite": NO_INVOICES},
    {"id": "lr_3", "lang": "en", "reference_type": "long_range",
     "prefix": [u("which eu regions support customer-managed keys?"),
                a("Customer-managed keys are available in Frankfurt (eu-central-1) and Dublin "
                  "(eu-west-1)."), *DIGRESSION],
     "follow_up": "thanks. what's the uptime SLA of the second one?",
     "gold": ["regions/dublin#sla"], "required_in_rewrite": [["Dublin", "eu-west-1"]],
     "forbidden_in_rewrite": NO_INVOICES},
    {"id": "lr_4", "lang": "en", "reference_type": "long_range",
     "prefix": [u("we're setting up VPC peering between frankfurt and virginia, is that "
                  "supported?"),
                a("Yes. VPC peering works between any two regions, including Frankfurt "
                  "(eu-central-1) and Virginia (us-east-1)."), *DIGRESSION],
     "follow_up": "back to the peering — who has to accept it on the virginia side?",
     "gold": ["networking/peering#accept"], "required_in_rewrite": [["peering", "VPC peering"]],
     "forbidden_in_rewrite": NO_INVOICES},
    {"id": "lr_5", "lang": "en", "reference_type": "long_range",
     "prefix": [u("list the eu regions with codes please"),
                a("Nimbus Cloud has four European regions: Frankfurt (eu-central-1), Dublin "
                  "(eu-west-1), London (eu-west-2) and Paris (eu-west-3)."), *DIGRESSION],
     "follow_up": "ok, and the fourth region, what is its RPO?",
     "gold": ["regions/paris#dr"], "required_in_rewrite": [["Paris", "eu-west-3"]],
     "forbidden_in_rewrite": NO_INVOICES},
]

STANDALONE: list[dict[str, Any]] = [
    {"id": "st_1", "lang": "en", "reference_type": "standalone",
     "prefix": [u("which eu regions support customer-managed keys?"),
                a("Customer-managed keys are available in Frankfurt (eu-central-1) and Dublin "
                  "(eu-west-1).")],
     "follow_up": "How much notice do spot instances get before a reclaim?",
     "gold": ["compute/spot#reclaim"], "required_in_rewrite": ["spot"],
     "forbidden_in_rewrite": ["Frankfurt", "Dublin"]},
    {"id": "st_2", "lang": "en", "reference_type": "standalone", "prefix": [],
     "follow_up": "When are invoices issued?",
     "gold": ["billing/invoices#dates"], "required_in_rewrite": ["invoices"],
     "forbidden_in_rewrite": []},
]

PASSAGES = [
    Passage("regions/sydney#dr", "Sydney (ap-southeast-2) is paired with Singapore for disaster "
            "recovery. RPO 15 minutes.", "Sydney region"),
    Passage("regions/tokyo#dr", "Tokyo (ap-northeast-1) is paired with Osaka for disaster "
            "recovery. RPO 15 minutes.", "Tokyo region"),
    Passage("regions/singapore#dr", "Singapore (ap-southeast-1) is paired with Sydney for "
            "disaster recovery.", "Singapore region"),
    Passage("compute/spot#reclaim", "Spot instances receive a two-minute notice before they are "
            "reclaimed.", "Spot instances"),
    Passage("compute/cud#overview", "Committed use discounts give up to 45% off for a "
            "three-year commitment.", "Committed use discounts"),
    Passage("regions/dublin#sla", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime "
            "SLA.", "Dublin region"),
    Passage("regions/frankfurt#sla", "Frankfurt (eu-central-1) is covered by the 99.99% monthly "
            "uptime SLA.", "Frankfurt region"),
    Passage("networking/peering#accept", "A VPC peering request must be accepted by an account "
            "with the network admin role in the accepter region.", "VPC peering"),
    Passage("regions/paris#dr", "Paris (eu-west-3) replicates to Frankfurt; the documented RPO "
            "is 30 minutes.", "Paris region"),
    Passage("regions/london#dr", "London (eu-west-2) replicates to Dublin; the documented RPO is "
            "15 minutes.", "London region"),
    Passage("billing/invoices#dates", "Invoices are issued on the 3rd of each month; payment is "
            "due within 30 days.", "Invoices"),
    Passage("billing/invoices#payment", "Invoices can be paid by card or bank transfer within 30 "
            "days.", "Invoice payment"),
]

#: a gate on the long-range stratum alone (the test items carry no other that it names)
LONG_RANGE_GATE = """
[floors.long_range]
"R@1" = 0.8
coverage = 0.8

[ceilings.long_range]
contamination = 0.2
"""


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    # retrieval indexes are cached on disk; never touch the developer's real cache
    monkeypatch.setenv("TURNSCOPE_CACHE", str(tmp_path_factory.mktemp("ts-cache")))


@pytest.fixture
def tiny_corpus() -> Corpus:
    return Corpus(PASSAGES, name="tiny")


@pytest.fixture
def long_range_items() -> list[FollowUpItem]:
    return [FollowUpItem.model_validate(d) for d in LONG_RANGE]


@pytest.fixture
def mixed_items() -> list[FollowUpItem]:
    return [FollowUpItem.model_validate(d) for d in LONG_RANGE + STANDALONE]


def result_from(policies: dict[str, list[ItemRecord]], metrics: tuple[str, ...] = DEFAULT_METRICS,
                ) -> EvalResult:
    """An EvalResult built from hand-made records (no sessions, no retrieval)."""
    out = []
    for name, records in policies.items():
        scores = {m: tuple(v) for m, v in score_records(records, metrics).items()}
        out.append(PolicyResult(name, tuple(records), scores,
                                summarize(records, scores, resamples=200)))
    return EvalResult("hand-made", "embedded", "bm25", metrics, tuple(out))


def record(id: str, stratum: str, policy: str, **kw: Any) -> ItemRecord:
    kw.setdefault("follow_up", "and the second one?")
    kw.setdefault("query", "uptime SLA Dublin")
    return ItemRecord(id=id, stratum=stratum, lang="en", policy=policy, **kw)


# helpers as fixtures: test modules here are not a package, so they cannot import this file

@pytest.fixture(scope="session")
def make_result() -> Any:
    return result_from


@pytest.fixture(scope="session")
def make_record() -> Any:
    return record


@pytest.fixture
def long_range_gate() -> str:
    return LONG_RANGE_GATE


@pytest.fixture
def item_dicts() -> list[dict[str, Any]]:
    return LONG_RANGE + STANDALONE
