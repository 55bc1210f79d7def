"""An honest bot that says one line in the game's chat as the game starts (what a person types
with `say`), for the tests that look for chat text on the wire.

    python -m tests.chatty_bot TEXT HOST:PORT --seats N --name NAME [...]   (bot options)
"""

from __future__ import annotations

import sys

from client.game import PeerGame


class ChattyGame(PeerGame):
    text = ""

    def start(self) -> None:
        super().start()
        self.chat(self.text)  # the links the table was agreed over are up


def main() -> None:
    from client.cli import build_parser, run_bot
    from client.runtime import run

    game_class = type("Chatty", (ChattyGame,), {"text": sys.argv[1]})
    args = build_parser().parse_args(["bot", *sys.argv[2:]])
    run(lambda reactor: run_bot(reactor, args, game_class))


if __name__ == "__main__":
    main()
