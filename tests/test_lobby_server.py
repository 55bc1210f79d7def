"""Fast checks of the Twisted adapter on in-memory transports (the real-TCP tests are in
test_lobby.py and test_lobby_robustness.py): stalled readers, slow closers, handler bugs."""

from __future__ import annotations

from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from lobby.limits import LobbyLimits
from lobby.rooms import Lobby
from lobby.server import LobbyFactory
from protocol.messages import (
    LOBBY_EVENT_MAX_FRAME,
    LOBBY_EVENTS,
    Error,
    FrameDecoder,
    Ping,
    encode,
    frame,
)


def connect(factory: LobbyFactory) -> tuple[Any, StringTransport]:
    transport = StringTransport(peerAddress=IPv4Address("TCP", "10.1.2.3", 50000))
    protocol = factory.buildProtocol(transport.getPeer())
    protocol.makeConnection(transport)
    protocol.handshakeCompleted()  # TLS itself is not in these tests: see test_lobby.py
    return protocol, transport


def errors(transport: StringTransport) -> list[Error]:
    frames = FrameDecoder(LOBBY_EVENT_MAX_FRAME).feed(transport.value())
    return [m for m in map(LOBBY_EVENTS.decode, frames) if isinstance(m, Error)]


def test_a_client_that_stops_reading_is_cut_off() -> None:
    clock = Clock()
    factory = LobbyFactory(LobbyLimits(stall_seconds=30, hello_seconds=1000), clock)
    protocol, transport = connect(factory)
    protocol.pauseProducing()  # the transport's send buffer is full
    clock.advance(29)
    factory.tick()
    assert not transport.disconnected
    protocol.resumeProducing()
    clock.advance(40)
    factory.tick()
    assert not transport.disconnected  # it caught up
    protocol.pauseProducing()
    clock.advance(31)
    factory.tick()
    assert transport.disconnected
    assert [e.code for e in errors(transport)] == ["write_stalled"]


def test_a_dropped_client_that_does_not_take_its_error_is_aborted() -> None:
    clock = Clock()
    factory = LobbyFactory(LobbyLimits(close_seconds=5), clock)
    protocol, transport = connect(factory)
    protocol.dataReceived(b"\xff\xff\xff\xff")
    assert transport.disconnecting and not transport.disconnected
    clock.advance(6)
    factory.tick()
    assert transport.disconnected


class Fragile(Lobby):
    """A lobby with a bug that only one client's request reaches."""

    def receive(self, conn: int, message: Any, now: float) -> Any:
        if conn == 1:
            raise RuntimeError("bug")
        return super().receive(conn, message, now)


def test_a_bug_in_a_handler_costs_only_the_client_that_hit_it() -> None:
    clock = Clock()
    factory = LobbyFactory(LobbyLimits(), clock, Fragile(LobbyLimits()))
    unlucky, unlucky_transport = connect(factory)
    other, other_transport = connect(factory)
    unlucky.dataReceived(frame(encode(Ping(req=1)), 4096))
    assert [e.code for e in errors(unlucky_transport)] == ["internal_error"]
    assert unlucky_transport.disconnecting
    other.dataReceived(frame(encode(Ping(req=2)), 4096))  # not said hello: refused,
    assert [e.code for e in errors(other_transport)] == ["hello_first"]  # but answered


def test_a_client_that_never_finishes_the_tls_handshake_is_cut_off() -> None:
    clock = Clock()
    factory = LobbyFactory(LobbyLimits(hello_seconds=10), clock)
    transport = StringTransport(peerAddress=IPv4Address("TCP", "10.1.2.3", 50000))
    protocol = factory.buildProtocol(transport.getPeer())
    protocol.makeConnection(transport)  # TCP is up; TLS never completes
    protocol.dataReceived(frame(encode(Ping(req=1)), 4096))  # nothing is read before it
    clock.advance(9)
    factory.tick()
    assert not transport.disconnected and factory.lobby.players == 0
    clock.advance(2)
    factory.tick()
    assert transport.disconnected
