"""How many offers a person at a table of bots is shown in a turn, measured in memory.

An offer concerns a seat when another seat makes it to that seat or to everyone: those are the
offers the person at that seat reads, and may answer. `offers_shown` plays a whole game
(`play_local_game`) with every strategy watched and counts, for each seat and each turn, the
offers sent that concern it. `Unanswering` stands in for a person who answers no offer (and
makes none): it plants as its strategy would, and ends trading on its turn when the others
have nothing more to say. scripts/bench offers prints the figures; tests/test_bots.py holds the
bots to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client.bots.strategies import play_local_game
from client.bots.strategy import Hand, Strategy
from protocol.rules import Action, MakeOffer, Phase, State


@dataclass
class OfferLog:
    """Every offer the strategies of one game sent: (turn, maker, to; None: everyone)."""

    sent: list[tuple[int, int, int | None]] = field(default_factory=list)

    def note(self, state: State, seat: int, actions: list[Action]) -> list[Action]:
        self.sent += [(state.turn, seat, a.to) for a in actions if isinstance(a, MakeOffer)]
        return actions

    def concerning(self, seat: int, turns: int) -> list[int]:
        """Per turn: the offers sent that concern `seat` (to it, or to everyone by another)."""
        counts = [0] * turns
        for turn, maker, to in self.sent:
            if maker != seat and to in (seat, None):
                counts[turn] += 1
        return counts


class Watched(Strategy):
    """A strategy whose offers go into a log; it plays exactly as the strategy it watches."""

    def __init__(self, inner: Strategy, log: OfferLog) -> None:
        self.inner = inner
        self.name = inner.name
        self.log = log

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.log.note(state, seat, self.inner.decide(state, seat, hand))

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.log.note(state, seat, self.inner.stop_waiting(state, seat, hand))


class Unanswering(Strategy):
    """A person who plants as `inner` would, but makes no offer and answers none: every offer
    made to it lapses."""

    def __init__(self, inner: Strategy) -> None:
        self.inner = inner
        self.name = f"{inner.name}, answering nothing"

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return [] if state.phase is Phase.TRADE else self.inner.decide(state, seat, hand)

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.inner.stop_waiting(state, seat, hand)


def offers_shown(strategies: list[Strategy], seed: bytes) -> list[list[int]]:
    """One whole game: per seat, per turn, how many offers sent concerned it."""
    log = OfferLog()
    game = play_local_game([Watched(s, log) for s in strategies], seed)
    turns = game.state.turn + 1
    return [log.concerning(seat, turns) for seat in range(len(strategies))]
