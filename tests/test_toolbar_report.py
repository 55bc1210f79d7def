"""The toolbar comes back when the terminal's report of the cursor's row goes missing.

prompt_toolkit draws the bottom toolbar only while it knows the rows below the prompt, which
a terminal reports when asked (ESC [ 6 n, answered ESC [ row ; col R); it asks again after
each print above the prompt. A report lost under load in tmux, as the cards were dealt, left
a person who starts the game with no toolbar on their own turn (tests/test_tmux_demo.py
waited for it for minutes). Here the real prompt runs on a terminal of our own that answers
the first question and drops the next, as that terminal did."""

from __future__ import annotations

import asyncio
import io

import pytest
import pytest_twisted
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from client.screen.repl import TOOLBAR_CHECK_SECONDS, Terminal, in_twisted

ASKED = "\x1b[6n"
WAIT_SECONDS = 20.0


class Screen(io.StringIO):
    """What the prompt writes; a terminal, as far as prompt_toolkit can tell."""

    def isatty(self) -> bool:
        return True


async def until(what: str, check: object, seconds: float = WAIT_SECONDS) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not check():  # type: ignore[operator]
        assert loop.time() < deadline, f"waited {seconds} s for {what}"
        await asyncio.sleep(0.02)


@pytest_twisted.ensureDeferred
async def test_a_lost_report_of_the_cursor_row_does_not_hide_the_toolbar_for_good(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PROMPT_TOOLKIT_NO_CPR", raising=False)  # plain mode's, set by others
    await in_twisted(play())


async def play() -> None:
    """The real prompt on a terminal that answers the first report and loses the next."""
    screen = Screen()
    output = Vt100_Output(screen, lambda: Size(rows=24, columns=80), term="xterm")
    with create_pipe_input() as keyboard:
        terminal = Terminal(colour=True, input=keyboard, output=output)
        prompt = terminal.prompt(toolbar=lambda: FormattedText([("", "TOOLBAR")]))
        line = asyncio.ensure_future(prompt.line("you> "))
        await until("the first question", lambda: ASKED in screen.getvalue())
        keyboard.send_text("\x1b[10;1R")  # answered: 15 rows below the prompt
        await until("the toolbar", lambda: "TOOLBAR" in screen.getvalue())
        asked = screen.getvalue().count(ASKED)
        terminal.show(FormattedText([("", "The cards are dealt.")]))  # asks again...
        await until("the next question", lambda: screen.getvalue().count(ASKED) > asked)
        lost = len(screen.getvalue())  # ...and that report never comes
        await until(
            "the question asked again",
            lambda: ASKED in screen.getvalue()[lost:],
            TOOLBAR_CHECK_SECONDS * 4,
        )
        again = len(screen.getvalue())
        keyboard.send_text("\x1b[11;1R")
        await until("the toolbar again", lambda: "TOOLBAR" in screen.getvalue()[again:])
        keyboard.send_text("hand\r")
        assert await asyncio.wait_for(line, WAIT_SECONDS) == "hand"
