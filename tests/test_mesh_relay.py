"""The mesh over the lobby's relay, in one process over real TCP on 127.0.0.1: a link that
cannot be made directly is made through the relay (the mesh's link logic unchanged), direct
links are preferred, and a relayed link is replaced by a direct one once the address answers."""

from __future__ import annotations

import secrets
import socket

import pytest_twisted
from twisted.internet import reactor

from client.net import Mesh, PeerListener
from protocol.identity import Identity
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.peer_messages import PeerChat
from tests.lobby_support import start_lobby
from tests.relay import LinkProfile, Relay
from tests.test_lobby_relay import quiet, until
from tests.test_mesh import Events
from tests.waiting import within

LOCAL = "127.0.0.1"


async def relayed_table(players: int, dead: set[int], relay_port: int):
    """Meshes of one game whose seats in `dead` are given a port where nothing listens yet
    (bound, not listening: the test may listen there later)."""
    identities = [Identity.generate() for _ in range(players)]
    listeners = [PeerListener(reactor, identity) for identity in identities]
    ports = [await within(listener.listen(f"tcp:0:interface={LOCAL}")) for listener in listeners]
    holders = {}
    for seat in dead:
        holder = socket.socket()
        holder.bind((LOCAL, 0))
        holders[seat] = holder
        ports[seat] = holder.getsockname()[1]
    roster = GameStart(
        room_id=1,
        game_id=secrets.token_bytes(16),
        seats=tuple(
            Seat(f"p{n}", identities[n].public_key, LOCAL, ports[n]) for n in range(players)
        ),
        options=RoomOptions(),
    )
    events = [Events() for _ in range(players)]
    meshes = [
        Mesh(
            reactor,
            identities[n],
            roster,
            n,
            events[n],
            listeners[n],
            (0.05, 0.1),
            relay=(LOCAL, relay_port),
            relay_after=0.3,
            direct_again_delays=(0.5,),
        )
        for n in range(players)
    ]
    return roster, listeners, meshes, events, holders


async def close(meshes, listeners) -> None:
    for mesh in meshes:
        await within(mesh.close())
    for listener in listeners:
        await within(listener.stop())


@pytest_twisted.ensureDeferred
async def test_a_link_nobody_can_dial_goes_through_the_relay_then_direct_once_it_can() -> None:
    """Seat 1's address answers nothing: the link from seat 0 comes up through the relay
    (both ends see it relayed) and carries messages; the others are direct. Once seat 1's
    address answers, seat 0 tries it again and the link is direct, still up."""
    lobby = await start_lobby()
    roster, listeners, meshes, events, holders = await relayed_table(3, {1}, lobby.port)
    forward = None
    try:
        lobby.factory.relay.introduce(roster)
        for mesh in meshes:
            mesh.start()
        for n, handler in enumerate(events):
            await handler.when(lambda e, n=n: e.up == {0, 1, 2} - {n}, 20)
        assert meshes[0].relayed == {1} and meshes[1].relayed == {0}
        assert not meshes[2].relayed
        # netcheck's words: why each relayed end is relayed, as far as it can tell
        why = meshes[0].how_linked(1)  # refused, or no answer within relay_after (a slow turn)
        assert why.startswith("through the lobby's relay: ") and "p1" in why, why
        assert "refuses links on port" in why or "times out" in why, why
        assert "did not reach this one directly" in meshes[1].how_linked(0)
        assert meshes[0].how_linked(2) == "directly"
        meshes[0].send(1, PeerChat("through the lobby"))
        await events[1].when(lambda e: (0, PeerChat("through the lobby")) in e.messages)
        assert lobby.factory.relay.spliced >= 1

        port = holders[1].getsockname()[1]
        holders.pop(1).close()
        forward = Relay(reactor, LOCAL, listeners[1].port.getHost().port, LinkProfile())
        await within(forward.listen(f"tcp:{port}:interface={LOCAL}"))
        await until(lambda: not meshes[0].relayed and not meshes[1].relayed, 20)
        assert 1 in meshes[0].connected
        meshes[0].send(1, PeerChat("directly"))
        await events[1].when(lambda e: (0, PeerChat("directly")) in e.messages)
        await until(lambda: quiet(lobby))
    finally:
        await close(meshes, listeners)
        if forward is not None:
            await within(forward.stop())
        for holder in holders.values():
            holder.close()
        await lobby.stop()


@pytest_twisted.ensureDeferred
async def test_direct_links_are_preferred_the_relay_is_not_used_when_every_address_answers() -> (
    None
):
    lobby = await start_lobby()
    roster, listeners, meshes, events, _ = await relayed_table(4, set(), lobby.port)
    try:
        lobby.factory.relay.introduce(roster)
        for mesh in meshes:
            mesh.start()
        for n, handler in enumerate(events):
            await handler.when(lambda e, n=n: e.up == {0, 1, 2, 3} - {n}, 20)
        assert all(not mesh.relayed for mesh in meshes)
        await until(lambda: quiet(lobby))  # a seat that waited at the relay meanwhile left
        assert lobby.factory.relay.spliced == 0
    finally:
        await close(meshes, listeners)
        await lobby.stop()
