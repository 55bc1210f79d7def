"""From a lobby to a finished game: say hello, get matched, take the roster, agree on the
table with the other players, play it out.

Shared by `bean-client bot`, `bean-client play` and the REPL. The peer port is opened first
(the lobby tells the others where it is); once the roster arrives the lobby connection is
closed: the game runs between the players' machines alone. Before any card, the players check
the roster among themselves (client/table_setup.py): the terms this client joined for, its
proof floor, the same roster everywhere, and the game identity they derive together.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import Deferred, race
from twisted.internet.error import CannotListenError

from client.game import Outcome, PeerGame, Player
from client.gamefile import GameFileWriter, game_path
from client.net import (
    LanProblem,
    LobbyClient,
    LobbyError,
    PeerListener,
    check_listen_address,
    check_roster,
    explain_bind_error,
    explain_lobby_error,
    load_or_create,
)
from client.table_setup import TableRefused, TableSetup, table_lines
from protocol.deck import BACKGROUND_WORK
from protocol.identity import Identity
from protocol.messages import GameStart, MessageError, RoomOptions
from protocol.table import RoomTerms, below_the_floor

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
    abandon_after: float = 300.0
    allow_weak_proofs: bool = False  # accept games dealt without proofs
    relay: bool = True  # links that cannot be made directly go through the lobby's relay

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, name: str, profile: str, host: str, port: int, **given: Any
    ) -> Seat:
        """The seat a bean-client command line asks for (its --listen, deadlines and
        --allow-weak-proofs, unless `given` says otherwise)."""
        fields: dict[str, Any] = {
            "listen": getattr(args, "listen", "tcp:0"),
            "step_deadline": args.step_deadline,
            "abandon_after": args.abandon_after,
            "allow_weak_proofs": args.allow_weak_proofs,
        }
        return cls(name, profile, host, port, **(fields | given))


def room_options(args: argparse.Namespace) -> RoomOptions:
    """The options of the room a command line asks for (`--no-proofs` and the rest)."""
    return RoomOptions(
        singleton_rule=args.singleton_rule,
        proofs=args.proofs,
        turn_seconds=args.turn_seconds,
    )


async def open_peer_port(reactor: Any, description: str, identity: Identity) -> PeerListener:
    """Listen for peers (`tcp:0` picks a free port), sealed with `identity`'s certificate; a
    port that cannot be had is explained."""
    listener = PeerListener(reactor, identity)
    try:
        await listener.listen(description)
    except CannotListenError as error:
        raise explain_bind_error(error, error.interface or "0.0.0.0", error.port) from None
    return listener


def peer_host(listener: PeerListener) -> str:
    assert listener.port is not None
    host: str = listener.port.getHost().host
    return host


async def match(
    reactor: Any,
    seat: Seat,
    seats: int,
    options: RoomOptions,
    identity: Identity,
    listener: PeerListener,
) -> GameStart:
    """Quick-match into a room of `seats` and wait for the roster; LanProblem, with the fix,
    when this client could not play with the others on this network."""
    floor = below_the_floor(options.proofs, seat.allow_weak_proofs)
    if floor is not None:  # said before asking the lobby for such a room
        raise TableRefused(f"This client will not play that game: {floor}.")

    async def quick(lobby: LobbyClient) -> RoomTerms:
        await lobby.quick_match(seats, options)
        return RoomTerms(seats, options)

    roster, _ = await _seated(reactor, seat, identity, listener, quick)
    return roster


class OwnerGone(Exception):
    """The client that started this bot is gone before its room's game started."""


async def sit_in_room(
    reactor: Any,
    seat: Seat,
    room: int,
    identity: Identity,
    listener: PeerListener,
    seated: Callable[[LobbyClient], None],
    gone: Deferred[None] | None = None,
) -> tuple[GameStart, RoomTerms]:
    """Join room `room`, say ready, tell `seated`, and wait for the roster; the roster and
    the room's seats and options (the terms this client joined for). OwnerGone if `gone`
    fires first; TableRefused for a room whose proofs are below this client's floor."""

    async def join(lobby: LobbyClient) -> RoomTerms:
        joined = await lobby.join(room)
        floor = below_the_floor(joined.options.proofs, seat.allow_weak_proofs)
        if floor is not None:
            raise TableRefused(f"This client will not play the game of room {room}: {floor}.")
        await lobby.ready()
        seated(lobby)
        return RoomTerms(joined.seats, joined.options)

    return await _seated(reactor, seat, identity, listener, join, gone)


async def _seated(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    sit: Callable[[LobbyClient], Awaitable[RoomTerms]],
    gone: Deferred[None] | None = None,
) -> tuple[GameStart, RoomTerms]:
    """Say hello, sit down as `sit` does, and wait for the roster (the lobby connection is
    closed once it came): the roster, checked for this network, and the terms."""
    problem = check_listen_address(peer_host(listener), seat.lobby_host)
    if problem is not None:
        raise problem
    lobby = await connect_lobby(reactor, identity, seat.lobby_host, seat.lobby_port)
    try:
        assert listener.port is not None
        await lobby.hello(seat.name, listener.port.getHost().port)
        terms = await sit(lobby)
        waiting: Deferred[Any] = lobby.next_game()
        if gone is not None:  # a race ignores a failure until all fail: it is carried along
            carried = waiting.addCallbacks(lambda roster: (roster, None), lambda f: (None, f))
            index, (roster, failure) = await race(
                [carried, gone.addCallback(lambda _: (None, None))]
            )
            if index == 1:
                raise OwnerGone("the client that started this bot is gone")
            if failure is not None:
                failure.raiseException()
        else:
            roster = await waiting
    finally:
        await lobby.close()
    check_reachable(roster, seat.name, peer_host(listener))
    return roster, terms


async def connect_lobby(reactor: Any, identity: Identity, host: str, port: int) -> LobbyClient:
    lobby = LobbyClient(reactor, identity)
    try:
        await lobby.connect(host, port)
    except (LobbyError, MessageError):
        raise
    except Exception as error:  # refused, timed out, unreachable, unknown name: explained
        raise explain_lobby_error(error, host, port) from None
    return lobby


def check_reachable(roster: GameStart, name: str, listen_host: str) -> None:
    """Fail before the game starts if some seat cannot be reached by the others (a loopback
    listener or address on a LAN, two seats at one address): every client says the same."""
    problems = check_roster(roster.seats, name, listen_host)
    if problems:
        raise LanProblem(" Also: ".join(str(problem) for problem in problems))


async def agree_on_table(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    roster: GameStart,
    terms: RoomTerms | None,
    say: Callable[[str], None],
    own_bots: Mapping[str, bytes] | None = None,
    derived: Callable[[GameStart, bytes], None] | None = None,
    confirm_gate: Callable[[bytes], Deferred[None]] | None = None,
) -> TableSetup:
    """Agree with the other players on this roster (`terms`: the seats and options of the
    room this client joined and readied for; `own_bots`, `derived`, `confirm_gate`: the
    checks of the bots this client started, or of the client that started this bot:
    TableSetup); says the table code and any warning. TableRefused, with the reason, if the
    table will not start."""
    keys = [member.public_key for member in roster.seats]
    if identity.public_key not in keys:
        raise TableRefused("the lobby sent a roster without this client's key in it")
    setup = TableSetup(
        reactor,
        identity,
        roster,
        keys.index(identity.public_key),
        listener,
        terms=terms,
        allow_weak_proofs=seat.allow_weak_proofs,
        deadline=seat.step_deadline,
        own_bots=own_bots,
        derived=derived,
        confirm_gate=confirm_gate,
        mesh_options={"relay": (seat.lobby_host, seat.lobby_port)} if seat.relay else None,
    )
    agreed = await setup.start()
    for line in table_lines(agreed, setup.warnings):
        say(line)
    return setup


def start_game(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    setup: TableSetup,
    player: Player,
    executor: Executor,
    make_game: type[PeerGame] = PeerGame,
) -> PeerGame:
    """Start playing an agreed table: a fresh seed, the game file, the driver on the mesh
    the table was agreed over. (`make_game` lets tests put a cheating driver at a seat.)"""
    agreed = setup.agreed
    assert agreed is not None
    seed = secrets.token_bytes(32)
    path = game_path(agreed.identity, agreed.seat)
    relay = (seat.lobby_host, seat.lobby_port) if seat.relay else None
    gamefile = GameFileWriter.create(path, agreed, seed, peer_host(listener), relay)
    game = make_game(
        reactor,
        identity,
        agreed,
        seed,
        listener,
        gamefile,
        player,
        executor=executor,
        step_deadline=seat.step_deadline,
        abandon_after=seat.abandon_after,
        mesh=setup.mesh,
    )
    setup.attach(game)
    game.start()
    return game


async def play_game(
    reactor: Any,
    seat: Seat,
    identity: Identity,
    listener: PeerListener,
    roster: GameStart,
    terms: RoomTerms | None,
    player: Player,
    make_game: type[PeerGame] = PeerGame,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    derived: Callable[[GameStart, bytes], None] | None = None,
) -> tuple[PeerGame, Outcome]:
    """Agree on the table, then play its game; returns the driver (for its state) and the
    outcome (`derived`: hears the table this seat derived). TableRefused if the table does
    not start."""
    setup = await agree_on_table(
        reactor, seat, identity, listener, roster, terms, say, derived=derived
    )
    with deck_workers() as executor:
        game = start_game(reactor, seat, identity, listener, setup, player, executor, make_game)
        outcome: Outcome = await game.done
    return game, outcome


class DeckWorkers(Executor):
    """The deck's threads: its bulk work on the deck's chain, and beside it, on threads of its
    own, the background work (`BACKGROUND_WORK`: the proofs this seat checks and its own
    shuffle argument), which would otherwise queue ahead of the chain's next multiplications
    and hold up every seat."""

    def __init__(self) -> None:
        self.chain = ThreadPoolExecutor(DECK_WORKERS, thread_name_prefix="deck")
        self.background = ThreadPoolExecutor(DECK_WORKERS, thread_name_prefix="deck-proofs")

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        pool = self.background if fn in BACKGROUND_WORK else self.chain
        return pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for pool in (self.chain, self.background):
            pool.shutdown(wait, cancel_futures=cancel_futures)


def deck_workers() -> DeckWorkers:
    return DeckWorkers()


async def join_and_play(
    reactor: Any,
    seat: Seat,
    seats: int,
    options: RoomOptions,
    player: Player,
    make_game: type[PeerGame] = PeerGame,
    room: tuple[int, Callable[[LobbyClient], None], Deferred[None] | None] | None = None,
    derived: Callable[[GameStart, bytes], None] | None = None,
) -> tuple[PeerGame, Outcome]:
    """Quick-match a table of `seats` with `options` and play its game; with `room`, sit in
    that room instead (its number, what to do once seated, what makes it leave before the
    start: `sit_in_room`). `derived` hears the table this seat derived."""
    identity = load_or_create(seat.profile)
    listener = await open_peer_port(reactor, seat.listen, identity)
    try:
        if room is None:
            roster = await match(reactor, seat, seats, options, identity, listener)
            terms = RoomTerms(seats, options)
        else:
            number, seated, gone = room
            roster, terms = await sit_in_room(
                reactor, seat, number, identity, listener, seated, gone
            )
        return await play_game(
            reactor, seat, identity, listener, roster, terms, player, make_game, derived=derived
        )
    finally:
        await listener.stop()
