"""The full mesh of sealed links between the seats of one game.

Each client listens on one port for its peers (announced to the lobby before any game). When a
game starts, every seat dials the seats after it in the roster and accepts links from the seats
before it, so each pair has one link. Every link is TLS 1.3 (client/net/sealed.py): both ends show
a certificate of their identity key, and the link is up only once each end found in the other's
certificate exactly the key the roster gives that seat (the dialler as soon as the handshake is
done, the listener as soon as the dialler names its seat). A machine showing another key is told
one thing only, before the link is closed: the refusals of the table this side holds, if any
(`MeshHandler.said_first`), since the lobby's rosters are what put it there. From then on TLS
encrypts every byte and checks its integrity: bytes changed, added, replayed or dropped on the
way end the link, which is reported as a problem of the link (`link_down`) and never as the
seat's doing, and the seat that dialled dials again with backoff.

The mesh moves frames; it does not judge them. What arrives on a link goes to a `MeshHandler`
with the seat it came from (the game driver decides what a frame means). What a link does is
never evidence against a seat: a peer that breaks the link protocol, or stops reading what is
sent to it, loses the link (`MAX_UNREAD_BYTES` bounds what waits for it), and nobody is blamed.
A link that goes down is reported with the reason in words and its kind (`LinkLoss`: closed by
the peer, broken on the way, silent, refused...), which is all this side can know of why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import Enum
from ipaddress import IPv6Address, IPv6Network, ip_address
from typing import Any

from twisted.internet import defer
from twisted.internet.defer import CancelledError, Deferred, DeferredList, succeed
from twisted.internet.endpoints import HostnameEndpoint, serverFromString
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IHandshakeListener, IListeningPort, IPushProducer
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

import client.net.sealed as sealed
from client.net.faults import FrameFaults
from client.net.lan_checks import PeerRefused, explain_peer_link_failure
from client.net.relayed import RELAY_AFTER, DirectFirst, NoPath, RelayEndpoint, RelayRefused
from protocol.cards import MAX_PLAYERS
from protocol.identity import Identity, KeyAgreementError, SignatureError, fingerprint
from protocol.messages import PROTOCOL_VERSION, FrameDecoder, GameStart, Message, MessageError
from protocol.messages import encode as encode_message
from protocol.messages import frame as make_frame
from protocol.peer_messages import (
    HANDSHAKE,
    HANDSHAKE_MAX_FRAME,
    PEER_LINK,
    PEER_MAX_FRAME,
    PeerHello,
    TableRefusal,
)
from protocol.relay import RelayRole, RelayStatus, relay_pair, relay_secret
from protocol.sealed import describe_key

log = Logger()

UNKNOWN_GAME_WAIT = 15.0  # a peer may dial before this client has read the roster itself
REDIAL_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
#: While a link travels through the lobby's relay, the dialling seat tries its peer's address
#: again after these many seconds (the last repeats): a direct link replaces the relayed one.
DIRECT_AGAIN_DELAYS = (30.0, 60.0, 120.0, 300.0)
RELAY_WAIT_AGAIN = 0.2  # the relay timed out waiting for the other end: wait there again
RELAY_RETRY = 30.0  # the relay refused (it does not know the table, is off, or busy)
HANDSHAKE_TIMEOUT = 10.0
CLOSE_GRACE = 5.0  # seconds a closing link may take to send what it holds
#: Bytes this client lets wait for a peer that has stopped reading (written after the link's
#: own buffer filled up). The most an honest peer can be owed at once is a catch-up answer
#: (client/game.py bounds each), far below this; past it the link is cut, not buffered for ever.
MAX_UNREAD_BYTES = 4 * 1024 * 1024
#: Accepted links not yet up in a game (TLS handshaking, waiting for their hello or for their
#: game's roster, or refused for their key and parting) the listener keeps, from one address
#: (an IPv6 /64) and in all. Past either, it cuts the oldest such link of the address that
#: holds the most: never the newest, so a flood costs at most this many sockets and handshakes
#: (each ends within HANDSHAKE_TIMEOUT, or CLOSE_GRACE once parting, anyway), and an honest
#: seat that dials in the midst of one still gets through. A cut
#: link's socket closes on the reactor's next turn; while MAX_PENDING cut ones wait for it (a
#: burst faster than the reactor turns), new connections are refused at once instead.
MAX_PENDING_PER_ADDRESS = 8
MAX_PENDING = 64


class LinkLoss(Enum):
    """Why a link to a seat is down, as far as this end can tell."""

    CLOSED = "closed"  # the peer's end closed the connection: its client ended or was stopped
    BROKEN = "broken"  # reset or cut on the way: the network, or the peer's machine
    SILENT = "silent"  # nothing heard for too long (this end dropped it)
    NOT_LISTENING = "not listening"  # dialled: the peer's machine refuses, no client listens
    UNREACHABLE = "unreachable"  # dialled: no answer, or no route to the peer's machine
    TAMPERED = "tampered"  # TLS refused the link's bytes
    REFUSED = "refused"  # the peer broke the link protocol or showed another key


class MeshHandler:
    """What the game driver hears from the mesh; every method is optional."""

    def link_up(self, seat: int) -> None: ...

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> None: ...

    def received(self, seat: int, message: Message) -> None: ...

    def is_copy(self, seat: int, payload: bytes) -> bool:
        """Whether a frame from `seat` is, byte for byte, a message held already: it is then
        dropped unread (a seat that asks several peers for a message gets it from each)."""
        return False

    def wrong_key(self, seat: int, shown: bytes | None, dialled: bool) -> None:
        """A machine showed another key than the roster gives `seat`: at that seat's address
        (`dialled`: this side dialled it), or dialling this side as that seat. The link is
        refused; nothing else is said to it but `said_first`."""

    def said_first(self) -> Sequence[Message]:
        """What this side says first on every link, before the hellos and whatever key the
        other side shows: the refusals of the table it holds (client/table_setup.py)."""
        return ()

    def misbehaved(self, seat: int, reason: str) -> None:
        """A peer wrote, on its own sealed link, something that breaks the link protocol, or
        stopped reading it; the link is closed. No signature proves it to anyone else, so it
        is no evidence against the seat."""


TAMPERED = (
    "the link's bytes failed TLS's integrity check (changed, added or dropped on the way, "
    "or the connection broke): it is closed and dialled again, and nobody is blamed"
)


@implementer(IHandshakeListener, IPushProducer)
class PeerLink(Protocol):
    """One sealed connection to a peer: TLS, the hellos, then framed messages.

    It is also the producer of what it writes: the transport pauses it when its buffer is
    full (the peer does not read), and what is written while paused is counted against
    MAX_UNREAD_BYTES."""

    def __init__(self, listener: PeerListener | None, mesh: Mesh | None, seat: int | None) -> None:
        self.listener = listener  # the one that accepted it: it counts the link until it is up
        self.mesh = mesh
        self.seat = seat  # the peer's seat: known when dialling, learned when accepting
        self.decoder = FrameDecoder(HANDSHAKE_MAX_FRAME)
        self.sealed = not sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY
        self.peer_key: bytes | None = None  # the key in the peer's certificate
        self.heard_hello = False
        self.refusals_heard = 0  # before the hellos
        self.said_first = 0  # how many of the handler's `said_first` went on this link
        self.authenticated = False
        self.closed = False
        self.parting = False  # refused, but still reading the refusals said to it
        self.failure: str | None = None  # why this side dropped the link, if it did
        self.loss = LinkLoss.REFUSED  # what kind of loss `failure` is
        self.lost: Deferred[None] = Deferred()  # fires when the connection is gone
        self._timeout: Any = None
        self.unread: int | None = None  # bytes written since the transport paused us, if it did
        self.relayed = False  # its bytes travel through the lobby's relay
        self.probe = False  # dialled to find out whether a relayed peer is reachable directly
        self.waited_for: int | None = None  # the seat this end waited for at the relay

    # --- Twisted ---

    def connectionMade(self) -> None:
        # Step messages are small and each waits on the others: without this, Nagle's
        # algorithm holds a frame until the previous one is acknowledged (up to the 40 ms of
        # a delayed ACK), which was most of a step's latency.
        self.transport.setTcpNoDelay(True)
        self.transport.registerProducer(self, True)
        reactor = self._reactor()
        self._timeout = reactor.callLater(HANDSHAKE_TIMEOUT, self._handshake_timed_out)
        if not self.sealed:
            self.handshakeCompleted()

    def handshakeCompleted(self) -> None:
        """TLS is up: the peer proved it holds the key in its certificate. The dialler checks
        that key against the roster now and speaks first; the listener checks it once the
        hello says which seat the peer claims."""
        self.peer_key = sealed.peer_key(self.transport)
        if self.mesh is not None and not self.closed:
            assert self.seat is not None
            if self._key_refused(self.mesh, self.seat):
                return
            self._send_hello()

    def dataReceived(self, data: bytes) -> None:
        try:
            frames = self.decoder.feed(data)
            for payload in frames:
                if self.closed and not self.parting:
                    return
                self._frame(payload)
        except MessageError as error:
            self._fail(str(error))

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.closed = True
        self._cancel_timeout()
        if not self.lost.called:
            self.lost.callback(None)
        if self.failure is None and sealed.integrity_failure(reason):
            if self.peer_key is not None:
                self.failure, self.loss = TAMPERED, LinkLoss.TAMPERED
            else:
                self.failure = f"the TLS handshake failed ({reason.getErrorMessage()[:120]})"
        elif self.failure is None:
            self.loss = LinkLoss.CLOSED if reason.check(ConnectionDone) else LinkLoss.BROKEN
        if self.listener is not None:
            self.listener._forget(self)
        if self.mesh is not None:
            self.mesh._link_lost(self, self.failure or reason.getErrorMessage(), self.loss)

    # --- sending ---

    def send(self, message: Message) -> None:
        if not self.closed:
            limit = PEER_MAX_FRAME if self.authenticated else HANDSHAKE_MAX_FRAME
            self._write(make_frame(encode_message(message), limit))

    def send_frame(self, framed: bytes) -> None:
        """Bytes already framed (a relay, or one message sent to many links)."""
        if not self.closed and self.authenticated:
            self._write(framed)

    def _write(self, data: bytes) -> None:
        if self.unread is not None:
            self.unread += len(data)
            if self.unread > MAX_UNREAD_BYTES:
                self._fail(
                    f"the peer stopped reading: {self.unread} bytes waited for it "
                    f"(at most {MAX_UNREAD_BYTES} may); the link is cut"
                )
                return
        self.transport.write(data)

    # --- IPushProducer: the transport says when the peer stops and starts reading ---

    def pauseProducing(self) -> None:
        if self.unread is None:
            self.unread = 0

    def resumeProducing(self) -> None:
        self.unread = None

    def stopProducing(self) -> None:
        self.unread = None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._cancel_timeout()
            self.transport.unregisterProducer()  # else the transport waits for it to close
            self.transport.loseConnection()

    # --- the hellos ---

    def _frame(self, payload: bytes) -> None:
        if self.authenticated:
            if self.mesh is None:
                return  # a replaced link: the new one carries on (and catches up)
            assert self.seat is not None
            if self.mesh.handler.is_copy(self.seat, payload):
                return
            message = PEER_LINK.decode(payload)
            try:
                self.mesh.handler.received(self.seat, message)
            except Exception:  # the driver's fault must not become the peer's
                log.failure("handling a message from seat {seat}", seat=self.seat)
            return
        if self.sealed and self.peer_key is None:
            raise MessageError("a frame before the TLS handshake ended")
        message = HANDSHAKE.decode(payload)
        if isinstance(message, TableRefusal):
            self._refusal(message)
        elif not self.parting:
            assert isinstance(message, PeerHello)
            self._hello(message)

    def _hello(self, hello: PeerHello) -> None:
        if self.heard_hello:
            raise MessageError("a second peer_hello on one link")
        self.heard_hello = True
        if self.mesh is None:
            assert self.listener is not None
            self.listener._route(self, hello)  # attaches a mesh, now or when the roster comes
            return
        if hello.game != self.mesh.roster.game_id:
            raise MessageError("the peer is in another game")
        if hello.seat != self.seat:
            raise MessageError(f"dialled seat {self.seat} but seat {hello.seat} answered")
        self._up()

    def _refusal(self, refusal: TableRefusal) -> None:
        """A refusal of the table said before the hellos (by a seat that will not play; also
        where the keys do not match): handed to the handler of its game, which checks whose
        key signed it. One link carries at most a table's worth of them."""
        self.refusals_heard += 1
        if self.refusals_heard > MAX_PLAYERS:
            raise MessageError("more refusals before the hello than a table has seats")
        mesh = self.mesh
        if mesh is None:
            assert self.listener is not None
            mesh = self.listener.meshes.get(refusal.game)
        if mesh is None:
            return  # a game this client is not in (yet): said again on the next dial
        mesh.handler.received(refusal.seat, refusal)
        self._say_first(mesh)

    def _say_first(self, mesh: Mesh) -> None:
        """Send what the handler says first on every link and this link has not carried."""
        said = list(mesh.handler.said_first())
        for message in said[self.said_first :]:
            self.send(message)
        self.said_first = max(self.said_first, len(said))

    def attach(self, mesh: Mesh, hello: PeerHello) -> None:
        """The listener found this link's game: check the seat and its key, and answer. The
        listener counts the link until it is up: one refused for its key stays pending while it
        parts (up to CLOSE_GRACE), so that the caps bound those too."""
        self.mesh = mesh
        mesh._track(self)
        if not (0 <= hello.seat < len(mesh.roster.seats)) or hello.seat >= mesh.seat:
            self._fail(f"seat {hello.seat} may not dial seat {mesh.seat} in this game")
            return
        self.seat = hello.seat
        if self._key_refused(mesh, hello.seat):
            return
        self._send_hello()
        self._up()

    def _key_refused(self, mesh: Mesh, seat: int) -> bool:
        """Fail closed unless the certificate's key is the roster's key for `seat`: the
        handler hears of a wrong key, and the other side hears only what the handler says
        first on every link (before the hellos, either way)."""
        right = not self.sealed or self.peer_key == mesh.roster.seats[seat].public_key
        if not right and self.relayed:
            # Not the roster's doing: the relay put another machine at the other end (nobody
            # else can: the link's secret is the two seats'). The link fails, and is tried again.
            self._fail(
                f"the lobby's relay joined the link to seat {seat} to a machine with "
                f"{describe_key(self.peer_key)}: link refused"
            )
            return True
        if not right:
            mesh.handler.wrong_key(seat, self.peer_key, dialled=seat > mesh.seat)
        self._say_first(mesh)
        if right:
            return False
        self._part(self._wrong_key(mesh, seat, self.peer_key))
        return True

    @staticmethod
    def _wrong_key(mesh: Mesh, seat: int, key: bytes | None) -> str:
        member = mesh.roster.seats[seat]
        return (
            f"the peer at seat {seat} showed {describe_key(key)}, but the roster gives "
            f"{member.name} key {fingerprint(member.public_key)}: link refused"
        )

    def _send_hello(self) -> None:
        assert self.mesh is not None
        self.send(PeerHello(PROTOCOL_VERSION, self.mesh.roster.game_id, self.mesh.seat))

    def _up(self) -> None:
        assert self.mesh is not None
        self.authenticated = True
        self.decoder.max_length = PEER_MAX_FRAME
        self._cancel_timeout()
        if self.listener is not None:
            self.listener._forget(self)
        self.mesh._link_authenticated(self)

    # --- failures ---

    def _fail(self, reason: str, loss: LinkLoss = LinkLoss.REFUSED) -> None:
        """Cut the link at once (nothing is owed to a peer that broke the link protocol, and
        one that does not read would never let a polite close finish)."""
        log.info("dropping a peer link: {reason}", reason=reason)
        self.failure, self.loss = reason, loss
        if self.mesh is not None and self.seat is not None and self.authenticated:
            self.mesh.handler.misbehaved(self.seat, reason)
        self.close()
        self.transport.abortConnection()

    def _part(self, reason: str) -> None:
        """Refuse the link, but close it only after what was written to it has gone (a
        refusal of the table), reading meanwhile only the refusals the other side says; cut it
        if that takes longer than CLOSE_GRACE."""
        log.info("dropping a peer link: {reason}", reason=reason)
        self.failure, self.loss = reason, LinkLoss.REFUSED
        self.parting = True
        self.close()
        cut = self._reactor().callLater(CLOSE_GRACE, self.transport.abortConnection)
        self.lost.addCallback(lambda _: cut.cancel() if cut.active() else None)

    def _handshake_timed_out(self) -> None:
        self._timeout = None
        if not self.authenticated:
            self._fail("the peer did not finish the handshake in time", LinkLoss.SILENT)

    def _cancel_timeout(self) -> None:
        if self._timeout is not None and self._timeout.active():
            self._timeout.cancel()
        self._timeout = None

    def _reactor(self) -> Any:
        owner = self.mesh if self.mesh is not None else self.listener
        assert owner is not None
        return owner.reactor


class PeerListener(Factory):
    """The client's peer port: accepts links and hands each to the mesh of its game.

    Until a link is up in a game (its key checked) it is `pending`, oldest first, with the
    address it came from; the caps above bound how many, and how many cut ones may wait to
    close (`cut`)."""

    def __init__(
        self, reactor: Any, identity: Identity, unknown_game_wait: float = UNKNOWN_GAME_WAIT
    ) -> None:
        self.reactor = reactor
        self.identity = identity
        self.unknown_game_wait = unknown_game_wait
        self.port: IListeningPort | None = None
        self.meshes: dict[bytes, Mesh] = {}
        self.pending: dict[PeerLink, str] = {}
        self.cut: set[PeerLink] = set()  # cut for room, their sockets not yet closed
        self.waiting: dict[PeerLink, tuple[PeerHello, Any]] = {}  # hello heard, game unknown
        #: What accepts a link (sealed, unless benchmarking): a connection to the peer port, or
        #: one through the lobby's relay that a mesh of this client waited for.
        self.accepting: Any = self

    def listen(self, description: str = "tcp:0") -> Deferred[int]:
        """Start listening (`tcp:0` picks a free port); fires with the port number."""
        endpoint = serverFromString(self.reactor, description)
        factory: Any = self
        if not sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY:
            factory = sealed.accept(self, self.identity, True, self.reactor)
        self.accepting = factory
        started: Deferred[Any] = endpoint.listen(factory)

        def listening(port: IListeningPort) -> int:
            self.port = port
            number: int = port.getHost().port
            return number

        return started.addCallback(listening)

    def buildProtocol(self, addr: Any) -> PeerLink | None:
        if len(self.cut) >= MAX_PENDING:
            return None  # the port closes the connection now
        link = PeerLink(self, None, None)
        self.pending[link] = address_of(addr)
        self._make_room()
        return link

    def register(self, mesh: Mesh) -> None:
        self.meshes[mesh.roster.game_id] = mesh
        for link, (hello, _) in list(self.waiting.items()):
            if hello.game == mesh.roster.game_id:
                self._stop_waiting(link)
                link.attach(mesh, hello)

    def unregister(self, mesh: Mesh) -> None:
        self.meshes.pop(mesh.roster.game_id, None)

    def stop(self) -> Deferred[None]:
        for link in list(self.pending):
            self._forget(link)
            link._fail("this client stopped listening")
        if self.port is None:
            return succeed(None)
        stopped: Deferred[None] = self.port.stopListening()
        return stopped

    def _route(self, link: PeerLink, hello: PeerHello) -> None:
        mesh = self.meshes.get(hello.game)
        if mesh is not None:
            link.attach(mesh, hello)
            return
        timer = self.reactor.callLater(self.unknown_game_wait, self._unknown_game, link)
        self.waiting[link] = (hello, timer)

    def _unknown_game(self, link: PeerLink) -> None:
        self._forget(link)
        link._fail("the peer named a game this client is not in")

    def _make_room(self) -> None:
        """Cut the oldest pending link of the address holding the most while a cap is
        passed (the newest, last in `pending`, is never the first of its address)."""
        held = Counter(self.pending.values())
        while len(self.pending) > MAX_PENDING or max(held.values()) > MAX_PENDING_PER_ADDRESS:
            most = max(held.values())
            oldest, address = next(
                (link, address) for link, address in self.pending.items() if held[address] == most
            )
            held[address] -= 1
            self._forget(oldest)
            self.cut.add(oldest)
            oldest._fail(f"too many links from {address} are not in a game yet: the oldest is cut")

    def _forget(self, link: PeerLink) -> None:
        """The link is up in a game now, or gone."""
        self.pending.pop(link, None)
        self.cut.discard(link)
        self._stop_waiting(link)

    def _stop_waiting(self, link: PeerLink) -> None:
        """The link's game is known now, or the link is gone."""
        entry = self.waiting.pop(link, None)
        if entry is not None and entry[1].active():
            entry[1].cancel()


def address_of(addr: Any) -> str:
    """Where a link comes from, as the caps count it: its host, or for IPv6 its /64 (one
    machine is often given a whole /64)."""
    host = getattr(addr, "host", None)
    if not isinstance(host, str):
        return str(addr)
    try:
        ip = ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(IPv6Network((ip, 64), strict=False))
    return host


class Mesh:
    """The links of one seat to every other seat of one game."""

    def __init__(
        self,
        reactor: Any,
        identity: Identity,
        roster: GameStart,
        seat: int,
        handler: MeshHandler,
        listener: PeerListener,
        redial_delays: Sequence[float] = REDIAL_DELAYS,
        faults: FrameFaults | None = None,
        relay: tuple[str, int] | None = None,
        relay_after: float = RELAY_AFTER,
        direct_again_delays: Sequence[float] = DIRECT_AGAIN_DELAYS,
    ) -> None:
        """`relay`: the lobby's host and port, whose relay carries a link that cannot be
        made directly within `relay_after` seconds (None: direct links only)."""
        self.reactor = reactor
        self.identity = identity
        self.roster = roster
        self.seat = seat
        self.handler = handler
        self.listener = listener
        self.redial_delays = redial_delays
        self.faults = faults  # tests only: what may befall each outgoing frame
        self.links: dict[int, PeerLink] = {}
        self.sent_frames = 0  # what this seat put on its links, relays included
        self.sent_bytes = 0
        self.sent_bytes_to: Counter[int] = Counter()  # ... and to each seat
        self._attempts: dict[int, int] = {}
        self._redials: dict[int, Any] = {}
        #: Links not up yet: dialled (with the attempt to connect) or accepted for this game;
        #: closed with the mesh, like those up (a refusing seat goes on dialling until then).
        self._unproven: dict[PeerLink, Deferred[Any] | None] = {}
        self.relay = relay
        self.relay_after = relay_after
        self.direct_again_delays = direct_again_delays
        #: The seats before this one: when their link is not up, this seat waits for it at
        #: the relay too (the timer before it goes, or the connection waiting there).
        self._relay_waits: dict[int, Any] = {}
        self._direct_again: dict[int, Any] = {}  # relayed seats after this one: a timer
        self._direct_tries: dict[int, int] = {}
        self.why_relayed: dict[int, str] = {}  # seat -> why its link is not direct, in words
        self.started = False
        self.closed = False

    def start(self) -> None:
        """Accept links from the seats before this one and dial the seats after it (once:
        a mesh already started stays as it is)."""
        if self.started:
            return
        self.started = True
        self.listener.register(self)
        for seat in range(self.seat):
            self._wait_at_relay_later(seat)
        for seat in range(self.seat + 1, len(self.roster.seats)):
            self._dial(seat)

    @property
    def connected(self) -> set[int]:
        return set(self.links)

    @property
    def relayed(self) -> set[int]:
        """The seats whose link travels through the lobby's relay."""
        return {seat for seat, link in self.links.items() if link.relayed}

    def how_linked(self, seat: int) -> str:
        """How this seat reaches `seat`, and why, in words (for `netcheck`)."""
        link = self.links.get(seat)
        if link is None:
            return "no link now"
        if not link.relayed:
            return "directly"
        why = self.why_relayed.get(seat)
        return "through the lobby's relay" + (f": {why}" if why else "")

    def send(self, seat: int, message: Message | bytes) -> bool:
        """A message, or one already encoded, to one seat; False if its link is down."""
        link = self.links.get(seat)
        if link is None:
            return False
        encoded = message if isinstance(message, bytes) else encode_message(message)
        self._send(link, make_frame(encoded, PEER_MAX_FRAME))
        return True

    def broadcast(self, message: Message | bytes, skip: Sequence[int] = ()) -> None:
        """A message, or one already encoded (protocol.messages.encode), to every link but
        those to the seats in `skip`."""
        encoded = message if isinstance(message, bytes) else encode_message(message)
        framed = make_frame(encoded, PEER_MAX_FRAME)
        for seat, link in self.links.items():
            if seat not in skip:
                self._send(link, framed)

    def _send(self, link: PeerLink, framed: bytes) -> None:
        assert link.seat is not None
        self.sent_frames += 1
        self.sent_bytes += len(framed)
        self.sent_bytes_to[link.seat] += len(framed)
        if self.faults is None:
            link.send_frame(framed)
        else:
            self.faults.send(self.reactor, link.send_frame, framed)

    def drop(self, seat: int, reason: str) -> None:
        """Close a link that has gone quiet; its loss is reported, and it is dialled again."""
        link = self.links.get(seat)
        if link is not None:
            link.failure, link.loss = reason, LinkLoss.SILENT
            link.transport.abortConnection()

    def close(self, grace: float = CLOSE_GRACE) -> Deferred[None]:
        """Close every link after it has sent what it holds; a link that cannot finish within
        `grace` seconds (a peer that stopped reading) is cut. Fires when all are closed."""
        self.closed = True
        self.listener.unregister(self)
        if self.faults is not None:
            self.faults.cancel()
        for timers in (self._redials, self._relay_waits, self._direct_again):
            for pending in list(timers.values()):  # a cancelled dial may forget itself
                cancel(pending)
            timers.clear()
        links = list(self.links.values())
        for link, connecting in list(self._unproven.items()):
            if link.transport is not None:
                links.append(link)
            elif connecting is not None:
                connecting.cancel()
        for link in links:
            link.close()
        closing = DeferredList([link.lost for link in links], consumeErrors=True)

        def cut(_: object) -> None:
            for link in links:
                if not link.lost.called:
                    link.transport.abortConnection()

        timer = self.reactor.callLater(grace, cut, None)
        closing.addBoth(lambda _: timer.cancel() if timer.active() else None)
        return closing.addCallback(lambda _: None)

    # --- links ---

    def _dial(self, seat: int, probe: bool = False) -> None:
        """Dial `seat`: its address first, then the relay (if any); a `probe` dials the
        address only, while the seat's link is up through the relay."""
        if probe:
            self._direct_again.pop(seat, None)
        else:
            self._redials.pop(seat, None)
        current = self.links.get(seat)
        if self.closed or (current is not None and not (probe and current.relayed)):
            return
        peer = self.roster.seats[seat]
        link = PeerLink(None, self, seat)
        link.probe = probe
        direct = HostnameEndpoint(self.reactor, peer.host, peer.port, timeout=10)
        relay = None if probe else self._relay_end(seat, RelayRole.DIALS)
        ways = DirectFirst(self.reactor, direct, relay, self.relay_after)
        endpoint: Any = ways
        if link.sealed:
            # Any Ed25519 key passes TLS: `handshakeCompleted` compares it with the roster's
            # before this side says anything but its refusals, so that a machine at the wrong
            # key can be told why the table will not start.
            endpoint = sealed.dial(endpoint, self.identity, lambda key: True, self.reactor)
        connecting = endpoint.connect(Factory.forProtocol(lambda: link))
        self._track(link, connecting)
        connecting.addCallback(lambda _: self._dialled_by(link, ways))
        connecting.addErrback(lambda failure: self._dial_failed(seat, link, failure))

    def _dialled_by(self, link: PeerLink, ways: DirectFirst) -> None:
        link.relayed = ways.relayed
        if ways.relayed and link.seat is not None:
            peer = self.roster.seats[link.seat]
            error = ways.direct_error or TimeoutError("no answer")
            problem = explain_peer_link_failure(peer.name, peer.host, peer.port, error)
            self.why_relayed[link.seat] = str(problem)

    def _relay_end(self, seat: int, role: RelayRole) -> RelayEndpoint | None:
        """This end of the link to `seat` at the lobby's relay: its pair id, and the secret
        only this seat and that one can derive (None if the lobby does not relay, or the
        roster's key for `seat` is one nobody can hold: no secret can be agreed with it)."""
        if self.relay is None:
            return None
        game_id, peer_key = self.roster.game_id, self.roster.seats[seat].public_key
        try:
            secret = relay_secret(game_id, self.identity, peer_key)
        except (SignatureError, KeyAgreementError):  # a lobby's roster that lies: no relay
            return None
        pair = relay_pair(game_id, self.identity.public_key, peer_key)
        return RelayEndpoint(self.reactor, self.relay[0], self.relay[1], role, pair, secret)

    # --- the relay, from the accepting end ---

    def _wait_at_relay_later(self, seat: int, delay: float | None = None) -> None:
        """Unless the link from `seat` (which dials this one) is up by then, wait for it at
        the relay too, in `delay` seconds (by default `relay_after`)."""
        if self.relay is None or self.closed or seat in self._relay_waits:
            return
        delay = self.relay_after if delay is None else delay
        self._relay_waits[seat] = self.reactor.callLater(delay, self._wait_at_relay, seat)

    def _wait_at_relay(self, seat: int) -> None:
        self._relay_waits.pop(seat, None)
        if self.closed or seat in self.links:
            return
        endpoint = self._relay_end(seat, RelayRole.ACCEPTS)
        if endpoint is None:
            return
        waiting = endpoint.connect(self.listener.accepting)
        self._relay_waits[seat] = waiting
        waiting.addCallbacks(
            lambda protocol: self._relay_joined(seat, waiting, protocol),
            lambda failure: self._relay_wait_failed(seat, waiting, failure),
        )

    def _relay_joined(self, seat: int, waiting: Deferred[Any], protocol: Any) -> None:
        if self._relay_waits.get(seat) is waiting:
            del self._relay_waits[seat]
        link = getattr(protocol, "wrappedProtocol", protocol)
        if not isinstance(link, PeerLink):
            return
        link.relayed = True
        link.waited_for = seat
        name = self.roster.seats[seat].name
        self.why_relayed[seat] = (
            f"{name}'s machine did not reach this one directly within {self.relay_after:g} s "
            f"(a firewall here, client isolation, or another network): {name} came through "
            "the lobby's relay"
        )
        link.lost.addCallback(lambda _: self._relay_link_ended(seat))

    def _relay_link_ended(self, seat: int) -> None:
        """A link that came through the relay is gone: wait there again unless a link
        from `seat` is up (a replacing one; a current link's loss says so itself)."""
        if seat not in self.links:
            self._wait_at_relay_later(seat)

    def _relay_wait_failed(self, seat: int, waiting: Deferred[Any], failure: Failure) -> None:
        if self._relay_waits.get(seat) is waiting:
            del self._relay_waits[seat]
        if failure.check(CancelledError) or self.closed:
            return
        status = failure.value.status if failure.check(RelayRefused) else None
        if status == RelayStatus.TIMED_OUT:
            delay = RELAY_WAIT_AGAIN  # the other end has not come yet: wait again at once
        elif status in (RelayStatus.UNKNOWN, RelayStatus.OFF, RelayStatus.BUSY):
            delay = RELAY_RETRY  # the relay will not help for a while, if ever
        else:
            delay = self.relay_after
        self._wait_at_relay_later(seat, delay)

    def _stop_waiting_at_relay(self, seat: int) -> None:
        cancel(self._relay_waits.pop(seat, None))

    def _track(self, link: PeerLink, connecting: Deferred[Any] | None = None) -> None:
        self._unproven[link] = connecting
        link.lost.addBoth(lambda _: self._unproven.pop(link, None))

    def _dial_failed(self, seat: int, link: PeerLink, failure: Failure) -> None:
        self._unproven.pop(link, None)
        if self.closed:
            return
        if link.probe:  # the relayed link carries on; the address is tried again later
            self._try_direct_later(seat)
            return
        peer = self.roster.seats[seat]
        error = failure.value
        direct = error.direct if isinstance(error, NoPath) else error
        problem = explain_peer_link_failure(peer.name, peer.host, peer.port, direct)
        refused = isinstance(problem, PeerRefused)
        loss = LinkLoss.NOT_LISTENING if refused else LinkLoss.UNREACHABLE
        words = str(problem)
        if isinstance(error, NoPath) and error.relayed is not None:
            words += f" Through the lobby's relay neither: {relay_words(error.relayed)}."
        self.handler.link_down(seat, words, loss)
        self._schedule_redial(seat)

    def _try_direct_later(self, seat: int) -> None:
        """The link to `seat` (after this one) is up through the relay: try its address
        again later, less often each time."""
        if self.closed or seat in self._direct_again:
            return
        tries = self._direct_tries.get(seat, 0)
        self._direct_tries[seat] = tries + 1
        delay = self.direct_again_delays[min(tries, len(self.direct_again_delays) - 1)]
        self._direct_again[seat] = self.reactor.callLater(delay, self._dial, seat, True)

    def _schedule_redial(self, seat: int) -> None:
        if self.closed or seat <= self.seat or seat in self._redials:
            return
        attempt = self._attempts.get(seat, 0)
        self._attempts[seat] = attempt + 1
        delay = self.redial_delays[min(attempt, len(self.redial_delays) - 1)]
        self._redials[seat] = self.reactor.callLater(delay, self._dial, seat)

    def _link_authenticated(self, link: PeerLink) -> None:
        assert link.seat is not None
        self._unproven.pop(link, None)
        if self.closed:
            link.close()
            return
        old = self.links.get(link.seat)
        self.links[link.seat] = link
        self._attempts[link.seat] = 0
        if old is not None and old is not link:
            old.mesh = None  # a replaced link's loss is not news
            old.close()
        if not link.relayed:
            self._stop_waiting_at_relay(link.seat)
            self._direct_tries.pop(link.seat, None)
        elif link.seat > self.seat:
            self._try_direct_later(link.seat)
        elif link.waited_for is not None and link.waited_for != link.seat:
            # The relay joined the end this seat held for one peer to another's link (it
            # proved its key, so it stands): the first peer is waited for again.
            self._relay_link_ended(link.waited_for)
        self.handler.link_up(link.seat)

    def _link_lost(self, link: PeerLink, reason: str, loss: LinkLoss) -> None:
        """A link ended: the current link of its seat, or a dialled one whose handshake failed.
        Either way the seat hears why, and the dialling side tries again."""
        if link.seat is None or self.closed:
            return
        if self.links.get(link.seat) is link:
            del self.links[link.seat]
        elif link.probe and link.seat in self.links:
            self._try_direct_later(link.seat)  # the relayed link carries on
            return
        elif link.authenticated or link.seat <= self.seat:
            return  # a replaced link, or an accepted one that never proved itself
        if link.seat < self.seat:
            self._wait_at_relay_later(link.seat)
        self.handler.link_down(link.seat, reason, loss)
        self._schedule_redial(link.seat)


def cancel(pending: Any) -> None:
    """Cancel a timer or a Deferred, if there is one and it has not run."""
    if isinstance(pending, Deferred) or (pending is not None and pending.active()):
        pending.cancel()


def relay_words(error: BaseException) -> str:
    """Why the relay did not carry a link, in words."""
    if isinstance(error, RelayRefused):
        return str(error)
    if isinstance(error, CancelledError | TimeoutError | defer.TimeoutError):
        return "the lobby's relay did not answer in time"
    return f"the lobby could not be reached ({type(error).__name__}: {str(error)[:80]})"
