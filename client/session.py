"""From a lobby to a finished game: say hello, get matched, take the roster, play it out.

Shared by `bean-client bot`, `bean-client play` and the REPL. The peer port is opened first
(the lobby tells the others where it is); once the roster arrives the lobby connection is
closed: the game runs between the players' machines alone.
"""

from __future__ import annotations

import secrets
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from client.game import Outcome, PeerGame, Player
from client.gamefile import GameFileWriter, game_path
from client.identity_store import load_or_create
from client.lobby_client import LobbyClient
from client.mesh import PeerListener
from protocol.identity import Identity
from protocol.messages import GameStart, RoomOptions

DECK_WORKERS = 2  # shuffles and proofs use both cores (libsodium releases the GIL)


@dataclass
class Seat:
    """Who this client is and how it reaches the lobby and its peers."""

    name: str
    profile: str
    lobby_host: str
    lobby_port: int
    listen: str = "tcp:0"
    step_deadline: float = 60.0


async def match(
    reactor: Any,
    seat: Seat,
    seats: int,
    options: RoomOptions,
    identity: Identity,
    listener: PeerListener,
) -> GameStart:
    """Quick-match into a room of `seats` and wait for the roster."""
    peer_port = listener.port.getHost().port if listener.port is not None else 0
    lobby = LobbyClient(reactor, identity)
    try:
        await lobby.connect(seat.lobby_host, seat.lobby_port)
        await lobby.hello(seat.name, peer_port)
        await lobby.quick_match(seats, options)
        roster: GameStart = await lobby.next_game()
    finally:
        await lobby.close()
    return roster


def start_game(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    roster: GameStart,
    player: Player,
    executor: Executor,
    make_game: type[PeerGame] = PeerGame,
) -> PeerGame:
    """Start playing a roster: a fresh seed, the game file, the driver on the mesh.
    (`make_game` lets tests put a cheating driver at a seat.)"""
    keys = [member.public_key for member in roster.seats]
    index = keys.index(identity.public_key)
    seed = secrets.token_bytes(32)
    gamefile = GameFileWriter.create(game_path(roster.game_id, index), roster, index, seed)
    game = make_game(
        reactor,
        identity,
        roster,
        index,
        seed,
        listener,
        gamefile,
        player,
        executor=executor,
        step_deadline=seat.step_deadline,
    )
    game.start()
    return game


async def play_game(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    roster: GameStart,
    player: Player,
    make_game: type[PeerGame] = PeerGame,
) -> tuple[PeerGame, Outcome]:
    """Play one game from its roster; returns the driver (for its state) and the outcome."""
    with deck_workers() as executor:
        game = start_game(reactor, seat, identity, listener, roster, player, executor, make_game)
        outcome: Outcome = await game.done
    return game, outcome


def deck_workers() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(DECK_WORKERS, thread_name_prefix="deck")


async def join_and_play(
    reactor: Any,
    seat: Seat,
    seats: int,
    options: RoomOptions,
    player: Player,
    make_game: type[PeerGame] = PeerGame,
) -> tuple[PeerGame, Outcome]:
    identity = load_or_create(seat.profile)
    listener = PeerListener(reactor)
    await listener.listen(seat.listen)
    try:
        roster = await match(reactor, seat, seats, options, identity, listener)
        return await play_game(reactor, seat, identity, listener, roster, player, make_game)
    finally:
        await listener.stop()
