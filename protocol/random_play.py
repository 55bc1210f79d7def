"""Random legal play for one seat: the random bot and the simulator both use it.

Uniform over the seat's legal actions, plus now and then a random offer or gift built from what
the seat may offer. It knows only what the seat knows: the shared state and its own hand. The
randomness is a seeded `protocol.kdf.Stream`, so a game replays from its seed.
"""

from __future__ import annotations

from collections.abc import Mapping

from protocol.cards import Bean, Card
from protocol.kdf import Stream
from protocol.rules import (
    Action,
    Harvest,
    MakeOffer,
    Slot,
    State,
    legal_actions,
    offer_options,
    waiting_for,
)


def random_offer(
    state: State, seat: int, hand: Mapping[Slot, Card], rng: Stream
) -> MakeOffer | None:
    """A random offer the seat may make now (a gift a quarter of the time), or None."""
    options = offer_options(state, seat)
    if options is None:
        return None
    to = rng.choice(options.recipients)
    known = [(slot, hand[slot]) for slot in options.hand if slot in hand]
    give_hand = tuple(rng.shuffled(known)[: rng.randbelow(3)])
    give_face_up = tuple(rng.shuffled(options.face_up)[: rng.randbelow(3)])
    visible = [card for holder, card in options.visible if to is None or holder == to]
    want_cards: tuple[Card, ...] = ()
    want_beans: tuple[tuple[Bean, int], ...] = ()
    mode = rng.randbelow(4)
    if mode == 0 and (give_hand or give_face_up):
        pass  # a gift
    elif mode == 1 and visible:
        want_cards = (rng.choice(visible),)
    else:
        beans = rng.shuffled(options.beans)[: 1 + rng.randbelow(2)]
        want_beans = tuple((bean, 1 + rng.randbelow(2)) for bean in beans)
    return MakeOffer(to, give_hand, give_face_up, want_cards, want_beans)


def random_action(
    state: State,
    seat: int,
    hand: Mapping[Slot, Card],
    rng: Stream,
    idle_chance: int = 4,
    harvest_every: int = 1,
) -> Action | None:
    """A uniformly random legal action for the seat, or None (it does nothing now). A seat the
    game is not waiting for stays idle with probability (idle_chance - 1) / idle_chance.
    With `harvest_every` = n, optional harvests are considered only one time in n, so that
    fields grow and coins (and field purchases) happen; a harvest that is the only way on is
    always considered."""
    if all(s != seat for s, _ in waiting_for(state)) and not rng.chance(1, idle_chance):
        return None
    actions: list[Action] = legal_actions(state, seat, hand)
    others: list[Action] = [a for a in actions if not isinstance(a, Harvest)]
    if others and not rng.chance(1, harvest_every):
        actions = others
    if rng.chance(1, 3):
        offer = random_offer(state, seat, hand, rng)
        if offer is not None:
            actions.append(offer)
    return rng.choice(actions) if actions else None
