"""What a person sees at the game prompt, typed as a person types (prompt_toolkit's pipe, or
plain mode's lines): the bean-o-meter (`beans`, `help beans`, what each field pays on the
table), the start of their turn (hand, hints, a bell), a terminal under 80 columns, and the
commands that `help` and docs/repl.md list, against the REPL's own tables."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest_twisted
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput
from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed

from client.screen import run_connect
from client.screen.commands import GAME_COMMANDS, Command
from client.screen.completion import GameCompleter
from client.screen.lobby_commands import LOBBY_COMMANDS
from tests.test_repl import (
    PipeTerminal,
    ScriptedGame,
    at_my_table,
    connect_args,
    my_view,
    own_files,  # noqa: F401  (the fixture: this test's own files, as there)
    screen_playing,
)
from tests.waiting import within


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
