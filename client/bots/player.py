"""A bot at a seat: a strategy (client.bots.strategy) asked after every step, and again while the
game waits for it, knowing only what its seat knows (the driver's view).

A bot that holds up the game while it waits for answers to its offers (a person thinking over
its gift or its offer) waits as long as the room's turn clock allows (the clock then makes the
seat's default moves, as for anyone) or, in a room without one, until a seat has owed it an
answer for `answers_within` seconds (9, so that with the step that ends trading a person's
silence holds the table under 10 s: no peer says that its person is typing, so a bot cannot
tell thinking from looking away; an offer left unanswered lapses when trading ends, as at a
real table). The bot's own moves meanwhile (a taker chosen, a new offer) do not start that
wait again; a seat that answers everything owes nothing until it is asked again. One
that waits with no offer of its own open (an active player with nothing more to offer) gives
the others `offers_within` seconds to make offers for its face-up cards, unless a step has
been played since its duty began (every seat has had its say). Then its strategy's
`stop_waiting` moves are made."""

from __future__ import annotations

from typing import Any

from twisted.logger import Logger

from client.bots.strategy import Strategy
from client.game import Outcome, PeerGame, Player
from client.turn_clock import blocking_duty
from protocol.lockstep import StepReport
from protocol.rules import Action, RuleError, accepters, waiting_for

log = Logger()

PATIENT_SECONDS = 9.0  # how long a seat may owe a bot an answer in a room without a turn clock
A_MOMENT = 0.3  # how long an active bot with nothing more to do waits for others' offers


class BotPlayer(Player):
    def __init__(
        self,
        reactor: Any,
        strategy: Strategy,
        patience: float = 1.0,
        answers_within: float = PATIENT_SECONDS,
        offers_within: float = A_MOMENT,
    ) -> None:
        """`patience`: how often a bot the game waits for is asked again."""
        self.reactor = reactor
        self.strategy = strategy
        self.patience = patience
        self.answers_within = answers_within
        self.offers_within = offers_within
        self._timer: Any = None
        self._waiting: tuple[str, float] | None = None  # (the duty it holds up, since when)
        self._owed: dict[int, float] = {}  # seats that owe an answer to an offer of its: since
        self._duty: tuple[str, int] | None = None  # (the duty it holds up, the step it began)

    def may_act(self, game: PeerGame) -> None:
        self._decide(game)

    def step_played(self, game: PeerGame, report: StepReport) -> None:
        self._decide(game)

    def finished(self, game: PeerGame, outcome: Outcome) -> None:
        self._cancel()

    def _decide(self, game: PeerGame) -> None:
        """Act if the strategy wants to; if the game waits for this seat and it does not,
        ask again later (at the latest when its wait is over)."""
        self._cancel()
        view = game.view
        if game.outcome is not None or view.rules is None or game.queued:
            return
        actions = self.strategy.decide(view.rules, view.seat, view.hand)
        left = self._wait_left(game)
        if not actions and left is not None and left <= 0:
            actions = self.strategy.stop_waiting(view.rules, view.seat, view.hand)
        if actions:
            self._submit(game, actions)
            return
        if any(seat == view.seat for seat, _ in waiting_for(view.rules)):
            delay = self.patience if left is None or left <= 0 else min(self.patience, left)
            self._timer = self.reactor.callLater(delay, self._poll, game)

    def _wait_left(self, game: PeerGame) -> float | None:
        """Seconds until this seat, holding up the game, has waited long enough since its last
        move; None while it holds up nothing, or while the room's turn clock decides."""
        view = game.view
        assert view.rules is not None
        duty = blocking_duty(view.rules, view.seat)
        now = self.reactor.seconds()
        if duty is None:
            self._waiting = None
            self._owed = {}
            return None
        if self._waiting is None or self._waiting[0] != duty:
            self._waiting = (duty, now)
        if self._duty is None or self._duty[0] != duty:
            self._duty = (duty, game.step)
        mine = [offer for offer in view.rules.offers if offer.maker == view.seat]
        if mine and game.turn_seconds > 0:
            return None  # the clock decides how long a person may think it over
        owing = {seat for offer in mine for seat in accepters(view.rules, offer)}
        self._owed = {seat: self._owed.get(seat, now) for seat in owing}
        if self._owed:
            return min(self._owed.values()) + self.answers_within - now
        limit = self.offers_within if game.step == self._duty[1] else 0.0
        return self._waiting[1] + limit - now

    def _submit(self, game: PeerGame, actions: list[Action]) -> None:
        self._waiting = None  # a moment for others' offers is counted from the bot's last move
        try:
            game.submit(actions)
        except RuleError as error:  # a strategy bug; the game goes on without the move
            log.warn(
                "{bot} chose a move the rules refuse: {error}",
                bot=self.strategy.name,
                error=error,
            )

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
