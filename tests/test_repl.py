"""The REPL with a keyboard: lines typed into prompt_toolkit's pipe input, the screen read back
from what it printed.

- Whole games are played at the prompt against `bean-client bot` processes through a real
  lobby, typed by an automated person (tests/typist.py): `bean-client play`'s seat, and lobby
  mode (`run_connect`) from a room into a game and back for a rematch.
- Lobby mode's commands against a real lobby with another player in it; finding a lobby.
- The game screen over a scripted game (real rules states, a stand-in driver): mistakes get
  the rule's sentence, a bean held twice gets a question, and the toolbar follows the others'
  moves with no key pressed.
"""

from __future__ import annotations

import json
import re
from argparse import Namespace
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.internet.task import Clock

from client.bots import spawn_bot
from client.cli import build_parser
from client.game import Outcome, View
from client.gamefile import GameFileWriter, game_path
from client.net import FoundLobby, load_or_create
from client.screen import GameScreen, PlayerView, Terminal, in_twisted, play_human_seat, run_connect
from client.screen.commands import Submit, parse_game_command
from protocol.identity import Identity
from protocol.lockstep import StepReport
from protocol.messages import GAME_ID_BYTES, GameStart, RoomOptions, Seat
from protocol.rules import Action, Phase, Plant, RuleError
from protocol.steps import Applied
from protocol.table import PROOFS_OFF, AgreedTable
from tests.lobby_support import Clients, start_lobby
from tests.processes import LOCAL, client_arguments
from tests.rules_helpers import Game, table
from tests.typist import GOALS, Typist
from tests.waiting import Watched, within

GAME_SECONDS = 150
NAMES = ("ann", "bob", "cy")


class PipeTerminal(Terminal):
    """A terminal of pipes: what is shown can be waited for."""

    def __init__(self, keyboard: PipeInput) -> None:
        super().__init__(colour=False, input=keyboard, output=DummyOutput())
        self.keyboard = keyboard
        self.watched = Watched()

    def show(self, text: Any) -> None:
        super().show(text)
        self.watched.changed()

    def type(self, line: str) -> None:
        self.keyboard.send_text(line + "\r")

    def said(self) -> list[str]:
        """Everything shown, one entry per thing, its lines joined as one sentence."""
        return [" ".join(text.split()) for text in self.printed]

    def saw(self, pattern: str) -> bool:
        return any(re.search(pattern, text) for text in self.said())

    def when_shown(self, pattern: str, seconds: float = 10.0) -> Deferred[Any]:
        return self.watched.when(lambda _: self.saw(pattern), seconds)

    async def answer(self, line: str, pattern: str, seconds: float = 10.0) -> None:
        """Type a line and wait for what it should show."""
        self.type(line)
        await self.when_shown(pattern, seconds)


@pytest.fixture(autouse=True)
def own_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys and game files of this test only, for this process and the bots it starts."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


# --- Whole games against bots ------------------------------------------------------------------


def bot_processes(port: int, seats: int, count: int) -> list[Any]:
    """`bean-client bot` processes that quick-match into a table of `seats` (proofs off).
    They are greedy bots: the typist's goals (a bot offering a face-up card to everyone and
    taking another player's bid, ...) count on their habits; the planner, the default bot,
    plays over the network in test_game_e2e.py."""
    arguments = ["-m", "client.cli", "bot", "--strategy", "greedy"]
    return [
        spawn_bot(
            reactor,
            [
                *arguments,
                *client_arguments(port, seats, f"bot{n}", "--no-proofs", "--allow-weak-proofs"),
            ],
        )
        for n in range(1, count + 1)
    ]


async def bots_finished(bots: list[Any]) -> list[dict[str, Any]]:
    """Each bot's JSON result, once all of them have ended."""
    ended = await within(DeferredList([bot.ended for bot in bots], consumeErrors=True), 60)
    results = []
    for ok, value in ended:
        assert ok, f"a bot did not end: {value}"
        out, err, code = value
        assert code == 0, err.decode()[-2000:]
        results.append(json.loads(out.decode().strip().splitlines()[-1]))
    return results


def assert_played_by_typing(terminal: PipeTerminal, typists: list[Typist]) -> None:
    """Every kind of exchange happened, the screen said so, and each game ended agreed."""
    seen = goals_seen(typists)
    assert seen == GOALS, (sorted(GOALS - seen), [typist.typed for typist in typists])
    assert terminal.saw(r"^bot\d gave you [^.]* for [^.]* \(offer \d+\)\.")
    assert terminal.saw(r"^bot\d took your [^.]* as a gift \(offer \d+\)\.")
    assert terminal.saw(
        r"^You (gave bot\d [^.]* for|took bot\d's [^.]* as a gift) [^.]*\(offer \d+\)\."
    )
    offer, second = next(typist.took for typist in typists if typist.took)
    assert terminal.saw(
        rf"^bot\d and bot\d take offer {offer}: take {offer} bot\d or take {offer} {second}; "
        rf"withdraw {offer} lets them lapse\.$"
    )
    assert terminal.saw(rf"^You took {second}'s bid on offer {offer}: ")
    assert terminal.saw(r"^bot\d took bot\d's bid on offer (\d+): .* Your bid on offer \1 lapsed\.")
    assert terminal.saw(r"^You harvested field \d")
    assert terminal.saw(r"^You planted \w+ in field \d")
    assert terminal.saw(r"Type a number, or another command\.$")
    assert_ended_agreed(terminal)


def goals_seen(typists: list[Typist]) -> set[str]:
    return set().union(*(typist.seen for typist in typists))


def assert_ended_agreed(terminal: PipeTerminal) -> None:
    """Each game ended with one "Game over" line, and every machine agreed on it."""
    agreed = [t for t in terminal.said() if t == "Every player's machine agrees; the audit passed."]
    over = [t for t in terminal.said() if re.search(r"Game over: .* Coins: ", t)]
    assert agreed and len(over) == len(agreed), (over, agreed)
    assert sum(t.count("Game over") for t in terminal.said()) == len(agreed)
    assert not terminal.saw("Traceback")


# Which exchanges a game offers is the cards' doing: in 30 games here each goal came up in 29
# or 30 of them, some only after 500 steps. A game that lacked one is followed by another.
GAMES_AT_MOST = 3


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_whole_games_typed_at_the_prompt_against_two_bots(keyboard: PipeInput) -> None:
    """`bean-client play`'s seat: trades both ways, a gift, harvests, traded cards planted,
    questions answered by number; an offer to everyone that both bots take, the second taker
    taken; a bid on a bot's offer to everyone that the bot does not choose; each game to an
    agreed end with the audit passed. Games are played until every kind of exchange has come
    up (the typist of a later game goes only for those not seen yet)."""
    lobby = await start_lobby()
    terminal = PipeTerminal(keyboard)
    typists: list[Typist] = []
    try:
        while len(typists) < GAMES_AT_MOST and goals_seen(typists) != GOALS:
            screen = GameScreen(terminal)
            typists.append(Typist(reactor, screen, keyboard, seen=goals_seen(typists)))
            await play_against_two_bots(lobby.port, screen)
    finally:
        await lobby.stop()
    assert_played_by_typing(terminal, typists)


async def play_against_two_bots(port: int, screen: GameScreen) -> None:
    """One game of `bean-client play`'s seat and two bot processes, ended agreed by all."""
    bots = bot_processes(port, 3, 2)
    args = build_parser().parse_args(["play", "--name", "ann", "--no-proofs"])
    try:
        playing = play_human_seat(reactor, args, LOCAL, port, 3, screen)
        outcome = await within(Deferred.fromCoroutine(playing), GAME_SECONDS)
        results = await bots_finished(bots)
    finally:
        for bot in bots:
            bot.stop(reactor)
    assert outcome.final is not None and outcome.final.agreed and outcome.final.audit_passed
    assert [result["ok"] for result in results] == [True, True]
    assert {tuple(result["scores"]) for result in results} == {outcome.final.result.scores}


def connect_args(port: int | None, name: str = "ann") -> Namespace:
    """`bean-client connect [127.0.0.1:PORT] --name NAME --allow-weak-proofs` as cli.py parses
    it (the tests' games deal without proofs, to be quick)."""
    return build_parser().parse_args(["connect", *connect_arguments(port, name)])


def connect_arguments(port: int | None, name: str) -> list[str]:
    address = [] if port is None else [f"{LOCAL}:{port}"]
    own = ["--name", name, "--profile", name, "--listen", f"tcp:0:interface={LOCAL}"]
    return [*address, *own, "--allow-weak-proofs", "--no-color"]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_from_a_lobby_room_into_a_game_and_back_for_a_rematch(keyboard: PipeInput) -> None:
    lobby = await start_lobby()
    terminal = PipeTerminal(keyboard)
    typists: list[Typist] = []

    def screen_with_typist(terminal: Terminal) -> GameScreen:
        screen = GameScreen(terminal)
        typists.append(Typist(reactor, screen, keyboard))
        return screen

    args = connect_args(lobby.port)
    session = Deferred.fromCoroutine(
        run_connect(reactor, args, terminal, game_screen=screen_with_typist)
    )
    bots: list[Any] = []
    try:
        await terminal.when_shown(rf"^Connected to the lobby at {LOCAL}:{lobby.port} as ann\.")
        await terminal.when_shown(r"^First time at this lobby: its key is \w{4}-")
        await terminal.answer("create 3 beans proofs=off", r"^Type ready when you are")
        bots = bot_processes(lobby.port, 3, 2)
        await terminal.when_shown(r"^bot\d joined the room \(3 of 3 seats\)\.$", 30)
        await terminal.answer("ready", r"^The room is full and everyone is ready")
        await terminal.when_shown(r"^Table code: \d{3} \d{3} \d{3} \d{3}\. Check that", 60)
        weak = r"^Weak proofs at this table: proofs: off, a cheating shuffle is caught only by"
        await terminal.when_shown(weak)
        await terminal.when_shown(r"^Back in the lobby\.", GAME_SECONDS)
        results = await bots_finished(bots)
        await terminal.answer("rematch", r"^Room \d+ .*: 1 of 3 seats ann ready$")
        await terminal.answer("who", r"^Room \d+ .*: 1 of 3 seats ann ready$")
        terminal.type("quit")
        assert await within(session) == 0
    finally:
        for bot in bots:
            bot.stop(reactor)
        await lobby.stop()
    assert [result["ok"] for result in results] == [True, True]
    assert len(typists) == 1 and typists[0].typed  # the game was played by typing
    assert_ended_agreed(terminal)


# --- Lobby mode --------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_lobby_commands_against_a_real_lobby_with_another_player(
    keyboard: PipeInput,
) -> None:
    """Every lobby command, the name asked for again when taken, and what the other player
    does (joining, chat, ready, leaving) printed as it happens."""
    lobby = await start_lobby()
    clients = Clients(lobby.port)
    terminal = PipeTerminal(keyboard)
    try:
        bob = await clients.player("bob")
        room = await within(bob.create_room("friday", 4))
        session = Deferred.fromCoroutine(
            run_connect(reactor, connect_args(lobby.port, "bob"), terminal)
        )
        await terminal.when_shown(r"^the name 'bob' is taken; choose another$")
        await terminal.answer("ann", rf"^Connected to the lobby at {LOCAL}:{lobby.port} as ann\.")
        await terminal.answer("rooms", rf"^{room.room_id} 1/4 friday$")
        await terminal.answer(
            f"join {room.room_id}", r"^Room \d+ friday: 2 of 4 seats bob not ready ann not ready$"
        )
        await bob.listener.when(lambda seen: ("member_joined", "ann") in seen.events)
        await within(bob.chat("hi ann"))
        await terminal.when_shown(r"^bob: hi ann$")
        await terminal.answer("'hello bob", r"^ann: hello bob$")
        await within(bob.ready())
        await terminal.when_shown(r"^bob is ready\.$")
        await terminal.answer("ready", r"^You are ready\.$")
        await terminal.answer("who", r"^Room \d+ friday: 2 of 4 seats bob ready ann ready$")
        await terminal.answer("unready", r"^You are not ready\.$")
        await within(bob.leave())
        await terminal.when_shown(r"^bob left the room\.$")
        await terminal.answer("leave", r"^You left the room\.$")
        await terminal.answer("leave", r"^you are not in a room$")
        await terminal.answer(
            "create 5 late proofs=off", r"^Room \d+ late: 1 of 5 seats ann not ready$"
        )
        await terminal.answer("leave", r"^You left the room\.$")
        await terminal.answer("join 999", r"^there is no room 999 \(any more\)$")
        await terminal.answer("rematch", r"^no game to play again yet; quick SEATS finds a table$")
        await terminal.answer(
            "quick 4 proofs=off", r"^You are ready: the game starts when all 4 seats"
        )
        await terminal.answer(
            "frobnicate", r"^'frobnicate' is not a command; type help for the list$"
        )
        await terminal.answer("help join", r"^join ROOM Join a room by its number\.")
        terminal.type("quit")
        assert await within(session) == 0
    finally:
        await clients.close()
        await lobby.stop()
    assert not terminal.saw("Traceback")


@pytest_twisted.ensureDeferred
async def test_with_no_address_the_lobbies_found_are_offered_and_unfinished_games_listed(
    keyboard: PipeInput,
) -> None:
    first, second = await start_lobby(), await start_lobby()
    unfinished = unfinished_game_file(load_or_create("ann").public_key)
    unfinished_game_file(Identity.generate().public_key)  # another key's (a bot's): not listed
    found = [FoundLobby("first", LOCAL, first.port), FoundLobby("second", LOCAL, second.port)]
    terminal = PipeTerminal(keyboard)
    try:
        session = Deferred.fromCoroutine(
            run_connect(reactor, connect_args(None), terminal, discover=lambda _: succeed(found))
        )
        await terminal.when_shown(rf"^2\) second at {LOCAL}:{second.port}$")
        await terminal.answer("3", r"^type a number from 1 to 2, or nothing to choose later$")
        await terminal.answer("2", rf"^Connected to the lobby at {LOCAL}:{second.port} as ann\.")
        await terminal.answer(
            f"connect {LOCAL}:{first.port}", rf"^Connected to the lobby at {LOCAL}:{first.port}"
        )
        await terminal.answer("resume", rf"^{re.escape(str(unfinished))}$")  # with its file
        await terminal.answer("resume 2", r"^there is no unfinished game 2 \(the list has 1\)$")
        await terminal.answer("create 3", r"^Type ready when you are")
        await terminal.answer("resume 1", r"^leave your room first: a game you resume is played")
        terminal.type("quit")
        assert await within(session) == 0
    finally:
        await first.stop()
        await second.stop()
    assert terminal.saw(r"^Your unfinished games \(resume N goes back into one\):$")
    listed = [text for text in terminal.said() if re.match(r"\d\) with ", text)]
    assert listed == ["1) with bob and cy, still being dealt, 0 steps played, just now"] * 2


@pytest_twisted.ensureDeferred
async def test_when_no_lobby_answers_the_screen_says_how_to_give_one(keyboard: PipeInput) -> None:
    lobby = await start_lobby()
    terminal = PipeTerminal(keyboard)
    try:
        session = Deferred.fromCoroutine(
            run_connect(reactor, connect_args(None), terminal, discover=lambda _: succeed([]))
        )
        await terminal.when_shown(r"^no lobby answered on this LAN .* type connect HOST\[:PORT\]")
        await terminal.answer("rooms", r"^not connected to a lobby: connect HOST\[:PORT\]$")
        await terminal.answer(f"connect {LOCAL}:1", r"(?i)refused the connection to port 1\b")
        await terminal.answer(f"connect {LOCAL}:{lobby.port}", r"^Connected to the lobby at")
        await terminal.answer("rooms", r"^No open rooms\.")
        terminal.type("quit")
        assert await within(session) == 0
    finally:
        await lobby.stop()
    assert not terminal.saw("Traceback")


def a_table(proofs: bool = True, first_key: bytes | None = None) -> AgreedTable:
    """A table of NAMES, agreed (each seat's contribution made up); seat 0 has `first_key`."""
    keys = [first_key or Identity.generate().public_key]
    keys += [Identity.generate().public_key for _ in NAMES[1:]]
    roster = GameStart(
        room_id=1,
        game_id=bytes(range(GAME_ID_BYTES)),
        seats=tuple(
            Seat(name=name, public_key=key, host=LOCAL, port=4000 + n)
            for n, (name, key) in enumerate(zip(NAMES, keys, strict=True))
        ),
        options=RoomOptions(proofs=proofs),
    )
    return AgreedTable(roster, 0, tuple(bytes([n]) * 32 for n in range(len(NAMES))))


def unfinished_game_file(key: bytes) -> Path:
    """A game file as a crash leaves it, of seat 0 with this key: the header written, no end."""
    table = a_table(first_key=key)
    path = game_path(table.identity, 0)
    GameFileWriter.create(path, table, bytes(32), listen_host=LOCAL).close()
    return path


# --- The game screen over a scripted game ------------------------------------------------------


class ScriptedGame:
    """Stands in for the game driver (client.game.PeerGame) where the screen uses it: the view
    of a real rules state; what the screen submits is kept, or refused as the driver refuses a
    move the game no longer allows; the test plays the other seats' moves."""

    def __init__(
        self, layout: Game, dealing: tuple[int, int, int] | None = None, proofs: bool = True
    ) -> None:
        self.seat, self.names = 0, NAMES
        self.table = a_table(proofs)
        self.roster = self.table.roster
        self.layout = layout
        self.dealing = dealing
        self.view = self._view()
        self.outcome: Outcome | None = None
        self.submitted: list[tuple[Action, ...]] = []
        self.refusal: str | None = None
        self.turn_seconds = 0
        self.clock_runs_out: float | None = None  # on `self.clock`, with a turn clock
        self.clock = Clock()

    def turn_seconds_left(self) -> float | None:
        if self.clock_runs_out is None:
            return None
        return max(0.0, self.clock_runs_out - self.clock.seconds())

    def _view(self) -> View:
        rules = None if self.dealing is not None else self.layout.state
        return View(
            seat=self.seat, names=self.names, step=1, rules=rules, hand=self.layout.hand(0),
            connected=frozenset({1, 2}), missing=frozenset(), dealing=self.dealing,
        )  # fmt: skip

    def submit(self, actions: tuple[Action, ...]) -> None:
        if self.refusal is not None:
            raise RuleError(self.refusal)
        self.submitted.append(tuple(actions))

    def chat(self, text: str) -> None: ...

    def stop(self, reason: str) -> None:
        self.outcome = Outcome()

    def step(self, screen: GameScreen, seat: int | None = None, action: Action | None = None,
             dealing: tuple[int, int, int] | None = None) -> None:  # fmt: skip
        """A step played by the others: a deck round, or a seat's action."""
        before = self.layout
        applied = []
        if seat is not None and action is not None:
            self.layout = before.do(seat, action)
            applied.append(Applied(seat, action, before.state, self.layout.state))
        self.dealing = dealing
        self.view = self._view()
        screen.player.step_played(self, StepReport(step=2, applied=applied))  # type: ignore[arg-type]

    def end(self, screen: GameScreen) -> None:
        self.outcome = Outcome()
        screen.player.finished(self, self.outcome)  # type: ignore[arg-type]


def at_my_table(phase: Phase = Phase.PLANT, start: int = 0) -> Game:
    """Ann (seat 0) holds chili, soy, soy; her fields hold blue, wax and coffee."""
    hands = {0: "chili soy soy", 1: "blue wax", 2: "garden"}
    return table(3, start, hands, fields={0: ["blue", "wax", "coffee"]}, phase=phase)


def my_view(game: ScriptedGame) -> PlayerView:
    return PlayerView(game.layout.state, 0, game.layout.hand(0), NAMES)


async def screen_playing(
    keyboard: PipeInput, game: ScriptedGame
) -> tuple[GameScreen, Deferred[Outcome]]:
    screen = GameScreen(PipeTerminal(keyboard))
    screen.game = game  # type: ignore[assignment]
    return screen, in_twisted(screen.play(game))  # type: ignore[arg-type]


@pytest_twisted.ensureDeferred
async def test_a_line_that_breaks_a_rule_gets_the_rules_sentence_and_sends_nothing(
    keyboard: PipeInput,
) -> None:
    game = ScriptedGame(at_my_table())
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer(
        "p 1",
        r"^field 1 holds blue; chili needs an empty field or a chili field; harvest a field first$",
    )
    await terminal.answer("p 9", r"^you have 3 fields; there is no field 9$")
    await terminal.answer(
        "offer bob give soy want blue", r"^trading is step 2; the game is at step 1"
    )
    await terminal.answer("ha", r"^'ha' could be harvest or hand; type more of it$")
    game.refusal = "the cards are still being dealt"  # the driver's own check
    await terminal.answer("harvest 2", r"^the cards are still being dealt$")
    await terminal.answer("leave", r"^the others cannot go on without you; type leave again")
    terminal.type("leave")
    outcome = await within(playing)
    assert outcome == Outcome() and game.submitted == []
    assert not terminal.saw("Traceback")


CTRL_C, CTRL_D = "\x03", "\x04"
LEAVE_ASKED = r"^the others cannot go on without you; type leave again \(or press Ctrl-C\)"


@pytest_twisted.ensureDeferred
async def test_ctrl_c_and_ctrl_d_ask_as_leave_does_and_a_second_one_leaves(
    keyboard: PipeInput,
) -> None:
    """Ctrl-C inside a question asks before leaving; the next line cancels leaving and still
    answers the question; Ctrl-D asks again, and Ctrl-C confirms. (Before: the first Ctrl-C
    or Ctrl-D left at once.)"""
    game = ScriptedGame(at_my_table())
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer("harvest", r"^Harvest which field\?")
    keyboard.send_text(CTRL_C)
    await terminal.when_shown(LEAVE_ASKED)
    terminal.type("1")  # the question still stands: this answers it
    terminal.type("hand")
    await terminal.when_shown(r"^Your hand")
    assert game.outcome is None and len(game.submitted) == 1
    keyboard.send_text(CTRL_D)
    await watch_count(terminal, LEAVE_ASKED, 2)
    keyboard.send_text(CTRL_C)
    assert await within(playing) == Outcome()
    assert not terminal.saw("Traceback")


@pytest_twisted.ensureDeferred
async def test_a_move_held_up_by_a_seat_not_connected_gets_an_answer(keyboard: PipeInput) -> None:
    """After a resume without the person's bot, `p` got no echo and no error while the
    toolbar said "Waiting: you: plant the front card": the step waited for the bot, not
    connected. Now the line is answered with whom the step waits for."""
    hands = {0: "chili soy", 1: "blue wax", 2: "garden"}
    game = ScriptedGame(table(3, 0, hands, fields={0: ["chili", "wax", "coffee"]}))
    game.view = replace(game.view, connected=frozenset({1}), missing=frozenset({0, 2}))
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer("p", r"^sent: your move is played when cy is back \(not connected")
    assert game.submitted
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)


async def watch_count(terminal: PipeTerminal, pattern: str, count: int) -> None:
    """Until `pattern` has been shown `count` times."""
    await terminal.watched.when(
        lambda _: sum(bool(re.search(pattern, said)) for said in terminal.said()) >= count, 10
    )


@pytest_twisted.ensureDeferred
async def test_the_table_code_is_in_table_and_who_and_weak_proofs_in_the_toolbar(
    keyboard: PipeInput,
) -> None:
    game = ScriptedGame(at_my_table(), proofs=False)
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    code = game.table.code
    weak = r"Weak proofs: off, a cheating shuffle is caught only by the audit at the end\."
    await terminal.answer("t", rf"^Table code {code} \(all should see it\) {weak}$")
    await terminal.answer("who", rf"2 {NAMES[1]} key \S+ linked .*Table code {code} Check that")
    assert PROOFS_OFF in to_plain_text(screen._toolbar())
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)


@pytest_twisted.ensureDeferred
async def test_a_bean_held_twice_is_asked_about_and_a_number_answers(keyboard: PipeInput) -> None:
    game = ScriptedGame(at_my_table(Phase.TRADE))
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer(
        "gift bob soy",
        r"^Which soy do you give\? 1\) #2 soy \(gift bob #2\) 2\) #3 soy \(gift bob #3\) "
        r"Type a number, or another command\.$",
    )
    assert game.submitted == []  # nothing is picked for the person
    await terminal.answer("3", r"^answer with a number from 1 to 2$")
    terminal.type("2")
    await terminal.answer("hand", r"^Your hand:")
    expected = parse_game_command("gift bob #3", my_view(game))
    assert isinstance(expected, Submit) and game.submitted == [expected.actions]
    game.end(screen)
    await within(playing)


class ToolbarWatch(Watched):
    """Every toolbar the screen draws, as one line of plain words, the newest last."""

    def __init__(self, screen: GameScreen) -> None:
        super().__init__()
        self.rendered: list[str] = []
        toolbar = screen.session.bottom_toolbar

        def drawing() -> Any:
            text = toolbar()  # type: ignore[misc,operator]
            self.rendered.append(" ".join(to_plain_text(text).split()))
            self.changed()
            return text

        screen.session.bottom_toolbar = drawing

    def when_drawn(self, pattern: str) -> Deferred[Any]:
        return self.when(lambda _: any(re.search(pattern, text) for text in self.rendered))

    def last(self) -> str:
        return self.rendered[-1] if self.rendered else ""


@pytest_twisted.ensureDeferred
async def test_the_toolbar_follows_the_deal_and_the_others_moves_with_no_key_pressed(
    keyboard: PipeInput,
) -> None:
    """Every step redraws the toolbar: the shuffle's progress, then whose turn and whom the
    game waits for, as the others play."""
    game = ScriptedGame(at_my_table(start=1), dealing=(0, 0, 2))
    screen = GameScreen(PipeTerminal(keyboard))
    drawn = ToolbarWatch(screen)
    screen.game = game  # type: ignore[assignment]
    playing = in_twisted(screen.play(game))  # type: ignore[arg-type]
    await drawn.when_drawn(r"^Dealing: every player shuffles and locks the deck \(round 1 of 2\)$")
    game.step(screen, dealing=(0, 1, 2))
    await drawn.when_drawn(r"\(round 2 of 2\)$")
    game.step(screen)  # dealt
    await drawn.when_drawn(
        r"^Turn 1 · bob's turn · step 1, plant .* Waiting: bob: plant the front card$"
    )
    bob_front = game.layout.hand_slot(1, 1)[1]
    game.step(screen, 1, Plant(0, bob_front))
    await drawn.when_drawn(r"Waiting: bob: plant a second card or stop$")
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    assert terminal.saw(r"^bob planted blue in field 1 \(blue 1\)\.$")  # the name as typed
    game.end(screen)
    await within(playing)
    assert not terminal.saw("Traceback")


@pytest_twisted.ensureDeferred
async def test_the_turn_clock_counts_down_in_the_toolbar_with_no_key_pressed(
    keyboard: PipeInput,
) -> None:
    game = ScriptedGame(at_my_table())
    game.turn_seconds, game.clock_runs_out = 30, 30.0
    screen = GameScreen(PipeTerminal(keyboard))
    drawn = ToolbarWatch(screen)
    screen.game = game  # type: ignore[assignment]
    playing = in_twisted(screen.play(game))  # type: ignore[arg-type]
    clock_line = r"Your clock: (\d+) s left, then the default moves are made for you$"

    def seconds_shown() -> int | None:
        found = re.search(clock_line, drawn.last())
        return int(found.group(1)) if found else None

    await drawn.when(lambda _: seconds_shown() == 30)
    game.clock.advance(21.5)  # no key is pressed: the periodic redraw shows the time left
    await drawn.when(lambda _: seconds_shown() == 9)
    game.clock_runs_out = None  # the duty is done: the line goes
    await drawn.when(lambda _: bool(drawn.rendered) and "Your clock" not in drawn.last())
    game.end(screen)
    await within(playing)
