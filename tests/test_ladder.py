"""The bots' ladder (client.ladder): rotated seats, win shares and their intervals, times."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.ladder import (
    GREEDY,
    RANDOM,
    Pairing,
    bucket_of,
    pairings,
    percentile,
    play_pairing,
    seated,
    wilson_interval,
)


def test_every_strategy_sits_in_every_seat():
    for pairing in pairings(4) + pairings(6):
        players = len(pairing.strategies)
        tables = [seated(pairing, game) for game in range(players)]
        for name in set(pairing.strategies):
            seats = {seat for names in tables for seat, n in enumerate(names) if n == name}
            assert seats == set(range(players))


def test_the_wilson_interval_matches_known_values():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@given(st.integers(1, 5000), st.floats(0, 1))
def test_a_share_lies_inside_its_interval(trials, share):
    wins = share * trials
    low, high = wilson_interval(wins, trials)
    assert 0 <= low <= share + 1e-9 and share - 1e-9 <= high <= 1


def test_decision_times_are_read_back_within_a_bucket():
    histogram = [0] * 400
    for seconds in [0.001] * 98 + [0.2, 0.5]:
        histogram[bucket_of(seconds)] += 1
    assert percentile(histogram, 0.5) == pytest.approx(0.001, rel=0.05)
    assert percentile(histogram, 0.99) == pytest.approx(0.2, rel=0.05)
    assert bucket_of(0.0) == 0 and bucket_of(1e-3) < bucket_of(2e-3)


@pytest.mark.slow
def test_a_pairing_tallies_every_game_and_seat():
    pairing = Pairing("greedy vs 3 random", (GREEDY, RANDOM, RANDOM, RANDOM))
    result = play_pairing(pairing, range(4), b"ladder test seed")
    greedy, random = result.tallies[GREEDY], result.tallies[RANDOM]
    assert result.games == greedy.games == random.games == 4
    assert (greedy.seat_games, random.seat_games) == (4, 12)
    assert greedy.wins + random.wins == pytest.approx(4)
    assert greedy.coins + random.coins == result.coins
    assert sum(greedy.histogram) > 0 and sum(random.histogram) > 0
