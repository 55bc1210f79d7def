"""The peer mesh over real TCP on 127.0.0.1: authenticated links, redial, hostile bytes."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory, Protocol

from client.mesh import Mesh, MeshHandler, PeerListener
from protocol.identity import Identity
from protocol.messages import PROTOCOL_VERSION, GameStart, Message, RoomOptions, Seat, encode, frame
from protocol.peer_messages import HANDSHAKE_MAX_FRAME, PeerChat, PeerHello
from tests.waiting import Watched, within


class Events(MeshHandler, Watched):
    def __init__(self) -> None:
        Watched.__init__(self)
        self.up: set[int] = set()
        self.ever_up: set[int] = set()
        self.downs: list[tuple[int, str]] = []
        self.messages: list[tuple[int, Message]] = []

    def link_up(self, seat: int) -> None:
        self.up.add(seat)
        self.ever_up.add(seat)
        self.changed()

    def link_down(self, seat: int, reason: str) -> None:
        self.up.discard(seat)
        self.downs.append((seat, reason))
        self.changed()

    def received(self, seat: int, message: Message) -> None:
        self.messages.append((seat, message))
        self.changed()


@dataclass
class Table:
    listeners: list[PeerListener]
    meshes: list[Mesh]
    events: list[Events]
    extra: list[Any] = field(default_factory=list)

    async def close(self) -> None:
        for mesh in self.meshes:
            await within(mesh.close())
        for listener in self.listeners:
            await within(listener.stop())
        for thing in self.extra:
            thing.transport.abortConnection()


async def table(players: int, impostor: int | None = None, start: bool = True) -> Table:
    """Meshes for one game on 127.0.0.1; the impostor seat signs with a key not in the roster."""
    identities = [Identity.generate() for _ in range(players)]
    listeners = [PeerListener(reactor, unknown_game_wait=0.5) for _ in range(players)]
    ports = [await within(listener.listen("tcp:0:interface=127.0.0.1")) for listener in listeners]
    roster = GameStart(
        room_id=1,
        game_id=secrets.token_bytes(16),
        seats=tuple(
            Seat(f"p{i}", identities[i].public_key, "127.0.0.1", ports[i]) for i in range(players)
        ),
        options=RoomOptions(),
    )
    events = [Events() for _ in range(players)]
    meshes = []
    for seat in range(players):
        identity = Identity.generate() if seat == impostor else identities[seat]
        meshes.append(
            Mesh(reactor, identity, roster, seat, events[seat], listeners[seat], (0.05, 0.1))
        )
    if start:
        for mesh in meshes:
            mesh.start()
    return Table(listeners, meshes, events)


def everyone_but(seat: int, players: int) -> set[int]:
    return set(range(players)) - {seat}


@pytest_twisted.ensureDeferred
async def test_every_pair_of_seats_gets_one_authenticated_link_and_messages_name_their_sender():
    t = await table(4)
    try:
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 4))
        for seat, mesh in enumerate(t.meshes):
            mesh.broadcast(PeerChat(f"hello from {seat}"))
        for seat, events in enumerate(t.events):
            await events.when(lambda e: len(e.messages) == 3)
            assert {(s, m.text) for s, m in events.messages} == {
                (other, f"hello from {other}") for other in everyone_but(seat, 4)
            }
        assert all(len(mesh.links) == 3 for mesh in t.meshes)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_seat_that_cannot_prove_its_roster_key_gets_no_link():
    t = await table(3, impostor=1)
    try:
        await t.events[0].when(lambda e: e.up == {2})
        await t.events[2].when(lambda e: e.up == {0})
        # Seat 0 keeps redialling the impostor; every attempt fails the handshake, and no
        # honest seat ever takes the impostor for seat 1.
        await t.events[0].when(lambda e: len([d for d in e.downs if d[0] == 1]) >= 2)
        assert 1 not in t.events[0].ever_up and 1 not in t.events[2].ever_up
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_dropped_link_is_dialled_again():
    t = await table(3)
    try:
        await t.events[2].when(lambda e: e.up == {0, 1})
        t.meshes[0].links[2].transport.abortConnection()
        await t.events[2].when(lambda e: any(d[0] == 0 for d in e.downs))
        await t.events[2].when(lambda e: e.up == {0, 1})
        t.meshes[0].send(2, PeerChat("still here"))
        await t.events[2].when(lambda e: (0, PeerChat("still here")) in e.messages)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_peer_may_dial_before_this_client_has_read_the_roster():
    t = await table(3, start=False)
    try:
        t.meshes[0].start()  # dials seats 1 and 2, whose meshes do not exist yet
        t.meshes[2].start()
        t.meshes[1].start()
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 3))
    finally:
        await t.close()


class Raw(Protocol, Watched):
    def __init__(self) -> None:
        Watched.__init__(self)
        self.lost = False

    def connectionLost(self, reason: Any = None) -> None:
        self.lost = True
        self.changed()


async def raw_connection(port: int) -> Raw:
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
    return await within(endpoint.connect(Factory.forProtocol(Raw)))


@pytest_twisted.ensureDeferred
async def test_garbage_on_the_peer_port_is_dropped_and_the_game_goes_on():
    t = await table(3)
    try:
        await t.events[2].when(lambda e: e.up == {0, 1})
        port = t.listeners[2].port.getHost().port
        unknown = PeerHello(PROTOCOL_VERSION, secrets.token_bytes(16), 0, secrets.token_bytes(32))
        attacks = [
            secrets.token_bytes(300),
            (HANDSHAKE_MAX_FRAME + 1).to_bytes(4, "big") + b"x" * 10,
            frame(b"\xc1\xc1", HANDSHAKE_MAX_FRAME),
            frame(encode(PeerChat("before any handshake")), HANDSHAKE_MAX_FRAME),
            frame(encode(unknown), HANDSHAKE_MAX_FRAME),
        ]
        raws = []
        for attack in attacks:
            raw = await raw_connection(port)
            raw.transport.write(attack)
            raws.append(raw)
        t.extra.extend(raws)
        for raw in raws:
            await raw.when(lambda r: r.lost)
        t.meshes[0].send(2, PeerChat("unbothered"))
        await t.events[2].when(lambda e: (0, PeerChat("unbothered")) in e.messages)
        assert t.events[2].up == {0, 1}
    finally:
        await t.close()
