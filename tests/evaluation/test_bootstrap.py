"""Percentile bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnscope._exceptions import InputError
from turnscope.evaluation import bootstrap_ci


def test_interval_contains_the_mean() -> None:
    values = [1.0] * 17 + [0.0] * 6
    ci = bootstrap_ci(values)
    assert ci.value == pytest.approx(17 / 23)
    assert ci.low < ci.value < ci.high
    assert ci.n == 23


def test_interval_narrows_with_n() -> None:
    rng = np.random.default_rng(7)
    small = bootstrap_ci(rng.random(20) < 0.7)
    large = bootstrap_ci(rng.random(2000) < 0.7)
    assert (large.high - large.low) < (small.high - small.low) / 4


def test_seeded_and_configurable() -> None:
    values = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3, resamples=50) != bootstrap_ci(values, seed=4,
                                                                        resamples=50)
    narrow = bootstrap_ci(values, confidence=0.5)
    wide = bootstrap_ci(values, confidence=0.99)
    assert wide.low <= narrow.low and narrow.high <= wide.high


def test_degenerate_samples() -> None:
    assert bootstrap_ci([0.4]).low == bootstrap_ci([0.4]).high == 0.4
    ci = bootstrap_ci([1.0, 1.0, 1.0])
    assert (ci.low, ci.value, ci.high) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("kwargs", [{"resamples": 0}, {"confidence": 1.0},
                                    {"confidence": 0.0}])
def test_bad_arguments(kwargs: dict[str, float]) -> None:
    with pytest.raises(InputError):
        bootstrap_ci([1.0, 0.0], **kwargs)  # type: ignore[arg-type]


def test_empty_is_an_error() -> None:
    with pytest.raises(InputError, match="non-empty"):
        bootstrap_ci([])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=60))
def test_interval_within_the_data_range(values: list[float]) -> None:
    ci = bootstrap_ci(values, resamples=200)
    eps = 1e-9
    assert min(values) - eps <= ci.low <= ci.high <= max(values) + eps
