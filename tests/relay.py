"""A slow and lossy TCP link in user space: a relay between a listening address and a target.

The kernel here has no netem, so the tests make a bad link themselves: every connection to the
relay is forwarded to the target, and each direction's bytes go through a schedule:

- delay: each chunk is delivered `delay` seconds after it arrived, plus `jitter` (0 to
  `jitter` seconds, drawn per segment), never overtaking an earlier chunk (order is kept);
- bandwidth: at most `bandwidth` bytes per second each way (0: no cap);
- loss: TCP cannot lose bytes mid-stream, so a lost link is a reset: before a segment, with
  probability `reset_chance`, the relay aborts both of its connections (both ends see the link
  drop with a reset; bytes still in flight are lost, so each end has received a prefix of what
  the other sent); with probability `stall_chance` the link instead freezes for `stall_seconds`
  and then goes on.

A segment is `segment` bytes of one direction's stream, counted from the start of the
connection, so the schedule depends only on the bytes, never on how TCP split them: a seed, a
connection number (0, 1, … in the order the relay accepted them) and a direction ("up": from
whoever connected to the target, "down": back) decide every draw (`LinkSchedule`, pure, from
protocol.kdf's Stream). The same seed and the same traffic give the same resets, at the same
byte offsets.

    relay = Relay(reactor, "10.213.0.12", 4000, LinkProfile(delay=0.1, reset_chance=0.001))
    port = await relay.listen("tcp:0:interface=10.213.0.100")
    ...
    await relay.stop()

The relay is also the on-path attacker of the security tests: it records every byte it relays
(`ConnectionRecord.captured`), and a `Tamper` may change each direction's bytes as they pass:
flip bits, inject bytes, replay bytes it already passed, drop whole frames or TLS records
chosen by a predicate (`FlipBytes`, `Inject`, `Replay`, `DropUnits`), or drop everything one
way while told to (`Block`: a one-way cut).

`python -m tests.relay --listen HOST:PORT --to HOST:PORT [--delay S ...]` runs one as a process
(`NamespaceLan.start_relay`, `scripts/lan relay`); its first line is `relay listening on
HOST:PORT`, then one line per event (`relay open 0`, `relay reset 0 up 4096`, `relay closed 0
up 123 down 456`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred, DeferredList, maybeDeferred, succeed
from twisted.internet.endpoints import TCP4ClientEndpoint, serverFromString
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IDelayedCall, IListeningPort
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.python.failure import Failure

from client.net import accept, dial
from protocol.identity import Identity
from protocol.kdf import Stream
from tests.waiting import Watched

PARTS_PER_MILLION = 1_000_000
HIGH_WATER = 256 * 1024  # queued bytes in one direction before the relay stops reading
LOW_WATER = 64 * 1024
CONNECT_TIMEOUT = 10.0
UP, DOWN = "up", "down"


@dataclass(frozen=True)
class LinkProfile:
    """How bad the link is, each way. Times in seconds, chances per segment (0 to 1)."""

    delay: float = 0.0
    jitter: float = 0.0
    bandwidth: float = 0.0
    reset_chance: float = 0.0
    stall_chance: float = 0.0
    stall_seconds: float = 0.0
    segment: int = 1024
    seed: bytes = b"bohnanza-p2p relay"

    def __post_init__(self) -> None:
        for name in ("delay", "jitter", "bandwidth", "stall_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} cannot be negative")
        for name in ("reset_chance", "stall_chance"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} is a chance from 0 to 1")
        if self.segment < 1:
            raise ValueError("a segment has at least one byte")


@dataclass(frozen=True)
class SegmentFate:
    """What happens before and to one segment."""

    jitter: float = 0.0
    reset: bool = False
    stall: float = 0.0


class LinkSchedule:
    """The fates of one direction's segments on one relayed connection, in order."""

    def __init__(self, profile: LinkProfile, connection: int, direction: str) -> None:
        self.profile = profile
        seed = hashlib.sha256(b"relay schedule seed" + profile.seed).digest()
        self._stream = Stream(seed, "relay", connection, direction)

    def _chance(self, probability: float) -> bool:
        if probability <= 0:
            return False
        return self._stream.chance(round(probability * PARTS_PER_MILLION), PARTS_PER_MILLION)

    def fates(self) -> Iterator[SegmentFate]:
        """Segment 0, 1, 2, … (draws: jitter, then reset, then stall, each only when used)."""
        profile = self.profile
        while True:
            jitter = 0.0
            if profile.jitter > 0:
                jitter = profile.jitter * self._stream.randbelow(PARTS_PER_MILLION + 1)
                jitter /= PARTS_PER_MILLION
            reset = self._chance(profile.reset_chance)
            stalled = self._chance(profile.stall_chance)
            yield SegmentFate(jitter, reset, profile.stall_seconds if stalled else 0.0)

    def first_reset(self, total_bytes: int) -> int | None:
        """The byte offset where this direction resets, if it does within `total_bytes`."""
        for index, fate in enumerate(self.fates()):
            offset = index * self.profile.segment
            if offset >= total_bytes:
                return None
            if fate.reset:
                return offset
        raise AssertionError("unreachable")


class Tamper:
    """What an on-path machine does to one direction of one relayed connection. `change`
    gets each chunk with the offset of its first byte in that direction's stream (counted
    from the connection's start, before any change) and returns the bytes to pass on."""

    def applies(self, connection: int, direction: str) -> bool:
        return True

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        return data


@dataclass
class _Targeted(Tamper):
    """A tamper limited to some connections (None: all) and one direction (None: both)."""

    connections: frozenset[int] | None = None
    direction: str | None = None

    def applies(self, connection: int, direction: str) -> bool:
        wanted = self.connections is None or connection in self.connections
        return wanted and self.direction in (None, direction)


@dataclass
class FlipBytes(_Targeted):
    """Flip the lowest bit of the byte at each of these offsets."""

    offsets: tuple[int, ...] = ()
    flipped: int = 0

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        if not self.applies(connection, direction):
            return data
        changed = bytearray(data)
        for at in self.offsets:
            if offset <= at < offset + len(data):
                changed[at - offset] ^= 1
                self.flipped += 1
        return bytes(changed)


@dataclass
class Inject(_Targeted):
    """Insert `payload` into the stream just before the byte at `at` (once per connection)."""

    at: int = 0
    payload: bytes = b""
    injected: int = 0
    _done: set[tuple[int, str]] = field(default_factory=set)

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        key = (connection, direction)
        if not self.applies(connection, direction) or key in self._done:
            return data
        if offset + len(data) <= self.at:
            return data
        self._done.add(key)
        self.injected += 1
        cut = max(0, self.at - offset)
        return data[:cut] + self.payload + data[cut:]


@dataclass
class Replay(_Targeted):
    """Once `after` bytes have passed, send again the bytes from offset `start` to `end`
    (a copy of what this direction already carried), then go on."""

    start: int = 0
    end: int = 0
    after: int = 0
    replayed: int = 0
    _seen: dict[tuple[int, str], bytearray] = field(default_factory=dict)

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        seen = self._seen.setdefault((connection, direction), bytearray())
        before = len(seen)
        seen += data
        if not self.applies(connection, direction):
            return data
        if before <= self.after < len(seen) and self.end <= self.after and not self.replayed:
            self.replayed += 1
            cut = self.after - offset
            return data[:cut] + bytes(seen[self.start : self.end]) + data[cut:]
        return data


def frame_units(buffer: bytes) -> int | None:
    """Length of the first whole length-prefixed frame in `buffer` (a plain link's unit)."""
    if len(buffer) < 4:
        return None
    size = 4 + int.from_bytes(buffer[:4], "big")
    return size if len(buffer) >= size else None


def tls_records(buffer: bytes) -> int | None:
    """Length of the first whole TLS record in `buffer` (a sealed link's unit)."""
    if len(buffer) < 5:
        return None
    size = 5 + int.from_bytes(buffer[3:5], "big")
    return size if len(buffer) >= size else None


@dataclass
class DropUnits(_Targeted):
    """Cut the stream into units (frames of a plain link, or TLS records) and drop those the
    predicate picks, the way a machine on the path drops only the packets it wants gone."""

    units: Callable[[bytes], int | None] = frame_units
    pick: Callable[[bytes], bool] = lambda unit: False
    dropped: int = 0
    _pending: dict[tuple[int, str], bytearray] = field(default_factory=dict)

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        if not self.applies(connection, direction):
            return data
        pending = self._pending.setdefault((connection, direction), bytearray())
        pending += data
        passed = bytearray()
        while (size := self.units(bytes(pending))) is not None:
            unit = bytes(pending[:size])
            del pending[:size]
            if self.pick(unit):
                self.dropped += 1
            else:
                passed += unit
        return bytes(passed)


@dataclass
class Block(Tamper):
    """A black hole, switched on and off: while a direction is in `blocked`, every byte it
    carries on every connection is dropped. The link is cut one way only, and silently: a
    sealed link whose records went missing breaks once the bytes flow again (the next record
    is out of sequence), and a new link cannot complete its handshake while its dialler's
    words (`UP`) or the answers (`DOWN`) vanish."""

    blocked: set[str] = field(default_factory=set)
    dropped: dict[str, int] = field(default_factory=lambda: {UP: 0, DOWN: 0})

    def change(self, connection: int, direction: str, offset: int, data: bytes) -> bytes:
        if direction not in self.blocked:
            return data
        self.dropped[direction] += len(data)
        return b""


_RESET = object()


class _Pipe:
    """One direction of one relayed connection: queue, schedule, delivery, back-pressure.
    It is the destination transport's producer, so a destination that stops reading stops
    the relay reading from the source."""

    def __init__(self, link: RelayedConnection, direction: str, source: Any, dest: Any) -> None:
        self.link = link
        self.direction = direction
        self.source = source
        self.dest = dest
        self.profile = link.relay.profile
        self.clock = link.relay.clock
        self._fates = LinkSchedule(self.profile, link.index, direction).fates()
        self.received = 0
        self.delivered = 0
        self.captured = link.record.captured.setdefault(direction, bytearray())
        self._tamper = link.relay.tamper
        self._seen = 0  # bytes that arrived from the source, before any tampering
        self._jitter = 0.0
        self._free_at = 0.0
        self._queue: deque[tuple[float, Any]] = deque()
        self._queued = 0
        self._timer: IDelayedCall | None = None
        self._cut = False  # a reset is queued: later bytes are lost
        self._closing = False
        self._stopped = False
        self._queue_full = False
        self._dest_full = False
        dest.registerProducer(self, True)

    # the destination's producer interface
    def pauseProducing(self) -> None:
        self._dest_full = True
        self._update_reading()

    def resumeProducing(self) -> None:
        self._dest_full = False
        self._update_reading()

    def stopProducing(self) -> None:
        self.stop()

    def _update_reading(self) -> None:
        if self._stopped:
            return
        if self._queue_full or self._dest_full:
            self.link.relay.pauses += 1
            self.source.pauseProducing()
        else:
            self.source.resumeProducing()

    def feed(self, data: bytes) -> None:
        if self._cut or self._closing or self._stopped:
            return
        self.captured += data
        offset, self._seen = self._seen, self._seen + len(data)
        if self._tamper is not None:
            data = self._tamper.change(self.link.index, self.direction, offset, data)
            self.link.relay.changed()  # tests wait on what the tamper did
        now = self.clock.seconds()
        profile = self.profile
        while data:
            if self.received % profile.segment == 0:
                fate = next(self._fates)
                if fate.reset:
                    self._cut = True
                    self._push(max(now + profile.delay, self._free_at), _RESET)
                    break
                if fate.stall:
                    self._free_at = max(self._free_at, now + profile.delay) + fate.stall
                self._jitter = fate.jitter
            room = profile.segment - self.received % profile.segment
            piece, data = data[:room], data[room:]
            start = max(now + profile.delay + self._jitter, self._free_at)
            deliver = start + (len(piece) / profile.bandwidth if profile.bandwidth else 0.0)
            self._free_at = deliver
            self.received += len(piece)
            self._push(deliver, piece)
        self._deliver()

    def _push(self, when: float, item: Any) -> None:
        self._queue.append((when, item))
        if item is not _RESET:
            self._queued += len(item)
        if self._queued > HIGH_WATER and not self._queue_full:
            self._queue_full = True
            self._update_reading()

    def close_when_flushed(self) -> None:
        """The source ended cleanly: deliver what is queued, then close the destination."""
        self._closing = True
        self._deliver()

    def _on_timer(self) -> None:
        self._timer = None
        self._deliver()

    def _deliver(self) -> None:
        if self._stopped:
            return
        now = self.clock.seconds()
        while self._queue and self._queue[0][0] <= now:
            _, item = self._queue.popleft()
            if item is _RESET:
                self.link.reset(self.direction, self.delivered)
                return
            self._queued -= len(item)
            self.delivered += len(item)
            self.dest.write(item)
        if self._queue_full and self._queued < LOW_WATER:
            self._queue_full = False
            self._update_reading()
        if self._queue and self._timer is None:
            # Delivery times never decrease along the queue: one timer, for its head, will do.
            self._timer = self.clock.callLater(self._queue[0][0] - now, self._on_timer)
        elif not self._queue and self._closing:
            self.dest.loseConnection()

    def stop(self) -> None:
        self._stopped = True
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self._queue.clear()
        self._queued = 0


@dataclass
class ConnectionRecord:
    """What happened to one relayed connection (bytes delivered each way)."""

    index: int
    up: int = 0
    down: int = 0
    reset: tuple[str, int] | None = None  # (direction, bytes delivered that way before it)
    target_failed: str | None = None
    ended: bool = False
    captured: dict[str, bytearray] = field(default_factory=dict)  # every byte, by direction


class _Inbound(Protocol):
    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.link: RelayedConnection | None = None

    def connectionMade(self) -> None:
        self.transport.pauseProducing()  # nothing is read until the target answers
        self.link = RelayedConnection(self.relay, self)

    def dataReceived(self, data: bytes) -> None:
        if self.link is not None:
            self.link.from_inbound(data)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        if self.link is not None:
            self.link.inbound_lost(reason)


class _Outbound(Protocol):
    def __init__(self, link: RelayedConnection) -> None:
        self.link = link

    def dataReceived(self, data: bytes) -> None:
        self.link.from_outbound(data)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.link.outbound_lost(reason)


class RelayedConnection:
    """One client connection and its connection to the target."""

    def __init__(self, relay: Relay, inbound: _Inbound) -> None:
        self.relay = relay
        self.index = relay._next_index
        relay._next_index += 1
        self.record = ConnectionRecord(self.index)
        relay.records.append(self.record)
        relay.live.add(self)
        self.inbound = inbound
        self.outbound: _Outbound | None = None
        self.up: _Pipe | None = None
        self.down: _Pipe | None = None
        self._inbound_gone = False
        self._outbound_gone = False
        self.relay.event(f"open {self.index}")
        endpoint = TCP4ClientEndpoint(
            relay.reactor, relay.target_host, relay.target_port, CONNECT_TIMEOUT
        )
        connecting = endpoint.connect(Factory.forProtocol(lambda: _Outbound(self)))
        self._connecting: Deferred[Any] | None = connecting
        connecting.addCallbacks(self._target_up, self._target_failed)

    def _target_up(self, outbound: _Outbound) -> None:
        self._connecting = None
        self.outbound = outbound
        if self._inbound_gone:
            outbound.transport.loseConnection()
            return
        self.up = _Pipe(self, UP, self.inbound.transport, outbound.transport)
        self.down = _Pipe(self, DOWN, outbound.transport, self.inbound.transport)
        self.inbound.transport.resumeProducing()

    def _target_failed(self, failure: Failure) -> None:
        self._connecting = None
        self._outbound_gone = True
        self.record.target_failed = failure.getErrorMessage()
        self.relay.event(f"target-failed {self.index} {failure.getErrorMessage()}")
        if self._inbound_gone:
            self._maybe_finish()
        else:
            self.inbound.transport.abortConnection()

    def from_inbound(self, data: bytes) -> None:
        if self.up is not None:
            self.up.feed(data)

    def from_outbound(self, data: bytes) -> None:
        if self.down is not None:
            self.down.feed(data)

    def reset(self, direction: str, delivered: int) -> None:
        """The schedule says the link drops here: abort both connections."""
        if self.record.reset is None:
            self.record.reset = (direction, delivered)
            self.relay.event(f"reset {self.index} {direction} {delivered}")
        self.abort()

    def abort(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        for pipe in (self.up, self.down):
            if pipe is not None:
                pipe.stop()
        if not self._inbound_gone:
            self.inbound.transport.abortConnection()
        if self.outbound is not None and not self._outbound_gone:
            self.outbound.transport.abortConnection()

    def inbound_lost(self, reason: Failure) -> None:
        self._inbound_gone = True
        if self.outbound is not None and not self._outbound_gone:
            self._pass_on(self.up, self.down, self.outbound, reason)
        self._maybe_finish()

    def outbound_lost(self, reason: Failure) -> None:
        self._outbound_gone = True
        if not self._inbound_gone:
            self._pass_on(self.down, self.up, self.inbound, reason)
        self._maybe_finish()

    def _pass_on(self, towards: _Pipe | None, back: _Pipe | None, other: Any, why: Failure) -> None:
        """One side left: a clean close reaches the other side once the bytes queued for it
        are delivered; a reset or an error reaches it at once."""
        if back is not None:
            back.stop()
        if towards is not None and why.check(ConnectionDone):
            towards.close_when_flushed()
        else:
            if towards is not None:
                towards.stop()
            other.transport.abortConnection()

    def _maybe_finish(self) -> None:
        if self.record.ended or not self._inbound_gone or self._connecting is not None:
            return
        if self.outbound is not None and not self._outbound_gone:
            return
        for pipe in (self.up, self.down):
            if pipe is not None:
                pipe.stop()
        self.record.up = self.up.delivered if self.up else 0
        self.record.down = self.down.delivered if self.down else 0
        self.record.ended = True
        self.relay.live.discard(self)
        self.relay.event(f"closed {self.index} up {self.record.up} down {self.record.down}")


class Relay(Factory, Watched):
    """Accepts connections and relays each to the target through a LinkProfile. `records`
    says what happened to every connection; `when(condition)` waits on them."""

    def __init__(
        self,
        reactor: Any,
        target_host: str,
        target_port: int,
        profile: LinkProfile | None = None,
        *,
        clock: Any = None,
        log: Callable[[str], None] | None = None,
        tamper: Tamper | None = None,
    ) -> None:
        Watched.__init__(self)
        self.reactor = reactor
        self.clock = clock or reactor
        self.target_host = target_host
        self.target_port = target_port
        self.profile = profile or LinkProfile()
        self.tamper = tamper
        self.records: list[ConnectionRecord] = []
        self.live: set[RelayedConnection] = set()
        self.pauses = 0  # times a relayed connection stopped reading (back-pressure)
        self._log = log
        self._next_index = 0
        self._port: IListeningPort | None = None

    def captured(self, direction: str | None = None) -> bytes:
        """Every byte the relay carried (one direction, or both), connection by connection."""
        return b"".join(
            bytes(chunk)
            for record in self.records
            for way, chunk in sorted(record.captured.items())
            if direction in (None, way)
        )

    def event(self, text: str) -> None:
        if self._log is not None:
            self._log(f"relay {text}")
        self.changed()

    def buildProtocol(self, addr: Any) -> _Inbound:
        return _Inbound(self)

    def listen(self, description: str = "tcp:0:interface=127.0.0.1") -> Deferred[int]:
        """Start listening on a Twisted endpoint string; fires with the port number."""
        listening: Deferred[IListeningPort] = serverFromString(self.reactor, description).listen(
            self
        )

        def bound(port: IListeningPort) -> int:
            self._port = port
            return int(port.getHost().port)

        return listening.addCallback(bound)

    def stop(self) -> Deferred[Any]:
        """Stop listening and abort every live connection; fires once all are gone."""
        stopping: list[Deferred[Any]] = []
        if self._port is not None:
            stopping.append(maybeDeferred(self._port.stopListening))
            self._port = None
        if self.live:
            for link in list(self.live):
                link.abort()
            stopping.append(self.when(lambda relay: not relay.live))
        return DeferredList(stopping, consumeErrors=True) if stopping else succeed(None)


class _SplicedIn(Protocol):
    def __init__(self, splice: Splice) -> None:
        self.splice = splice
        self.out: _SplicedOut | None = None
        self.gone = False

    def connectionMade(self) -> None:
        self.transport.pauseProducing()  # nothing is read until the target answers
        splice = self.splice
        splice.live.add(self)
        endpoint: Any = TCP4ClientEndpoint(
            splice.reactor, splice.target_host, splice.target_port, CONNECT_TIMEOUT
        )
        endpoint = dial(endpoint, splice.identity_out, lambda key: True, splice.reactor)
        connecting = endpoint.connect(Factory.forProtocol(lambda: _SplicedOut(self)))
        connecting.addCallbacks(self._target_up, lambda _: self.transport.abortConnection())

    def _target_up(self, out: _SplicedOut) -> None:
        self.out = out
        if self.gone:
            out.transport.abortConnection()
        else:
            self.transport.resumeProducing()

    def dataReceived(self, data: bytes) -> None:
        self.splice.plain[UP] += data
        if self.out is not None:
            self.out.transport.write(self.splice.rewrite(UP, data))

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.gone = True
        if self.out is not None:
            self.out.transport.loseConnection()
        self.splice.live.discard(self)
        self.splice.changed()


class _SplicedOut(Protocol):
    def __init__(self, inbound: _SplicedIn) -> None:
        self.inbound = inbound

    def dataReceived(self, data: bytes) -> None:
        self.inbound.splice.plain[DOWN] += data
        self.inbound.transport.write(self.inbound.splice.rewrite(DOWN, data))

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.inbound.transport.loseConnection()  # after what the target said last


class Splice(Factory, Watched):
    """A machine in the middle with keys of its own: it ends the TLS of whoever connects with
    `identity_in`'s certificate (asking for theirs when `clients_show_keys`), opens its own
    TLS to the target as `identity_out`, and passes the plaintext between the two, recording
    it (`plain`) and letting `rewrite` change it. It gets through only where a side accepts
    its key: the first meeting with a lobby, or a roster that a lobby falsified."""

    def __init__(
        self,
        reactor: Any,
        target: tuple[str, int],
        identity_in: Identity,
        identity_out: Identity | None,
        clients_show_keys: bool,
        rewrite: Callable[[str, bytes], bytes] = lambda direction, data: data,
    ) -> None:
        Watched.__init__(self)
        self.reactor = reactor
        self.target_host, self.target_port = target
        self.identity_in = identity_in
        self.identity_out = identity_out
        self.clients_show_keys = clients_show_keys
        self.rewrite = rewrite
        self.plain: dict[str, bytearray] = {UP: bytearray(), DOWN: bytearray()}
        self.live: set[_SplicedIn] = set()
        self._port: IListeningPort | None = None

    def buildProtocol(self, addr: Any) -> _SplicedIn:
        return _SplicedIn(self)

    async def listen(self, interface: str = "127.0.0.1") -> int:
        wrapped = accept(self, self.identity_in, self.clients_show_keys, self.reactor)
        endpoint = serverFromString(self.reactor, f"tcp:0:interface={interface}")
        self._port = await endpoint.listen(wrapped)
        return int(self._port.getHost().port)

    async def stop(self) -> None:
        if self._port is not None:
            await maybeDeferred(self._port.stopListening)
            self._port = None
        for inbound in list(self.live):
            inbound.transport.abortConnection()
        await self.when(lambda splice: not splice.live)


@dataclass
class _Options:
    listen: tuple[str, int]
    target: tuple[str, int]
    profile: LinkProfile = field(default_factory=LinkProfile)


def _address(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"write HOST:PORT, not {text!r}")
    return host, int(port)


def profile_arguments(profile: LinkProfile) -> list[str]:
    """The command-line arguments that give `python -m tests.relay` this profile."""
    return [
        *("--delay", repr(profile.delay), "--jitter", repr(profile.jitter)),
        *("--bandwidth", repr(profile.bandwidth), "--reset-chance", repr(profile.reset_chance)),
        *("--stall-chance", repr(profile.stall_chance)),
        *("--stall-seconds", repr(profile.stall_seconds), "--segment", str(profile.segment)),
        *("--seed-hex", profile.seed.hex()),
    ]


def parse_arguments(argv: list[str]) -> _Options:
    parser = argparse.ArgumentParser(
        prog="python -m tests.relay", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--listen", type=_address, required=True, help="HOST:PORT (0: any)")
    parser.add_argument("--to", type=_address, required=True, help="target HOST:PORT")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds, each way")
    parser.add_argument("--jitter", type=float, default=0.0, help="up to this many more seconds")
    parser.add_argument("--bandwidth", type=float, default=0.0, help="bytes/second (0: no cap)")
    parser.add_argument("--reset-chance", type=float, default=0.0, help="per segment, 0 to 1")
    parser.add_argument("--stall-chance", type=float, default=0.0, help="per segment, 0 to 1")
    parser.add_argument("--stall-seconds", type=float, default=0.0)
    parser.add_argument("--segment", type=int, default=1024, help="bytes per schedule step")
    seed = parser.add_mutually_exclusive_group()
    seed.add_argument("--seed", help="any text; the same seed repeats the same schedule")
    seed.add_argument("--seed-hex", help="the seed as hex bytes")
    args = parser.parse_args(argv)
    if args.seed_hex is not None:
        seed_bytes = bytes.fromhex(args.seed_hex)
    elif args.seed is not None:
        seed_bytes = args.seed.encode()
    else:
        seed_bytes = LinkProfile.seed
    try:
        profile = LinkProfile(
            delay=args.delay,
            jitter=args.jitter,
            bandwidth=args.bandwidth,
            reset_chance=args.reset_chance,
            stall_chance=args.stall_chance,
            stall_seconds=args.stall_seconds,
            segment=args.segment,
            seed=seed_bytes,
        )
    except ValueError as error:
        parser.error(str(error))
    return _Options(args.listen, args.to, profile)


def main(argv: list[str] | None = None) -> None:
    options = parse_arguments(sys.argv[1:] if argv is None else argv)
    from twisted.internet import task

    def say(line: str) -> None:
        print(line, flush=True)

    async def run(reactor: Any) -> None:
        relay = Relay(reactor, *options.target, options.profile, log=say)
        host, port = options.listen
        bound = await relay.listen(f"tcp:{port}:interface={host}")
        say(f"relay listening on {host}:{bound}")
        reactor.addSystemEventTrigger("before", "shutdown", relay.stop)
        await Deferred()  # relays until the process is told to stop (SIGTERM, SIGINT)

    task.react(lambda reactor: Deferred.fromCoroutine(run(reactor)))


if __name__ == "__main__":
    main()
