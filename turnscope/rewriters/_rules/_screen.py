"""Screen deixis: "this page" / 「このページ」 read the screen, "this site" the site.
"""

from __future__ import annotations

import re

from turnscope.references import SITE_EN, SITE_JA, ReferenceClass
from turnscope.rewriters._rules._base import Rewrite, Route, TurnContext
from turnscope.scope import Scope

_EN_PAGE = re.compile(r"\b(?:this|current)\s+(?:page|article|doc|screen|section)\b(?![\w-])|"
                      r"\bthe\s+(?:page|article)(?=\s+(?:i'?m|i\s+am|you'?re)\b)", re.IGNORECASE)
_JA_PAGE = re.compile(r"(?:この|今の|今見ている|表示中の|こちらの)(?:ページ|画面|記事)")
_EN_PROXIMAL = re.compile(r"\b(?:this|these)\b(?!\s+(?:page|site|article)\b)", re.IGNORECASE)
_JA_PROXIMAL_NP = re.compile(r"この(?=[\u30a0-\u30ffー\u4e00-\u9fffA-Za-z])")
_JA_PROXIMAL = re.compile(r"これ|ここ|こちら")


# what a page's title says besides its subject: the site after a bar (a dash as often
# joins the subject's own parts: 「マニュアル — 画面連動」), a closing
# 「商品ページ」 or 「ページ」
_TITLE_SITE = re.compile(r"\s*[|｜].*$")
_TITLE_PAGE = re.compile(r"\s*(?:の)?(?:商品|製品)?(?:ページ|詳細)$")
_JA_PAGE_THING = re.compile(_JA_PAGE.pattern + r"(?:の|で紹介している|に載っている)(?:商品|製品)")


def page_subject(title: str) -> str:
    """The subject a page's title names, without the site or a closing 「商品ページ」.

    >>> page_subject("ワイヤレスイヤホン AirSound Pro 3 商品ページ")
    'ワイヤレスイヤホン AirSound Pro 3'
    >>> page_subject("配送・送料について | ソラネオ公式ストア")
    '配送・送料について'
    """
    subject = _TITLE_PAGE.sub("", _TITLE_SITE.sub("", title)).strip()
    return subject or title


def situational(text: str, lang: str, scope: Scope, cls: ReferenceClass) -> str | None:
    screen = scope.screen
    if screen is None or screen.is_empty():
        return None
    if cls is ReferenceClass.SITE:
        site = screen.site or screen.page_url or ""
        if not site:
            return None
        pat = SITE_JA if lang == "ja" else SITE_EN
        site_rep = f"{site}のサイト" if lang == "ja" else f"the {site} site"
        # replacements are functions: a backslash in user text is literal, not a template
        return pat.sub(lambda _m: site_rep, text, count=1)
    title = screen.page_title or screen.page_url or ""
    if not title:
        return None
    if lang == "ja":
        # 「このページの商品の値段は？」: the page is about its subject, which the query names
        # as the subject (「…」のページ would make the page, not the product, the focus)
        subject = page_subject(title)
        out, n = _JA_PAGE_THING.subn(lambda _m: subject, text, count=1)
        if not n:
            out, n = _JA_PAGE.subn(lambda _m: f"「{subject}」", text, count=1)
        if n:
            return out
    pat = _JA_PAGE if lang == "ja" else _EN_PAGE
    rep = f"「{title}」のページ" if lang == "ja" else f"the page \"{title}\""
    out, n = pat.subn(lambda _m: rep, text, count=1)
    if n:
        return out
    # a proximal demonstrative for what is on screen: "is this available in London?"
    if lang == "ja":
        out, n = _JA_PROXIMAL_NP.subn(lambda _m: f"「{title}」の", text, count=1)
        if not n:
            out, n = _JA_PROXIMAL.subn(lambda _m: f"「{title}」", text, count=1)
        return out if n else None
    out, n = _EN_PROXIMAL.subn(lambda _m: title, text, count=1)
    return out if n else None


class ScreenDeixis:
    """"this page" / 「このページ」 read the screen, "this site" the site; with nothing on
    the screen to read, the message is answered as an immediate reference."""

    name = "screen"
    route: Route | None = None

    def apply(self, turn: TurnContext) -> Rewrite | None:
        cls = turn.c.reference_class
        if cls not in (ReferenceClass.PAGE, ReferenceClass.SITE):
            return None
        new = situational(turn.text, turn.lang, turn.scope, cls)
        if new is None:
            return Rewrite(turn.text, ("screen-missing",), screen_missing=True)
        return Rewrite(new, (f"screen:{cls.value}",))
