"""The turn clock (the room option `turn_seconds`): a player who lets its time run out while
the game waits for it gets the default moves: plant the front card (harvesting first if it fits
nowhere), stop after one, let the bids on its offers lapse (withdrawing those offers; trading
goes on, with a new clock), end trading, plant the cards to plant in order.

Each client runs the clock for its own seat only: only that seat holds the keys that open its
cards, so nobody else can move for it. (A client that ignored its own clock would just be slow;
one that vanished is handled by the end vote, client.end_vote.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from protocol.cards import Card
from protocol.planting import best_field, harvest_to_make_room
from protocol.rules import (
    Action,
    EndPlanting,
    EndTrading,
    Phase,
    Plant,
    PlantPending,
    RuleError,
    Slot,
    State,
    Withdraw,
    apply,
    bids_on,
)

Situation = tuple[State | None, Mapping[Slot, Card], bool]
"""What a seat's clock looks at: the rules state (None while dealing or after the end), the
seat's open hand cards, and whether its own moves are on their way."""


class TurnClock:
    """One seat's clock: each duty of the seat that holds up the game gets `seconds`; when
    they run out, `act` gets the default moves. A clock that runs out while no move can be
    made (the seat's cards not open to it yet, its own moves on their way, a deck being
    dealt) starts again at the next `check`, if the duty is still there."""

    def __init__(
        self,
        reactor: Any,
        seconds: float,
        seat: int,
        situation: Callable[[], Situation],
        act: Callable[[list[Action]], None],
    ) -> None:
        self.reactor = reactor
        self.seconds = seconds
        self.seat = seat
        self.situation = situation
        self.act = act
        self._duty: str | None = None
        self._timer: Any = None

    def check(self) -> None:
        """After every step (and when the seat's moves were refused): a new duty starts a
        new clock; a duty that is done stops it."""
        rules, _, _ = self.situation()
        if self.seconds <= 0 or rules is None:
            return
        duty = blocking_duty(rules, self.seat)
        if duty == self._duty:
            return
        self.stop()
        self._duty = duty
        if duty is not None:
            self._timer = self.reactor.callLater(self.seconds, self._time_up, duty)

    def seconds_left(self) -> float | None:
        """None while no clock runs for this seat."""
        if self._timer is None or not self._timer.active():
            return None
        return max(0.0, self._timer.getTime() - self.reactor.seconds())

    def stop(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _time_up(self, duty: str) -> None:
        self._timer = None
        rules, hand, moving = self.situation()
        actions: list[Action] = []
        if rules is not None and blocking_duty(rules, self.seat) == duty:
            actions = default_actions(rules, self.seat, hand)
        if not actions or moving:
            self._duty = None  # spent without a move: the next check starts a new clock
            return
        self.act(actions)


def blocking_duty(state: State, seat: int) -> str | None:
    """What the whole game waits for this seat to do now, if anything (answering an offer
    does not block: the active player may end trading)."""
    if state.phase is Phase.PLANT and state.active == seat:
        return f"turn {state.turn}: plant ({state.planted} planted)"
    if state.phase is Phase.TRADE and state.active == seat:
        choosing = _offers_with_bids(state, seat)
        if choosing:
            offers = ", ".join(map(str, choosing))
            return f"turn {state.turn}: choose among the takers of offers {offers}"
        return f"turn {state.turn}: trade"
    if state.phase is Phase.PLANT_PENDING and state.players[seat].pending:
        return f"turn {state.turn}: plant {len(state.players[seat].pending)} traded cards"
    return None


def default_actions(state: State, seat: int, hand: Mapping[Slot, Card]) -> list[Action]:
    """The moves made for a player whose time ran out, checked against the rules in order."""
    actions: list[Action] = []
    while blocking_duty(state, seat) is not None:
        action = _next_default(state, seat, hand)
        if action is None:
            break
        try:
            state = apply(state, seat, action)
        except RuleError:
            break
        actions.append(action)
        if isinstance(action, EndPlanting | EndTrading):
            break  # the game moves on to others; what follows is a new duty
        if isinstance(action, Withdraw) and not _offers_with_bids(state, seat):
            break  # the bids lapsed; trading goes on, under a new clock
    return actions


def _offers_with_bids(state: State, seat: int) -> list[int]:
    """The seat's offers to everyone whose takers wait for it to choose."""
    return [o.id for o in state.offers if o.maker == seat and bids_on(state, o.id)]


def _next_default(state: State, seat: int, hand: Mapping[Slot, Card]) -> Action | None:
    player = state.players[seat]
    if state.phase is Phase.PLANT:
        if state.planted >= 1:
            return EndPlanting()
        front = player.hand[0]
        card = front.card if front.card is not None else hand.get(front.slot)
        if card is None:
            return None  # its cards are not open to it yet
        target = best_field(player.fields, card)
        return Plant(target, card) if target is not None else harvest_to_make_room(state, seat)
    if state.phase is Phase.TRADE:
        choosing = _offers_with_bids(state, seat)
        return Withdraw(choosing[0]) if choosing else EndTrading()
    card = player.pending[0]
    target = best_field(player.fields, card)
    return PlantPending(card, target) if target is not None else harvest_to_make_room(state, seat)
