"""The bots' ladder (client.bots.ladder): rotated seats, win shares and their intervals, times."""

from __future__ import annotations

import pytest

from client.bots.ladder import (
    GREEDY,
    RANDOM,
    Pairing,
    bucket_of,
    pairings,
    percentile,
    play_pairing,
    seated,
)


def test_every_strategy_sits_in_every_seat():
    for pairing in pairings(4) + pairings(6):
        players = len(pairing.strategies)
        tables = [seated(pairing, game) for game in range(players)]
        for name in set(pairing.strategies):
            seats = {seat for names in tables for seat, n in enumerate(names) if n == name}
            assert seats == set(range(players))


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
