"""bean-client resume: back into a game after a crash, from the seat's game file.

The seat listens again on the port the roster gave it (the seats before it dial it there) and
dials the seats after it; it replays its file through the lockstep, sends again exactly what it
had signed, and its peers' heartbeats bring the steps it missed (docs/gamefile.md). Meanwhile
the others show "waiting for NAME".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from twisted.internet.defer import Deferred

from client.game import Outcome, PeerGame, Player
from client.gamefile import GameFile, GameFileError
from client.identity_store import find_identity
from client.session import deck_workers, open_peer_port
from client.table_setup import TableSetup


async def resume_game(
    reactor: Any,
    path: Path,
    player: Player,
    step_deadline: float,
    abandon_after: float,
    on_start: Callable[[PeerGame], None] = lambda game: None,
) -> tuple[PeerGame, Outcome]:
    """Pick the game up where this seat left it and play it to its end."""
    if not path.is_file():
        raise GameFileError(f"there is no game file {path}")
    saved = GameFile.read(path)
    if saved.finished:
        raise GameFileError(f"{path} holds a game that is over; see `bean-client replay {path}`")
    seat = saved.roster.seats[saved.seat]
    identity = find_identity(seat.public_key)
    if identity is None:
        raise GameFileError(
            f"none of your identity keys is the key {seat.name} played with; resume with the "
            "same user account (and XDG_CONFIG_HOME) that started the game"
        )
    listener = await open_peer_port(
        reactor, f"tcp:{seat.port}:interface={saved.listen_host}", identity
    )
    try:
        with deck_workers() as executor:
            # The table was agreed before the game file was made; the setup still answers
            # peers that had not heard every confirmation when this seat went down.
            setup = TableSetup(
                reactor,
                identity,
                saved.roster,
                saved.seat,
                listener,
                terms=None,
                allow_weak_proofs=True,
                agreed=saved.table,
            )
            game = PeerGame(
                reactor,
                identity,
                saved.table,
                saved.seed,
                listener,
                saved.writer(),
                player,
                executor=executor,
                step_deadline=step_deadline,
                abandon_after=abandon_after,
                mesh=setup.mesh,
            )
            setup.attach(game)
            game.restore(saved)
            on_start(game)
            game.start()
            outcome: Outcome = await game.done
        return game, outcome
    finally:
        await listener.stop()


async def run_resume(reactor: Any, args: argparse.Namespace) -> int:
    path = Path(args.gamefile)
    if args.bot is not None:
        from client.bot_player import BotPlayer
        from client.bots import strategy_named
        from client.summary import report

        player = BotPlayer(reactor, strategy_named(args.bot))
        game, outcome = await resume_game(
            reactor, path, player, args.step_deadline, args.abandon_after
        )
        return report(game, outcome, args.json)
    from client.screen import GameScreen, Terminal, colour_wanted, in_twisted

    screen = GameScreen(Terminal(colour_wanted()))
    started: Deferred[PeerGame] = Deferred()
    playing = Deferred.fromCoroutine(
        resume_game(
            reactor, path, screen.player, args.step_deadline, args.abandon_after, started.callback
        )
    )
    screen.game = await started
    await in_twisted(screen.play(screen.game))
    _, outcome = await playing
    return 0 if outcome.final is not None and outcome.final.audit_passed else 1
