"""Every strategy decides from what its seat sees, and nothing else.

The shared state a strategy is given holds no hidden card: a hand or the deck is a list of
slots, and `State.hidden` is only the set of each epoch's cards not yet opened, which every peer
knows. So a strategy could learn a hidden card only from outside its arguments: what other
seats' strategies leave in the process (a cache or a table shared by every bot in it), or the
driver's own deck. The check: at each decision of seat 0 in a whole game, deal every card seat 0
cannot see (the deck and the other hands, each epoch's among themselves) again at random, let
every other seat decide in that world first, and ask seat 0 again; its decision must not
change. A strategy whose bots share their hands fails it (the last test shows the check bites).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from client.bots import GreedyBot, Hand, PlannerBot, RandomBot, Strategy, play_local_game
from protocol.cards import Card
from protocol.kdf import Stream
from protocol.open_table import OpenTable
from protocol.rules import Action, Plant, PlantPending, Slot, State, legal_actions
from protocol.simulate import game_seed

PLAYERS = 4
POSITIONS = 160  # decisions of seat 0 checked per strategy, from the start of a game
WORLDS = 2  # other deals of the unseen cards tried at each


def unseen_dealt_again(
    state: State, table: OpenTable, seat: int, rng: Stream
) -> Callable[[int], dict[Slot, Card]]:
    """Another world that looks the same from `seat`: every slot it cannot see gets another of
    its epoch's unseen cards. Returns each seat's hand in that world."""
    own = table.hand(state, seat)
    mine = set(own.values())
    swap: dict[Card, Card] = {}
    for cards in state.hidden:
        unseen = sorted(cards - mine)
        swap.update(zip(unseen, rng.shuffled(unseen), strict=True))

    def hand(other: int) -> dict[Slot, Card]:
        if other == seat:
            return own
        return {slot: swap.get(card, card) for slot, card in table.hand(state, other).items()}

    return hand


class Watched(Strategy):
    """Seat 0's strategy, which replays each of its decisions in other worlds first."""

    def __init__(
        self, seats: list[Strategy], table: OpenTable, rng: Stream, positions: int
    ) -> None:
        self.seats = seats
        self.positions = positions
        self.inner = seats[0]
        self.name = self.inner.name
        self.table = table
        self.rng = rng
        self.checked = 0

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        if self.checked < self.positions:
            self.checked += 1
            before = copy.deepcopy(self.seats)
            decision = copy.deepcopy(self.inner).decide(state, seat, hand)
            for _ in range(WORLDS):
                hands = unseen_dealt_again(state, self.table, seat, self.rng)
                others = copy.deepcopy(before)
                for other in range(1, len(others)):
                    others[other].decide(state, other, hands(other))
                again = others[0].decide(state, seat, hands(seat))
                assert again == decision, f"seat {seat} changed its mind at turn {state.turn}"
        return self.inner.decide(state, seat, hand)

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.inner.stop_waiting(state, seat, hand)


def check_a_game(make: Callable[[int], Strategy], label: int, positions: int = POSITIONS) -> int:
    """Play a whole game with seat 0's first `positions` decisions checked; how many were."""
    seed = game_seed(label, PLAYERS)
    seats = [make(seat) for seat in range(PLAYERS)]
    watched = Watched(seats, OpenTable(seed), Stream(seed, "other worlds"), positions)
    play_local_game([watched, *seats[1:]], seed)
    return watched.checked


STRATEGIES: dict[str, Callable[[int], Strategy]] = {
    "planner": lambda seat: PlannerBot(),
    "greedy": lambda seat: GreedyBot(seed=game_seed(70, seat)),
    "random": lambda seat: RandomBot(game_seed(70, seat)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", STRATEGIES)
def test_a_strategy_decides_the_same_whatever_the_cards_its_seat_cannot_see(name):
    assert check_a_game(STRATEGIES[name], 31) == POSITIONS


SHARED: dict[int, dict[Slot, Card]] = {}  # what every colluding bot in the process holds


class Colluder(GreedyBot):
    """Greedy, but where the rules leave it a choice of where to plant, it chooses by the cards
    its fellow bots hold: it reads the hands they left in a module-level table."""

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        SHARED[seat] = dict(hand)
        actions = super().decide(state, seat, hand)
        if actions and isinstance(actions[0], Plant | PlantPending):
            choices = [a for a in legal_actions(state, seat, hand) if type(a) is type(actions[0])]
            peeked = sum(card for s, held in SHARED.items() if s != seat for card in held.values())
            return [choices[peeked % len(choices)]]
        return actions


def test_the_check_catches_bots_that_share_what_they_hold():
    """Seeded, so that the game is the same every run: an unseeded greedy bot draws its lots
    between equal partners from fresh secrets, and in about one game in ten so drawn the
    colluders never met a choice their peeking changed (the check then had nothing to catch)."""
    with pytest.raises(AssertionError, match="changed its mind"):
        check_a_game(lambda seat: Colluder(seed=game_seed(71, seat)), 31, positions=1000)
