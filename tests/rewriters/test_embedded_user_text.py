"""User text (screen titles, sites, entity names) is inserted literally into the query.

The embedded rewriter used to pass user text as a ``re.sub`` replacement template, so a
backslash crashed the turn ("bad escape \\P") or turned ``\\n`` into a newline.
"""

from __future__ import annotations

import pytest

from turnscope import Session
from turnscope.entities import Vocabulary

TRICKY = [r"C:\Program Files", r"a\nb", r"x\g<0>y", "back\\"]


@pytest.mark.parametrize("title", TRICKY)
@pytest.mark.parametrize("message", ["what's on this page?", "is this available in London?",
                                     "このページの料金は？", "これの料金は？"])
def test_page_title_with_backslashes_is_literal(title: str, message: str) -> None:
    res = Session(resolver=None).user(message, screen={"page_title": title})
    assert title in res.query
    assert "\n" not in res.query


@pytest.mark.parametrize("site", TRICKY)
def test_site_with_backslashes_is_literal(site: str) -> None:
    res = Session(resolver=None).user("what is this site about?", screen={"site": site})
    assert f"the {site} site" in res.query


def test_japanese_pronoun_replaced_by_name_with_backslashes() -> None:
    name = "C:\\Tools\\nimbus"
    vocab = Vocabulary.from_dict({"subject_types": ["product"],
                                  "types": {"product": [{"name": name, "aliases": []}]}})
    s = Session(vocabulary=vocab, resolver=None)
    s.user(f"{name}の料金は？")
    s.assistant(f"{name}は月額1000円です。")
    res = s.user("それはWindowsで動く？")
    assert res.query == f"{name}はWindowsで動く？"
