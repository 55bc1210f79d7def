"""The turn clock's default moves: plant the front card (harvesting first if it fits nowhere),
stop after one, let the bids on one's offers lapse, end trading, plant the cards to plant in
order; and what blocks the game."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import Clock

from client.bots import BotPlayer, GreedyBot
from client.game import PeerGame, Player
from client.gamefile import GameFileWriter
from client.net import PeerListener
from client.turn_clock import TurnClock, blocking_duty, default_actions
from protocol.identity import Identity
from protocol.kdf import derive
from protocol.lockstep import StepReport
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.rules import (
    Accept,
    Action,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Plant,
    PlantPending,
    Withdraw,
    apply,
)
from protocol.steps import apply_step
from protocol.table import AgreedTable
from tests.rules_helpers import table
from tests.waiting import Watched, within


def test_the_front_card_is_planted_where_it_fits_and_planting_stops_after_one():
    game = table(hands={0: "chili soy"}, fields={0: ["", "chili chili"]})
    chili = game.hand_slot(0, 1)[1]
    assert default_actions(game.state, 0, game.hand(0)) == [Plant(1, chili), EndPlanting()]


def test_a_front_card_that_fits_nowhere_is_planted_after_the_cheapest_harvest():
    game = table(hands={0: "soy chili"}, fields={0: ["chili chili chili", "red red"]})
    soy = game.hand_slot(0, 1)[1]
    # Both fields pay one coin now; red is one card from its next coin, chili three.
    assert default_actions(game.state, 0, game.hand(0)) == [
        Harvest(0),
        Plant(0, soy),
        EndPlanting(),
    ]


def test_trading_is_ended_and_kept_cards_are_planted_in_order():
    game = table(hands={0: "chili green"}, deck="soy red blue blue blue")
    game = game.plant_front(0).do(0, EndPlanting())
    assert blocking_duty(game.state, 0) is not None
    assert default_actions(game.state, 0, game.hand(0)) == [EndTrading()]
    state = apply(game.state, 0, EndTrading())
    soy, red = state.players[0].pending
    # soy takes the empty field; red fits nowhere: the single chili (the cheaper loss) goes.
    assert default_actions(state, 0, game.hand(0)) == [
        PlantPending(soy, 1),
        Harvest(0),
        PlantPending(red, 0),
    ]


def test_a_maker_who_does_not_choose_lets_the_bids_lapse_and_goes_on_trading():
    game = table(hands={0: "chili green", 1: "red"}, deck="soy red blue blue blue")
    game = game.plant_front(0).do(0, EndPlanting())
    trading = blocking_duty(game.state, 0)
    soy, red = game.state.face_up
    game = game.do(0, MakeOffer(None, give_face_up=(soy,))).do(
        0, MakeOffer(None, give_face_up=(red,))
    )
    game = game.do(1, Accept(1)).do(2, Accept(2))
    choosing = blocking_duty(game.state, 0)
    assert choosing == "turn 1: choose among the takers of offers 1, 2" and choosing != trading
    assert default_actions(game.state, 0, game.hand(0)) == [Withdraw(1), Withdraw(2)]
    after = apply_step(game.state, {0: [Withdraw(1), Withdraw(2)]})[0]
    assert after.bids == () and blocking_duty(after, 0) == trading  # a new clock to trade


def test_only_duties_that_hold_up_the_game_count():
    game = table(hands={0: "chili", 1: "soy"})
    assert blocking_duty(game.state, 0) is not None
    assert blocking_duty(game.state, 1) is None  # not its turn; it may act, nobody waits
    assert default_actions(game.state, 1, game.hand(1)) == []


class ClockedSeat:
    """Seat 0 of a scripted table under a TurnClock on a fake clock: what the clock sees
    (the rules state or a deck being dealt, the cards open to the seat, its moves on their
    way) is set by the test."""

    SECONDS = 30

    def __init__(self) -> None:
        self.game = table(hands={0: "chili soy"}, fields={0: ["", "chili chili"]})
        self.hand = self.game.hand(0)
        self.moving = False
        self.dealing = False
        self.made: list[list[Action]] = []
        self.time = Clock()
        self.clock = TurnClock(self.time, self.SECONDS, 0, self.situation, self.made.append)

    def situation(self):
        return None if self.dealing else self.game.state, self.hand, self.moving


def test_the_clock_counts_down_a_duty_and_makes_the_default_moves_when_it_runs_out():
    seat = ClockedSeat()
    seat.clock.check()
    assert seat.clock.seconds_left() == seat.SECONDS
    seat.time.advance(seat.SECONDS - 1)
    assert seat.clock.seconds_left() == 1 and seat.made == []
    seat.time.advance(1)
    chili = seat.game.hand_slot(0, 1)[1]
    assert seat.made == [[Plant(1, chili), EndPlanting()]]
    assert seat.clock.seconds_left() is None


def test_each_duty_done_in_time_gets_a_new_clock_and_no_default_move():
    seat = ClockedSeat()
    seat.clock.check()
    seat.time.advance(seat.SECONDS - 1)
    seat.game = seat.game.plant_front(0).do(0, EndPlanting())  # planted in time; now trading
    seat.clock.check()
    assert seat.clock.seconds_left() == seat.SECONDS
    seat.time.advance(seat.SECONDS - 1)
    seat.game = seat.game.do(0, EndTrading())  # the face-up cards are its to plant now
    seat.clock.check()
    assert seat.clock.seconds_left() == seat.SECONDS
    assert seat.made == []


@pytest.mark.parametrize("why", ["cards not open yet", "own moves on their way", "dealing"])
def test_a_clock_that_runs_out_when_no_move_can_be_made_starts_again_at_the_next_check(why):
    seat = ClockedSeat()
    seat.clock.check()
    if why == "cards not open yet":
        seat.hand = {}
    elif why == "own moves on their way":
        seat.moving = True
    else:
        seat.dealing = True
    seat.time.advance(seat.SECONDS)
    assert seat.made == [] and seat.clock.seconds_left() is None
    seat.hand, seat.moving, seat.dealing = seat.game.hand(0), False, False
    seat.clock.check()  # the same duty as before: without the restart the game would stall
    assert seat.clock.seconds_left() == seat.SECONDS
    seat.time.advance(seat.SECONDS)
    assert len(seat.made) == 1


def test_no_clock_runs_without_the_room_option():
    seat = ClockedSeat()
    seat.clock.seconds = 0
    seat.clock.check()
    seat.time.advance(3600)
    assert seat.clock.seconds_left() is None and seat.made == []


class Idle(Player, Watched):
    """A seat whose player never moves: only its turn clock plays for it."""

    def __init__(self) -> None:
        Watched.__init__(self)
        self.notices: list[str] = []
        self.turns_seen: set[int] = set()
        self.clock_seen: list[float | None] = []  # the time left on its turns

    def notice(self, game: PeerGame, text: str) -> None:
        self.notices.append(text)
        self.changed()

    def step_played(self, game: PeerGame, report: StepReport) -> None:
        rules = game.view.rules
        if rules is not None and rules.active == game.seat:
            self.turns_seen.add(rules.turn)
            self.clock_seen.append(game.turn_seconds_left())
        self.changed()


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_player_who_lets_the_clock_run_out_gets_the_default_moves(tmp_path):
    identities = [Identity.generate() for _ in range(3)]
    listeners = [PeerListener(reactor, identities[i]) for i in range(3)]
    ports = [await within(listener.listen("tcp:0:interface=127.0.0.1")) for listener in listeners]
    roster = GameStart(
        room_id=1,
        game_id=bytes(range(16)),
        seats=tuple(
            Seat(f"p{i}", identities[i].public_key, "127.0.0.1", ports[i]) for i in range(3)
        ),
        options=RoomOptions(proofs=False, turn_seconds=1),
    )
    idle = Idle()
    players = [idle, BotPlayer(reactor, GreedyBot()), BotPlayer(reactor, GreedyBot())]
    seeds = [derive(b"turn clock test!", seat) for seat in range(3)]
    contributions = tuple(derive(b"turn clock table", seat) for seat in range(3))
    with ThreadPoolExecutor(2) as executor:
        games = [
            PeerGame(
                reactor,
                identities[s],
                AgreedTable(roster, s, contributions),
                seeds[s],
                listeners[s],
                GameFileWriter.create(
                    tmp_path / f"{s}.game",
                    AgreedTable(roster, s, contributions),
                    seeds[s],
                    "127.0.0.1",
                ),
                players[s],
                executor=executor,
            )
            for s in range(3)
        ]
        for game in games:
            game.start()
        try:
            # Two whole turns of the idle seat pass: its clock planted, ended trading and
            # planted its kept cards, and the game went on to the others each time.
            await idle.when(
                lambda p: len(p.turns_seen) >= 2 and games[1].view.rules.turn > max(p.turns_seen),
                seconds=120,
            )
        finally:
            for game in games:
                game.stop("the test is over")
            for game in games:
                await within(game.done)
            for listener in listeners:
                await within(listener.stop())
    assert sum("your time is up" in text for text in idle.notices) >= 4
    assert any(left is not None and 0 < left <= 1 for left in idle.clock_seen)
