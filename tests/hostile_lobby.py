"""A hostile lobby for the end-to-end tests: the real lobby (lobby/), whose rosters are
rewritten on their way out, as a lobby that lies would.

    python -m tests.hostile_lobby MODE [--dump FILE] [--tamper KIND ...]
        [--seat-order NAME,NAME,...] [--block SEAT:DIRECTION ...]

Modes:
- `lower-options`: the second member of each room is told the game deals with 1 proof round
  (the others get the room's real options);
- `swap-key`: seat 0 is told that seat 1 has a key of the lobby's and sits at the lobby's own
  address, and seat 1 that seat 0 has another key of the lobby's: the lobby relays the link
  between them (tests/relay.py's Splice), reading all of it;
- `swap-key-bare`: every member but seat 1 is told that seat 1 has a key of the lobby's, at
  seat 1's own address; nobody sits in the middle, so no link to seat 1 can come up;
- `differ`: the third member's roster has seats 0 and 1 swapped (the others get the real one);
- `bot-seat`: in a room whose second member is a person's bot, the others are told that the
  bot's seat has the key and address of the lobby's own client, a member called `impostor`
  (any `bean-client bot --name impostor`, waiting in a room of its own), which gets their
  roster too and plays the bot's seat; the real bot gets a roster with keys of the lobby's for
  everyone else;
- `reuse-id`: every room gets the same room id and the same lobby game id;
- `extra-seat`: the second member of each room is given a roster with one seat more than
  the room has, the lobby's own (a key of the lobby's, at an address nobody listens on);
- `on-path`: every seat's link goes through a relay of tests/relay.py (as a machine on the
  path of every link would be), which records every byte (`--dump FILE` at the end) and, in
  front of seat 1, tampers with the link: each `--tamper` (flip, inject, replay, drop) hits
  one connection, in order, well after its handshake. `--seat-order` seats the players so
  named in that order (the others after them), so that a test knows which link crosses which
  relay: seat i dials every seat after it, so the relay of seat 1 carries the link from seat
  0 to seat 1 only, and the relay of the last seat every link into it. Each `--block SEAT:up`
  (what the dialler says to SEAT) or `SEAT:down` (what SEAT answers) is a one-way cut in
  front of SEAT (tests/relay.py's Block): SIGUSR1 makes them all, SIGUSR2 lifts them.

The first line on stdout is the real lobby's: `bean-lobby listening on HOST:PORT`. Then, in
`on-path` mode with blocks, `blocked` or `lifted` once a signal has taken effect.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
from pathlib import Path
from typing import Any

import msgpack
from twisted.internet.defer import Deferred

from client.net import accept
from lobby.limits import LobbyLimits
from lobby.rooms import Effect, Lobby, Room, Send
from lobby.server import LobbyFactory
from lobby.service import ListeningService
from protocol.identity import Identity
from protocol.messages import MAX_SEATS, GameStart, RoomOptions, Seat
from tests.relay import (
    DOWN,
    UP,
    Block,
    DropUnits,
    FlipBytes,
    Inject,
    Relay,
    Replay,
    Splice,
    Tamper,
    tls_records,
)

LOCAL = "127.0.0.1"
MODES = (
    "lower-options",
    "swap-key",
    "swap-key-bare",
    "differ",
    "bot-seat",
    "reuse-id",
    "extra-seat",
    "on-path",
)
IMPOSTOR = "impostor"  # the name of the lobby's own client in `bot-seat`
ATTACK_AT = 30_000  # bytes into a connection: past its handshake and hellos
APPLICATION_DATA = 23  # a TLS record's content type: what the link carries, sealed


class Sequenced(Tamper):
    """Each tamper of the list hits its own connection: the first the first, and so on
    (a link that breaks is dialled again: the next connection meets the next attack)."""

    def __init__(self, tampers: list[Tamper]) -> None:
        self.tampers = tampers

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        if connection >= len(self.tampers):
            return data
        return self.tampers[connection].change(connection, direction, offset, data)


def attack(kind: str, connection: int) -> Tamper:
    only = frozenset({connection})
    if kind == "flip":
        return FlipBytes(connections=only, direction=UP, offsets=(ATTACK_AT,))
    if kind == "inject":
        frame = msgpack.packb({"type": "chat", "text": "injected"})
        payload = len(frame).to_bytes(4, "big") + frame
        return Inject(connections=only, direction=UP, at=ATTACK_AT, payload=payload)
    if kind == "replay":
        start, end = ATTACK_AT - 2000, ATTACK_AT
        return Replay(connections=only, direction=UP, start=start, end=end, after=end + 5000)
    if kind == "drop":
        carried = {"bytes": 0, "dropped": 0}

        def the_first_record_of_data_past_the_start(unit: bytes) -> bool:
            """Whatever it holds (a step message, most likely): which record that is depends
            on when the link was dialled, in the deal or long after it."""
            carried["bytes"] += len(unit)
            if carried["dropped"] or carried["bytes"] <= ATTACK_AT or unit[0] != APPLICATION_DATA:
                return False
            carried["dropped"] = 1
            return True

        return DropUnits(
            connections=only,
            direction=UP,
            units=tls_records,
            pick=the_first_record_of_data_past_the_start,
        )
    raise ValueError(f"no such tamper {kind!r}")


class HostileLobby(Lobby):
    """The real lobby; only the rosters it sends are changed, per member."""

    def __init__(
        self, mode: str, reactor: Any, tampers: list[str], seat_order: tuple[str, ...] = ()
    ) -> None:
        super().__init__(LobbyLimits())
        self.mode = mode
        self.reactor = reactor
        self.tampers = tampers
        self.seat_order = seat_order
        self.relays: list[Relay] = []
        self.splice: Splice | None = None
        self.splice_port = 0
        self.lobby_keys = (Identity.generate(), Identity.generate())

    def _start_if_ready(self, room: Room) -> list[Effect]:
        members = list(room.members)
        effects = super()._start_if_ready(room)
        if not members or not effects:
            return effects
        (send,) = effects
        assert isinstance(send, Send) and isinstance(send.message, GameStart)
        roster = send.message
        if self.mode == "bot-seat":
            return self.impostor_at_the_bot_seat(roster, members)
        return [Send((m.conn,), self.roster_for(roster, seat)) for seat, m in enumerate(members)]

    def impostor_at_the_bot_seat(self, roster: GameStart, members: list[Any]) -> list[Effect]:
        """The people's roster has the impostor at the bot's seat (seat 1) under the bot's
        name; the impostor gets it too. The bot's has keys of the lobby's for the people."""
        impostor = next(s for s in self._sessions.values() if s.name == IMPOSTOR)
        seats = list(roster.seats)
        stand_in = dataclasses.replace(
            seats[1], public_key=impostor.public_key, host=impostor.host, port=impostor.peer_port
        )
        people = dataclasses.replace(roster, seats=(seats[0], stand_in, *seats[2:]))
        keys = [Identity.generate().public_key for _ in seats]
        for_the_bot = dataclasses.replace(
            roster,
            seats=tuple(
                member if n == 1 else dataclasses.replace(member, public_key=keys[n])
                for n, member in enumerate(seats)
            ),
        )
        others = tuple(m.conn for n, m in enumerate(members) if n != 1)
        return [Send((*others, impostor.conn), people), Send((members[1].conn,), for_the_bot)]

    def roster_for(self, roster: GameStart, seat: int) -> GameStart:
        seats = list(roster.seats)
        if self.mode == "lower-options" and seat == 1:
            return dataclasses.replace(roster, options=RoomOptions(proofs=False))
        if self.mode == "extra-seat" and seat == 1:
            extra = Seat("lobby", self.lobby_keys[0].public_key, LOCAL, 1)
            return dataclasses.replace(roster, seats=(*seats, extra))
        if self.mode == "swap-key-bare" and seat != 1:
            seats[1] = dataclasses.replace(seats[1], public_key=self.lobby_keys[0].public_key)
            return dataclasses.replace(roster, seats=tuple(seats))
        if self.mode == "differ" and seat == 2:
            seats[0], seats[1] = seats[1], seats[0]
            return dataclasses.replace(roster, seats=tuple(seats))
        if self.mode == "reuse-id":
            return dataclasses.replace(roster, room_id=1, game_id=bytes(16))
        if self.mode == "swap-key" and seat in (0, 1):
            assert self.splice is not None
            self.splice.target_host, self.splice.target_port = seats[1].host, seats[1].port
            into, out = self.lobby_keys
            if seat == 0:  # seat 1 is the lobby, at the lobby's address
                seats[1] = dataclasses.replace(
                    seats[1], public_key=into.public_key, host=LOCAL, port=self.splice_port
                )
            else:  # seat 0 is the lobby too
                seats[0] = dataclasses.replace(seats[0], public_key=out.public_key)
            return dataclasses.replace(roster, seats=tuple(seats))
        if self.mode == "on-path":
            return dataclasses.replace(roster, seats=tuple(self.behind_relays(self.ordered(seats))))
        return roster

    def ordered(self, seats: list[Any]) -> list[Any]:
        """The seats named in `--seat-order` first, in its order; the others as they were."""
        order = {name: place for place, name in enumerate(self.seat_order)}
        return sorted(seats, key=lambda member: order.get(member.name, len(order)))

    def behind_relays(self, seats: list[Any]) -> list[Any]:
        """Every seat at the address of its relay, each relay aimed at its seat."""
        for member, relay in zip(seats, self.relays, strict=False):
            relay.target_host, relay.target_port = member.host, member.port
        return [
            dataclasses.replace(member, host=LOCAL, port=relay.port_number)
            for member, relay in zip(seats, self.relays, strict=False)
        ]


def switch_on_signals(reactor: Any, blocks: list[Block], cuts: list[tuple[int, str]]) -> None:
    """SIGUSR1 makes every cut, SIGUSR2 lifts them all; each says so on stdout once done."""

    def make() -> None:
        for block, (_, direction) in zip(blocks, cuts, strict=True):
            block.blocked.add(direction)
        print("blocked", flush=True)

    def lift() -> None:
        for block in blocks:
            block.blocked.clear()
        print("lifted", flush=True)

    signal.signal(signal.SIGUSR1, lambda *_: reactor.callFromThread(make))
    signal.signal(signal.SIGUSR2, lambda *_: reactor.callFromThread(lift))


async def run(reactor: Any, options: argparse.Namespace) -> None:
    lobby = HostileLobby(options.mode, reactor, options.tamper, options.seat_order)
    factory = LobbyFactory(lobby.limits, reactor, lobby)
    if options.mode == "swap-key":
        into, out = lobby.lobby_keys
        lobby.splice = Splice(reactor, (LOCAL, 1), into, out, clients_show_keys=True)
        lobby.splice_port = await lobby.splice.listen()
    if options.mode == "on-path":
        # One relay per seat, listening before any roster names them.
        for _ in range(MAX_SEATS):
            lobby.relays.append(Relay(reactor, LOCAL, 1))
        lobby.relays[1].tamper = Sequenced([attack(k, n) for n, k in enumerate(options.tamper)])
        blocks = [Block() for _ in options.block]
        for block, (seat, _) in zip(blocks, options.block, strict=True):
            lobby.relays[seat].tamper = block
        if blocks:
            switch_on_signals(reactor, blocks, options.block)
        for relay in lobby.relays:
            relay.port_number = await relay.listen()
    from twisted.internet.endpoints import serverFromString

    service = ListeningService(
        serverFromString(reactor, f"tcp:0:interface={LOCAL}"),
        factory,
        accept(factory, Identity.generate(), False, reactor),
    )
    service.startService()
    port = await service.listening
    print(f"bean-lobby listening on {LOCAL}:{port.getHost().port}", flush=True)

    def dump() -> None:
        if options.dump and lobby.relays:
            captured = [
                [[bytes(r.captured.get(way, b"")) for way in ("up", "down")] for r in relay.records]
                for relay in lobby.relays
            ]
            Path(options.dump).write_bytes(msgpack.packb(captured))

    reactor.addSystemEventTrigger("before", "shutdown", dump)
    await Deferred()


def cut(text: str) -> tuple[int, str]:
    seat, colon, direction = text.partition(":")
    if not colon or not seat.isdigit() or int(seat) >= MAX_SEATS or direction not in (UP, DOWN):
        raise argparse.ArgumentTypeError(f"write SEAT:up or SEAT:down, not {text!r}")
    return int(seat), direction


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.hostile_lobby")
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--dump", help="write every byte the relays carried here, at the end")
    parser.add_argument(
        "--tamper", action="append", default=[], choices=("flip", "inject", "replay", "drop")
    )
    parser.add_argument(
        "--seat-order", type=lambda text: tuple(text.split(",")), default=(), help="NAME,NAME,..."
    )
    parser.add_argument(
        "--block", type=cut, action="append", default=[], help="SEAT:up or SEAT:down (on-path)"
    )
    options = parser.parse_args()
    blocked_seats = [seat for seat, _ in options.block]
    if len(set(blocked_seats)) < len(blocked_seats):
        parser.error("give each seat one --block at most")
    if options.tamper and 1 in blocked_seats:
        parser.error("seat 1's relay takes --tamper or --block, not both")
    from twisted.internet import task

    task.react(lambda reactor: Deferred.fromCoroutine(run(reactor, options)))


if __name__ == "__main__":
    main()
