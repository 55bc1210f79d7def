"""Whole games between Lockstep objects in one process, exchanging only message bytes.

Each seat's strategy decides from that seat's own view (its Lockstep's rules state and hand),
as a bot would over the network; a `tamper` hook lets a test change one seat's message bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from client.bots import Strategy
from protocol.kdf import derive
from protocol.lockstep import GameConfig, Lockstep, StepReport
from protocol.rules import Action, Options

Tamper = Callable[[int, int, bytes, Lockstep], bytes]  # (step, seat, payload, its lockstep)


def seeds_for(players: int, label: bytes) -> list[bytes]:
    return [derive(label.ljust(16, b"."), "test seed", seat) for seat in range(players)]


@dataclass
class LocalGame:
    seats: list[Lockstep]
    reports: list[list[StepReport]] = field(default_factory=list)
    idle_rounds: int = 0

    @classmethod
    def new(
        cls,
        players: int,
        proofs: bool = True,
        label: bytes = b"game",
        options: Options | None = None,
    ) -> LocalGame:
        config = GameConfig(
            derive(label.ljust(16, b"."), "game id")[:16],
            players,
            options or Options(),
            proofs,
        )
        seeds = seeds_for(players, label)
        return cls([Lockstep(config, seat, seeds[seat]) for seat in range(players)])

    def step(self, actions: dict[int, Sequence[Action]], tamper: Tamper | None = None) -> None:
        payloads = {}
        for seat, lockstep in enumerate(self.seats):
            payload = lockstep.compose(actions.get(seat, ()))
            if tamper is not None:
                payload = tamper(lockstep.step, seat, payload, lockstep)
            payloads[seat] = payload
        self.reports.append([lockstep.play(payloads) for lockstep in self.seats])
        assert len({lockstep.chain for lockstep in self.seats}) == 1, "the seats diverged"

    def play(
        self, strategies: Sequence[Strategy], tamper: Tamper | None = None, max_steps: int = 5000
    ) -> None:
        """Steps until the game is over and audited: urgent steps at once, otherwise whenever
        a strategy acts; when every strategy waits, the answers they wait for are not coming
        (`stop_waiting`), and idle ones are asked again, as a timer would."""
        for _ in range(max_steps):
            if all(lockstep.over for lockstep in self.seats):
                return
            wanted = self._moves(strategies, waited_enough=False)
            if not wanted and not self.seats[0].urgent():
                wanted = self._moves(strategies, waited_enough=True)
            if wanted or self.seats[0].urgent():
                self.idle_rounds = 0
                self.step(wanted, tamper)
            else:
                self.idle_rounds += 1
                assert self.idle_rounds < 100, "nobody acts and nothing is due"
        raise AssertionError("the game did not end")

    def _moves(
        self, strategies: Sequence[Strategy], waited_enough: bool
    ) -> dict[int, list[Action]]:
        """What each seat's strategy does now, or once it has waited long enough."""
        wanted = {}
        for seat, lockstep in enumerate(self.seats):
            if lockstep.rules is not None and not lockstep.over:
                strategy = strategies[seat]
                ask = strategy.stop_waiting if waited_enough else strategy.decide
                chosen = ask(lockstep.rules, seat, lockstep.hand)
                if chosen:
                    wanted[seat] = chosen
        return wanted
