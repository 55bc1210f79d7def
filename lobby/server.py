"""The Twisted adapter: TLS connections in, frames and typed messages to `Lobby`, effects out.

Every connection is sealed (TLS 1.3, the lobby's own Ed25519 key as its certificate: see
lobby/service.py and protocol/sealed.py); the session starts once the TLS handshake is done,
with the connection's exporter value, which the client's hello must sign.

Everything one client can get wrong stays with that client: an oversized or malformed frame, a
message of the wrong shape, too many messages, silence, not reading, even a bug in a handler
ends that client's connection with an Error saying why, and the lobby serves everyone else.
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.interfaces import IAddress, IHandshakeListener, IReactorTime
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from client.net import channel_binding
from lobby.limits import LobbyLimits, TokenBucket
from lobby.relay import Relay
from lobby.rooms import ConnId, Drop, Effect, Lobby, Send
from protocol.messages import (
    LOBBY_EVENT_MAX_FRAME,
    LOBBY_REQUEST_MAX_FRAME,
    LOBBY_REQUESTS,
    Error,
    FrameDecoder,
    GameStart,
    MessageError,
    encode,
    error_reply,
    frame,
)

log = Logger()


def describe_host(address: IAddress) -> str:
    """The host a peer will be told to reach this client at (the address the lobby saw)."""
    host = getattr(address, "host", None)
    return host if isinstance(host, str) and host else "unknown"


@implementer(IHandshakeListener)
class LobbyConnection(Protocol):
    """One client's connection. It is also the transport's push producer, so that the lobby
    learns when the client stops reading (its send buffer is full)."""

    conn: ConnId
    closing_since: float | None = None
    stalled_since: float | None = None
    sealed_at: float | None = None  # when the TLS handshake ended (None: not yet)

    def __init__(self, factory: LobbyFactory) -> None:
        self.factory = factory
        self.decoder = FrameDecoder(LOBBY_REQUEST_MAX_FRAME)

    def connectionMade(self) -> None:
        factory = self.factory
        now = self.connected_at = factory.clock.seconds()
        self.conn = factory.register(self)
        self.bucket = TokenBucket(
            factory.limits.messages_per_second, factory.limits.message_burst, now
        )
        self.transport.registerProducer(self, True)
        if len(factory.connections) > factory.limits.max_connections:
            limit = factory.limits.max_connections
            self.fail(_fatal("lobby_full", f"the lobby is full ({limit} connections)"))

    def handshakeCompleted(self) -> None:
        """Sealed: the session begins, bound to this connection."""
        if self.closing_since is not None:
            return
        factory = self.factory
        now = self.sealed_at = factory.clock.seconds()
        host = describe_host(self.transport.getPeer())
        channel = channel_binding(self.transport)
        factory.run(self, lambda: factory.lobby.connect(self.conn, host, now, channel))

    def dataReceived(self, data: bytes) -> None:
        if self.closing_since is not None or self.sealed_at is None:
            return
        try:
            frames = self.decoder.feed(data)
        except MessageError as error:
            self.fail(error_reply(error))
            return
        for payload in frames:
            if self.closing_since is not None:
                return
            self.frame_received(payload)

    def frame_received(self, payload: bytes) -> None:
        factory = self.factory
        now = factory.clock.seconds()
        if not self.bucket.take(now):
            rate = factory.limits.messages_per_second
            self.fail(_fatal("rate_limited", f"more than {rate:g} messages per second"))
            return
        try:
            message = LOBBY_REQUESTS.decode(payload)
        except MessageError as error:
            self.fail(error_reply(error))
            return
        factory.run(self, lambda: factory.lobby.receive(self.conn, message, now))

    def send(self, data: bytes) -> None:
        if self.closing_since is None:
            self.transport.write(data)

    def fail(self, error: Error) -> None:
        """Tell the client why, forget its session, and close (flushing the error first)."""
        if self.closing_since is not None:
            return
        log.info(
            "dropping connection {conn} from {host}: {code}: {text}",
            conn=self.conn,
            host=describe_host(self.transport.getPeer()),
            code=error.code,
            text=error.message,
        )
        self.transport.write(frame(encode(error), LOBBY_EVENT_MAX_FRAME))
        self.closing_since = self.factory.clock.seconds()
        self.transport.unregisterProducer()
        self.transport.loseConnection()
        self.factory.forget(self, "dropped")

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.factory.unregister(self)
        self.factory.forget(self, "disconnected")

    # IPushProducer: the transport calls these as its send buffer fills and drains.
    def pauseProducing(self) -> None:
        self.stalled_since = self.factory.clock.seconds()

    def resumeProducing(self) -> None:
        self.stalled_since = None

    def stopProducing(self) -> None:
        pass


class LobbyFactory(Factory):
    """Holds the Lobby state machine and the live connections; applies the Lobby's effects.
    Each roster it sends introduces a table to the relay."""

    def __init__(
        self,
        limits: LobbyLimits,
        clock: IReactorTime,
        lobby: Lobby | None = None,
        relay: Relay | None = None,
    ):
        self.limits = limits
        self.clock = clock
        self.lobby = lobby or Lobby(limits)
        self.relay = relay or Relay(limits, clock)
        self.connections: dict[ConnId, LobbyConnection] = {}
        self._next_conn = 1
        self._all_gone: list[Deferred[None]] = []

    def buildProtocol(self, addr: IAddress) -> LobbyConnection:
        return LobbyConnection(self)

    def register(self, connection: LobbyConnection) -> ConnId:
        conn = self._next_conn
        self._next_conn += 1
        self.connections[conn] = connection
        return conn

    def unregister(self, connection: LobbyConnection) -> None:
        self.connections.pop(connection.conn, None)
        if not self.connections:
            waiting, self._all_gone = self._all_gone, []
            for gone in waiting:
                gone.callback(None)

    def run(self, culprit: LobbyConnection, step: Callable[[], list[Effect]]) -> None:
        """Apply the effects of one step of the Lobby; a failing step costs only its culprit."""
        try:
            effects = step()
        except Exception:
            log.failure("lobby handler failed for connection {conn}", conn=culprit.conn)
            culprit.fail(_fatal("internal_error", "the lobby failed on your request"))
            return
        self.apply(effects)

    def forget(self, connection: LobbyConnection, reason: str) -> None:
        """The Lobby forgets a connection (idempotent) and its room is told."""
        self.run(connection, lambda: self.lobby.disconnect(connection.conn, reason))

    def apply(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                if isinstance(effect.message, GameStart):
                    self.relay.introduce(effect.message)
                data = frame(encode(effect.message), LOBBY_EVENT_MAX_FRAME)
                for conn in effect.to:
                    connection = self.connections.get(conn)
                    if connection is not None:
                        connection.send(data)
            elif isinstance(effect, Drop):
                connection = self.connections.get(effect.conn)
                if connection is not None:
                    connection.fail(effect.error)

    def tick(self) -> None:
        """Expire idle sessions, and cut off clients that stopped reading or closing."""
        now = self.clock.seconds()
        for connection in list(self.connections.values()):
            if (
                connection.sealed_at is None
                and now - connection.connected_at > self.limits.hello_seconds
            ):
                connection.transport.abortConnection()  # no TLS handshake in time
            elif connection.closing_since is not None:
                if now - connection.closing_since > self.limits.close_seconds:
                    connection.transport.abortConnection()
            elif (
                connection.stalled_since is not None
                and now - connection.stalled_since > self.limits.stall_seconds
            ):
                sentence = f"not reading for {self.limits.stall_seconds:g} seconds"
                connection.fail(_fatal("write_stalled", sentence))
                connection.transport.abortConnection()
        self.relay.tick()
        try:
            effects = self.lobby.expire(now)
        except Exception:
            log.failure("lobby expiry failed")
            return
        self.apply(effects)

    def close_all(self) -> Deferred[None]:
        """Abort every connection, the relay's too (the service is stopping); fires when all
        are gone."""
        gone: Deferred[None] = Deferred()
        if self.connections:
            self._all_gone.append(gone)
        else:
            gone.callback(None)
        for connection in list(self.connections.values()):
            connection.transport.abortConnection()
        relayed = self.relay.close_all()
        return DeferredList([gone, relayed], consumeErrors=True).addCallback(lambda _: None)


def _fatal(code: str, sentence: str) -> Error:
    return Error(req=None, code=code, message=sentence, fatal=True)
