"""One learned decision over candidate rewrites: which earlier phrase a reference stands for,
or none.

For an English message with a reference (a pronoun, a definite noun phrase, a verbless
fragment), each phrase the parser finds in the last messages is written into the reference
span, giving one candidate rewrite per phrase; the message as typed and the rules' own
rewrite are candidates too. A small pretrained language model scores every candidate in the
context of the last exchange (log P(rewrite | exchange), the exchange run once), and a
gradient-boosted ranker reads that score beside what the parser says of the phrase (entity
type, grammatical role, recency, mentions, agreement with the pronoun) and which generator
proposed it. The best candidate is taken only when the ranker's probability clears a
threshold set on development data; otherwise the rules' rewrite stands (abstention).

Only the reference span changes: every other character of the message is kept as typed.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from turnscope._exceptions import ConfigError
from turnscope.language._gender import gender_agreement
from turnscope.language._lm import SmallLM
from turnscope.language._parse import (
    DEFAULT_LOOKBACK,
    Phrase,
    Reference,
    load_parser,
    parse,
    phrases,
    references,
)

__all__ = ["Candidate", "Decider", "Decision", "ReferenceDecider", "candidates_for", "DEFAULT_MAX_CANDIDATES"]

log = logging.getLogger("turnscope.language")

#: phrases scored per reference (the nearest and most name-like first)
DEFAULT_MAX_CANDIDATES = 8
#: the shipped ranker and its threshold
_MODELS = Path(__file__).resolve().parent.parent / "data" / "models"
DEFAULT_MODEL = _MODELS / "decider.txt"
DEFAULT_META = _MODELS / "decider.json"
#: each earlier message is cut to this many characters in the language model's context
_CONTEXT_CHARS = 700
_LABELS = ("PERSON", "ORG", "GPE", "LOC", "WORK_OF_ART", "PRODUCT", "NORP", "FAC", "EVENT", "LAW", "LANGUAGE")
_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "attr", "appos", "conj", "compound", "ROOT")
_KINDS = ("person", "thing", "plural", "np", "fragment", "attribute")
#: the reference classes the rules may read a message as (the evaluation's strata)
_CLASSES = ("standalone", "textual_immediate", "textual_earlier", "situational_page", "situational_site")
GENERATORS = ("typed", "rules", "parser")
_PRONOUN_KINDS = ("person", "thing", "plural")


class Decider(Protocol):
    """The review stage's interface: what the embedded rewriter calls after its rules."""

    def decide(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
               rules_class: str | None = None) -> Decision: ...


@dataclass(frozen=True)
class Candidate:
    """One candidate rewrite and the evidence the ranker reads."""

    text: str
    generator: str
    phrase: str | None
    features: dict[str, float] = field(hash=False, compare=False)


@dataclass(frozen=True)
class Decision:
    """What the decider chose: the rewrite and the phrase carried, or ``None`` (abstained)."""

    query: str | None
    phrase: str | None
    probability: float
    reference: str | None
    considered: int
    reason: str
    #: every phrase carried, in the order the references were resolved (a message with
    #: two pronouns of different referents, "will she tell him", resolves both)
    phrases: tuple[str, ...] = ()


def _context(history: Sequence[tuple[str, str]]) -> str:
    """The last exchange as the model's chat template, then the frame the candidate ends."""
    parts = []
    for role, text in history[-2:]:
        name = "user" if role == "user" else "assistant"
        parts.append(f"<|im_start|>{name}\n{text[:_CONTEXT_CHARS]}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>user\nMy next question, rewritten to stand alone:"


def _mentions(phrase: str, texts: Sequence[str]) -> int:
    low = phrase.lower()
    return sum(t.lower().count(low) for t in texts)


_LEAD_POS = ("CCONJ", "INTJ", "ADV", "ADP", "PUNCT", "SCONJ", "PART")


def _fragment(doc: Any) -> tuple[int, int, str, bool] | None:
    """A verbless fragment's content span ("and in France?" -> "France"), and whether it is
    a name (a swap into the previous question) rather than a common noun (an attribute of
    the same subject: "and the cinematographer?"); None for a message with a verb."""
    if len(doc) > 7 or any(t.pos_ in ("VERB", "AUX") for t in doc):
        return None
    spans = [c for c in doc.noun_chunks if c.root.pos_ != "PRON"] or list(doc.ents)
    if not spans:
        return None
    best = max(spans, key=lambda s: len(s))
    # the parser may hang "and", "about" or a filler on the chunk; they are not its content
    while len(best) > 1 and (best[0].pos_ in _LEAD_POS or best[0].tag_ in ("WP", "WRB", "WDT")):
        best = best[1:]
    proper = any(t.pos_ == "PROPN" for t in best) or bool(best.ents)
    return best.start_char, best.end_char, best.text, proper


def _phrase_features(p: Phrase, ref: Reference, texts: Sequence[str], prev_user: str,
                     names: Sequence[str] = ()) -> dict[str, float]:
    ref_kind = ref.kind
    f: dict[str, float] = {
        "distance": p.distance, "from_user": float(p.role == "user"), "proper": float(p.proper),
        "plural": float(p.plural), "tokens": p.tokens, "sentence": p.sentence, "position": p.position,
        "is_entity": float(bool(p.label)), "mentions": _mentions(p.text, texts),
        "in_prev_user": float(p.text.lower() in prev_user.lower()),
    }
    for lab in _LABELS:
        f[f"label_{lab}"] = float(p.label == lab)
    for dep in _DEPS:
        f[f"dep_{dep}"] = float(p.dep == dep)
    f["agree_person"] = float(ref_kind == "person" and p.label == "PERSON")
    f["gender_agree"] = gender_agreement(ref.text, p.text, names) if ref_kind == "person" else 0.0
    f["agree_plural"] = float(ref_kind == "plural" and p.plural)
    # a thing pronoun for a person, a person pronoun for a plain noun, a plural for one thing
    f["disagree"] = float((ref_kind == "thing" and p.label == "PERSON")
                          or (ref_kind == "person" and not p.proper and p.label != "PERSON")
                          or (ref_kind == "plural" and not p.plural and p.label not in ("ORG", "NORP")))
    return f


def _prior(p: Phrase, kind: str) -> tuple[float, ...]:
    name_like = p.proper or bool(p.label)
    person = p.label == "PERSON"
    return (-(2.0 * name_like + (1.5 * person if kind == "person" else 0.0) - 0.7 * p.distance),
            p.position)


def candidates_for(message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
                   lm: SmallLM | None, parser: Any | None = None,
                   rules_class: str | None = None,
                   resolved: frozenset[str] | None = None) -> tuple[Reference | None, list[Candidate]]:
    """The candidate rewrites of ``message`` after ``history`` (``(role, text)``, oldest
    first), each with its features; the reference they resolve (None: nothing to decide).
    ``rules_class`` is the reference class the rules read the message as (an evaluation stratum).
    ``resolved``: the agreements (:attr:`Reference.agreement`) of references already
    resolved in ``message``; then only a person pronoun that differs from all of them is
    taken."""
    nlp = parser or load_parser()
    doc = parse(nlp, message)
    # each earlier message was parsed on an earlier turn: the kept parse is read again
    docs = [(role, parse(nlp, text)) for role, text in history[-DEFAULT_LOOKBACK:]]
    earlier = {t.lemma_.lower() for _, d in docs for t in d if t.pos_ in ("NOUN", "PROPN")}
    refs = references(doc, earlier)
    if resolved is not None:
        # a second referent: a person pronoun of another gender ("she" resolved, "him" left).
        # One of the same agreement is taken to mean the one already resolved, a reflexive
        # is bound inside its clause, and a second "it" most often means a noun phrase of
        # the message itself ("did he write the code himself or was it a team effort")
        refs = [r for r in refs if r.kind == "person" and r.agreement not in resolved
                and not r.text.lower().endswith("self")]
        if not refs:
            return None, []
    if refs:
        ref = refs[0]
    else:
        frag = _fragment(doc)
        if frag is None:
            return None, []
        ref = Reference(frag[0], frag[1], frag[2], "fragment" if frag[3] else "attribute", False)
    found = [p for p in phrases(docs) if p.text.lower() not in message.lower()]
    if ref.kind == "thing":
        # "it" never stands for a person: a name the parser or the first-name table calls one
        found = [p for p in found if p.label != "PERSON" and gender_agreement("he", p.text) == 0.0]
    found.sort(key=lambda p: _prior(p, ref.kind))
    found = found[:DEFAULT_MAX_CANDIDATES]
    names = [p.text for p in found if p.proper]
    texts = [t for _, t in history]
    users = [t for r, t in history if r == "user"]
    prev_user = users[-1] if users else ""
    head, tail = message[: ref.start], message[ref.end:]
    cands: list[tuple[str, str, str | None, dict[str, float]]] = [(message, "typed", None, {})]
    if rules_query and rules_query.strip() != message.strip():
        cands.append((rules_query, "rules", None, {}))
    for p in found:
        if ref.kind == "fragment" and prev_user:
            # a name swapped into the previous question, for a phrase of the same kind there
            pdoc = parse(nlp, prev_user)
            for span in list(pdoc.ents) + list(pdoc.noun_chunks):
                if span.text.lower() != p.text.lower():
                    continue
                sub = prev_user[: span.start_char] + ref.text + prev_user[span.end_char:]
                cands.append((sub, "parser", p.text, {"substitution": 1.0,
                                                      **_phrase_features(p, ref, texts, prev_user, names)}))
                break
            continue
        if ref.kind in ("fragment", "attribute"):
            if ref.kind == "attribute":
                # the same subject's other attribute: "and the cinematographer?" -> "... of X"
                comp = head + f"{ref.text} of {p.text}" + tail
                cands.append((comp, "parser", p.text, {"completion": 1.0,
                                                       **_phrase_features(p, ref, texts, prev_user, names)}))
            continue
        word = p.text + ("'s" if ref.possessive else "")
        if ref.start == 0 and word[:1].islower():
            word = word[:1].upper() + word[1:] if not p.proper else word
        cands.append((head + word + tail, "parser", p.text, _phrase_features(p, ref, texts, prev_user, names)))
    # one candidate per distinct text
    seen: dict[str, int] = {}
    unique: list[tuple[str, str, str | None, dict[str, float]]] = []
    for c in cands:
        if c[0] in seen:
            continue
        seen[c[0]] = len(unique)
        unique.append(c)
    scores = lm.score(_context(history), [" " + c[0] for c in unique]) if lm is not None else []
    sums = [s.logprob for s in scores] or [0.0] * len(unique)
    means = [s.mean for s in scores] or [0.0] * len(unique)
    typed_sum, typed_mean = sums[0], means[0]
    order_sum = np.argsort(-np.asarray(sums))
    rank_sum = {int(i): r for r, i in enumerate(order_sum)}
    order_mean = np.argsort(-np.asarray(means))
    rank_mean = {int(i): r for r, i in enumerate(order_mean)}
    best_other = sorted(sums[1:], reverse=True)
    parser_idx = [i for i, c in enumerate(unique) if c[1] == "parser"]
    best_parser = max((sums[i] for i in parser_idx), default=None)
    best_parser_mean = max((means[i] for i in parser_idx), default=None)
    out = []
    for i, (text, gen, phrase, feats) in enumerate(unique):
        f = {
            **{k: 0.0 for k in _base_feature_names()},
            **feats,
            "lm_sum": sums[i], "lm_mean": means[i], "lm_delta_typed": sums[i] - typed_sum,
            "lm_delta_typed_mean": means[i] - typed_mean, "lm_rank_sum": rank_sum[i],
            "lm_rank_mean": rank_mean[i],
            "lm_margin": sums[i] - _runner_up(best_other, sums[i]),
            "n_candidates": len(unique), "possessive": float(ref.possessive),
            "gen_typed": float(gen == "typed"), "gen_rules": float(gen == "rules"),
            "gen_parser": float(gen == "parser"),
            "rules_equal": float(bool(rules_query) and text == rules_query),
            "msg_tokens": len(doc), "ref_at_start": float(ref.start == 0),
            "lm_vs_best_parser": sums[i] - best_parser if best_parser is not None else 0.0,
            "lm_mean_vs_best_parser": means[i] - best_parser_mean if best_parser_mean is not None else 0.0,
        }
        for k in _CLASSES:
            f[f"rules_{k}"] = float(rules_class == k)
        for k in _KINDS:
            f[f"ref_{k}"] = float(ref.kind == k)
        out.append(Candidate(text, gen, phrase, f))
    return ref, out


def _runner_up(ranked: list[float], own: float) -> float:
    """The best score other than ``own`` among ``ranked`` (descending), or ``own``."""
    if not ranked:
        return own
    if ranked[0] == own and len(ranked) > 1:
        return ranked[1]
    return ranked[0]


def _base_feature_names() -> list[str]:
    names = ["distance", "from_user", "proper", "plural", "tokens", "sentence", "position", "is_entity",
             "mentions", "in_prev_user", "agree_person", "gender_agree", "agree_plural", "disagree",
             "substitution", "completion"]
    names += [f"label_{lab}" for lab in _LABELS] + [f"dep_{d}" for d in _DEPS]
    return names


def feature_names() -> list[str]:
    """Every feature the ranker reads, in its column order."""
    return _base_feature_names() + [
        "lm_sum", "lm_mean", "lm_delta_typed", "lm_delta_typed_mean", "lm_rank_sum", "lm_rank_mean",
        "lm_margin", "n_candidates", "possessive", "gen_typed", "gen_rules", "gen_parser", "rules_equal",
        "msg_tokens", "ref_at_start", *[f"ref_{k}" for k in _KINDS],
        "lm_vs_best_parser", "lm_mean_vs_best_parser", *[f"rules_{k}" for k in _CLASSES],
    ]


class ReferenceDecider:
    """Parser candidates, the small LM's judgement, one learned decision with abstention.

    >>> d = ReferenceDecider.load()                                     # doctest: +SKIP
    >>> d.decide("How old is he?", [("user", "Who directed Parasite?"),
    ...          ("assistant", "Parasite was directed by Bong Joon-ho.")], None).query  # doctest: +SKIP
    'How old is Bong Joon-ho?'
    """

    def __init__(self, lm: SmallLM, booster: Any, threshold: float, parser: Any | None = None,
                 max_answer_chars: int | None = None) -> None:
        self.lm = lm
        self.booster = booster
        self.threshold = threshold
        #: an answer longer than this is outside what the ranker was trained on (a retrieved
        #: passage, not a chat answer): it abstains there rather than guess
        self.max_answer_chars = max_answer_chars
        self.parser = parser
        self._names = feature_names()

    @classmethod
    def load(cls, model: Path | None = None, meta: Path | None = None) -> ReferenceDecider:
        import lightgbm as lgb

        model = model or DEFAULT_MODEL
        meta = meta or DEFAULT_META
        if not model.exists() or not meta.exists():
            raise ConfigError(f"the reference decider's model is missing ({model}): turnscope train --only decider")
        info = json.loads(meta.read_text(encoding="utf-8"))
        if info.get("features") != feature_names():
            raise ConfigError(f"{model.name} was trained on other features: retrain it")
        booster = lgb.Booster(model_file=str(model))
        limit = info.get("max_answer_chars")
        return cls(SmallLM.load(), booster, float(info["threshold"]), load_parser(),
                   int(limit) if limit is not None else None)

    def probabilities(self, cands: Sequence[Candidate]) -> list[float]:
        x = np.asarray([[c.features.get(n, 0.0) for n in self._names] for c in cands], dtype=np.float64)
        return [float(p) for p in self.booster.predict(x)]

    def decide(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
               rules_class: str | None = None) -> Decision:
        first, ref = self._decide_one(message, history, rules_query, rules_class, None)
        if first.query is None or ref is None or ref.kind not in _PRONOUN_KINDS:
            return first
        # a person pronoun of another referent in the same message ("will she tell him if
        # ..."): decided the same way over the rewrite so far, which now holds the first phrase
        done = first
        resolved = {ref.agreement}
        while True:
            nxt, ref2 = self._decide_one(done.query or message, history, done.query, rules_class,
                                         frozenset(resolved))
            if nxt.query is None or ref2 is None or nxt.phrase is None:
                return done
            resolved.add(ref2.agreement)
            done = Decision(nxt.query, done.phrase, min(done.probability, nxt.probability),
                            f"{done.reference}, {ref2.text}", done.considered + nxt.considered,
                            done.reason, (*done.phrases, nxt.phrase))

    def _decide_one(self, message: str, history: Sequence[tuple[str, str]], rules_query: str | None,
                    rules_class: str | None, resolved: frozenset[str] | None) -> tuple[Decision, Reference | None]:
        last = history[-1] if history else None
        if (self.max_answer_chars is not None and last is not None and last[0] == "assistant"
                and len(last[1]) > self.max_answer_chars):
            return Decision(None, None, 0.0, None, 0,
                            f"the last answer is longer ({len(last[1])} characters) than any the ranker "
                            f"was trained on (<= {self.max_answer_chars})"), None
        ref, cands = candidates_for(message, history, rules_query, self.lm, self.parser, rules_class, resolved)
        if ref is None or len(cands) < 2:
            return Decision(None, None, 0.0, None, 0, "no reference"), ref
        probs = self.probabilities(cands)
        best = max(range(len(cands)), key=lambda i: probs[i])
        c, p = cands[best], probs[best]
        if c.generator != "parser":
            return Decision(None, None, p, ref.text, len(cands), f"the {c.generator} candidate ranks first"), ref
        if p < self.threshold or math.isnan(p):
            return Decision(None, None, p, ref.text, len(cands), f"below the threshold {self.threshold:.2f}"), ref
        phrases = (c.phrase,) if c.phrase is not None else ()
        return Decision(c.text, c.phrase, p, ref.text, len(cands), "ranked first above the threshold", phrases), ref


_shared: ReferenceDecider | None = None
_failed: str | None = None
_shared_lock = threading.Lock()


def shared_decider() -> ReferenceDecider | None:
    """The process's decider (loaded once; ``None`` when its parts are not installed)."""
    global _shared, _failed
    with _shared_lock:
        if _shared is None and _failed is None:
            try:
                _shared = ReferenceDecider.load()
            except (ConfigError, ImportError, OSError) as exc:
                _failed = str(exc)
                log.warning("reference decider unavailable: %s", exc)
        return _shared


def decider_unavailable() -> str | None:
    return _failed
