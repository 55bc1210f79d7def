"""The lobby, seen from a player's machine: a Twisted protocol and a small Deferred API.

    client = LobbyClient(reactor, identity, listener)
    await client.connect("lobby.local", 7777)
    await client.hello("Ann", peer_port=4000)
    room = await client.quick_match(5)
    start = await client.next_game()          # the roster, once the room is full and ready

The connection is sealed (TLS 1.3, protocol.sealed): the lobby shows a certificate of its own
Ed25519 key, which this machine remembers per address on first use (client.net.remembered); a
different key at a remembered address fails the connection with `LobbyKeyChanged`, which says
both fingerprints and what to do. The hello's signature covers the connection's TLS exporter
value, so it cannot be relayed to another connection.

Every request returns a Deferred that fires with the lobby's reply, or fails with `LobbyError`
(the lobby refused it, with the lobby's sentence), `LobbyDisconnected`, or a timeout. Things
the lobby tells unasked (members coming and going, chat, the roster) go to a `LobbyListener`.
`client.room` is always the room as the lobby last described it. The REPL and the bots use this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from twisted.internet.abstract import isIPAddress, isIPv6Address
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.endpoints import HostnameEndpoint, TCP4ClientEndpoint, TCP6ClientEndpoint
from twisted.internet.interfaces import IAddress, IHandshakeListener
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

import client.net.sealed as sealed
from client.net.remembered import RememberedKeys
from protocol.identity import Identity, fingerprint
from protocol.messages import (
    HELLO_DOMAIN,
    LOBBY_EVENT_MAX_FRAME,
    LOBBY_EVENTS,
    LOBBY_REQUEST_MAX_FRAME,
    PROTOCOL_VERSION,
    Challenge,
    Chat,
    ChatMessage,
    CreateRoom,
    Error,
    FrameDecoder,
    GameStart,
    Hello,
    Join,
    Joined,
    Leave,
    ListRooms,
    Member,
    MemberJoined,
    MemberLeft,
    MemberReady,
    Message,
    MessageError,
    Ok,
    Ping,
    QuickMatch,
    Ready,
    RoomOptions,
    Rooms,
    RoomState,
    Welcome,
    encode,
    frame,
    hello_signed_payload,
)
from protocol.table import RoomTerms

log = Logger()

DEFAULT_LOBBY_PORT = 7777
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 30.0


def parse_lobby_address(text: str) -> tuple[str, int]:
    """HOST, HOST:PORT, [IPv6] or [IPv6]:PORT (a bare IPv6 address has no port)."""
    text = text.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"cannot read lobby address {text!r}; write [IPv6]:PORT")
        port_text = rest[1:] or str(DEFAULT_LOBBY_PORT)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, str(DEFAULT_LOBBY_PORT)
    if not host:
        raise ValueError(f"lobby address {text!r} has no host")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"lobby port must be a number from 1 to 65535, not {port_text!r}")
    return host, int(port_text)


class LobbyError(Exception):
    """The lobby refused a request or dropped us; `str()` is the lobby's sentence."""

    def __init__(self, code: str, sentence: str, fatal: bool) -> None:
        super().__init__(sentence)
        self.code = code
        self.fatal = fatal


class LobbyDisconnected(Exception):
    """The connection to the lobby is gone (or was never made)."""


class LobbyKeyChanged(LobbyError):
    """The lobby at a remembered address showed another key than the last time."""

    def __init__(self, address: str, remembered: bytes, shown: bytes, store: str) -> None:
        super().__init__(
            "lobby_key_changed",
            f"WARNING: the lobby at {address} is not the one this machine met there before: it "
            f"showed key {fingerprint(shown)}, but this machine remembers key "
            f"{fingerprint(remembered)} "
            f"for {address}. Someone may be pretending to be the lobby, to sit between you "
            "and the other players; nothing was sent to it. If the lobby's owner confirms "
            f"that its key changed (a new machine or key file), remove the entry {address!r} "
            f"from {store} and connect again; otherwise do not play through it.",
            True,
        )
        self.address = address
        self.remembered = remembered
        self.shown = shown


class LobbyListener:
    """What the lobby says unasked. Override the methods you need; each does nothing here."""

    def room_updated(self, room: RoomState | None) -> None:
        """The room changed (joined, left, someone came, went or got ready); None: no room."""

    def member_joined(self, room: RoomState, member: Member) -> None: ...

    def member_left(self, room: RoomState, name: str, reason: str) -> None: ...

    def chat(self, room_id: int, name: str, text: str) -> None: ...

    def game_starting(self, start: GameStart) -> None:
        """The room is full and ready: the roster. The lobby has forgotten the room."""

    def dropped(self, error: LobbyError) -> None:
        """The lobby is closing the connection, and says why."""

    def disconnected(self, reason: Exception) -> None: ...


@dataclass
class _Pending:
    deferred: Deferred[Any]
    reply_type: type[Message]
    on_reply: Callable[[Any], Any]


@implementer(IHandshakeListener)
class LobbyClientProtocol(Protocol):
    """Frames in and out; everything else is the LobbyClient's."""

    def __init__(self, client: LobbyClient) -> None:
        self.client = client
        self.decoder = FrameDecoder(LOBBY_EVENT_MAX_FRAME)

    def connectionMade(self) -> None:
        self.client._connected(self)

    def handshakeCompleted(self) -> None:
        self.client._sealed(self)

    def dataReceived(self, data: bytes) -> None:
        try:
            for payload in self.decoder.feed(data):
                self.client._received(LOBBY_EVENTS.decode(payload))
        except MessageError as error:
            self.client._lobby_broke_protocol(error)

    def send(self, message: Message) -> None:
        self.transport.write(frame(encode(message), LOBBY_REQUEST_MAX_FRAME))

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.client._lost(reason)


class _ClientFactory(Factory):
    def __init__(self, client: LobbyClient) -> None:
        self.client = client

    def buildProtocol(self, addr: IAddress) -> LobbyClientProtocol:
        return LobbyClientProtocol(self.client)


class LobbyClient:
    """One connection to a lobby, as one identity. Takes the reactor it runs on."""

    def __init__(
        self,
        reactor: Any,
        identity: Identity,
        listener: LobbyListener | None = None,
        *,
        request_timeout: float = REQUEST_TIMEOUT,
        known_lobbies: RememberedKeys | None = None,
    ) -> None:
        self.reactor = reactor
        self.identity = identity
        self.known_lobbies = known_lobbies or RememberedKeys.lobbies()
        self.address = ""  # HOST:PORT, as the lobby's key is remembered
        self.lobby_key: bytes | None = None  # the key the lobby showed
        self.first_meeting = False  # this machine had not met the lobby at this address
        self._channel = b""
        self.listener = listener or LobbyListener()
        self.request_timeout = request_timeout
        self.room: RoomState | None = None
        self.terms: RoomTerms | None = None  # the room joined and readied for
        self.welcome: Welcome | None = None
        self._protocol: LobbyClientProtocol | None = None
        self._nonce: bytes | None = None
        self._challenged: Deferred[None] | None = None
        self._pending: dict[int, _Pending] = {}
        self._next_req = 1
        self._games: list[Deferred[GameStart]] = []
        self._closed: list[Deferred[None]] = []
        self._reason: Exception | None = None
        self._keepalive: LoopingCall | None = None

    @property
    def connected(self) -> bool:
        return self._protocol is not None

    # -- the API -----------------------------------------------------------------------------

    def connect(
        self, host: str, port: int = DEFAULT_LOBBY_PORT, timeout: float = CONNECT_TIMEOUT
    ) -> Deferred[LobbyClient]:
        """Connect and wait for the lobby's challenge; fails on a protocol version mismatch."""
        if self._protocol is not None or self._challenged is not None:
            return fail(LobbyDisconnected("already connected or connecting"))
        if isIPAddress(host):
            endpoint: Any = TCP4ClientEndpoint(self.reactor, host, port, timeout)
        elif isIPv6Address(host):
            endpoint = TCP6ClientEndpoint(self.reactor, host, port, timeout)
        else:
            endpoint = HostnameEndpoint(self.reactor, host, port, timeout)
        self._reason = None
        self.address = f"[{host}]:{port}" if isIPv6Address(host) else f"{host}:{port}"
        self._challenged = Deferred(self._cancel_challenge)
        endpoint = sealed.dial(endpoint, None, lambda key: True, self.reactor)
        connecting: Deferred[Any] = endpoint.connect(_ClientFactory(self))
        challenged = self._challenged
        connecting.addCallback(lambda _: challenged)
        connecting.addTimeout(timeout, self.reactor)
        connecting.addErrback(self._connect_failed)
        return connecting.addCallback(lambda _: self)

    def hello(self, name: str, peer_port: int) -> Deferred[Welcome]:
        """Say who we are: a name unique in the lobby, and the port peers reach us on."""
        if self._nonce is None:
            return fail(LobbyDisconnected("not connected to a lobby"))
        signed = hello_signed_payload(
            self._nonce, name, self.identity.public_key, peer_port, self._channel
        )
        signature = self.identity.sign(HELLO_DOMAIN, signed).signature
        return self._request(
            lambda req: Hello(
                version=PROTOCOL_VERSION,
                req=req,
                name=name,
                public_key=self.identity.public_key,
                peer_port=peer_port,
                signature=signature,
            ),
            Welcome,
            self._welcomed,
        )

    def list_rooms(self) -> Deferred[Rooms]:
        return self._request(lambda req: ListRooms(req=req), Rooms, lambda rooms: rooms)

    def create_room(
        self, name: str, seats: int, options: RoomOptions | None = None
    ) -> Deferred[RoomState]:
        chosen = options or RoomOptions()
        return self._request(
            lambda req: CreateRoom(req=req, name=name, seats=seats, options=chosen),
            Joined,
            lambda joined: self._entered(joined, RoomTerms(seats, chosen)),
        )

    def join(self, room_id: int) -> Deferred[RoomState]:
        """Take a seat in a room; its terms are the seats and options the lobby showed for it."""
        return self._request(
            lambda req: Join(req=req, room_id=room_id),
            Joined,
            lambda joined: self._entered(joined, RoomTerms(joined.room.seats, joined.room.options)),
        )

    def quick_match(self, seats: int, options: RoomOptions | None = None) -> Deferred[RoomState]:
        """Join the oldest open room of this size and these options, or open one; as ready."""
        chosen = options or RoomOptions()
        return self._request(
            lambda req: QuickMatch(req=req, seats=seats, options=chosen),
            Joined,
            lambda joined: self._entered(joined, RoomTerms(seats, chosen)),
        )

    def leave(self) -> Deferred[None]:
        return self._request(lambda req: Leave(req=req), Ok, lambda _: self._set_room(None))

    def ready(self, ready: bool = True) -> Deferred[None]:
        return self._request(
            lambda req: Ready(req=req, ready=ready), Ok, lambda _: self._mark_ready(ready)
        )

    def chat(self, text: str) -> Deferred[None]:
        """Say something to the room; it comes back to us, in order, as a chat event."""
        return self._request(lambda req: Chat(req=req, text=text), Ok, lambda _: None)

    def ping(self) -> Deferred[None]:
        return self._request(lambda req: Ping(req=req), Ok, lambda _: None)

    def next_game(self) -> Deferred[GameStart]:
        """Fires with the next roster the lobby sends us."""
        waiter: Deferred[GameStart] = Deferred(lambda d: self._games.remove(d))
        self._games.append(waiter)
        return waiter

    def close(self) -> Deferred[None]:
        """Disconnect; fires once the connection is gone."""
        if self._protocol is None:
            return succeed(None)
        closed: Deferred[None] = Deferred()
        self._closed.append(closed)
        self._protocol.transport.loseConnection()
        return closed

    # -- requests and replies ----------------------------------------------------------------

    def _request(
        self,
        build: Callable[[int], Message],
        reply_type: type[Message],
        on_reply: Callable[[Any], Any],
    ) -> Deferred[Any]:
        if self._protocol is None or (self.welcome is None and reply_type is not Welcome):
            return fail(LobbyDisconnected("not connected to a lobby (or no hello yet)"))
        req = self._next_req
        self._next_req = req % 2**31 + 1
        try:
            message = build(req)
        except MessageError as error:
            return fail(error)
        deferred: Deferred[Any] = Deferred(lambda _: self._pending.pop(req, None))
        self._pending[req] = _Pending(deferred, reply_type, on_reply)
        self._protocol.send(message)
        return deferred.addTimeout(self.request_timeout, self.reactor)

    def _received(self, message: Message) -> None:
        if isinstance(message, Challenge):
            self._nonce = message.nonce
            challenged, self._challenged = self._challenged, None
            if challenged is not None:
                challenged.callback(None)
            return
        if isinstance(message, Error):
            self._refused(message)
            return
        req = getattr(message, "req", None)
        if req is not None:
            pending = self._pending.pop(req, None)
            if pending is None:
                return  # the request timed out or was cancelled; the answer came too late
            if isinstance(message, pending.reply_type):
                pending.deferred.callback(pending.on_reply(message))
            else:
                pending.deferred.errback(
                    LobbyError("bad_message", f"the lobby answered with {message.TYPE}", True)
                )
            return
        self._event(message)

    def _refused(self, error: Error) -> None:
        refusal = LobbyError(error.code, error.message, error.fatal)
        pending = self._pending.pop(error.req, None) if error.req is not None else None
        if error.fatal:
            self._reason = refusal
            self._notify(self.listener.dropped, refusal)
        if pending is not None:
            pending.deferred.errback(refusal)

    def _event(self, event: Message) -> None:
        room = self.room
        if isinstance(event, GameStart):
            self._set_room(None)
            self._notify(self.listener.game_starting, event)
            games, self._games = self._games, []
            for waiter in games:
                waiter.callback(event)
            return
        if room is None or getattr(event, "room_id", None) != room.room_id:
            return  # about a room we already left
        if isinstance(event, MemberJoined):
            room = replace(room, members=(*room.members, event.member))
            self._set_room(room)
            self._notify(self.listener.member_joined, room, event.member)
        elif isinstance(event, MemberLeft):
            room = replace(room, members=tuple(m for m in room.members if m.name != event.name))
            self._set_room(room)
            self._notify(self.listener.member_left, room, event.name, event.reason)
        elif isinstance(event, MemberReady):
            self._set_member_ready(event.name, event.ready)
        elif isinstance(event, ChatMessage):
            self._notify(self.listener.chat, event.room_id, event.name, event.text)

    def _welcomed(self, welcome: Welcome) -> Welcome:
        self.welcome = welcome
        self._keepalive = LoopingCall(self._ping_quietly)
        self._keepalive.clock = self.reactor
        self._keepalive.start(welcome.idle_seconds / 3, now=False)
        return welcome

    def _ping_quietly(self) -> None:
        self.ping().addErrback(lambda _: None)

    def _entered(self, joined: Joined, terms: RoomTerms) -> RoomState:
        """In a room: what it is now, and the terms this client asked for or was shown (a
        roster with another seat count or other options is refused: client/table_setup.py)."""
        self.terms = terms
        self._set_room(joined.room)
        return joined.room

    def _mark_ready(self, ready: bool) -> None:
        if self.welcome is not None:
            self._set_member_ready(self.welcome.name, ready)

    def _set_member_ready(self, name: str, ready: bool) -> None:
        if self.room is not None:
            members = tuple(
                replace(m, ready=ready) if m.name == name else m for m in self.room.members
            )
            self._set_room(replace(self.room, members=members))

    def _set_room(self, room: RoomState | None) -> None:
        self.room = room
        self._notify(self.listener.room_updated, room)

    def _notify(self, method: Callable[..., None], *args: Any) -> None:
        """Tell the listener; its bugs are logged and never break the connection."""
        try:
            method(*args)
        except Exception:
            log.failure("lobby listener {method} failed", method=method.__name__)

    # -- the connection ----------------------------------------------------------------------

    def _connected(self, protocol: LobbyClientProtocol) -> None:
        self._protocol = protocol

    def _sealed(self, protocol: LobbyClientProtocol) -> None:
        """TLS is up: the lobby's key must be the one remembered for this address (or is
        remembered now, the first time)."""
        shown = sealed.peer_key(protocol.transport)
        remembered = self.known_lobbies.get(self.address)
        if shown is None:
            sentence = f"the lobby at {self.address} showed no Ed25519 key; not a bean-lobby?"
            self._reason = LobbyError("lobby_unsealed", sentence, True)
            self._abort()
            return
        if remembered is not None and remembered != shown:
            store = str(self.known_lobbies.path)
            self._reason = LobbyKeyChanged(self.address, remembered, shown, store)
            self._abort()
            return
        if remembered is None:
            self.first_meeting = True
            self.known_lobbies.remember([(self.address, shown)])
        self.lobby_key = shown
        self._channel = sealed.channel_binding(protocol.transport)

    def _lobby_broke_protocol(self, error: MessageError) -> None:
        self._reason = LobbyError(error.code, f"the lobby sent something wrong: {error}", True)
        self._abort()

    def _abort(self) -> None:
        if self._protocol is not None:
            self._protocol.transport.abortConnection()

    def _cancel_challenge(self, challenged: Deferred[None]) -> None:
        self._challenged = None
        self._abort()

    def _connect_failed(self, failure: Failure) -> Failure:
        self._challenged = None
        if self._reason is not None:
            return Failure(self._reason)
        return failure

    def _lost(self, reason: Failure) -> None:
        self._protocol = None
        self._nonce = None
        self.welcome = None
        if self._keepalive is not None and self._keepalive.running:
            self._keepalive.stop()
        self._keepalive = None
        cause = self._reason or _disconnected(reason)
        challenged, self._challenged = self._challenged, None
        if challenged is not None:
            challenged.errback(cause)
        pending, self._pending = self._pending, {}
        for request in pending.values():
            request.deferred.errback(cause)
        games, self._games = self._games, []
        for waiter in games:
            waiter.errback(cause)
        if self.room is not None:
            self._set_room(None)
        self._notify(self.listener.disconnected, cause)
        closed, self._closed = self._closed, []
        for waiter in closed:
            waiter.callback(None)


def _disconnected(reason: Failure) -> LobbyDisconnected:
    """The connection is gone; what broke it (a TLS error, say) stays attached as the cause,
    for `explain_lobby_error`."""
    gone = LobbyDisconnected(f"lost the lobby: {reason.getErrorMessage()}")
    gone.__cause__ = reason.value
    return gone
