"""What a bot is: a strategy that chooses a seat's actions from what that seat knows.

A strategy sees the shared state (which holds no hidden card) and its own hand (slot -> card),
exactly like a person at that seat, and returns the actions it takes now (often none). The
strategies themselves live in client.bots.strategies and client.bots.planner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.cards import Card
from protocol.rules import Action, EndTrading, Phase, RuleError, Slot, State, apply

Hand = Mapping[Slot, Card]


class Strategy:
    """What a bot does now. `decide` returns actions applied in order within one step.

    A strategy that waits for answers (to its offers) returns no actions; how long it waits is
    the driver's business (the room's turn clock, or a patient default), and then
    `stop_waiting` says what it does instead."""

    name = "strategy"

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        raise NotImplementedError

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        """The answers it waits for are not coming: the active player ends trading."""
        if state.phase is Phase.TRADE and seat == state.active:
            return [EndTrading()]
        return []


def legal_prefix(state: State, seat: int, actions: Sequence[Action]) -> list[Action]:
    """The actions up to the first one the rules refuse in sequence: a seat must never send
    actions of its own that are illegal together (the others would name it a cheat)."""
    done: list[Action] = []
    for action in actions:
        try:
            state = apply(state, seat, action)
        except RuleError:
            break
        done.append(action)
    return done
