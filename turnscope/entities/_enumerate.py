"""Enumerations: the ordered lists of alternatives a turn offers ("Frankfurt, Dublin and
Paris", "1) … 2) …", 「AとBとC」), kept in order so that "the second one" can be resolved.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from turnscope.entities._mention import Enumeration, Mention

_PAIR_LINK = re.compile(r"\s*(?:↔|<->|⇄|<=>|/|&|and|vs\.?|versus)\s*", re.IGNORECASE)
#: what joins two items of a list; an English article may open the next item ("the Paleozoic
#: Era, the Mesozoic Era and the Cenozoic Era")
_COORD = re.compile(r"^\s*(?:,|、|，|/|and|or|,\s*and|,\s*or|and\s+also|as\s+well\s+as|vs\.?|versus|"
                    r"と|や|または|か|及び|および)(?:\s+(?:the|a|an))?\s*$", re.IGNORECASE)
_PAREN_SPAN = re.compile(r"\([^()]*\)|（[^（）]*）")
_LOOSE_COORD = re.compile(r"(?:,\s*|\s)(?:or|and)\s*$|、$|と$|や$|または$", re.IGNORECASE)
_INLINE_NUMBER_JA = re.compile(r"([1-9])(?:つ目|番目)(?:が|は|に|として)")
_INLINE_NUMBER = re.compile(r"(?<![\w.\-/])(\d{1,2})[.)）]\s+")
_NUMBERED_LINE = re.compile(r"^\s*(?:\(?(\d{1,2})[.)、）]|[-*•・]|[①-⑳])\s*(.+)$", re.MULTILINE)


def find_enumerations(text: str, turn: int, lang: str, ms: list[Mention]) -> list[Enumeration]:
    """The ordered lists of alternatives in ``text``, most explicit first, from its
    mentions ``ms`` (see :meth:`EntityExtractor.enumerations`)."""
    parens = [(p.start(), p.end()) for p in _PAREN_SPAN.finditer(text)]
    paren_starts = [a for a, _ in parens]

    def in_parens(m: Mention) -> bool:
        # the spans do not overlap and come in order: only the last one opening
        # before m can hold it (testing every span per mention was quadratic)
        k = bisect_left(paren_starts, m.start) - 1
        return k >= 0 and m.start < parens[k][1]

    named = [m for m in ms if not m.is_attribute and not in_parens(m)]
    by_start = sorted(range(len(named)), key=lambda k: named[k].start)
    named_starts = [named[k].start for k in by_start]

    def named_from(lo: int, hi: int) -> list[Mention]:
        """The named mentions starting in [lo, hi), in the order of ``named``."""
        ks = by_start[bisect_left(named_starts, lo):bisect_left(named_starts, hi)]
        return [named[k] for k in sorted(ks)]
    out: list[Enumeration] = []

    markers = list((_INLINE_NUMBER_JA if lang == "ja" else _INLINE_NUMBER).finditer(text))
    if len(markers) < 2:
        markers = list(_NUMBERED_LINE.finditer(text))
        bodies = [(ln.start(2), ln.end()) for ln in markers]
    else:
        nums = [int(mk.group(1)) for mk in markers]
        if nums != list(range(1, len(markers) + 1)):
            markers, bodies = [], []
        else:
            bodies = [(mk.end(), markers[k + 1].start() if k + 1 < len(markers) else len(text))
                      for k, mk in enumerate(markers)]
    if len(bodies) >= 2:
        items: list[Mention] = []
        for a, b in bodies:
            clause = re.split(r"[,，、。;:：(（—–]|\s(?:or|and|which|that|with)\s|です|でした",
                              text[a:b])[0]
            clause = " ".join(re.sub(r"^(?:the|a|an)\s+", "", clause.strip(), flags=re.I)
                              .split()[:8]).rstrip(".。")
            # (English: room for the article the clause dropped; Japanese clauses end
            # where they were split, or "カメラです。入館証…" would reach the next sentence)
            clause_end = a + len(text[a:b]) - len(text[a:b].lstrip()) + len(clause) \
                + (0 if lang == "ja" else 4)
            inside = named_from(a, min(b, clause_end))
            if lang == "ja":
                inside = [m for m in inside if m.source == "vocab"]
            pair = [m for m in named_from(a, b) if not in_parens(m)]
            if len(pair) >= 2 and pair[0].type == pair[1].type \
                    and _PAIR_LINK.fullmatch(_PAREN_SPAN.sub("", text[pair[0].end:pair[1].start])):
                # "3. Virginia (us-east-1) ↔ Oregon (us-west-2)": the item is the pair
                both = f"{pair[0].name} and {pair[1].name}"
                items.append(Mention(pair[0].type, both, both, pair[0].start, pair[1].end,
                                     pair[0].source))
                continue
            if inside and len(clause.split()) <= len(inside[0].surface.split()) + 1:
                items.append(inside[0])
            elif clause:
                typ = inside[0].type if inside else "phrase"
                items.append(Mention(typ, clause, clause, a, a + len(clause), "general"))
        if len(items) == len(bodies):
            out.append(Enumeration(turn, tuple(items), numbered=True, kind="numbered"))

    def coordination(pool: list[Mention], loose: bool) -> list[Mention]:
        """The longest chain of ``pool`` joined by coordinators. ``loose`` lets a
        clause's tail sit between two items ("RDB snapshots every 6 hours, or AOF")."""
        # the best chain is a prefix of a chain list (chains only grow or restart):
        # keeping it by reference and length avoids copying it at every step
        best: list[Mention] = []
        best_len = 0
        chain: list[Mention] = []
        surfaces: set[str] = set()
        last_end = 0
        for m in pool:
            if in_parens(m):
                continue
            between = text[last_end : m.start].strip()
            if chain and (between in ("(", "（") or (m.name == chain[-1].name
                                                    and m.surface == chain[-1].surface)):
                last_end = m.end  # apposition: "Tokyo (ap-northeast-1)"
                continue
            gap = _PAREN_SPAN.sub("", text[last_end : m.start]).strip("()（） ") if chain else ""
            joined = bool(_COORD.match(gap)) or (
                loose and bool(_LOOSE_COORD.search(gap)) and not re.search(r"[.;:?!。]", gap))
            if chain and joined and m.surface not in surfaces:
                chain.append(m)
                surfaces.add(m.surface)
            else:
                chain = [m]
                surfaces = {m.surface}
            last_end = m.end
            if len(chain) > best_len:
                best, best_len = chain, len(chain)
        return best[:best_len]

    typed_pool = [x for x in ms if not x.is_attribute and (x.source == "vocab" or x.type == "name")]
    best = coordination(typed_pool, loose=True)
    if len(best) >= 2:
        # the last item may carry the list's noun and so not be a name of its own
        # ("the Paleozoic, Mesozoic and Cenozoic eras"): a capitalised phrase joined on
        after = [x for x in ms if x.start >= best[-1].end and not x.is_attribute and not in_parens(x)]
        if after:
            nxt = min(after, key=lambda x: x.start)
            if nxt.surface[:1].isupper() and _COORD.match(text[best[-1].end:nxt.start]) \
                    and nxt.surface not in {m.surface for m in best}:
                best = [*best, nxt]
    if len(best) < 2:
        best = coordination([x for x in ms if not x.is_attribute], loose=False)
    if len(best) >= 2:
        if len({m.name for m in best}) < len(best):
            best = [Mention(m.type, m.surface, m.surface, m.start, m.end, m.source)
                    for m in best]
        out.append(Enumeration(turn, tuple(best), numbered=False))

    by_type: dict[str, list[Mention]] = {}
    seen_names: dict[str, set[str]] = {}
    for m in named:
        if m.source == "vocab" or m.type == "name":
            bucket = by_type.setdefault(m.type, [])
            names = seen_names.setdefault(m.type, set())
            if m.name not in names:
                bucket.append(m)
                names.add(m.name)
    for items_t in by_type.values():
        if len(items_t) >= 2 and all(
                [x.name for x in e.items] != [y.name for y in items_t] for e in out):
            out.append(Enumeration(turn, tuple(items_t), numbered=False, kind="run"))
    return out
