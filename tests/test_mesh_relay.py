"""The mesh over the lobby's relay, in one process over real TCP on 127.0.0.1: a link that
cannot be made directly is made through the relay (the mesh's link logic unchanged), direct
links are preferred, and a relayed link is replaced by a direct one once the address answers.
Then DirectFirst's choice on a manual clock: direct first, the relay when the direct dial
fails or is too slow, and why."""

from __future__ import annotations

import secrets
import socket
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.defer import TimeoutError as DeferTimeout
from twisted.internet.task import Clock

from client.net import Mesh, PeerListener
from client.net.mesh import relay_words
from client.net.relayed import DirectFirst, NoPath, RelayRefused
from protocol.identity import Identity
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.peer_messages import PeerChat
from protocol.relay import RelayRole, RelayStatus
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


class Pending:
    """An endpoint whose connection attempt the test settles: `attempts` holds each one."""

    def __init__(self) -> None:
        self.attempts: list[Deferred[Any]] = []

    def connect(self, factory: Any) -> Deferred[Any]:
        attempt: Deferred[Any] = Deferred()
        self.attempts.append(attempt)
        return attempt


def ways(relay_after: float = 3.0) -> tuple[Clock, Pending, Pending, DirectFirst]:
    clock, direct, relay = Clock(), Pending(), Pending()
    return clock, direct, relay, DirectFirst(clock, direct, relay, relay_after)


def test_the_direct_way_is_taken_when_it_connects_in_time_and_the_relay_never_asked() -> None:
    clock, direct, relay, first = ways()
    result = first.connect(None)
    clock.advance(2.9)
    direct.attempts[0].callback("direct link")
    assert result.result == "direct link" and not first.relayed and not relay.attempts
    clock.advance(10)
    assert not relay.attempts and not clock.getDelayedCalls()


def test_a_failed_direct_dial_asks_the_relay_at_once_and_says_why() -> None:
    clock, direct, relay, first = ways()
    result = first.connect(None)
    direct.attempts[0].errback(ConnectionRefusedError("refused"))
    assert len(relay.attempts) == 1 and first.relayed
    relay.attempts[0].callback("relayed link")
    assert result.result == "relayed link"
    assert isinstance(first.direct_error, ConnectionRefusedError)
    assert not clock.getDelayedCalls()


def test_a_slow_direct_dial_is_given_up_for_the_relay_after_relay_after() -> None:
    clock, direct, relay, first = ways(relay_after=3.0)
    result = first.connect(None)
    clock.advance(2.9)
    assert not relay.attempts
    clock.advance(0.2)
    assert len(relay.attempts) == 1 and first.relayed
    assert direct.attempts[0].called  # given up (cancelled)
    assert isinstance(first.direct_error, TimeoutError) and "3 s" in str(first.direct_error)
    relay.attempts[0].errback(RelayRefused(RelayStatus.TIMED_OUT, "not in time"))
    failure = result.result
    result.addErrback(lambda _: None)
    assert isinstance(failure.value, NoPath)
    assert isinstance(failure.value.relayed, RelayRefused)
    assert relay_words(failure.value.relayed) == "not in time"
    assert relay_words(DeferTimeout()) == "the lobby's relay did not answer in time"


def test_without_a_relay_the_direct_way_is_the_only_one() -> None:
    clock, direct = Clock(), Pending()
    first = DirectFirst(clock, direct, None)
    result = first.connect(None)
    direct.attempts[0].errback(ConnectionRefusedError("refused"))
    assert isinstance(result.result.value, ConnectionRefusedError) and not first.relayed
    result.addErrback(lambda _: None)
    assert not clock.getDelayedCalls()


def test_a_cancelled_dial_asks_no_relay_and_leaves_nothing_behind() -> None:
    """(Before: cancelling while the direct attempt was pending made it fail, which asked
    the relay after all; that attempt outlived the mesh that had closed.)"""
    clock, direct, relay, first = ways()
    result = first.connect(None)
    result.addErrback(lambda _: None)
    result.cancel()
    assert direct.attempts[0].called and not relay.attempts
    assert not clock.getDelayedCalls()


def test_a_roster_key_nobody_can_hold_gets_no_relay_end() -> None:
    """A lobby's roster that gives a seat a key of small order: no secret can be agreed with
    it, so this seat neither dials nor waits for that link at the relay (no traceback), while
    a usable key gets its relay end."""
    identity, other = Identity.generate(), Identity.generate()
    seats = (
        Seat("p0", bytes(32), LOCAL, 4000),
        Seat("p1", identity.public_key, LOCAL, 4001),
        Seat("p2", other.public_key, LOCAL, 4002),
    )
    roster = GameStart(1, secrets.token_bytes(16), seats, RoomOptions())
    clock = Clock()
    listener = PeerListener(clock, identity)
    mesh = Mesh(clock, identity, roster, 1, Events(), listener, relay=(LOCAL, 7777))
    assert mesh._relay_end(0, RelayRole.ACCEPTS) is None
    mesh._wait_at_relay(0)
    assert not mesh._relay_waits
    assert mesh._relay_end(2, RelayRole.DIALS) is not None
