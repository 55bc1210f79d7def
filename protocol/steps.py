"""How one lockstep step's actions are applied: the same on every peer.

In each step every seat contributes its actions (possibly none), made against the state at the
start of the step. They are applied in seat order. A seat's own actions must be legal in
sequence against that starting state: an honest client checks them before sending, so a seat
whose actions are not is cheating, and the step is refused with its name. An action that was
legal but is spoiled by an earlier seat's action in the same step (the offer was taken, the card
was traded) is refused the same way everywhere, and its author is told why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protocol.rules import Action, RuleError, State, apply


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


def check_own_actions(state: State, seat: int, actions: Sequence[Action]) -> None:
    """Raise ForbiddenAction unless the seat's actions are legal in sequence from `state`."""
    for action in actions:
        try:
            state = apply(state, seat, action)
        except RuleError as error:
            raise ForbiddenAction(seat, action, str(error)) from None


def apply_step(
    state: State, actions: Mapping[int, Sequence[Action]]
) -> tuple[State, list[Refusal], list[Applied]]:
    """Apply every seat's actions in seat order; see the module docstring for refusals."""
    for seat in sorted(actions):
        check_own_actions(state, seat, actions[seat])
    refusals, applied = [], []
    for seat in sorted(actions):
        for action in actions[seat]:
            try:
                after = apply(state, seat, action)
            except RuleError as error:
                refusals.append(Refusal(seat, action, str(error)))
                continue
            applied.append(Applied(seat, action, state, after))
            state = after
    return state, refusals, applied
