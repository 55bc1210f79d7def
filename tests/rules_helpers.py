"""Build exact game situations for rule tests, with every card of the game still in one place.

`table(...)` lays out hands, fields, earnings, the discard pile and the top of the deck by bean
name; the cards not placed go to the bottom of the deck (or to the discard pile). `Game` applies
actions as the players would, knowing every card, and turns face-up cards itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from protocol.cards import CARDS_OF, Bean, Card, bean_of, parse_bean
from protocol.invariants import violations
from protocol.rules import (
    Action,
    Deck,
    HandCard,
    Phase,
    Plant,
    Player,
    RevealFaceUp,
    Slot,
    State,
    apply,
    new_game,
)


@dataclass
class Game:
    state: State
    known: dict[Slot, Card]
    orders: dict[int, list[Card]] = field(default_factory=dict)  # later epochs' deck orders

    def card(self, slot: Slot) -> Card:
        if slot in self.known:
            return self.known[slot]
        order = self.orders.get(slot.epoch) or list(self.state.epochs[slot.epoch])
        return order[slot.position]

    def deck_card(self, offset: int) -> Card:
        """The card `offset` places below the top of the deck."""
        deck = self.state.deck
        return self.card(Slot(deck.epoch, deck.drawn + offset))

    def hand(self, seat: int) -> dict[Slot, Card]:
        return {h.slot: self.card(h.slot) for h in self.state.players[seat].hand}

    def hand_beans(self, seat: int) -> list[str]:
        return [bean_of(self.card(h.slot)).value for h in self.state.players[seat].hand]

    def hand_slot(self, seat: int, position: int) -> tuple[Slot, Card]:
        """The slot and card at a hand position (1 = front)."""
        slot = self.state.players[seat].hand[position - 1].slot
        return slot, self.card(slot)

    def field_beans(self, seat: int) -> list[list[str]]:
        return [[bean_of(c).value for c in f] for f in self.state.players[seat].fields]

    def do(self, seat: int, action: Action) -> Game:
        """Apply the action; turn face-up cards when the game asks; check every invariant."""
        after = Game(apply(self.state, seat, action), self.known, self.orders)
        if after.state.phase is Phase.REVEAL:
            cards = tuple(after.card(slot) for slot in after.state.reveal_slots)
            after.state = apply(after.state, None, RevealFaceUp(cards))
        problems = violations(after.state)
        assert not problems, problems
        return after

    def plant_front(self, field_index: int) -> Game:
        seat = self.state.active
        front = self.state.players[seat].hand[0].slot
        return self.do(seat, Plant(field_index, self.card(front)))


def beans(names: str) -> list[Bean]:
    return [parse_bean(n) for n in names.split()] if names else []


def table(
    players: int = 4,
    start: int = 0,
    hands: dict[int, str] | None = None,
    deck: str = "",
    fields: dict[int, list[str]] | None = None,
    earnings: dict[int, str] | None = None,
    discard: str = "",
    rest: str | int = "deck",
    exhaustions: int = 0,
    phase: Phase = Phase.PLANT,
    **state_changes: object,
) -> Game:
    """A game at `start`'s step 1 (or another phase) with these cards where they are named.

    Bean lists are space-separated names, front or top first. Seats not in `hands` get an empty
    hand. `rest` says where the unnamed cards go: the bottom of the deck ("deck"), the discard
    pile ("discard"), or the back of a seat's hand (its number).
    With `exhaustions` > 0 the deck is that epoch's, every earlier epoch fully opened."""
    base = new_game(players, start)
    pool: dict[Bean, list[Card]] = {b: list(CARDS_OF[b]) for b in base.setup.beans}

    def take(names: str) -> list[Card]:
        return [pool[b].pop(0) for b in beans(names)]

    hands = hands or {}
    fields = fields or {}
    earnings = earnings or {}
    hand_cards = {seat: take(hands.get(seat, "")) for seat in range(players)}
    field_cards = {
        seat: [take(f) for f in fields.get(seat, [""] * base.setup.start_fields)]
        for seat in range(players)
    }
    earning_cards = {seat: take(earnings.get(seat, "")) for seat in range(players)}
    discard_cards = take(discard)
    deck_cards = take(deck)
    leftover = [c for b in base.setup.beans for c in pool[b]]
    if rest == "deck":
        deck_cards += leftover
    elif rest == "discard":
        discard_cards += leftover
    else:
        hand_cards[int(rest)] += leftover
    epoch = exhaustions
    opened = sum(len(f) for fs in field_cards.values() for f in fs)
    opened += sum(map(len, earning_cards.values())) + len(discard_cards)
    position = opened
    known: dict[Slot, Card] = {}
    player_states = []
    for seat in range(players):
        hand = []
        for card in hand_cards[seat]:
            slot = Slot(epoch, position)
            known[slot] = card
            hand.append(HandCard(slot))
            position += 1
        player_states.append(
            Player(tuple(hand), tuple(map(tuple, field_cards[seat])), tuple(earning_cards[seat]))
        )
    for offset, card in enumerate(deck_cards):
        known[Slot(epoch, position + offset)] = card
    hidden = frozenset(c for cards in hand_cards.values() for c in cards) | frozenset(deck_cards)
    all_cards = tuple(sorted(base.setup.deck))
    state = replace(
        base,
        players=tuple(player_states),
        active=start,
        phase=phase,
        deck=Deck(epoch, position, position + len(deck_cards)),
        epochs=((),) * epoch + (all_cards,),
        hidden=(frozenset(),) * epoch + (hidden,),
        discard=tuple(discard_cards),
        exhaustions=exhaustions,
        **state_changes,  # type: ignore[arg-type]
    )
    problems = violations(state)
    assert not problems, problems
    return Game(state, known)
