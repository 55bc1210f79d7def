"""Plain mode's parts (client/screen/plain.py): when it is chosen, lines read from a pipe by a
thread, a status said only when it changes, and the game's things each said in one line that
stands alone, with no escape codes. A whole game is in tests/test_plain_golden.py."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.output import DummyOutput

from client.presence import PresenceNews
from client.screen import GameScreen, Terminal, in_twisted
from client.screen.commands import Question, parse_game_command
from client.screen.plain import (
    PlainLines,
    PlainLooks,
    PlainPrompt,
    plain_wanted,
    room_lines,
    status_words,
)
from client.screen.player_view import PlayerView
from protocol.messages import Member, RoomOptions, RoomState
from protocol.rules import EndPlanting, EndTrading, Harvest, MakeOffer, Phase, Plant
from protocol.steps import Refusal
from tests.rules_helpers import table
from tests.waiting import within

NAMES = ("ann", "bob", "cy")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("flag", "environ", "stdout", "plain"),
    [
        (False, {"TERM": "xterm"}, Tty(), False),
        (True, {"TERM": "xterm"}, Tty(), True),
        (False, {"TERM": "dumb"}, Tty(), True),
        (False, {"TERM": "xterm"}, io.StringIO(), True),  # a pipe or a file
        (False, {"TERM": "xterm", "NO_COLOR": "1"}, Tty(), False),  # colour only
    ],
)
def test_plain_mode_is_chosen_by_the_flag_a_dumb_terminal_or_output_that_is_no_terminal(
    flag: bool, environ: dict[str, str], stdout: Any, plain: bool
) -> None:
    assert plain_wanted(flag, environ, stdout) is plain


@pytest.fixture
def pipe() -> Iterator[tuple[PlainLines, Any]]:
    read, write = os.pipe()
    with os.fdopen(read) as lines, os.fdopen(write, "w") as typing:
        yield PlainLines(lines), typing


@pytest_twisted.ensureDeferred
async def test_lines_come_from_the_pipe_an_interrupt_ends_a_read_and_the_end_stays(pipe):
    lines, typing = pipe
    typing.write("rooms\njoin 3\n")
    typing.flush()
    assert await within(in_twisted(lines.read())) == "rooms"
    assert await within(in_twisted(lines.read())) == "join 3"
    waiting = in_twisted(lines.read())
    lines.interrupt()  # a game starts: the line being read gives way
    assert await within(waiting) == ""
    lines.interrupt()  # with no read waiting, the next one gives way at once
    assert await within(in_twisted(lines.read())) == ""
    typing.write("quit\n")
    typing.close()
    assert await within(in_twisted(lines.read())) == "quit"
    assert await within(in_twisted(lines.read())) is None
    assert await within(in_twisted(lines.read())) is None


@pytest_twisted.ensureDeferred
async def test_the_status_is_said_only_when_it_changes_and_input_ending_is_eof(pipe):
    lines, typing = pipe
    said: list[str] = []
    status = ["Turn 1, bob's turn\ndeck 40"]
    prompt = PlainPrompt(lines, said.append, lambda: status[0])
    typing.write("hand\ntable\n")
    typing.flush()
    assert await within(in_twisted(prompt.line("ann> "))) == "hand"
    prompt.redraw()
    assert await within(in_twisted(prompt.line("ann> "))) == "table"
    status[0] = "Turn 2, your turn\ndeck 40"
    prompt.redraw()
    status[0] = "Turn 2, your turn"  # a part gone, none new: all of it again
    prompt.redraw()
    assert said == [
        "status: Turn 1, bob's turn. Deck 40.",
        "status: Turn 2, your turn.",  # what changed only
        "status: Turn 2, your turn.",
    ]
    typing.write("ann\n")
    typing.close()
    asking = PlainPrompt(lines, said.append, asks=True)
    assert await within(in_twisted(asking.line("Your name: "))) == "ann"
    assert said[-1] == "question: Your name:"
    with pytest.raises(EOFError):
        await within(in_twisted(prompt.line("ann> ")))


def a_view(phase: Phase = Phase.PLANT) -> PlayerView:
    game = table(3, 0, {0: "chili soy soy", 1: "blue wax", 2: "garden"}, phase=phase)
    return PlayerView(game.state, 0, game.hand(0), NAMES)


def one_line_each(text: Any) -> list[str]:
    lines = to_plain_text(text).splitlines()
    assert all("\x1b" not in line for line in lines)
    return lines


def test_each_event_is_one_line_labelled_with_its_turn_and_player():
    looks = PlainLooks()
    game = table(3, 0, {0: "chili soy soy", 1: "blue wax", 2: "garden"}, phase=Phase.PLANT)
    front = game.hand_slot(0, 1)[1]
    planted = game.do(0, Plant(0, front))
    lines = one_line_each(looks.event(game.state, 0, Plant(0, front), planted.state, NAMES, 1))
    assert lines == ["turn 1, ann: planted chili in field 1 (chili 1)"]
    mine = one_line_each(looks.event(game.state, 0, Plant(0, front), planted.state, NAMES, 0))
    assert mine == ["turn 1, you: planted chili in field 1 (chili 1)"]
    harvest = planted.do(0, Harvest(0))
    lines = one_line_each(looks.event(planted.state, 0, Harvest(0), harvest.state, NAMES, 1))
    assert lines == ["turn 1, ann: harvested field 1 (chili 1) for 0 coins"]


def test_trading_and_the_end_of_a_turn_are_said_in_lines_that_stand_alone():
    looks = PlainLooks()
    game = table(3, 0, {0: "chili soy", 1: "blue wax"}, deck="soy garden")
    game = game.plant_front(0).do(0, EndPlanting())  # soy and garden are turned face up
    offer = MakeOffer(None, give_face_up=(game.state.face_up[0],))
    made = game.do(0, offer)
    lines = one_line_each(looks.event(game.state, 0, offer, made.state, NAMES, 1))
    assert len(lines) == 1
    assert lines[0] == "turn 1, ann: made offer 1 to everyone: gives soy (face 1) as a gift"
    ended = made.do(0, EndTrading())
    lines = one_line_each(looks.event(made.state, 0, EndTrading(), ended.state, NAMES, 1))
    assert lines[0] == "turn 1, ann: ended trading, keeping soy and garden to plant"
    assert all(line.startswith("turn 1") for line in lines)


def test_the_table_hand_who_and_questions_say_one_thing_a_line():
    looks, view = PlainLooks(), a_view()
    (shown,) = looks.table(view, "123 456 789 012", 40)
    lines = one_line_each(shown)
    assert lines[0].startswith("table: turn 1, your turn, step 1, planting; deck ")
    assert lines[1].startswith("player 1, you, playing now: 0 coins; 3 cards in hand; field 1 ")
    assert lines[2].startswith("player 2, bob: 0 coins; 2 cards in hand; field 1 empty")
    assert "hand: #1 chili (front), #2 soy, #3 soy" in lines
    assert lines[-1] == "table code: 123 456 789 012"
    keys = [bytes([n]) * 32 for n in range(3)]
    labels = ["", "your bot, greedy", ""]
    who = one_line_each(looks.who(view, keys, frozenset({1}), frozenset({2}), "1 2", labels))
    assert who[1].startswith("who, seat 2: bob, key ") and who[1].endswith(
        "linked, your bot, greedy"
    )
    assert who[2].endswith(", away")
    question = parse_game_command("gift bob soy", a_view(Phase.TRADE))  # which soy?
    assert isinstance(question, Question)
    asked = one_line_each(looks.question(question))
    assert asked[0].startswith("question: ") and asked[-1].startswith("question: type a number")
    assert all(line.startswith("choice ") for line in asked[1:-1])


def test_errors_refusals_chat_and_presence_are_labelled():
    looks = PlainLooks()
    view = a_view()
    assert one_line_each(looks.error("you have 3 fields; there is no field 9")) == [
        "error: you have 3 fields; there is no field 9"
    ]
    refusal = Refusal(0, Harvest(1), "field 2 is empty")
    (line,) = one_line_each(looks.refusal(refusal, view.state, NAMES, 0))
    assert line.startswith("refused: You could not harvest: ")
    assert one_line_each(looks.chat("bob", "hi; all")) == ["chat, bob: hi; all"]
    back = PresenceNews(1, True, "bob is back.")
    assert one_line_each(looks.presence(back, NAMES)) == ["back, bob: bob is back."]
    gone = PresenceNews(2, False, "cy's client stopped answering")
    assert one_line_each(looks.presence(gone, NAMES)) == ["away, cy: cy's client stopped answering"]


def test_the_status_is_the_toolbar_in_parts_with_who_is_away():
    parts = status_words(a_view(), frozenset({2})).splitlines()
    assert parts[:2] == ["Turn 1, your turn", "step 1, plant"]
    assert parts[-2:] == ["Waiting: you: plant the front card", "away: cy"]


def test_the_room_is_a_line_per_member_with_what_is_known_of_bots():
    room = RoomState(
        room_id=3,
        name="beans",
        seats=4,
        options=RoomOptions(),
        members=(
            Member(name="ann", public_key=bytes(32), ready=False),
            Member(name="bot-1f3a", public_key=b"\x01" * 32, ready=True),
            Member(name="bot-77aa", public_key=b"\x02" * 32, ready=True),
            Member(name="botticelli", public_key=b"\x03" * 32, ready=True),
        ),
    )
    assert one_line_each(room_lines(room, {b"\x01" * 32: "greedy"})) == [
        "room 3 beans: 4 of 4 seats",
        "room 3, ann: not ready",
        "room 3, bot-1f3a: ready, your bot, greedy",
        "room 3, bot-77aa: ready, named as a bot",
        "room 3, botticelli: ready",
    ]


def test_a_plain_game_screen_has_no_prompt_toolkit_session(pipe):
    lines, _ = pipe
    screen = GameScreen(Terminal(colour=False, output=DummyOutput(), lines=lines))
    assert isinstance(screen.prompt, PlainPrompt)
    assert isinstance(screen.looks, PlainLooks)
