"""CRYPTO.md statistics: one honest player is enough for a uniform deal.

k−1 = 2 colluding players fix their shuffles (the same seeds, keys and permutations in every
deal: here the identity permutation) and only the honest player's seed changes from deal to
deal. The dealt order must still be uniform over all orders, and the colluders, who know
everything but the honest seat's secrets, must guess the honest player's card no better than
chance.
"""

import itertools
import math
from collections import Counter

import pytest

from protocol.deck import DeckConfig, DeckPlayer
from protocol.deck.group import Scalar
from protocol.deck.public import EpochState
from tests.deck_harness import seed_for, slot_key

CARDS = (0, 1, 2, 3)
DEALS = 24 * 40
COLLUDERS = (0, 2)
HONEST = 1
GAME = b"statistics game!"
CHI2_999_DF23 = 49.73  # 0.999 quantile of chi-square with 24 - 1 degrees of freedom


class FixedShuffler(DeckPlayer):
    """A colluder that never shuffles: its permutation is the identity in every deal."""

    def _start_epoch(self, epoch: int) -> None:
        super()._start_epoch(epoch)
        self._epochs[epoch].permutation = list(range(len(CARDS)))


class UnlockedShuffler(DeckPlayer):
    """A broken "honest" player that permutes but locks with the key 1: the positive control
    showing that the colluders' strategy does use whatever the transcript gives away."""

    def _start_epoch(self, epoch: int) -> None:
        super()._start_epoch(epoch)
        one = Scalar((1).to_bytes(32, "little"))
        self._epochs[epoch].shuffle_key = one
        self._epochs[epoch].key_inverse = one


def deal(index: int, honest: type[DeckPlayer] = DeckPlayer) -> tuple[tuple[int, ...], EpochState]:
    """One deal among separate players exchanging messages: the dealt order, and the public
    state (everything the colluders see besides their own secrets)."""
    config = DeckConfig(GAME, 3, proofs=False)
    players = [
        FixedShuffler(config, seat, seed_for("colluder", seat))
        if seat in COLLUDERS
        else honest(config, seat, seed_for(f"honest deal {index}", seat))
        for seat in range(3)
    ]
    for player in players:
        player.begin_epoch(0, CARDS)
    for round_ in range(config.rounds):
        messages = {player.seat: player.epoch_message(round_) for player in players}
        for player in players:
            player.receive_round(round_, messages)
    public = players[0].public
    state = public.epoch(0)
    keys = [[Scalar(slot_key(p, 0, slot)) for p in players] for slot in range(len(CARDS))]
    order = tuple(public.decode(state, slot, keys[slot], "dealt") for slot in range(len(CARDS)))
    return order, state


@pytest.fixture(scope="module")
def deals() -> list[tuple[tuple[int, ...], EpochState]]:
    return [deal(index) for index in range(DEALS)]


@pytest.mark.slow
def test_the_deal_is_uniform_when_all_but_one_player_fix_their_shuffles(deals):
    counts = Counter(order for order, _ in deals)
    assert set(counts) <= set(itertools.permutations(CARDS))
    expected = DEALS / math.factorial(len(CARDS))
    chi2 = sum((counts.get(p, 0) - expected) ** 2 / expected for p in itertools.permutations(CARDS))
    assert chi2 < CHI2_999_DF23


def colluders_guess(state: EpochState) -> int:
    """The colluders' guess for the honest player's card at slot 0. Their own shuffles are the
    identity, so slot 0 holds whatever the honest shuffle put first; they know which card each
    point of the honest shuffle's input is (their own first shuffle of the plain points), so
    they pick the input point that looks most like the honest output's first point."""
    honest_in, honest_out = state.decks[HONEST], state.decks[HONEST + 1]

    def distance(point: bytes) -> int:
        return sum(bin(a ^ b).count("1") for a, b in zip(point, honest_out[0], strict=True))

    return CARDS[min(range(len(CARDS)), key=lambda i: distance(honest_in[i]))]


@pytest.mark.slow
def test_colluders_guess_the_honest_hand_no_better_than_chance(deals):
    hits = sum(order[0] == colluders_guess(state) for order, state in deals)
    chance = DEALS / len(CARDS)
    spread = math.sqrt(DEALS * (1 / len(CARDS)) * (1 - 1 / len(CARDS)))
    assert abs(hits - chance) < 4 * spread  # within 4 standard deviations of 1/n


def test_the_colluders_guess_wins_every_time_against_an_unlocked_shuffle():
    for index in range(12):
        order, state = deal(index, honest=UnlockedShuffler)
        assert order[0] == colluders_guess(state)
