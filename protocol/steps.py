"""How one lockstep step's actions are applied: the same on every peer, whoever spoke last and
however the seats are numbered.

In each step every seat contributes its actions (possibly none), made against the state at the
start of the step. A seat may have seen the others' messages of the step before sending its
own; the rules below make sure that this never pays, and that no seat wins anything by its
number. A seat's own actions must be legal in the order this module applies them (below),
from the step's starting state: an honest client checks them before sending (`apply_own`), so
a seat whose actions are not is cheating, and the step is refused with its name
(`ForbiddenAction`).

The actions are applied in groups, each group for all seats before the next:

1. new offers;
2. rejections;
3. acceptances and bids, and every move outside trading (planting, harvesting, buying the
   third field);
4. the active player taking bids;
5. withdrawn bids;
6. withdrawn offers;
7. the end of trading.

Then the table makes the draw the step made due, if any (`DrawForTable`): the face-up cards
once step 1 is over, or the step-4 draw and the next turn (or the end of the game) once every
traded card is planted. So a harvest sent in the same step is always sold before that draw,
whatever the seats' numbers, and a reshuffle takes the same discard pile on every numbering.

A seat's own actions keep their order within a group. Inside a group, seats are taken by seat
number only as an order of evaluation: the rules make the moves of one group independent of
each other, so any order gives the same state (tests/test_steps.py checks this for every
relabelling of the seats). Where two moves of one step meet, a rule of the game decides:

- An acceptance of an offer to one player holds even if its maker withdraws the offer in the
  same step: the trade happens, and the withdrawal finds no offer.
- An acceptance holds even if the active player ends trading in the same step: the trade
  happens, then trading ends.
- Bids on an offer to everyone all stand, whenever they came; its maker takes one or none, in
  a later step. No bid wins by its seat or by its timing. A gift to everyone raced by several
  players is such an offer: each taker bids, the maker chooses.
- A bid made in the step its offer is taken (another bid), withdrawn, or trading ends, is
  placed and lapses with the offer; like every bid, it showed the cards it names.
- A take holds even if the bidder withdraws that bid in the same step.
- A card in an open offer or a standing bid is promised to it: it goes into no other offer,
  bid or trade (a counter-offer included) until that promise is withdrawn, and a withdrawal
  counts from the next step on. So two deals of one step never need the same card, and an
  acceptance or bid that was legal at the start of the step always takes effect.
- Offers that want the same face-up card (counters from several players): the active player
  accepts at most one; the others lapse once the card is gone.
- A rejection holds even if another seat's deal of the same step closes the offer (takes the
  face-up card it wanted): rejections come before deals, so none is refused for it.
- An action names only offers and bids that stood when the step began; new offers of a step
  get their ids in seat order (an id is only a name).

Hand cards opened by a step's actions (protocol.lockstep shows them first) therefore always
belong to an offer, bid or trade that took effect. The only actions a same-step move can still
spoil are withdrawals of what was traded or lapsed meanwhile; they are refused alike everywhere,
and their authors are told why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from protocol.cards import Card
from protocol.rules import (
    Accept,
    Action,
    DrawForTable,
    EndTrading,
    MakeOffer,
    Reject,
    RuleError,
    Slot,
    State,
    Take,
    Withdraw,
    apply,
    draw_due,
    hand_cards_opened,
)


class Group(IntEnum):
    """The order in which a step's actions take effect (see the module docstring)."""

    OFFERS = 1
    REJECTIONS = 2
    DEALS = 3
    TAKES = 4
    BID_WITHDRAWALS = 5
    OFFER_WITHDRAWALS = 6
    END_OF_TRADING = 7


def group_of(state: State, seat: int, action: Action) -> Group:
    """The group of a seat's action in a step that starts at `state`."""
    if isinstance(action, MakeOffer):
        return Group.OFFERS
    if isinstance(action, Reject):
        return Group.REJECTIONS
    if isinstance(action, Take):
        return Group.TAKES
    if isinstance(action, Withdraw):
        offer = next((o for o in state.offers if o.id == action.offer), None)
        mine = offer is not None and offer.maker == seat
        return Group.OFFER_WITHDRAWALS if mine else Group.BID_WITHDRAWALS
    if isinstance(action, EndTrading):
        return Group.END_OF_TRADING
    return Group.DEALS


def in_step_order(state: State, seat: int, actions: Sequence[Action]) -> list[Action]:
    """The seat's actions in the order the step applies them (stable within a group)."""
    return sorted(actions, key=lambda action: group_of(state, seat, action))


@dataclass(frozen=True)
class Applied:
    """One action that took effect, with the states around it (for the log and the screen);
    seat None is the table itself."""

    seat: int | None
    action: Action
    before: State
    after: State


@dataclass(frozen=True)
class Refusal:
    seat: int
    action: Action
    reason: str


class ForbiddenAction(Exception):
    """A seat sent an action the rules forbid against the state it was made for."""

    def __init__(self, seat: int, action: Action, reason: str) -> None:
        super().__init__(
            f"seat {seat} sent {type(action).__name__}, which the rules forbid: {reason}"
        )
        self.seat = seat
        self.action = action
        self.reason = reason


def _new_offer_named(state: State, actions: Sequence[Action], action: Action) -> int | None:
    """The id of an offer the same actions make, if this action names one: its id is not
    known when the actions are sent (offers of one step are numbered in seat order)."""
    made = sum(isinstance(a, MakeOffer) for a in actions)
    new_ids = range(state.next_offer_id, state.next_offer_id + made)
    if isinstance(action, Accept | Reject | Withdraw | Take) and action.offer in new_ids:
        return action.offer
    return None


def _own(
    state: State, seat: int, actions: Sequence[Action]
) -> tuple[State, list[tuple[Slot, Card]]]:
    """The state after the seat's actions alone, in step order, and the hidden hand cards
    they open (with the cards they claim those are); ForbiddenAction if illegal."""
    opened: list[tuple[Slot, Card]] = []
    for action in actions:
        new = _new_offer_named(state, actions, action)
        if new is not None:
            reason = f"offer {new} is not on the table yet; answer or withdraw it in the next step"
            raise ForbiddenAction(seat, action, reason)
    for action in in_step_order(state, seat, actions):
        opened += hand_cards_opened(state, seat, action)
        try:
            state = apply(state, seat, action, hold_draws=True)
        except RuleError as error:
            raise ForbiddenAction(seat, action, str(error)) from None
    return state, opened


def check_own_actions(
    state: State, seat: int, actions: Sequence[Action]
) -> list[tuple[Slot, Card]]:
    """Raise ForbiddenAction unless the seat's actions are legal, in step order, from `state`;
    the hidden hand cards they open, with the cards they claim those are."""
    return _own(state, seat, actions)[1]


def apply_own(state: State, seat: int, actions: Sequence[Action]) -> State:
    """The state after the seat's actions alone, as a step would apply them (a client's dry
    run before sending), or RuleError saying why they may not be sent."""
    try:
        state = _own(state, seat, actions)[0]
    except ForbiddenAction as refused:
        raise RuleError(refused.reason) from None
    return apply(state, None, DrawForTable()) if draw_due(state) else state


def apply_step(
    state: State, actions: Mapping[int, Sequence[Action]], *, checked: bool = False
) -> tuple[State, list[Refusal], list[Applied]]:
    """Apply every seat's actions group by group; see the module docstring. `checked`: the
    caller has checked each seat's actions alone (check_own_actions) already, as the lockstep
    does to name a cheat, so they are not applied twice more."""
    if not checked:
        for seat in sorted(actions):
            check_own_actions(state, seat, actions[seat])
    start = state
    moves = [
        (seat, action)
        for seat in sorted(actions)
        for action in in_step_order(start, seat, actions[seat])
    ]
    moves.sort(key=lambda move: group_of(start, *move))  # stable: by seat, then step order
    refusals, applied = [], []
    for seat, action in moves:
        try:
            after = apply(state, seat, action, hold_draws=True)
        except RuleError as error:
            refusals.append(Refusal(seat, action, str(error)))
            continue
        applied.append(Applied(seat, action, state, after))
        state = after
    if draw_due(state):
        after = apply(state, None, DrawForTable())
        applied.append(Applied(None, DrawForTable(), state, after))
        state = after
    return state, refusals, applied
