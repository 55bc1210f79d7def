"""How long a bot at a networked seat waits for a person's answer: as long as the room's turn
clock allows, or a patient default; not a fixed number of times it is asked again.

The game here is a fake that records what the bot submits (the waiting is all the bot's own
business, timed by a `Clock`); whole networked games with bots are in test_game_e2e.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from twisted.internet.task import Clock

from client.bots import GreedyBot, PlannerBot, Strategy
from client.bots.player import A_MOMENT, PATIENT_SECONDS, BotPlayer
from protocol.cards import Card
from protocol.rules import (
    Action,
    EndPlanting,
    EndTrading,
    Plant,
    Reject,
    Slot,
    State,
    Withdraw,
    accepters,
    apply,
    waiting_for,
)
from tests.rules_helpers import table


@dataclass
class View:
    rules: State
    seat: int
    hand: dict[Slot, Card]


@dataclass
class RecordingGame:
    """What BotPlayer reads of a PeerGame, and the moves it submits."""

    view: View
    turn_seconds: int = 0
    outcome: None = None
    queued: list[Action] = field(default_factory=list)
    inbox: dict[int, dict[int, object]] = field(default_factory=dict)
    step: int = 0
    submitted: list[list[Action]] = field(default_factory=list)

    def submit(self, actions: list[Action]) -> None:
        self.submitted.append(actions)


def waiting_for_an_answer(strategy: Strategy) -> RecordingGame:
    """Seat 0 is trading and has made offers (a face-up card it cannot use, beans it wants
    from the others' hands); nobody answers."""
    game = table(
        hands={0: "chili blue", 1: "soy", 2: "stink", 3: "green"},
        fields={0: ["blue blue", "chili chili"]},
        deck="garden blue",
    )
    game = game.plant_front(1).do(0, EndPlanting())
    while actions := strategy.decide(game.state, 0, game.hand(0)):
        assert EndTrading() not in actions
        for action in actions:
            game = game.do(0, action)
    assert any(offer.maker == 0 for offer in game.state.offers)  # it waits for answers
    return RecordingGame(View(game.state, 0, game.hand(0)))


@pytest.mark.parametrize("strategy", [GreedyBot, PlannerBot])
def test_a_bot_waits_under_ten_seconds_for_a_persons_answer_then_its_offers_lapse(strategy):
    """No peer says that its person is typing: a person who does not answer within
    PATIENT_SECONDS (with the step that ends trading, under 10 s) is not holding the table
    up, and the offers lapse when the bot ends trading."""
    assert PATIENT_SECONDS < 10
    clock = Clock()
    bot = BotPlayer(clock, strategy())
    game = waiting_for_an_answer(bot.strategy)
    bot.may_act(game)
    clock.pump([0.5] * int(PATIENT_SECONDS * 2 - 1))  # asked again, still waiting
    assert game.submitted == []
    clock.advance(0.5)
    assert game.submitted == [[EndTrading()]]
    after = apply(game.view.rules, 0, EndTrading())
    assert after.offers == () and not any("answer" in what for _, what in waiting_for(after))


@dataclass
class MovesWhenTold:
    """A strategy that makes `moves` once, when told to (a bot trading on with the others
    while a person keeps silent), and otherwise plays as `inner` does."""

    inner: Strategy
    moves: list[Action] = field(default_factory=list)
    name: str = "moves-when-told"

    def decide(self, state: State, seat: int, hand: dict[Slot, Card]) -> list[Action]:
        moves, self.moves = self.moves, []
        return moves or self.inner.decide(state, seat, hand)

    def stop_waiting(self, state: State, seat: int, hand: dict[Slot, Card]) -> list[Action]:
        return self.inner.stop_waiting(state, seat, hand)


def test_a_bots_own_moves_do_not_start_the_wait_for_a_silent_seat_again():
    """The wait for an answer is the seat's: a bot choosing takers or making another offer
    meanwhile does not hold a silent person's table up for longer (before: each of the
    bot's moves started the wait again, and a whole-game demo measured 19.8 s)."""
    clock = Clock()
    strategy = MovesWhenTold(PlannerBot())
    bot = BotPlayer(clock, strategy)  # type: ignore[arg-type]
    game = waiting_for_an_answer(strategy)  # type: ignore[arg-type]
    bot.may_act(game)
    clock.pump([0.5] * 10)
    offer = game.view.rules.offers[0]
    strategy.moves = [Withdraw(offer.id)]
    bot.step_played(game, None)  # type: ignore[arg-type]
    assert game.submitted == [[Withdraw(offer.id)]]
    state = apply(game.view.rules, 0, Withdraw(offer.id))  # its step is played
    assert state.offers  # others are still open, and unanswered
    game.view, game.step = View(state, 0, game.view.hand), 1
    bot.step_played(game, None)  # type: ignore[arg-type]
    clock.pump([0.5] * int(PATIENT_SECONDS * 2 - 11))
    assert game.submitted == [[Withdraw(offer.id)]]
    clock.advance(0.5)
    assert game.submitted[-1] == [EndTrading()]


def test_a_seat_that_answers_owes_nothing_until_it_is_asked_again():
    """Seats whose answers came (rejections) no longer hold the bot: it waits for the seat
    that has owed an answer longest, counted from when that seat was first asked."""
    clock = Clock()
    bot = BotPlayer(clock, PlannerBot())
    game = waiting_for_an_answer(bot.strategy)
    bot.may_act(game)
    clock.pump([0.5] * 10)
    state = game.view.rules
    silent = {seat for offer in state.offers for seat in accepters(state, offer)}
    assert len(silent) >= 2
    keeps_silent = min(silent)
    for offer in state.offers:  # all but one seat say no, 5 s in
        for seat in accepters(state, offer):
            if seat != keeps_silent:
                state = apply(state, seat, Reject(offer.id))
    game.view, game.step = View(state, 0, game.view.hand), 1
    bot.step_played(game, None)  # type: ignore[arg-type]
    clock.pump([0.5] * int(PATIENT_SECONDS * 2 - 11))
    assert game.submitted == []
    clock.advance(0.5)
    assert game.submitted == [[EndTrading()]]


def test_with_nothing_more_to_trade_an_active_bot_gives_the_others_a_moment():
    clock = Clock()
    bot = BotPlayer(clock, PlannerBot())
    game = waiting_for_an_answer(bot.strategy)
    state = game.view.rules
    for offer in state.offers:  # everyone says no
        for seat in accepters(state, offer):
            state = apply(state, seat, Reject(offer.id))
    game.view = View(state, 0, game.view.hand)
    assert not state.offers and bot.strategy.decide(state, 0, game.view.hand) == []
    bot.may_act(game)
    assert game.submitted == []
    clock.advance(A_MOMENT)
    assert game.submitted == [[EndTrading()]]


def test_once_a_step_has_been_played_in_its_turn_an_active_bot_ends_trading_at_once():
    clock = Clock()
    bot = BotPlayer(clock, PlannerBot())
    game = waiting_for_an_answer(bot.strategy)
    bot.may_act(game)  # its duty begins: it waits for answers
    state = game.view.rules
    for offer in state.offers:
        for seat in accepters(state, offer):
            state = apply(state, seat, Reject(offer.id))
    game.view, game.step = View(state, 0, game.view.hand), 1  # the others answered in a step
    bot.step_played(game, None)  # type: ignore[arg-type]
    assert game.submitted == [[EndTrading()]]


def test_in_a_room_with_a_turn_clock_the_bot_waits_for_the_clock():
    clock = Clock()
    bot = BotPlayer(clock, PlannerBot())
    game = waiting_for_an_answer(bot.strategy)
    game.turn_seconds = 600  # the room's clock makes the seat's default moves in time
    bot.may_act(game)
    clock.pump([1.0] * 1200)
    assert game.submitted == []
    bot.finished(game, None)  # type: ignore[arg-type]
    assert clock.getDelayedCalls() == []


def test_a_bot_whose_front_card_is_not_open_to_it_yet_asks_again_until_it_is():
    clock = Clock()
    bot = BotPlayer(clock, PlannerBot())
    game = table(hands={0: "chili soy"}, fields={0: ["chili", ""]})
    recording = RecordingGame(View(game.state, 0, {}))  # the deck has not opened it yet
    bot.may_act(recording)
    clock.pump([0.2] * 20)
    assert recording.submitted == []
    recording.view = View(game.state, 0, game.hand(0))
    clock.advance(1.0)
    assert recording.submitted and isinstance(recording.submitted[0][0], Plant)
    bot.finished(recording, None)  # type: ignore[arg-type]
