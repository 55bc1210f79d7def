"""A table where every card is known: each epoch's deck order comes from a seed.

Simulations and tests use it in place of the shared deck, which in a real game is the only
thing that knows (jointly) where a card is. It answers what the shared deck would: the card in
a slot, a seat's own hand, the face-up cards being turned.
"""

from __future__ import annotations

from protocol.cards import Card
from protocol.kdf import Stream
from protocol.rules import RevealFaceUp, Slot, State


class OpenTable:
    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._orders: dict[tuple[int, tuple[Card, ...]], list[Card]] = {}

    def order(self, state: State, epoch: int) -> list[Card]:
        """The deck of an epoch in draw order."""
        cards = state.epochs[epoch]
        key = (epoch, cards)
        if key not in self._orders:
            self._orders[key] = Stream(self._seed, "deck order", epoch).shuffled(cards)
        return self._orders[key]

    def card_at(self, state: State, slot: Slot) -> Card:
        return self.order(state, slot.epoch)[slot.position]

    def hand(self, state: State, seat: int) -> dict[Slot, Card]:
        """What the seat privately knows: the card in each of its hand slots."""
        return {h.slot: self.card_at(state, h.slot) for h in state.players[seat].hand}

    def reveal(self, state: State) -> RevealFaceUp:
        return RevealFaceUp(tuple(self.card_at(state, slot) for slot in state.reveal_slots))
