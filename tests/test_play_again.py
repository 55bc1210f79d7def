"""`bean-client play` after a game: "Play again? [y/N]". A yes sets up a fresh table with fresh
bot processes; anything else ends. The person's seat is typed at the real prompt by the
automated person of tests/typist.py; the keys of the answer go into the prompt's input."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from client.cli import build_parser
from client.gamefile import GameFile, games_dir
from client.local_table import play_tables
from client.screen import GameScreen, Terminal, ask_play_again
from client.screen.plain import PlainLines
from tests.test_repl import GAME_SECONDS, PipeTerminal, own_files  # noqa: F401 (autouse)
from tests.typist import GOALS, Typist
from tests.waiting import within

QUESTION = "Play again? [y/N] "


class AskedTerminal(PipeTerminal):
    """A terminal of pipes that also keeps the questions its prompts ask (the full screen
    shows a question only in the prompt line, not among what it prints)."""

    def __init__(self, keyboard: PipeInput) -> None:
        super().__init__(keyboard)
        self.asked: list[str] = []

    def prompt(self, *arguments: Any, asks: bool = False, **options: Any) -> Any:
        prompt = super().prompt(*arguments, asks=asks, **options)
        if asks:
            line = prompt.line

            async def asking(message: str, *rest: Any, **more: Any) -> str:
                self.asked.append(message)
                self.watched.changed()
                return await line(message, *rest, **more)

            prompt.line = asking  # type: ignore[method-assign]
        return prompt

    def when_asked(self, times: int, seconds: float) -> Deferred[Any]:
        """Fires once the question has been asked `times` times in all."""
        return self.watched.when(lambda _: self.asked.count(QUESTION) >= times, seconds)


@pytest.mark.parametrize(
    ("keys", "again"),
    [("y\r", True), (" Yes \r", True), ("\r", False), ("n\r", False), ("x\r", False),
     ("\x03", False), ("\x04", False)],
)  # fmt: skip
@pytest_twisted.ensureDeferred
async def test_only_a_yes_plays_again_and_ctrl_c_or_ctrl_d_is_a_no(
    keyboard: PipeInput, keys: str, again: bool
) -> None:
    answered = Deferred.fromCoroutine(ask_play_again(PipeTerminal(keyboard)))
    keyboard.send_text(keys)
    assert await within(answered) is again


@pytest.mark.parametrize(("typed", "again"), [("y\n", True), ("\n", False), ("", False)])
@pytest_twisted.ensureDeferred
async def test_plain_mode_says_the_question_and_its_input_ending_is_a_no(
    typed: str, again: bool
) -> None:
    terminal = Terminal(colour=False, output=DummyOutput(), lines=PlainLines(io.StringIO(typed)))
    assert await within(Deferred.fromCoroutine(ask_play_again(terminal))) is again
    assert terminal.printed == ["question: Play again? [y/N]"]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_yes_sets_a_fresh_table_with_fresh_bots_and_an_empty_line_ends(
    keyboard: PipeInput,
) -> None:
    terminal = AskedTerminal(keyboard)
    typists: list[Typist] = []

    def screen_with_typist(terminal: Terminal) -> GameScreen:
        screen = GameScreen(terminal)
        typists.append(Typist(reactor, screen, keyboard, seen=set(GOALS)))  # plays plainly
        return screen

    args = build_parser().parse_args(["play", "--bots", "2", "--name", "ann"])
    playing = Deferred.fromCoroutine(play_tables(reactor, args, terminal, screen_with_typist))
    try:
        await terminal.when_asked(1, GAME_SECONDS)
        terminal.type("y")
        await terminal.when_asked(2, GAME_SECONDS)
        terminal.type("")
        assert await within(playing, 60) == 0
    finally:
        playing.cancel()  # a test that failed midway stops its table (and bots) too
    assert len(typists) == 2 and all(typist.typed for typist in typists)
    said = terminal.said()
    assert said.count("Waiting for 2 bots to join the table...") == 2
    assert len([text for text in said if re.search(r"Game over: .* Coins: ", text)]) == 2
    assert said.count("Every player's machine agrees; the audit passed.") == 2
    codes = {text for text in said if text.startswith("Table code: ")}
    assert len(codes) == 2  # two tables
    finished = [GameFile.read(path) for path in Path(games_dir()).glob("*.game")]
    own = [saved for saved in finished if saved.roster.seats[saved.seat].name == "ann"]
    assert len({saved.roster.game_id for saved in own}) == 2
    assert not terminal.saw("Traceback")
