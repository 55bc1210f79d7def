"""Helpers for the lobby tests over real TCP: a lobby on 127.0.0.1, clients, raw sockets.

(No tests here; the lobby test modules import these.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.python.failure import Failure

from client.net import LobbyClient, LobbyListener, channel_binding, dial
from lobby.limits import LobbyLimits
from lobby.server import LobbyFactory
from lobby.service import makeService
from protocol.identity import Identity
from protocol.messages import (
    HELLO_DOMAIN,
    LOBBY_EVENT_MAX_FRAME,
    LOBBY_EVENTS,
    LOBBY_REQUEST_MAX_FRAME,
    PROTOCOL_VERSION,
    Challenge,
    Error,
    FrameDecoder,
    GameStart,
    Hello,
    Member,
    Message,
    RoomState,
    encode,
    frame,
    hello_signed_payload,
)
from tests.waiting import Watched, within


@dataclass
class RunningLobby:
    service: Any
    port: int
    factory: LobbyFactory

    async def stop(self) -> None:
        await within(Deferred.fromCoroutine(_stop(self.service)))


async def _stop(service: Any) -> None:
    await service.stopService()


async def start_lobby(limits: LobbyLimits | None = None, clock: Any = None) -> RunningLobby:
    options = {"listen": "tcp:0:interface=127.0.0.1", "limits": limits or LobbyLimits()}
    service = makeService(options, reactor, clock)
    service.startService()
    listener = service.getServiceNamed("listener")
    port = await within(listener.listening)
    return RunningLobby(service, port.getHost().port, listener.factory)


class Recorder(LobbyListener, Watched):
    """Records what the lobby says unasked; `when` waits until a condition holds."""

    def __init__(self) -> None:
        Watched.__init__(self)
        self.events: list[tuple[Any, ...]] = []
        self.rooms: list[RoomState | None] = []

    def _record(self, *event: Any) -> None:
        self.events.append(event)
        self.changed()

    def kinds(self) -> list[str]:
        return [event[0] for event in self.events]

    def of_kind(self, kind: str) -> list[tuple[Any, ...]]:
        return [event for event in self.events if event[0] == kind]

    def room_updated(self, room: RoomState | None) -> None:
        self.rooms.append(room)
        self._record("room_updated", room)

    def member_joined(self, room: RoomState, member: Member) -> None:
        self._record("member_joined", member.name)

    def member_left(self, room: RoomState, name: str, reason: str) -> None:
        self._record("member_left", name, reason)

    def chat(self, room_id: int, name: str, text: str) -> None:
        self._record("chat", name, text)

    def game_starting(self, start: GameStart) -> None:
        self._record("game_starting", start)

    def dropped(self, error: Exception) -> None:
        self._record("dropped", error)

    def disconnected(self, reason: Exception) -> None:
        self._record("disconnected", reason)


class Clients:
    """Makes clients (fresh in-memory keys) and closes them all at the end of a test."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.all: list[LobbyClient] = []

    async def connect(self, recorder: Recorder | None = None) -> LobbyClient:
        client = LobbyClient(reactor, Identity.generate(), recorder or Recorder())
        self.all.append(client)
        await within(client.connect("127.0.0.1", self.port))
        return client

    async def player(self, name: str, peer_port: int = 4000) -> LobbyClient:
        client = await self.connect()
        await within(client.hello(name, peer_port))
        return client

    async def close(self) -> None:
        for client in self.all:
            await within(client.close())


class RawClient(Protocol):
    """A socket that sends whatever a test wants and records the frames the lobby sends."""

    def __init__(self) -> None:
        self.decoder = FrameDecoder(LOBBY_EVENT_MAX_FRAME)
        self.received: list[Message] = []
        self.closed: Deferred[None] = Deferred()
        self._waiters: list[tuple[int, Deferred[None]]] = []

    def dataReceived(self, data: bytes) -> None:
        self.received.extend(LOBBY_EVENTS.decode(frame) for frame in self.decoder.feed(data))
        ready = [(n, w) for n, w in self._waiters if len(self.received) >= n]
        self._waiters = [(n, w) for n, w in self._waiters if len(self.received) < n]
        for _, waiter in ready:
            waiter.callback(None)

    def has_received(self, count: int) -> Deferred[None]:
        """Fires once the lobby has sent `count` frames."""
        if len(self.received) >= count:
            return succeed(None)
        waiter: Deferred[None] = Deferred(
            lambda d: setattr(self, "_waiters", [x for x in self._waiters if x[1] is not d])
        )
        self._waiters.append((count, waiter))
        return within(waiter)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.closed.callback(None)

    def errors(self) -> list[Error]:
        return [message for message in self.received if isinstance(message, Error)]


async def connect_raw(port: int) -> RawClient:
    """A raw connection through TLS, as the lobby speaks it (any lobby key accepted)."""
    endpoint = dial(TCP4ClientEndpoint(reactor, "127.0.0.1", port), None, lambda k: True, reactor)
    raw: RawClient = await within(endpoint.connect(Factory.forProtocol(RawClient)))
    return raw


def hello_frame(raw: RawClient, identity: Identity, name: str, req: int = 1) -> bytes:
    """A correctly signed hello for a raw connection (after its challenge arrived)."""
    challenge = raw.received[0]
    assert isinstance(challenge, Challenge)
    channel = channel_binding(raw.transport)
    signed = hello_signed_payload(challenge.nonce, name, identity.public_key, 4000, channel)
    hello = Hello(
        version=PROTOCOL_VERSION,
        req=req,
        name=name,
        public_key=identity.public_key,
        peer_port=4000,
        signature=identity.sign(HELLO_DOMAIN, signed).signature,
    )
    return frame(encode(hello), LOBBY_REQUEST_MAX_FRAME)
