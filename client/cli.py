"""bean-client: Bohnanza on a LAN, peer to peer.

    bean-client connect [HOST[:PORT]]            the lobby and your games, in the terminal
    bean-client play [--bots N] [--no-human]     a whole game on this machine against bots
    bean-client bot HOST[:PORT] [--strategy S]   one bot into a real lobby
    bean-client resume GAMEFILE                  back into a game after a crash
    bean-client audit GAMEFILE                   check a finished game from its file
    bean-client replay GAMEFILE [--summary]      show a game turn by turn, or its story

The commands with a screen take --plain: one line per event and nothing redrawn, for screen
readers (chosen by itself when TERM=dumb or the output is not a terminal).

Exit status: 0 when the game ended with every peer agreeing and the audit passing; 1 when it
was stopped (a cheat, a broken link) or the audit failed; 2 for a mistake on the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import textwrap
import threading
from typing import Any

from client.bots import STRATEGIES
from client.net import DEFAULT_LOBBY_PORT, parse_lobby_address, version_line
from protocol.cards import MAX_PLAYERS, MIN_PLAYERS
from protocol.messages import SINGLETON_RULES

# `play`'s bots: the table seats 3 to 7 players, the person one of them unless --no-human.
BOTS_WITH_YOU = f"{MIN_PLAYERS - 1} to {MAX_PLAYERS - 1}"
BOTS_ALONE = f"{MIN_PLAYERS} to {MAX_PLAYERS}"


def _game_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a room this command creates or joins."""
    parser.add_argument(
        "--no-proofs",
        dest="proofs",
        action="store_false",
        help="deal without shuffle and relock proofs (for tests and slow machines; "
        "needs --allow-weak-proofs)",
    )
    _weak_proofs_argument(parser)
    parser.add_argument(
        "--singleton-rule",
        choices=SINGLETON_RULES,
        default=SINGLETON_RULES[0],
        help="when a single bean may be harvested (default: %(default)s)",
    )
    parser.add_argument(
        "--turn-seconds",
        type=int,
        default=0,
        metavar="S",
        help="a turn clock: default moves for a player whose time runs out (0: none)",
    )
    _link_arguments(parser)


def _weak_proofs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-weak-proofs",
        action="store_true",
        help="play games dealt without proofs; every player is shown that they are off",
    )


def _strategy_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=STRATEGIES[0],
        help=f"{what} (default: %(default)s; docs/bots.md tells them apart)",
    )


def _plain_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plain",
        action="store_true",
        help="one line per event, nothing redrawn, no colour (for screen readers; also "
        "when TERM=dumb or the output is not a terminal)",
    )


def _bell_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-bell",
        action="store_true",
        help="no bell (BEL) when your turn starts or someone makes you an offer",
    )


def _link_arguments(parser: argparse.ArgumentParser) -> None:
    """How long this client waits for others."""
    parser.add_argument(
        "--step-deadline",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long a connected peer may withhold a step message (default 60)",
    )
    parser.add_argument(
        "--abandon-after",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a player may be gone before the others end the game (default 300)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bean-client",
        description="Play Bohnanza on a LAN, peer to peer, with no trusted machine.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_line("bean-client"),
        help="say this program's version and the protocol version it speaks",
    )
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="what to do (bean-client COMMAND -h explains each)",
    )

    connect = commands.add_parser("connect", help="the lobby and your games, in the terminal")
    connect.add_argument(
        "lobby",
        nargs="?",
        metavar="HOST[:PORT]",
        help="the lobby (left out: look for one on this LAN)",
    )
    connect.add_argument("--name", default=None, help="your name in the lobby")
    connect.add_argument("--profile", default="default", help="which identity key to use")
    connect.add_argument(
        "--listen",
        default="tcp:0",
        metavar="ENDPOINT",
        help="where to listen for the other players (default tcp:0)",
    )
    connect.add_argument("--no-color", action="store_true", help="no colours (or set NO_COLOR)")
    _plain_argument(connect)
    _bell_argument(connect)
    _link_arguments(connect)
    _weak_proofs_argument(connect)

    netcheck = commands.add_parser(
        "netcheck",
        help="whether a lobby relays the links of players who cannot reach each other",
    )
    netcheck.add_argument("lobby", metavar="HOST[:PORT]", help="the lobby")

    play = commands.add_parser("play", help="a whole game on this machine against bots")
    play.add_argument(
        "--bots",
        type=int,
        default=3,
        metavar="N",
        help=f"bots at the table (default 3): {BOTS_WITH_YOU} with you, {BOTS_ALONE} with "
        "--no-human",
    )
    play.add_argument("--no-human", action="store_true", help="every seat is a bot")
    _strategy_argument(play, "how the bots play")
    play.add_argument("--name", default="you", help="your name at the table")
    _plain_argument(play)
    _bell_argument(play)
    _game_arguments(play)

    bot = commands.add_parser("bot", help="put one bot into a lobby")
    bot.add_argument("lobby", metavar="HOST[:PORT]", help=f"the lobby (port {DEFAULT_LOBBY_PORT})")
    _strategy_argument(bot, "how the bot plays")
    bot.add_argument("--seats", type=int, default=4, help="players at the table (3-7)")
    bot.add_argument("--name", default=None, help="its name in the lobby (default bot-XXXX)")
    bot.add_argument("--profile", default=None, help="its identity key's name (default: name)")
    bot.add_argument(
        "--listen",
        default="tcp:0",
        metavar="ENDPOINT",
        help="where it listens for peers (Twisted endpoint; default tcp:0)",
    )
    bot.add_argument("--json", action="store_true", help="end with one JSON line of the result")
    bot.add_argument(
        "--room",
        type=int,
        default=None,
        metavar="ROOM",
        help="join this room and say ready (its seats and options apply) instead of a quick match",
    )
    bot.add_argument(
        "--owned",
        action="store_true",
        help="started by a person's client (the lobby prompt's bot command): print one JSON "
        "line once seated, and leave if standard input closes before the game starts",
    )
    bot.add_argument(
        "--apart",
        action="store_true",
        help="run in a session of its own, apart from the terminal (a bot a person's client "
        "starts: a Ctrl-C there reaches only that client, and closing it leaves the bot playing)",
    )
    _game_arguments(bot)

    resume = commands.add_parser("resume", help="back into a game after a crash")
    resume.add_argument("gamefile", help="the game's file (bean-client connect lists them)")
    resume.add_argument(
        "--bot", choices=STRATEGIES, default=None, help="let a bot play the seat instead of you"
    )
    resume.add_argument("--json", action="store_true", help="end with one JSON line (with --bot)")
    _plain_argument(resume)
    _bell_argument(resume)
    _link_arguments(resume)
    for name, text in (
        ("audit", "check a finished game from its file"),
        ("replay", "show a game turn by turn"),
    ):
        offline = commands.add_parser(name, help=text)
        offline.add_argument(
            "gamefile",
            help="a game's file (each seat's is kept in $XDG_DATA_HOME/bohnanza-p2p/games, "
            "by default ~/.local/share/bohnanza-p2p/games)",
        )
    replay = commands.choices["replay"]
    replay.add_argument(
        "--summary",
        action="store_true",
        help="only the game's story: coins, harvests and a chart of coins over the turns",
    )
    _plain_argument(replay)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    from client.runtime import run

    run(lambda reactor: _dispatch(reactor, args), terminal=args.command != "bot")


async def _dispatch(reactor: Any, args: argparse.Namespace) -> int:
    from client.gamefile import GameFileError
    from client.net import LanProblem, LobbyError
    from client.table_setup import TableRefused

    try:
        if args.command == "bot":
            return await run_bot(reactor, args)
        if args.command == "play":
            return await run_play(reactor, args)
        if args.command == "connect":
            from client.screen import run_connect

            return await run_connect(reactor, args)
        if args.command == "resume":
            return await run_resume(reactor, args)
        if args.command == "netcheck":
            return await run_netcheck(reactor, args)
        from client.offline import run_offline

        return run_offline(args)
    except (LanProblem, LobbyError, GameFileError, TableRefused) as problem:  # said in words
        print(f"bean-client: {problem}", file=sys.stderr)
        return 1


async def run_netcheck(reactor: Any, args: argparse.Namespace) -> int:
    """Say whether the lobby relays (in a game, `netcheck` says how each player is reached)."""
    from client.net import parse_lobby_address, relay_answers

    try:
        host, port = parse_lobby_address(args.lobby)
    except ValueError as error:
        print(f"bean-client: {error}", file=sys.stderr)
        return 2
    say(await relay_answers(reactor, host, port))
    say(
        "Players reach each other directly where they can; in a game, `netcheck` says how "
        "each player is reached, and why."
    )
    return 0


def say(paragraph: str) -> None:
    """Print a paragraph, wrapped at word boundaries to the terminal a person reads it on
    (as one line when the output goes to a program)."""
    if sys.stdout.isatty():
        paragraph = textwrap.fill(paragraph, max(40, shutil.get_terminal_size().columns - 1))
    print(paragraph)


# --- bean-client bot ---------------------------------------------------------------------------


async def run_bot(reactor: Any, args: argparse.Namespace, make_game: Any = None) -> int:
    """One bot's game; `make_game` replaces the game driver (tests put cheaters in)."""
    import json
    import secrets

    from client.bots import BotPlayer, strategy_named
    from client.game import PeerGame
    from client.net import LobbyClient
    from client.session import OwnerGone, Seat, join_and_play, room_options
    from client.summary import report, report_refusal
    from client.table_setup import TableRefused
    from protocol.messages import GameStart
    from protocol.table import roster_digest

    if args.apart:
        import os

        with contextlib.suppress(OSError):  # already a session's leader: apart as it is
            os.setsid()
    host, port = parse_lobby_address(args.lobby)
    name = args.name or f"bot-{secrets.token_hex(2)}"
    seat = Seat.from_args(args, name, args.profile or name, host, port)
    player = BotPlayer(reactor, strategy_named(args.strategy))

    def seated(lobby: LobbyClient) -> None:
        """Tell the client that started this bot who it is (its key names it for sure)."""
        if args.owned:
            assert lobby.welcome is not None and lobby.room is not None
            said = {"name": lobby.welcome.name, "key": lobby.identity.public_key.hex()}
            print(json.dumps({"seated": lobby.room.room_id} | said), flush=True)

    def derived(roster: GameStart, identity: bytes) -> None:
        """Tell the client that started this bot which table it got: that client confirms
        its own table only if it is the same (client/table_setup.py)."""
        table = {"roster": roster_digest(roster).hex(), "identity": identity.hex()}
        print(json.dumps({"table": roster.room_id} | table), flush=True)

    room = None
    if args.room is not None:
        room = (args.room, seated, _stdin_closed(reactor) if args.owned else None)
    try:
        game, outcome = await join_and_play(
            reactor, seat, args.seats, room_options(args), player, make_game or PeerGame, room,
            derived=derived if args.owned else None,
        )  # fmt: skip
    except TableRefused as refused:
        return report_refusal(name, refused, args.json)
    except OwnerGone as gone:
        print(f"{name}: left room {args.room}: {gone}", flush=True)
        return 0
    return report(game, outcome, args.json)


def _stdin_closed(reactor: Any) -> Any:
    """A Deferred that fires when standard input ends (the process that started us is gone);
    a thread waits for it, the reactor hears it."""
    from twisted.internet.defer import Deferred

    closed: Deferred[None] = Deferred()

    def wait() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        reactor.callFromThread(lambda: None if closed.called else closed.callback(None))

    threading.Thread(target=wait, name="owner", daemon=True).start()
    return closed


# --- bean-client resume ------------------------------------------------------------------------


async def run_resume(reactor: Any, args: argparse.Namespace) -> int:
    from pathlib import Path

    from client.resume import resume_game

    path = Path(args.gamefile)
    if args.bot is not None:
        from client.bots import BotPlayer, strategy_named
        from client.summary import report

        player = BotPlayer(reactor, strategy_named(args.bot))
        game, outcome = await resume_game(
            reactor, path, player, args.step_deadline, args.abandon_after
        )
        return report(game, outcome, args.json)
    from client.gamefile import GameFile
    from client.resume import bots_seat, own_seat_file
    from client.screen import play_resumed, screen_for, take_a_bots_seat

    screen = screen_for(args)
    saved = GameFile.read(path) if path.is_file() else None
    profile = bots_seat(saved) if saved is not None else None
    own = own_seat_file(saved) if saved is not None else None
    if profile is not None and not await take_a_bots_seat(screen.terminal, path, profile, own):
        return 0
    outcome = await play_resumed(reactor, path, screen, args.step_deadline, args.abandon_after)
    if outcome.left:
        screen.terminal.say(f"The game goes on: bean-client resume {path} takes you back.")
    return 0 if outcome.final is not None and outcome.final.audit_passed else 1


# --- bean-client play --------------------------------------------------------------------------


async def run_play(reactor: Any, args: argparse.Namespace) -> int:
    from client.local_table import play_tables

    players = args.bots + (0 if args.no_human else 1)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        print(
            f"bean-client: --bots {args.bots} makes a table of {players}, but a table seats "
            f"{MIN_PLAYERS} to {MAX_PLAYERS} players: --bots takes {BOTS_WITH_YOU} with you, "
            f"{BOTS_ALONE} with --no-human",
            file=sys.stderr,
        )
        return 2
    return await play_tables(reactor, args)


if __name__ == "__main__":
    main()
