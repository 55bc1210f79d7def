"""The whole life of a game's deck, with k separate player views that share only wire messages:
the deal, many private and public opens, two reshuffles of the discard pile, the final audit.
Throughout, no view ever holds a card its seat was not entitled to see."""

from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.deck_harness import Table

DECK_SIZE = {3: 150, 5: 130, 7: 144}
HAND = 5


@pytest.fixture(scope="module")
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2) as pool:
        yield pool


class Game:
    """Just enough of Bohnanza's card flow to exercise the deck: a hand per seat in draw order,
    planting from the front, face-up cards, showing a card from the middle of a hand, and the
    discard pile becoming the next epoch's deck when the draw pile runs out."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.players = table.config.players
        self.hands: list[deque[tuple[int, int]]] = [deque() for _ in range(self.players)]
        self.known: list[dict[tuple[int, int], int]] = [{} for _ in range(self.players)]
        self.public: dict[tuple[int, int], int] = {}
        self.discards: list[int] = []
        self.epoch = 0
        self.top = 0
        self.size = 0

    def begin(self, cards: list[int]) -> None:
        self.table.run_epoch(self.epoch, cards)
        self.top, self.size = 0, len(cards)

    def take(self, count: int) -> list[int]:
        slots = list(range(self.top, min(self.top + count, self.size)))
        self.top += len(slots)
        return slots

    def draw(self, seat: int, count: int) -> None:
        slots = self.take(count)
        if slots:
            cards = self.table.draw(self.epoch, slots, to=seat)
            for slot, card in zip(slots, cards, strict=True):
                self.hands[seat].append((self.epoch, slot))
                self.known[seat][(self.epoch, slot)] = card

    def face_up(self, count: int) -> None:
        slots = self.take(count)
        if slots:
            for slot, card in zip(slots, self.table.reveal(self.epoch, slots), strict=True):
                self.public[(self.epoch, slot)] = card
                self.discards.append(card)

    def show(self, seat: int, index: int) -> None:
        """Plant (index 0) or offer another hand card: its holder opens it to all."""
        epoch, slot = self.hands[seat][index]
        del self.hands[seat][index]
        card = self.table.play(epoch, slot, holder=seat)
        assert card == self.known[seat][(epoch, slot)]  # the card played is the card held
        self.public[(epoch, slot)] = card
        self.discards.append(card)

    def turn(self, seat: int) -> None:
        if self.hands[seat]:
            self.show(seat, 0)
        self.face_up(2)
        other = (seat + 1) % self.players
        if len(self.hands[other]) > 2:
            self.show(other, 2)
        self.draw(seat, 3)

    def play(self, reshuffles: int) -> None:
        self.begin(list(range(DECK_SIZE.get(self.players, 130))))
        for seat in range(self.players):
            self.draw(seat, HAND)
        seat = 0
        while True:
            if self.top == self.size:
                if self.epoch == reshuffles:
                    return
                self.epoch += 1
                pile, self.discards = sorted(self.discards), []
                self.begin(pile)
            self.turn(seat)
            seat = (seat + 1) % self.players

    def assert_no_view_saw_more_than_it_may(self) -> None:
        table = self.table
        for player in table.players:
            seat = player.seat
            for epoch in range(self.epoch + 1):
                seen = player.seen(epoch)
                entitled = {slot for (e, slot) in table.entitled[seat] if e == epoch}
                assert set(seen) <= entitled
                state = player.public.epoch(epoch)
                for slot in range(state.size):
                    if slot in entitled:
                        continue
                    # every other slot lacks a key this seat would need, even with its own
                    others = [s for s in range(self.players) if s != seat]
                    assert player.public.missing_keys(state, slot, others)
                for slot, card in seen.items():
                    expected = self.public.get((epoch, slot), self.known[seat].get((epoch, slot)))
                    assert card == expected


def play_whole_life(players: int, executor: ThreadPoolExecutor) -> Game:
    table = Table(players, label=f"life {players}", executor=executor)
    game = Game(table)
    game.play(reshuffles=2)
    game.assert_no_view_saw_more_than_it_may()
    assert game.epoch == 2
    hidden = sum(len(hand) for hand in game.hands)
    assert len(game.public) + hidden > DECK_SIZE[players]  # reshuffled cards were dealt again
    # Every view agrees on every public fact of the deck.
    reference = table.players[0].public
    for player in table.players[1:]:
        for epoch in range(3):
            assert player.public.epoch(epoch).decks == reference.epoch(epoch).decks
            assert player.public.epoch(epoch).opened == reference.epoch(epoch).opened
    assert table.audit_both() is None  # in full and in its quick form
    return game


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 5, 7])
def test_the_whole_deck_life_of_a_game(players, executor):
    play_whole_life(players, executor=executor)
