"""At the table from the lobby prompt, against a real lobby: bots added with `bot` (each a
`bean-client bot` process), taken out with `unbot`, shown by `who`; two people and a bot play
a game, one of them is killed with SIGKILL and comes back with `resume 1` from the lobby
prompt of a new client, and the other one's screen shows her away, then back.

The person in this process types into prompt_toolkit's pipe (tests/test_repl.py's terminal);
the other one is a process of its own (tests/repl_person.py), typed into through its standard
input; the games are played by tests/typist.py in both.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.input import PipeInput
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.defer import TimeoutError as WaitedTooLong

from client.bots import BotProcess, spawn_bot
from client.gamefile import GameFile
from client.screen import GameScreen, Terminal, run_connect
from tests.lobby_support import Clients, start_lobby
from tests.processes import game_files, isolated_env
from tests.test_repl import (
    PipeTerminal,
    ToolbarWatch,
    assert_ended_agreed,
    connect_args,
    connect_arguments,
    own_files,  # noqa: F401  (the fixture: this test's own files, as there)
)
from tests.typist import Typist
from tests.waiting import Watched, within

GAME_SECONDS = 240
BOT_SEATED = r"^Your bot (bot-\w+) \(planner\) is in the room, ready; unbot \1 takes it out\.$"


class TypedSeat:
    """The game screens the lobby prompt makes for the person (a fresh one per game), each
    typed into from `keyboard` and its toolbar watched."""

    def __init__(self, keyboard: PipeInput) -> None:
        self.keyboard = keyboard
        self.screens: list[tuple[GameScreen, ToolbarWatch]] = []

    def screen(self, terminal: Terminal) -> GameScreen:
        screen = GameScreen(terminal)
        Typist(reactor, screen, self.keyboard)
        self.screens.append((screen, ToolbarWatch(screen)))
        return screen

    def watch(self) -> ToolbarWatch:
        """The first game's toolbar."""
        return self.screens[0][1]

    async def at_step(self, step: int, seconds: float) -> None:
        """Until the first game has played `step` steps."""

        def played(_: object) -> bool:
            game = self.screens[0][0].game
            return game is not None and game.step >= step

        await self.watch().when(played, seconds)


def seated_bot(terminal: PipeTerminal) -> str:
    """The name of the last bot this person's client seated."""
    names = [re.match(BOT_SEATED, text) for text in terminal.said()]
    return [found.group(1) for found in names if found][-1]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_bots_are_added_shown_and_taken_out_at_the_lobby_prompt(keyboard: PipeInput) -> None:
    """`bot` starts a bot process that sits in the room, ready; `who` says it is this
    person's; `unbot` stops it and the lobby drops it; a person cannot be kicked; leaving the
    room stops the bots there."""
    lobby = await start_lobby()
    clients = Clients(lobby.port)
    terminal = PipeTerminal(keyboard)
    session = Deferred.fromCoroutine(run_connect(reactor, connect_args(lobby.port), terminal))
    try:
        await terminal.when_shown(r"^Connected to the lobby at")
        await terminal.answer("create 4 beans proofs=off", r"^Type ready when you are")
        await terminal.answer("bot", BOT_SEATED, 30)
        bot = seated_bot(terminal)
        await terminal.when_shown(rf"^{bot} is ready\.$")
        await terminal.answer("who", rf"^Room \d+ beans: 2 of 4 seats ann not ready {bot} ready "
                              r"\(your bot, planner\)$")  # fmt: skip
        bob = await clients.player("bob")
        room = await within(bob.join(1))
        assert [member.name for member in room.members] == ["ann", bot, "bob"]
        await terminal.answer("kick bob", r"^bob is not a bot of yours: only your own bots")
        await terminal.answer(f"unbot {bot}", rf"^Taking {bot} out of the room\.\.\.$")
        await terminal.when_shown(rf"^{bot} left the room\.$")  # the lobby dropped it
        await bob.listener.when(lambda seen: ("member_left", bot, "disconnected") in seen.events)
        await terminal.answer("who", r"^Room \d+ beans: 2 of 4 seats ann not ready bob not ready$")
        await terminal.answer("bot random", r"^Your bot (bot-\w+) \(random\) is in the room", 30)
        second = re.findall(r"Your bot (bot-\w+) \(random\)", " ".join(terminal.said()))[-1]
        await terminal.answer("leave", r"^You left the room\.$")
        await bob.listener.when(lambda seen: ("member_left", second, "disconnected") in seen.events)
        await terminal.answer("bot", r"^you are not in a room: a bot joins your room")
        terminal.type("quit")
        assert await within(session) == 0
    finally:
        await clients.close()
        await lobby.stop()
    assert not terminal.saw("Traceback")


class PersonProcess(BotProcess, Watched):
    """`python -m tests.repl_person`: what its screen shows, line by line, and its keyboard."""

    def __init__(self) -> None:
        BotProcess.__init__(self, self._shown)
        Watched.__init__(self)
        self.lines: list[str] = []

    def _shown(self, line: str) -> None:
        self.lines.append(line)
        self.changed()

    def type(self, line: str) -> None:
        self.transport.write(line.encode() + b"\n")

    def when_shown(self, pattern: str, seconds: float = 30) -> Deferred[Any]:
        return self.when(lambda _: any(re.search(pattern, line) for line in self.lines), seconds)


async def or_say_where(
    waiting: Deferred[Any], terminal: PipeTerminal, other: PersonProcess
) -> None:
    """Wait; past the timeout, fail with the last lines each person was shown, so that a game
    that stopped says where (a bare timeout says nothing of it)."""
    try:
        await waiting
    except WaitedTooLong:
        seen = [("this process", terminal.said()), ("the other person", other.lines)]
        lines = "\n".join(f"{who}:\n  " + "\n  ".join(said[-12:]) for who, said in seen)
        pytest.fail(f"waited too long; the last lines shown were\n{lines}")


def start_person(port: int, name: str) -> PersonProcess:
    arguments = ["-m", "tests.repl_person", *connect_arguments(port, name)]
    return spawn_bot(reactor, arguments, PersonProcess())  # type: ignore[return-value]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_two_people_and_a_bot_play_and_one_killed_comes_back_with_resume(
    keyboard: PipeInput, tmp_path: Path
) -> None:
    lobby = await start_lobby()
    terminal = PipeTerminal(keyboard)
    seat = TypedSeat(keyboard)
    ann = Deferred.fromCoroutine(
        run_connect(reactor, connect_args(lobby.port), terminal, game_screen=seat.screen)
    )
    people: list[PersonProcess] = []
    env = isolated_env(tmp_path)  # the same files as this process's (tests/test_repl.py)
    try:
        await terminal.when_shown(r"^Connected to the lobby at")
        await terminal.answer("create 3 friday proofs=off", r"^Type ready when you are")
        await terminal.answer("bot", BOT_SEATED, 30)
        bot = seated_bot(terminal)
        people.append(start_person(lobby.port, "bob"))
        await people[0].when_shown(r"^Connected to the lobby at")
        people[0].type("join 1")
        await people[0].when_shown(r"^Type ready when you are")
        people[0].type("ready")
        await terminal.when_shown(r"^bob is ready\.$")
        await terminal.answer("ready", r"^The room is full and everyone is ready")
        await terminal.when_shown(r"^The cards are dealt\.$", 60)
        await seat.at_step(60, 120)  # a few turns in
        people[0].transport.signalProcess(signal.SIGKILL)
        await within(people[0].ended, 30)
        await terminal.when_shown(r"bob is away, and the game goes on when bob is back\.$", 60)
        await seat.watch().when_drawn(r"\bAway: bob Turn \d+ · ")
        people.append(start_person(lobby.port, "bob"))
        await people[1].when_shown(rf"^1\) with ann and {bot}, turn \d+, \d+ steps played,")
        people[1].type("resume 1")
        await people[1].when_shown(r"^Back into your game with ann and ")
        await terminal.when_shown(r"^bob is back\.$", 60)
        ended = terminal.when_shown(r"^Back in the lobby\.", GAME_SECONDS)
        await or_say_where(ended, terminal, people[1])
        await people[1].when_shown(r"^Back in the lobby\. resume lists", 60)
        people[1].type("quit")
        _, err, code = await within(people[1].ended, 30)
        assert code == 0, err.decode()[-2000:]
        terminal.type("quit")
        assert await within(ann) == 0
    finally:
        for person in people:
            person.stop(reactor)
        await lobby.stop()
    assert_ended_agreed(terminal)
    assert any(
        re.match(r"^Every player's machine agrees; the audit passed\.$", line)
        for line in people[1].lines
    )
    # The story at the end is the same for both: the resumed seat's begins with the steps
    # its game file replayed.
    stories = [
        [text.replace(" (you)", "") for text in said if text.startswith("The game in numbers")]
        for said in (terminal.said(), people[1].lines)
    ]
    assert len(stories[0]) == 1 and stories[0] == stories[1]
    assert "Coins at the end of each turn" in stories[0][0]
    ended = GameFile.read(game_files(env)[bot]).end  # the bot played to the end too
    assert ended is not None and ended["kind"] == "end"
    assert not any("Traceback" in line for person in people for line in person.lines)


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_person_who_leaves_finds_the_game_going_on_with_their_bots_and_resumes_it(
    keyboard: PipeInput,
) -> None:
    """ann plays two bots of her own and leaves mid-game: the lobby says the game goes on and
    how to come back, her bots play on (they are not stopped), and `resume 1` typed at once
    takes her back (the list is read afresh), with the table and her hand, to the end of the
    game. (Before: leaving stopped the bots, the lobby spoke of a rematch, and `resume 1`
    said there was no unfinished game 1.)"""
    lobby = await start_lobby()
    terminal = PipeTerminal(keyboard)
    seat = TypedSeat(keyboard)
    ann = Deferred.fromCoroutine(
        run_connect(reactor, connect_args(lobby.port), terminal, game_screen=seat.screen)
    )
    try:
        await terminal.when_shown(r"^Connected to the lobby at")
        await terminal.answer("create 3 friday proofs=off", r"^Type ready when you are")
        await terminal.answer("bot", BOT_SEATED, 30)
        terminal.type("bot")
        await terminal.watched.when(
            lambda _: len([t for t in terminal.said() if re.match(BOT_SEATED, t)]) == 2, 30
        )
        await terminal.answer("ready", r"^The room is full and everyone is ready")
        await terminal.when_shown(r"^The cards are dealt\.$", 60)
        await seat.at_step(40, 120)  # a few turns in
        terminal.type("leave")
        terminal.type("leave")
        await terminal.when_shown(
            r"^Back in the lobby\. You left the game with bot-\w+ and bot-\w+: they wait for "
            r"you; your bots .* stay at the table until it ends; resume 1 takes you back\.",
            30,
        )
        assert not terminal.saw("rematch plays again")
        await terminal.answer("resume 1", r"^Back into your game with bot-\w+ and bot-\w+")
        await terminal.when_shown(r"^You are back at the table with bot-\w+ and bot-\w+\.$", 30)
        await terminal.when_shown(r"^Your hand", 30)
        await terminal.when_shown(r"^Back in the lobby\. resume lists", GAME_SECONDS)
        terminal.type("quit")
        assert await within(ann) == 0
    finally:
        await lobby.stop()
    said = terminal.said()
    assert any(re.search(r"Game over: .* Coins: ", line) for line in said), said
    assert "Every player's machine agrees; the audit passed." in said
    assert not terminal.saw("Traceback")
