"""Words and terms: the closed-class lists the offline extractor and the reference
classifier read, the content words the benchmarks and the resolver count, and the one test
of whether a text contains a term.

In reading order: the closed classes (determiners, pronouns, prepositions, auxiliaries,
conjunctions, wh-words, frequent verbs and adverbs) with the small word tests built on
them, then content words (:data:`STOP_WORDS`, :func:`stem`, :func:`tokens`,
:func:`content_words`), whose rules docs/benchmarks.md fixes, then term matching
(:func:`contains_term`, :func:`check_terms`: what coverage and contamination count).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from turnscope._exceptions import InputError

# Closed classes ------------------------------------------------------------------------
# Closed-class word lists used by the offline extractor and the reference classifier.
#
# English needs no tagger for what we ask of it: noun phrases are the runs of
# words that are *not* function words or common verbs, which is how a reader
# finds them too. The lists below are the closed classes of English grammar
# (determiners, pronouns, prepositions, auxiliaries, conjunctions, wh-words) plus
# the most frequent verbs and adverbs of questions and requests.

DETERMINERS = frozenset(
    "a an the this that these those my your our their his her its some any each every "
    "no another other such which what whose all both either neither few many much more most "
    "several".split()
)

PRONOUNS = frozenset(
    "i me you we us they them he him she her it its itself themselves myself yourself ourselves "
    "one ones mine yours ours theirs someone something anything everything nothing anyone "
    "everyone there here".split()
)

#: pronouns that point back to something said before (anaphors)
ANAPHORS = frozenset("it its itself they them their theirs he him his she her".split())
#: words that point (demonstratives); "this page" is situational, "that" usually textual
DEMONSTRATIVES = frozenset("this that these those".split())

PREPOSITIONS = frozenset(
    "about above across after against along among around as at before behind below beneath "
    "beside between beyond by despite down during except for from in inside into like near of "
    "off on onto out outside over past per since than through throughout till to toward towards "
    "under until up upon via with within without vs versus".split()
)

AUXILIARIES = frozenset(
    "am is are was were be been being do does did done doing have has had having can could "
    "will would shall should may might must ought isn't aren't wasn't weren't don't doesn't "
    "didn't haven't hasn't hadn't can't cannot couldn't won't wouldn't shouldn't it's that's "
    "what's whats where's there's how's who's let's i'm you're we're they're i've you've "
    "we've they've i'd you'd i'll you'll".split()
)

CONJUNCTIONS = frozenset("and or but nor so yet if then because while whereas although though "
                         "unless whether also plus".split())

WH_WORDS = frozenset("what which who whom whose when where why how".split())

ADVERBS = frozenset(
    "not also just only really very quite too again still already even ever never always "
    "usually often sometimes currently now then there here actually basically maybe perhaps "
    "please ok okay hmm hm um uh yes no yeah well anyway instead exactly specifically wow oh ah "
    "huh aha oops yikes "
    "generally typically else further more less most least much many enough rather pretty "
    "thanks thank earlier before previously later back different differently same other "
    "overall approximately roughly about around first second third last next away apart "
    "together".split()
)

_VERB_BASES = (
    "ask be become begin bring build buy call can cause change check choose come compare "
    "connect consider contain cost cover create cut deal decide define delete depend describe "
    "determine differ do drive eat enable end explain fail feel find fit fix follow forget get "
    "give go grow happen have hear help hold include increase involve keep kill know last "
    "lead learn leave let like list live look lose make mean meet mention move need offer "
    "open pay play prefer prevent protect provide put reach read recommend reduce remember "
    "remove replace require run say see seem sell send set show spread start stay stop suggest "
    "support take talk tell tend think treat try turn understand use want work worry write "
    "apply affect allow get set break return rotate restore enable disable export import "
    "paginate store migrate encrypt scale upgrade downgrade charge bill "
    "survive die win beat invent discover born founded located situated happen occur "
    "attract absorb accept achieve act add admit adopt advise agree aim announce answer appear "
    "approve argue arrange arrive attack attempt attend avoid base bear behave believe belong "
    "benefit blame block boil borrow bother breathe burn calculate care carry catch celebrate "
    "claim clean climb close collect combine commit communicate compete complain complete "
    "concern confirm contact continue contribute control convert cook copy correct count "
    "crash cross cry damage dance deliver demand deny deploy design destroy develop die dig "
    "disappear discuss display divide draw dress drink drop earn edit educate eliminate "
    "emerge employ encourage enjoy ensure enter escape establish evaluate evolve exist expand "
    "expect experience explore express extend face fall feed fight fill finish fly focus fold "
    "force form found freeze gain gather generate grab graduate guess handle hang hate heal "
    "hide hit hope hunt hurt identify ignore imagine implement imply improve indicate "
    "influence inform inherit injure install intend introduce invest invite join judge jump "
    "kick kiss knock lack land laugh lay lie lift limit link listen load locate lock log "
    "manage mark marry match matter measure melt mix monitor name note notice obtain operate "
    "order organize own pack participate pass perform permit pick place plan plant point "
    "pour practice pray predict prepare present press pretend print produce promise promote "
    "propose prove publish pull punish purchase push qualify raise rank rate reach react "
    "realize receive recognize record recover refer reflect refuse regard register reject "
    "relate relax release rely remain rent repair repeat report represent request rescue "
    "research resist resolve respond rest retire reveal review ride ring rise risk roll rule "
    "rush save score search seek select separate serve settle shake share shift shoot shop "
    "shout shut sign sing sink sit sleep slide smell smile solve sound speak spend split "
    "spot stand state steal step stick strike study submit succeed suffer supply suppose "
    "surround suspect swim switch teach tear test thank throw tie touch track trade train "
    "transfer transform translate travel trust type undergo unite update urge value visit "
    "vote wait wake walk warn wash watch wear weigh welcome wish wonder worry yield "
    "acquit abolish elect vote pledge treat cure diagnose prescribe spread migrate hibernate "
    "mate hunt breed graze swim nest erupt flood orbit rotate expire renew revoke retain "
    "replicate promote provision accept reject trigger invoice"
).split()


_CORE_VERBS = frozenset(
    "ask be become begin bring build buy call can cause change check choose come compare "
    "connect consider contain cost cover create cut deal decide define delete depend describe "
    "determine differ do drive eat enable end explain fail feel find fit fix follow forget get "
    "give go grow happen have hear help hold include increase involve keep kill know last "
    "lead learn leave let like list live look lose make mean meet mention move need offer "
    "open pay play prefer prevent protect provide put reach read recommend reduce remember "
    "remove replace require run say see seem sell send set show spread start stay stop "
    "suggest support take talk tell tend think treat try turn understand use want work worry "
    "write apply affect allow return rotate restore disable export import paginate store "
    "migrate encrypt scale upgrade downgrade charge bill".split()
)


def _inflect(base: str) -> set[str]:
    forms = {base}
    if base.endswith("e"):
        forms |= {base + "s", base + "d", base[:-1] + "ing"}
    elif base.endswith("y") and base[-2:-1] not in set("aeiou"):
        forms |= {base[:-1] + "ies", base[:-1] + "ied", base + "ing"}
    else:
        forms |= {base + "s", base + "ed", base + "ing", base + "es"}
        # consonant doubling after a short stressed vowel: stop -> stopped, stopping
        if len(base) >= 3 and base[-1] not in "aeiouwxy" and base[-2] in "aeiou" \
                and base[-3] not in "aeiou":
            forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


_IRREGULAR = (
    "was were been is are am did done does had has made said went gone got gotten took taken "
    "came gave given knew known thought told found left kept felt brought bought built began "
    "begun chose chosen ate eaten grew grown heard held led lost meant met paid put ran read "
    "saw seen sold sent set shown spread stood stuck taught understood wrote written won fell "
    "fallen broke broken drove driven"
).split()

#: words that are at least as often nouns as verbs ("the rate limit", "a test"): not verbs here
_NOUNISH = frozenset(
    "limit plan rate test order name record point value type form state step sign spot rest "
    "report request review search share shift switch trade train transfer update visit vote "
    "watch wish load lock log mark match matter measure monitor note place plant practice "
    "press print promise rank release rent repair research ride ring rise risk roll rule rush "
    "save score sound split stand study supply track travel trust walk wait yield attack "
    "benefit block care claim contact control copy count crash cross damage dance demand "
    "design display drink drop edit experience face fall fight focus fold force freeze guess "
    "handle hit hope hunt hurt jump kick kiss knock lack land laugh lay lie lift link mix own "
    "pack pass pick pull push reach smell smile slide sleep sink shop shout shoot treat cure "
    "nest flood orbit mate breed influence answer attempt base bear blame cook dress export "
    "import backup store charge bill scale start end work use cost change support need "
    "offer run set show turn check call cut deal fix help list move play return stay stop "
    "talk try view access limit display upgrade".split()
)

VERBS = frozenset({f for b in _VERB_BASES if b not in _NOUNISH or b in _CORE_VERBS
                   for f in _inflect(b)} | set(_IRREGULAR))

#: noun-or-verb bases ("save", "cook", "shift"): a verb only where the syntax wants one,
#: right after a subject pronoun, a modal or auxiliary, or an infinitival "to"
AMBIGUOUS_VERBS = frozenset(b for b in _VERB_BASES if b in _NOUNISH and b not in _CORE_VERBS)

#: words after which a bare verb base is a verb ("how do I save", "ways to cook them")
VERB_CONTEXT = frozenset("i you we they he she it to can could should would will shall may "
                         "might must do does did don't doesn't didn't i'll you'll we'll they'll "
                         "i'd you'd we'd they'd can't won't".split())

FUNCTION_WORDS = (
    DETERMINERS | PRONOUNS | PREPOSITIONS | AUXILIARIES | CONJUNCTIONS | WH_WORDS | ADVERBS
)

#: nouns that name an attribute *of* something (bridging anaphora: "the cost" = the cost of
#: the thing under discussion). They are never antecedents on their own.
RELATIONAL_NOUNS = frozenset(
    "cost costs price prices pricing fee fees rate rates limit limits quota quotas "
    "difference differences benefit benefits advantage advantages disadvantage "
    "disadvantages pros cons type types kind kinds sort sorts example examples "
    "symptom symptoms cause causes effect effects side-effects risk risks history origin "
    "origins meaning definition purpose role roles size weight height length age population "
    "capital location name names number amount percentage requirement requirements option "
    "options feature features detail details part parts step steps way ways method methods "
    "process reason reasons result results impact impacts problem problems issue issues "
    "alternative alternatives treatment treatments sign signs stage stages version versions "
    "availability support setup configuration default defaults list lists info information "
    "thing things one ones stuff question questions answer topic point bit lot "
    # more nouns that take an "of" complement in questions: "the sources of calcium",
    # "the main function of a virtual machine", "its significance"
    "source sources function functions use uses significance importance purposes "
    "criticism criticisms characteristic characteristics property properties component "
    "components ingredient ingredients member members author authors founder founders "
    "creator inventor owner owners goal goals aim aims principle principles rule rules "
    "consequence consequences factor factors aspect aspects element elements category "
    "categories variety varieties form forms outcome outcomes fact facts contribution "
    "contributions".split()
)

#: common adjectives: on their own ("is it free?", "how long") they are predicates, not entities
ADJECTIVES = frozenset(
    "available free long short fast faster slow slower cheap cheaper cheapest expensive big "
    "bigger biggest small smaller large larger largest high higher highest low lower lowest "
    "good better best bad worse worst new newer newest old older possible important common "
    "main different similar same other greater less least full empty easy hard difficult "
    "safe secure dangerous popular famous real true false open closed public private "
    "current recent early late typical normal standard default available enabled disabled "
    "supported required optional necessary enough whole entire own certain specific general "
    "special major minor basic simple complex average total daily weekly monthly yearly "
    "annual ok okay sure great nice useful helpful effective healthy red blue green yellow "
    "black white orange purple brown grey gray pink interesting young younger youngest "
    "unique "
    # adjectives in -al/-ic that read like nouns to a suffix test ("environmental impact")
    "environmental financial national international historical political cultural natural "
    "social digital mental physical medical legal official global local regional technical "
    "economic economical commercial industrial residential personal original traditional "
    "additional optional practical typical critical classical chemical biological "
    "ecological psychological emotional nutritional seasonal central".split()
)

GENERIC_HEADS = RELATIONAL_NOUNS | frozenset("people person someone way time times".split())


def predicate_word(word: str) -> bool:
    """An adjective, adverb or participle: what follows a noun as its predicate, never
    its head ("why is Chattanooga *famous*", "is Red Bull *bad*")."""
    low = word.lower()
    return (low in ADJECTIVES or low in ADVERBS or (low.endswith("ly") and len(low) > 4)
            or (low.endswith("ed") and len(low) > 5)
            # adjective suffixes that nouns rarely carry ("unique", "dangerous", "harmful")
            or low.endswith(("ous", "ful", "ique", "less")) or (low.endswith("ive") and len(low) > 6))


# Japanese ------------------------------------------------------------------------------

#: Japanese nouns that name an attribute (料金 = "the price" of whatever is in focus)
JA_RELATIONAL = frozenset(
    "料金 価格 値段 費用 詳細 方法 内容 違い 特徴 機能 手順 仕様 条件 期間 種類 理由 目的 "
    "意味 場所 連絡先 メリット デメリット 事例 一覧 他 ほか 次 前 最初 最後 全部 全て 何 "
    "具体的 具体例 説明 対応 設定方法 使い方".split()
)


#: vocabulary types that name places, for the locative pronoun "there"
LOCATION_TYPES = frozenset("region location country city zone area site office".split())

#: third-person pronouns that point back at someone or something already given
ANAPHORIC_PRONOUNS = frozenset("it its itself they them their theirs he him his she her hers".split())

#: pronoun number, for agreement with an antecedent
SINGULAR_PRONOUNS = frozenset("it its itself this that".split())
PLURAL_PRONOUNS = frozenset("they them their theirs themselves these those".split())
_IRREGULAR_PLURALS = frozenset("people children men women data media criteria feet teeth mice".split())


def is_plural(name: str) -> bool:
    """Rough English number of a noun phrase: its last word's, or plural if coordinated."""
    words = name.lower().split()
    if not words:
        return False
    if " and " in f" {name.lower()} ":
        return True
    w = words[-1]
    if w in _IRREGULAR_PLURALS:
        return True
    return w.endswith("s") and not w.endswith(("ss", "us", "is", "ics")) and len(w) > 3


def pronoun_number(word: str) -> str | None:
    w = word.lower()
    if w in SINGULAR_PRONOUNS:
        return "sg"
    if w in PLURAL_PRONOUNS:
        return "pl"
    return None


#: demonyms and short forms -> the place name a vocabulary alias is likely to use
#: ("the irish one" = the region whose alias is Ireland)
DEMONYMS = {
    "irish": "Ireland", "french": "France", "german": "Germany", "japanese": "Japan",
    "british": "UK", "uk": "UK", "english": "UK", "swedish": "Sweden", "american": "US",
    "us": "US", "australian": "Australia", "aussie": "Australia", "singaporean": "Singapore",
    "dutch": "Netherlands", "spanish": "Spain", "italian": "Italy", "indian": "India",
    "canadian": "Canada", "brazilian": "Brazil", "korean": "Korea", "chinese": "China",
    "european": "Europe", "asian": "Asia",
}


# Content words -------------------------------------------------------------------------
# Content words of English text (docs/benchmarks.md).
#
# A content word is a token ``[A-Za-z0-9][A-Za-z0-9-]*`` longer than two
# characters, lower-cased, not a stop word, with light plural stemming. The
# public benchmarks are converted into required/forbidden terms with these, so
# the rules are deliberately simple and fixed: changing them changes every
# published figure.

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


# Term matching ------------------------------------------------------------------------
# Term matching for the rewrite checks (docs/output.md).
#
# Both checks the project reports (contamination: a forbidden term is present;
# coverage: every required term is present) rest on one question, *does this
# text contain this term*, answered the same way everywhere:
#
# - text and term are compared after Unicode NFKC normalisation and casefolding;
# - a term without CJK characters must not touch an ASCII letter or digit on
#   either side ("EC2" is in "EC2の" and "EC2-based", not in "EC22");
# - a term with CJK characters matches as a plain substring, because Japanese
#   and Chinese do not separate words with spaces.
#
# Whitespace inside a term matches any run of whitespace in the text, so
# "billing export" is found across a line break.

# Kana, CJK ideographs (incl. extensions and compatibility forms), Hangul.
_CJK = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC-normalise and casefold ``text``.

    >>> normalize("ＥＣ２ Straße")
    'ec2 strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def has_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK (kana, ideograph, Hangul) character."""
    return _CJK.search(text) is not None


@lru_cache(maxsize=65536)
def _pattern(term: str) -> re.Pattern[str]:
    """Compiled matcher for one raw term (cached: evaluation asks about the same terms
    for every rewrite of every policy)."""
    norm = _SPACE.sub(" ", normalize(term)).strip()
    if not norm:
        raise InputError(f"empty term {term!r}: a term needs at least one visible character")
    body = r"\s+".join(re.escape(part) for part in norm.split(" "))
    if has_cjk(norm):
        return re.compile(body)
    # Only ASCII letters/digits count as "touching": a CJK neighbour or punctuation
    # is a legitimate word boundary ("EC2の", "EC2-based").
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])")


def _contains_normalized(norm_text: str, term: str) -> bool:
    return _pattern(term).search(norm_text) is not None


def _contains_any_normalized(norm_text: str, terms: str | Sequence[str]) -> bool:
    if isinstance(terms, str):
        return _contains_normalized(norm_text, terms)
    if len(terms) == 0:
        raise InputError("empty list of alternatives: give at least one term")
    return any(_contains_normalized(norm_text, term) for term in terms)


def contains_term(text: str, term: str) -> bool:
    """True when ``term`` occurs in ``text`` under the docs/output.md rules.

    >>> contains_term("Is EC2-based hosting cheaper?", "ec2")
    True
    >>> contains_term("EC22 pricing", "EC2")
    False
    >>> contains_term("このページは何？", "ページ")
    True

    Raises ``InputError`` for an empty term.
    """
    return _contains_normalized(normalize(text), term)


def contains_any(text: str, term_or_alternatives: str | Sequence[str]) -> bool:
    """True when ``text`` contains the term, or any one of a list of alternatives.

    >>> contains_any("uptime SLA for eu-west-1", ["Dublin", "eu-west-1"])
    True
    """
    return _contains_any_normalized(normalize(text), term_or_alternatives)


def _label(required: str | Sequence[str]) -> str:
    return required if isinstance(required, str) else "|".join(required)


@dataclass(frozen=True)
class TermCheck:
    """Outcome of checking one text against an item's required and forbidden terms.

    ``required_missing`` names a list of alternatives as ``"a|b"``.
    """

    forbidden_hits: tuple[str, ...]
    required_missing: tuple[str, ...]

    @property
    def contaminated(self) -> bool:
        """At least one forbidden term is present."""
        return bool(self.forbidden_hits)

    @property
    def covered(self) -> bool:
        """Every required term (or one of its alternatives) is present."""
        return not self.required_missing


def check_terms(
    text: str,
    required: Sequence[str | Sequence[str]],
    forbidden: Sequence[str],
) -> TermCheck:
    """Check ``text`` against required and forbidden terms.

    >>> c = check_terms("uptime SLA Dublin", [["Dublin", "eu-west-1"], "RPO"], ["Frankfurt"])
    >>> c.covered, c.contaminated, c.required_missing
    (False, False, ('RPO',))
    """
    norm_text = normalize(text)
    hits = tuple(term for term in forbidden if _contains_normalized(norm_text, term))
    missing = tuple(_label(req) for req in required if not _contains_any_normalized(norm_text, req))
    return TermCheck(forbidden_hits=hits, required_missing=missing)
