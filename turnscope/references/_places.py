"""A small bundled list of place names: countries (with their everyday short forms), US states
and major cities. It decides one thing only: whether the phrase of an elliptical follow-up
("and in France?") and a phrase of the previous question ("in Germany") are of the same kind,
so that one may replace the other. A place the list lacks makes the substitution abstain,
which is the safe failure.
"""

from __future__ import annotations

import re

__all__ = ["PLACES", "canonical_place", "find_places"]

_COUNTRIES = """
Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|Australia|Austria|Azerbaijan|Bahamas|
Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|
Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|Chad|
Chile|China|Colombia|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|Czechia|Denmark|Djibouti|
Dominican Republic|Ecuador|Egypt|El Salvador|Estonia|Eswatini|Ethiopia|Fiji|Finland|France|Gabon|
Gambia|Georgia|Germany|Ghana|Greece|Guatemala|Guinea|Guyana|Haiti|Honduras|Hong Kong|Hungary|
Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory Coast|Jamaica|Japan|Jordan|
Kazakhstan|Kenya|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|
Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|Mauritania|
Mauritius|Mexico|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Namibia|Nepal|
Netherlands|the Netherlands|New Zealand|Nicaragua|Niger|Nigeria|North Korea|North Macedonia|
Norway|Oman|Pakistan|Palestine|Panama|Papua New Guinea|Paraguay|Peru|Philippines|the Philippines|
Poland|Portugal|Puerto Rico|Qatar|Romania|Russia|Rwanda|Saudi Arabia|Senegal|Serbia|Singapore|
Slovakia|Slovenia|Somalia|South Africa|South Korea|Korea|South Sudan|Spain|Sri Lanka|Sudan|
Suriname|Sweden|Switzerland|Syria|Taiwan|Tajikistan|Tanzania|Thailand|Togo|Trinidad and Tobago|
Tunisia|Turkey|Türkiye|Turkmenistan|Uganda|Ukraine|United Arab Emirates|UAE|United Kingdom|
the United Kingdom|UK|the UK|Britain|Great Britain|England|Scotland|Wales|Northern Ireland|
United States|the United States|US|the US|USA|the USA|America|Uruguay|Uzbekistan|Venezuela|
Vietnam|Yemen|Zambia|Zimbabwe|Europe|Asia|Africa|South America|North America|Latin America|
the EU|EU|European Union|Scandinavia|the Middle East|Middle East
"""

_US_STATES = """
Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|Idaho|
Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|
Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|North Carolina|
North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|
Texas|Utah|Vermont|Virginia|Washington State|West Virginia|Wisconsin|Wyoming|Ontario|Quebec|
British Columbia|Alberta|Bavaria|Catalonia|New South Wales|Queensland|Victoria
"""

_CITIES = """
London|Paris|Berlin|Madrid|Barcelona|Rome|Milan|Lisbon|Porto|Amsterdam|Brussels|Vienna|Prague|
Budapest|Warsaw|Krakow|Copenhagen|Stockholm|Oslo|Helsinki|Dublin|Edinburgh|Manchester|Munich|
Frankfurt|Hamburg|Zurich|Geneva|Athens|Istanbul|Moscow|Kyiv|New York|New York City|NYC|
Los Angeles|San Francisco|Chicago|Boston|Seattle|Miami|Washington|Washington DC|Las Vegas|
Toronto|Montreal|Vancouver|Mexico City|Rio de Janeiro|Sao Paulo|São Paulo|Buenos Aires|Lima|
Bogota|Santiago|Tokyo|Osaka|Kyoto|Seoul|Beijing|Shanghai|Taipei|Bangkok|Hanoi|Manila|Jakarta|
Bali|Kuala Lumpur|Mumbai|Delhi|New Delhi|Bangalore|Dubai|Abu Dhabi|Doha|Tel Aviv|Cairo|
Cape Town|Johannesburg|Nairobi|Marrakech|Sydney|Melbourne|Brisbane|Perth|Auckland|Wellington|
Canberra
"""


def _entries(block: str) -> list[str]:
    return [p.strip() for p in block.replace("\n", "").split("|") if p.strip()]


#: every listed place, spelt as it should appear in a query
PLACES: tuple[str, ...] = tuple(_entries(_COUNTRIES) + _entries(_US_STATES) + _entries(_CITIES))
_BY_LOWER: dict[str, str] = {p.lower(): p for p in PLACES}
# Longest first, so "New Zealand" wins over a shorter entry inside it, and "the UK" over "UK".
_PLACE_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(re.escape(p) for p in sorted(PLACES, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)
# "US" lower-cased is the pronoun "us" ("what about for us?"): only its capital form is a place.
_CASE_SENSITIVE = frozenset({"us"})


def canonical_place(phrase: str) -> str | None:
    """The listed spelling of ``phrase`` when it is a place of the list, else None.

    >>> canonical_place("new zealand")
    'New Zealand'
    >>> canonical_place("us") is None
    True
    """
    text = " ".join(phrase.split())
    found = _BY_LOWER.get(text.lower())
    if found is None:
        return None
    if text.lower() in _CASE_SENSITIVE and not text.isupper():
        return None
    return found


def find_places(text: str) -> list[tuple[int, int, str]]:
    """Listed places in ``text`` as (start, end, canonical spelling), left to right.

    >>> find_places("What is the minimum wage in Germany?")
    [(28, 35, 'Germany')]
    """
    out: list[tuple[int, int, str]] = []
    for m in _PLACE_RE.finditer(text):
        canon = canonical_place(m.group(0))
        if canon is not None:
            out.append((m.start(), m.end(), canon))
    return out
