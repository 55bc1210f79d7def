"""A person at the REPL, typed by a program: the LAN tests run it on a namespace host.

python -m tests.lan_repl_player HOST:PORT --seats N --name NAME --listen ENDPOINT
                                [--no-proofs] [--allow-weak-proofs] [--step-deadline S]

It joins the lobby the way the REPL does (client.session: open the peer port, match) and plays
the roster (client.screen.repl.play_roster) at a GameScreen whose keyboard is a prompt_toolkit pipe,
typed into by tests/typist.py: every move is a command line the REPL parses, checks and
submits. At the end it prints one JSON line about the REPL (`{"typed": ..., "seen": ...,
"outcome": [the line that said how the game ended]}`) and then, as its last line, the JSON
summary `bean-client bot --json` prints (client.summary.summarize). Exit status: 0 when the
game ended with every peer agreeing and the audit passing, else 1.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from client.net import load_or_create, parse_lobby_address
from client.runtime import run
from client.screen import GameScreen, Terminal, play_roster
from client.session import Seat, match, open_peer_port
from client.summary import summarize
from protocol.messages import RoomOptions
from protocol.table import RoomTerms
from tests.typist import Typist


async def play(reactor: Any, args: argparse.Namespace) -> int:
    host, port = parse_lobby_address(args.lobby)
    seat = Seat(
        args.name,
        args.name,
        host,
        port,
        args.listen,
        args.step_deadline,
        300.0,
        args.allow_weak_proofs,
    )
    identity = load_or_create(seat.profile)
    options = RoomOptions(proofs=args.proofs)
    listener = await open_peer_port(reactor, seat.listen, identity)
    try:
        roster = await match(reactor, seat, args.seats, options, identity, listener)
        with create_pipe_input() as keyboard:
            screen = GameScreen(Terminal(colour=False, input=keyboard, output=DummyOutput()))
            typist = Typist(reactor, screen, keyboard)
            terms = RoomTerms(args.seats, options)
            outcome = await play_roster(reactor, seat, identity, listener, roster, terms, screen)
    finally:
        await listener.stop()
    printed = screen.terminal.printed
    said = [text for text in printed if text.lstrip().startswith("Every player's machine")]
    repl = {"typed": len(typist.typed), "seen": sorted(typist.seen), "outcome": said[-1:]}
    print(json.dumps(repl), flush=True)
    summary = summarize(screen.game, outcome)
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.lan_repl_player")
    parser.add_argument("lobby", metavar="HOST:PORT")
    parser.add_argument("--seats", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--listen", default="tcp:0", metavar="ENDPOINT")
    parser.add_argument("--no-proofs", dest="proofs", action="store_false")
    parser.add_argument("--allow-weak-proofs", action="store_true")
    parser.add_argument("--step-deadline", type=float, default=60.0)
    args = parser.parse_args()
    run(lambda reactor: play(reactor, args))


if __name__ == "__main__":
    main()
