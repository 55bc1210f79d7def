"""The seed-derived streams: deterministic, label-separated and unbiased."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.kdf import Stream, derive, encode_label

SEED = bytes(range(32))


def test_derive_is_deterministic_and_separated_by_every_label_part():
    assert derive(SEED, "game", 1) == derive(SEED, "game", 1)
    assert derive(SEED, "game", 1) != derive(SEED, "game", 2)
    assert derive(SEED, "game", 1) != derive(SEED, "game", b"\x01")
    assert derive(SEED, "ab", "c") != derive(SEED, "a", "bc")


def test_short_seeds_are_refused():
    with pytest.raises(ValueError):
        derive(b"short", "x")


@given(
    st.lists(st.one_of(st.text(), st.integers(min_value=0), st.binary()), max_size=5),
    st.lists(st.one_of(st.text(), st.integers(min_value=0), st.binary()), max_size=5),
)
def test_label_encoding_is_injective(a, b):
    if encode_label(*a) == encode_label(*b):
        assert [(type(x), x) for x in a] == [(type(x), x) for x in b]


@given(st.integers(min_value=1, max_value=10**6))
def test_randbelow_stays_in_range(n):
    stream = Stream(SEED, "range", n)
    assert all(0 <= stream.randbelow(n) < n for _ in range(20))


def test_permutation_is_a_permutation_and_uniform():
    # 3! = 6 outcomes over 6000 shuffles: each should appear about 1000 times. The chi-square
    # bound 20.5 is the 0.999 quantile with 5 degrees of freedom.
    stream = Stream(SEED, "uniformity")
    counts = Counter(tuple(stream.permutation(3)) for _ in range(6000))
    assert len(counts) == 6
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 20.5
    assert sorted(Stream(SEED, "p").permutation(154)) == list(range(154))
