"""The deck's round schedule: every part once, in an order the protocol can keep."""

from __future__ import annotations

import pytest

from protocol.deck.messages import MAX_PLAYERS
from protocol.deck.schedule import MIN_PLAYERS, DeckConfig, parts_due

GAME = bytes(16)


def rounds_of(config: DeckConfig, seat: int) -> dict[str, list[int]]:
    sent: dict[str, list[int]] = {}
    for round_ in range(config.rounds):
        for name in parts_due(config, round_, seat):
            sent.setdefault(name, []).append(round_)
    return sent


@pytest.mark.parametrize("players", range(MIN_PLAYERS, MAX_PLAYERS + 1))
@pytest.mark.parametrize("proofs", [True, False], ids=["proofs", "plain"])
def test_each_seat_sends_each_part_once_and_the_argument_after_every_shuffle(players, proofs):
    config = DeckConfig(GAME, players, proofs)
    relocks = []
    for seat in range(players):
        sent = rounds_of(config, seat)
        expected = {"commit", "shuffle", "relock"} | ({"argument"} if proofs else set())
        assert set(sent) == expected and all(len(rounds) == 1 for rounds in sent.values())
        assert sent["commit"] == [0] and sent["shuffle"] == [1 + seat]
        relocks.append(sent["relock"][0])
        if proofs:
            (argument,) = sent["argument"]
            # Never before the last shuffle (proving takes longer than the others' shuffles),
            # and within the epoch, so that the last round settles every check.
            assert players < argument < config.rounds
            assert argument - sent["shuffle"][0] >= players
    assert relocks == list(range(players + 1, 2 * players + 1))  # one chain, after the shuffles
    assert config.rounds == 2 * players + 1
