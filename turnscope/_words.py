"""Content words of English text (docs/benchmarks.md).

A content word is a token ``[A-Za-z0-9][A-Za-z0-9-]*`` longer than two
characters, lower-cased, not a stop word, with light plural stemming. The
public benchmarks are converted into required/forbidden terms with these, so
the rules are deliberately simple and fixed: changing them changes every
published figure.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOP_WORDS", "TOKEN_RE", "content_words", "is_content", "stem", "tokens"]

#: a word token as docs/benchmarks.md defines it (length and stop words are checked separately)
TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")

# A common English stop-word list, written for this project. Its core is the
# usual function-word lists (articles, pronouns, prepositions, conjunctions,
# auxiliaries and modals, wh-words, quantifiers, frequent adverbs, as in the
# SMART / NLTK lists); on top come words that are frequent in *questions* to a
# search system but never name what is being asked about: request verbs
# ("tell", "know", "explain", "describe"), generic nouns ("kind", "type" stay
# content words, but "thing", "way", "lot" do not), small number words and
# ordinals (they point at list positions, "the second one", not at topics) and
# discourse fillers ("okay", "please"). Words of one or two letters are
# omitted: the length rule already drops them. Only lower-case forms; the check
# runs on lower-cased tokens and on their stems ("others" is caught as "other").
_STOP_TEXT = """
    able about above across actually after afterwards again against ago all almost
    alone along already also although always among amongst and another any anybody
    anyhow anymore anyone anything anyway anywhere are aren around aside ask asked
    asking away back because become becomes becoming been before beforehand behind
    being below beside besides best better between beyond both but can cannot cant
    compare could couldn describe describes did didn difference differences discuss
    does doesn doing don done down during each eight either else elsewhere enough
    especially etc even ever every everybody everyone everything everywhere except
    explain far few find first five for former formerly four from further
    furthermore get gets getting give given gives giving goes going gone gonna good
    got gotten had hadn has hasn have haven having hello hence her here hereafter
    hereby herein hers herself hey him himself his hmm how however instead into isn
    its itself just keep kept knew know known knows last later latter least less let
    lets like likely list lists lot lots made mainly make makes making many may
    maybe mean means meant meanwhile mention mentioned might mine more moreover most
    mostly much must mustn myself namely near nearly need needs neither never
    nevertheless next nine nobody none noone nor not nothing now nowhere off often
    okay once one ones only onto other others otherwise ought our ours ourselves out
    over own particular per perhaps please possible probably put quite rather really
    regarding said same say saying says second see seem seemed seeming seems seen
    seven several shall shan she should shouldn show shown shows since six some
    somebody somehow someone something sometime sometimes somewhat somewhere
    specific specifically still such sure take taken takes tell telling tells ten
    than thank thanks that thats the their theirs them themselves then thence there
    thereafter thereby therefore therein thereof thereupon these they thing things
    think third this those though three through throughout thru thus together too
    toward towards try trying two under unless until upon use used uses using
    usually various very via wanna want wants was wasn way ways well went were weren
    what whatever when whence whenever where whereafter whereas whereby wherein
    whereupon wherever whether which while whither who whoever whole whom whose why
    will with within without won would wouldn wow yeah yes yet you your yours
    yourself yourselves
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())


def stem(word: str) -> str:
    """Light plural stemming, exactly the docs/benchmarks.md rules.

    ``-ies`` -> ``-y``; ``-sses/-xes/-zes/-ches/-shes`` lose ``-es``; otherwise a
    final ``-s`` is dropped unless the word ends in ``ss``, ``us`` or ``is``.

    >>> [stem(w) for w in ["companies", "classes", "boxes", "sharks", "virus", "analysis"]]
    ['company', 'class', 'box', 'shark', 'virus', 'analysis']
    """
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_content(word: str) -> bool:
    """True when the lower-cased token ``word`` is a content word (long enough, not a stop word).

    >>> is_content("sharks"), is_content("others"), is_content("tell")
    (True, False, False)
    """
    return len(word) > 2 and word not in STOP_WORDS and stem(word) not in STOP_WORDS


def tokens(text: str) -> list[tuple[str, str]]:
    """``(surface, stem)`` pairs of the content words of ``text``, in order.

    ``surface`` is the lower-cased token as written; ``stem`` its stemmed form.
    Use it when the surface form matters (matching needs a form that occurs in
    text; the stem may not be a word, e.g. "gases" -> "gase").

    >>> tokens("Tell me about Mako sharks.")
    [('mako', 'mako'), ('sharks', 'shark')]
    """
    # NFKC first so full-width Latin letters and digits tokenise like ASCII.
    text = unicodedata.normalize("NFKC", text)
    out: list[tuple[str, str]] = []
    for match in TOKEN_RE.finditer(text):
        word = match.group().lower()
        if is_content(word):
            out.append((word, stem(word)))
    return out


def content_words(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order of occurrence (repeats kept).

    >>> content_words("What are the main types of sharks? Are sharks endangered?")
    ['main', 'type', 'shark', 'shark', 'endangered']
    """
    return [stemmed for _, stemmed in tokens(text)]
