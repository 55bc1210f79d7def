"""A person at `bean-client connect` in a process of its own, for tests that kill it.

    python -m tests.repl_person CONNECT-ARGUMENTS...

It runs the lobby prompt (client.screen.run_connect) with prompt_toolkit's pipe for a
keyboard: the lines a test writes to this process's standard input are typed at the prompt,
and every game is played by tests/typist.py, which types its moves the same way. Everything
the screen shows is printed to standard output as it is shown (one thing per line, its own
lines joined), so that the test can wait for it.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from client.cli import build_parser
from client.runtime import run
from client.screen import GameScreen, Terminal, run_connect
from tests.typist import Typist


class PrintingTerminal(Terminal):
    def show(self, text: FormattedText) -> None:
        super().show(text)
        print(" ".join(to_plain_text(text).split()), flush=True)


def type_what_comes_in(reactor: Any, keyboard: PipeInput) -> None:
    """Each line of standard input, typed at the prompt (by the reactor's thread)."""

    def forward() -> None:
        for line in sys.stdin:
            reactor.callFromThread(keyboard.send_text, line.rstrip("\n") + "\r")

    threading.Thread(target=forward, name="typing", daemon=True).start()


async def person(reactor: Any, arguments: list[str]) -> int:
    args = build_parser().parse_args(["connect", *arguments])
    with create_pipe_input() as keyboard:
        terminal = PrintingTerminal(colour=False, input=keyboard, output=DummyOutput())
        type_what_comes_in(reactor, keyboard)

        def screen_with_typist(terminal: Terminal) -> GameScreen:
            screen = GameScreen(terminal)
            Typist(reactor, screen, keyboard)
            return screen

        return await run_connect(reactor, args, terminal, game_screen=screen_with_typist)


def main() -> None:
    run(lambda reactor: person(reactor, sys.argv[1:]))


if __name__ == "__main__":
    main()
