"""Public data sets (TREC CAsT, TopiOCQA, TIAGE) read in place from the shared data folder.

>>> from turnscope.datasets import load_cast, cast_baselines
>>> items = load_cast(2019)  # doctest: +SKIP
"""

from __future__ import annotations

from turnscope._lexicon import STOP_WORDS, content_words, stem
from turnscope.datasets._cast import (
    CAST21_PARTS,
    CAST_YEARS,
    DATA_ENV_VAR,
    DEFAULT_DATA_ROOT,
    cast21_part,
    cast_baselines,
    load_canard,
    load_cast,
    resolve_data_root,
)
from turnscope.datasets._topiocqa import (
    TopicTurn,
    load_tiage,
    load_tiage_train,
    load_topiocqa,
    load_topiocqa_train,
)

__all__ = [
    "CAST21_PARTS",
    "CAST_YEARS",
    "cast21_part",
    "load_canard",
    "DATA_ENV_VAR",
    "DEFAULT_DATA_ROOT",
    "STOP_WORDS",
    "TopicTurn",
    "cast_baselines",
    "content_words",
    "load_cast",
    "load_tiage",
    "load_tiage_train",
    "load_topiocqa",
    "load_topiocqa_train",
    "resolve_data_root",
    "stem",
]
