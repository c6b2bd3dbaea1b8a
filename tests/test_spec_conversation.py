"""SPEC section 1, end to end: the scoped default resolves and does not contaminate;
``full`` and ``window`` reproduce their documented failures."""

from __future__ import annotations

import pytest

from turnscope import Session, bundled_vocabulary
from turnscope.evaluation import check_terms

SPEC_CONVERSATION = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
    ("user", "And the RPO for Dublin?"),
    ("assistant", "The documented RPO for Dublin is 15 minutes."),
    ("user", "ok different question — is the billing export API paginated?"),
]
STALE = ["Dublin", "eu-west-1", "SLA", "encryption"]


def run(policy: str, vocab: bool = True) -> dict[int, str]:
    s = Session(policy=policy, vocabulary=bundled_vocabulary("cloud") if vocab else None)
    out = {}
    for i, (role, text) in enumerate(SPEC_CONVERSATION, start=1):
        r = s.add(role, text)
        if r is not None:
            out[i] = r.query
    return out


@pytest.mark.parametrize("vocab", [True, False])
def test_default_resolves_ordinal_and_drops_old_subject(vocab: bool) -> None:
    q = run("default", vocab)
    assert "Dublin" in q[3] and "second one" not in q[3]
    check = check_terms(q[7], ["billing export"], STALE)
    assert check.covered and not check.contaminated, q[7]


@pytest.mark.parametrize("policy", ["full", "window:2"])
def test_unscoped_policies_contaminate_after_the_pivot_without_pivot_cue(policy: str) -> None:
    # without the explicit "different question" cue only the scope can keep Dublin out
    s = Session(policy=policy, vocabulary=bundled_vocabulary("cloud"))
    for role, text in SPEC_CONVERSATION[:-1]:
        s.add(role, text)
    r = s.user("is the billing export API paginated?")
    assert check_terms(r.query, [], STALE).contaminated, r.query
    s2 = Session(policy="default", vocabulary=bundled_vocabulary("cloud"))
    for role, text in SPEC_CONVERSATION[:-1]:
        s2.add(role, text)
    r2 = s2.user("is the billing export API paginated?")
    assert not check_terms(r2.query, [], STALE).contaminated, r2.query


LONG_RANGE = [
    ("user", "Which regions support customer-managed keys?"),
    ("assistant", "Customer-managed keys are supported in Frankfurt, Dublin and Paris."),
    ("user", "What's the RPO for Frankfurt?"),
    ("assistant", "Frankfurt has an RPO of 15 minutes."),
    ("user", "unrelated: how do I rotate an API token?"),
    ("assistant", "API tokens are rotated from the console under Security."),
    ("user", "and do tokens expire?"),
    ("assistant", "Tokens expire after 90 days unless renewed."),
]


def test_window_loses_a_long_range_ordinal_that_default_resolves() -> None:
    outs = {}
    for policy in ("window:2", "default"):
        s = Session(policy=policy, vocabulary=bundled_vocabulary("cloud"))
        for role, text in LONG_RANGE:
            s.add(role, text)
        outs[policy] = s.user("ok back to the regions, what's the RPO for the third one?").query
    assert "Paris" in outs["default"], outs
    assert "Paris" not in outs["window:2"], outs
