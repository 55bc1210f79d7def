"""A bot at a seat: a strategy (client.bots) asked after every step, and again while the game
waits for it, knowing only what its seat knows (the driver's view)."""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from client.bots import Strategy
from client.game import Outcome, PeerGame, Player
from protocol.lockstep import StepReport
from protocol.rules import RuleError, waiting_for

log = Logger()


class BotPlayer(Player):
    def __init__(self, reactor: Any, strategy: Strategy, patience: float = 1.0) -> None:
        self.reactor = reactor
        self.strategy = strategy
        self.patience = patience
        self._timer: Any = None

    def may_act(self, game: PeerGame) -> None:
        self._decide(game)

    def step_played(self, game: PeerGame, report: StepReport) -> None:
        self._decide(game)

    def finished(self, game: PeerGame, outcome: Outcome) -> None:
        self._cancel()

    def _decide(self, game: PeerGame) -> None:
        """Act if the strategy wants to; if the game waits for this seat and it does not,
        ask again later (a bot waiting for answers to its offers gives up in the end)."""
        self._cancel()
        view = game.view
        if game.outcome is not None or view.rules is None or game.queued:
            return
        actions = self.strategy.decide(view.rules, view.seat, view.hand)
        if actions:
            try:
                game.submit(actions)
            except RuleError as error:  # a strategy bug; the game goes on without the move
                log.warn(
                    "{bot} chose a move the rules refuse: {error}",
                    bot=self.strategy.name,
                    error=error,
                )
            return
        if any(seat == view.seat for seat, _ in waiting_for(view.rules)):
            self._timer = self.reactor.callLater(self.patience, self._poll, game)

    def _poll(self, game: PeerGame) -> None:
        self._timer = None
        if not game.inbox.get(game.step):  # no step under way: nothing else will wake us
            self._decide(game)
        else:
            self._timer = self.reactor.callLater(self.patience, self._poll, game)

    def _cancel(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
