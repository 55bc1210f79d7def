"""What a person sees at the game prompt, typed as a person types (prompt_toolkit's pipe, or
plain mode's lines): the bean-o-meter (`beans`, `help beans`, what each field pays on the
table), the start of their turn (hand, hints, a bell), a terminal under 80 columns, and the
commands that `help` and docs/repl.md list, against the REPL's own tables."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed

from client.cli import build_parser
from client.game import Outcome
from client.screen import GameScreen, Terminal, in_twisted, run_connect, terminal_for
from client.screen.commands import GAME_COMMANDS, Command
from client.screen.completion import GameCompleter
from client.screen.lobby_commands import LOBBY_COMMANDS
from client.screen.plain import PlainLines
from client.screen.render import render_help, render_table, render_toolbar
from protocol.cards import Bean
from protocol.rules import EndTrading, MakeOffer, Phase
from tests.rules_helpers import table
from tests.test_repl import (
    PipeTerminal,
    ScriptedGame,
    at_my_table,
    connect_args,
    my_view,
    own_files,  # noqa: F401  (the fixture: this test's own files, as there)
    screen_playing,
)
from tests.waiting import Watched, within


@pytest_twisted.ensureDeferred
async def test_beans_shows_the_bean_o_meter_and_the_table_what_each_field_pays_next(
    keyboard: PipeInput,
) -> None:
    """Ann holds chili, soy, soy; her fields hold blue, wax and coffee; the others' hands are
    hidden. A 3-player game has no cocoa."""
    game = ScriptedGame(at_my_table())
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer("beans", r"^Bean cards unseen 1c 2c 3c 4c coffee 24 23 4 7 10 12 ")
    meter = terminal.said()[-1]
    assert " blue 20 19 4 6 8 10 " in meter  # one blue is in Ann's field
    assert " chili 18 17 3 6 8 9 " in meter  # her own chili counts as seen
    assert " soy 12 10 2 4 6 7 " in meter and " garden 6 6 - 2 3 - " in meter
    assert " cocoa not in a game of 3 " in meter
    assert all(len(line) <= 80 for line in terminal.printed[-1].splitlines())
    await terminal.answer("help beans", r"^beans The bean-o-meter: .* unseen how many you have")
    assert "never shown to everyone" in terminal.said()[-1]
    await terminal.answer("t", r"1:blue 1 \(0c, 1c at 4\) 2:wax 1 \(0c, 1c at 4\)")
    completions = GameCompleter(lambda: my_view(game)).get_completions(
        Document("bea"), CompleteEvent(completion_requested=True)
    )
    assert [c.text for c in completions] == ["beans"]
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)
    assert not any(re.search("Traceback", text) for text in terminal.said())


# --- The commands as help and docs/repl.md list them --------------------------------------------

DOCS = Path(__file__).parent.parent / "docs" / "repl.md"
HELP_LINE = re.compile(r"^([a-z]+)(?: \(([^)]*)\))? ")


def table_of(commands: Sequence[Command[Any]]) -> dict[str, set[str]]:
    """The REPL's own table: each command's name with its aliases."""
    return {command.name: set(command.aliases) for command in commands}


def listed_by_help(text: str) -> dict[str, set[str]]:
    """The commands a `help` overview lists ("accept (a)   Accept an offer ..."), without
    its closing note."""
    listed = {}
    for line in text.splitlines():
        found = HELP_LINE.match(line)
        if found and not line.startswith("help COMMAND"):
            listed[found.group(1)] = set(filter(None, (found.group(2) or "").split(", ")))
    return listed


def listed_in_docs(section: str) -> dict[str, set[str]]:
    """The commands of a section's table in docs/repl.md: the first word of the first
    column, the aliases of the second (`'TEXT` is said's punctuation, not a word)."""
    text = DOCS.read_text().split(f"## {section}\n", 1)[1].split("\n#", 1)[0]
    text = text.replace("\\|", "/")  # a | inside a cell
    listed: dict[str, set[str]] = {}
    for row in re.findall(r"^\| `([a-z]+)[^|]*\| ([^|]*)\|", text, re.MULTILINE):
        name, aliases = row
        words = set(re.findall(r"`([^`]+)`", aliases)) - {"'TEXT"}
        listed.setdefault(name, set()).update(words)
    return listed


@pytest_twisted.ensureDeferred
async def test_help_and_docs_list_the_game_commands_of_the_repls_own_table(
    keyboard: PipeInput,
) -> None:
    """A command added or renamed without its help line or its row in docs/repl.md fails."""
    game = ScriptedGame(at_my_table())
    screen, playing = await screen_playing(keyboard, game)
    terminal = screen.terminal
    assert isinstance(terminal, PipeTerminal)
    await terminal.answer("help", r"help COMMAND explains one")
    assert listed_by_help(terminal.printed[-1]) == table_of(GAME_COMMANDS)
    assert listed_in_docs("Game commands") == table_of(GAME_COMMANDS)
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)


@pytest_twisted.ensureDeferred
async def test_help_and_docs_list_the_lobby_commands_of_the_repls_own_table(
    keyboard: PipeInput,
) -> None:
    terminal = PipeTerminal(keyboard)
    session = Deferred.fromCoroutine(
        run_connect(reactor, connect_args(None), terminal, discover=lambda _: succeed([]))
    )
    await terminal.when_shown(r"^no lobby answered on this LAN")
    await terminal.answer("help", r"help COMMAND explains one")
    assert listed_by_help(terminal.printed[-1]) == table_of(LOBBY_COMMANDS)
    assert listed_in_docs("Lobby commands") == table_of(LOBBY_COMMANDS)
    terminal.type("quit")
    assert await within(session) == 0


# --- Plain mode ----------------------------------------------------------------------------------

LABEL = re.compile(r"^[a-z][\w ,'#-]*: ")  # "status: ", "turn 1, bob: ", "player 2, bob: "
READ_ALOUD = "·…→×–—"  # punctuation a screen reader reads by name


@pytest.fixture
def typing() -> Iterator[tuple[PlainLines, Any]]:
    """Plain mode's lines, from a pipe a test types into."""
    read, write = os.pipe()
    with os.fdopen(read) as lines, os.fdopen(write, "w") as keys:
        yield PlainLines(lines), keys


def assert_plain_lines(printed: list[str]) -> None:
    """Every line labelled, and none with punctuation read aloud by name."""
    lines = [line for text in printed for line in text.splitlines()]
    assert lines
    for line in lines:
        assert LABEL.match(line), line
        assert not set(line) & set(READ_ALOUD), line


@pytest_twisted.ensureDeferred
async def test_plain_mode_says_what_changed_in_the_status_labelled_and_in_ascii(typing) -> None:
    """Bob offers Ann three trades: the status says only whom the game now waits for, the
    offers in a run ("answer offers 1-3"), not the turn and the deck again."""
    lines, keys = typing
    game = ScriptedGame(at_my_table(Phase.TRADE, start=1))
    terminal = Terminal(colour=False, output=DummyOutput(), lines=lines)
    screen = GameScreen(terminal)
    screen.game = game  # type: ignore[assignment]
    playing = in_twisted(screen.play(game))  # type: ignore[arg-type]
    watched = Watched()
    shown = terminal.show

    def showing(text: Any) -> None:
        shown(text)
        watched.changed()

    terminal.show = showing  # type: ignore[method-assign]

    def when_said(pattern: str) -> Deferred[Any]:
        return watched.when(lambda _: any(re.search(pattern, t) for t in terminal.printed))

    await when_said(r"^status: Turn 1, bob's turn\. Step 2, trade\. Deck \d+, ")
    for _ in range(3):
        game.step(screen, 1, MakeOffer(0, want_beans=((Bean.SOY, 1),)))
    keys.write("t\nhelp\nhelp beans\nbeans\nzz\n")
    keys.flush()
    await when_said(r"^error: 'zz' is not a command")
    statuses = [text for text in terminal.printed if text.startswith("status:")]
    assert statuses[-1] == "status: Waiting: bob: trade, or end trading; you: answer offers 1-3."
    assert_plain_lines(terminal.printed)
    keys.write("leave\nleave\n")
    keys.flush()
    await within(playing)


@pytest_twisted.ensureDeferred
async def test_plain_lobby_errors_help_and_notes_are_labelled(typing) -> None:
    lines, keys = typing
    terminal = Terminal(colour=False, output=DummyOutput(), lines=lines)
    keys.write("rooms\nhelp\nquit\n")
    keys.flush()
    session = Deferred.fromCoroutine(
        run_connect(reactor, connect_args(None), terminal, discover=lambda _: succeed([]))
    )
    assert await within(session) == 0
    said = "\n".join(terminal.printed)
    assert "\nerror: not connected to a lobby" in said and "\nhelp: rooms (ls, list)" in said
    assert_plain_lines(terminal.printed)


# --- Your turn ---------------------------------------------------------------------------------


class Speaker(DummyOutput):
    """A terminal's output that counts its bells and has a width of its own."""

    def __init__(self, columns: int = 80) -> None:
        self.bells = 0
        self.size = Size(rows=24, columns=columns)

    def bell(self) -> None:
        self.bells += 1

    def get_size(self) -> Size:
        return self.size


def cys_trading() -> ScriptedGame:
    """Cy trades with nothing face up; Ann's turn comes next."""
    hands = {0: "chili soy soy", 1: "blue wax", 2: "garden"}
    return ScriptedGame(
        table(3, 2, hands, fields={0: ["blue", "wax", "coffee"]}, phase=Phase.TRADE)
    )


async def screen_on(terminal: Terminal, game: ScriptedGame) -> tuple[GameScreen, Deferred[Outcome]]:
    screen = GameScreen(terminal)
    screen.game = game  # type: ignore[assignment]
    return screen, in_twisted(screen.play(game))  # type: ignore[arg-type]


@pytest_twisted.ensureDeferred
async def test_my_turn_shows_my_hand_and_hints_and_rings_as_an_offer_to_me_does(
    keyboard: PipeInput,
) -> None:
    terminal = PipeTerminal(keyboard)
    terminal.output = speaker = Speaker()
    game = cys_trading()
    screen, playing = await screen_on(terminal, game)
    game.step(screen, 2, MakeOffer(1, want_beans=((Bean.WAX, 1),)))  # to bob: no bell
    assert speaker.bells == 0
    game.step(screen, 2, MakeOffer(0, want_beans=((Bean.SOY, 1),)))
    assert speaker.bells == 1
    game.step(screen, 2, EndTrading())
    await terminal.when_shown(r"^Your turn 2\.$")
    assert terminal.said()[-1].startswith("Your hand: #1 chili (front) #2 soy #3 soy")
    assert re.search(r"You may: .*h 1", terminal.said()[-1])
    assert speaker.bells == 2
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)


@pytest_twisted.ensureDeferred
async def test_no_bell_and_plain_mode_say_my_turn_too(typing) -> None:
    """`--no-bell` turns the bell off; plain mode says the turn, hand and hints in lines."""
    args = build_parser().parse_args(["play", "--plain", "--no-bell"])
    assert terminal_for(args).bell is False
    lines, keys = typing
    terminal = Terminal(colour=False, output=(speaker := Speaker()), lines=lines, bell=False)
    game = cys_trading()
    screen, playing = await screen_on(terminal, game)
    game.step(screen, 2, MakeOffer(0, want_beans=((Bean.SOY, 1),)))
    game.step(screen, 2, EndTrading())
    said = "\n".join(terminal.printed)
    assert "\nyour turn: turn 2 starts\nhand: #1 chili (front), #2 soy, #3 soy\n" in said
    assert "\nhint: You may: h 1, h 2, h 3" in said
    assert speaker.bells == 0
    keys.write("leave\nleave\n")
    keys.flush()
    await within(playing)


@pytest_twisted.ensureDeferred
async def test_under_80_columns_the_screen_says_so_and_wraps_between_words(
    keyboard: PipeInput,
) -> None:
    terminal = PipeTerminal(keyboard)
    terminal.output = Speaker(columns=64)
    game = ScriptedGame(at_my_table())
    screen, playing = await screen_on(terminal, game)
    await terminal.when_shown(
        r"^This terminal is 64 columns wide; the game is drawn for 80: lines are wrapped"
    )
    view = my_view(game)
    for line, answered, full in (
        ("t", r"^Table code", render_table(view)),
        ("help", r"help COMMAND explains one", render_help()),
        ("beans", r"^Bean cards unseen", None),
        ("who", r"^1 ann key .* Check that everyone", None),
    ):
        await terminal.answer(line, answered)
        shown = terminal.printed[-2 if line == "t" else -1]
        assert shown.split()[0] in ("Turn", "plant", "Bean", "1"), shown
        assert max(map(len, shown.splitlines())) <= 64, shown
        if full is not None:  # the same words as at 80 columns: none cut
            assert shown.split() == to_plain_text(full).split()
    toolbar = to_plain_text(screen._toolbar())
    assert max(map(len, toolbar.splitlines())) <= 64
    assert toolbar.split() == to_plain_text(render_toolbar(view)).split()
    terminal.type("leave")
    terminal.type("leave")
    await within(playing)
