"""LAN discovery, the lobby's side: answer "is there a lobby here?" on UDP port 7778.

`bean-client connect` with no host broadcasts a query on its LAN (client/net/discovery.py); every
`bean-lobby` that hears it answers by unicast with its TCP port and its name. The format is
fixed, version 1, big-endian, and both directions are checked strictly (docs/protocol.md):

    query   exactly 128 bytes: b"BNZQ" | version u8 | nonce 16 bytes | 107 zero bytes
    answer  28 + n bytes (n = 1..64): b"BNZA" | version u8 | the query's nonce |
            TCP port u16 | IPv4 host 4 bytes (0.0.0.0: the address this answer came from) |
            n u8 | the lobby's name, n bytes of UTF-8 (1-32 printable characters, trimmed)

The padding makes every answer shorter than the query that asked for it, so a lobby cannot be
used to amplify traffic; answers are rate-limited per source address and overall, and anything
malformed (any size but 128, another magic or version, padding that is not zero) gets no reply.
A lobby that listens on loopback only does not answer at all (nobody on the LAN could connect).

The format functions are pure; `DiscoveryService` is the Twisted part that `makeService` adds.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from twisted.application.service import Service
from twisted.internet.defer import Deferred, maybeDeferred, succeed
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort
from twisted.internet.protocol import DatagramProtocol
from twisted.logger import Logger

from lobby.limits import TokenBucket

log = Logger()

DISCOVERY_PORT = 7778
DISCOVERY_VERSION = 1
QUERY_MAGIC = b"BNZQ"
ANSWER_MAGIC = b"BNZA"
NONCE_BYTES = 16
QUERY_BYTES = 128
NAME_MAX_CHARS = 32
NAME_MAX_BYTES = 64
_QUERY_HEAD = struct.Struct("!4sB16s")
_ANSWER_HEAD = struct.Struct("!4sB16sH4sB")
ANSWER_MAX_BYTES = _ANSWER_HEAD.size + NAME_MAX_BYTES
assert ANSWER_MAX_BYTES < QUERY_BYTES
_ANY = b"\0\0\0\0"


class DiscoveryFormatError(ValueError):
    """A datagram that is not a well-formed discovery message of our version."""


@dataclass(frozen=True)
class Answer:
    nonce: bytes
    port: int
    host: str | None  # None: the address the answer came from
    name: str


def check_lobby_name(name: str) -> str:
    """A lobby name as discovery shows it: 1-32 printable characters, no spaces around."""
    if not isinstance(name, str) or not name or len(name) > NAME_MAX_CHARS:
        raise ValueError(f"a lobby name has 1 to {NAME_MAX_CHARS} characters")
    if not name.isprintable() or name != name.strip():
        raise ValueError("a lobby name has printable characters only, and no spaces around it")
    if len(name.encode()) > NAME_MAX_BYTES:
        raise ValueError(f"a lobby name takes at most {NAME_MAX_BYTES} bytes of UTF-8")
    return name


def default_lobby_name() -> str:
    name = f"bean-lobby on {socket.gethostname()}"[:NAME_MAX_CHARS].strip()
    try:
        return check_lobby_name(name)
    except ValueError:
        return "bean-lobby"


def encode_query(nonce: bytes) -> bytes:
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a discovery nonce has {NONCE_BYTES} bytes")
    head = _QUERY_HEAD.pack(QUERY_MAGIC, DISCOVERY_VERSION, nonce)
    return head + bytes(QUERY_BYTES - len(head))


def decode_query(datagram: bytes) -> bytes:
    """The nonce of a well-formed query; DiscoveryFormatError for anything else."""
    if len(datagram) != QUERY_BYTES:
        raise DiscoveryFormatError(f"a query has {QUERY_BYTES} bytes, not {len(datagram)}")
    magic, version, nonce = _QUERY_HEAD.unpack_from(datagram)
    if magic != QUERY_MAGIC:
        raise DiscoveryFormatError("not a bohnanza-p2p discovery query")
    if version != DISCOVERY_VERSION:
        raise DiscoveryFormatError(f"discovery version {version}, not {DISCOVERY_VERSION}")
    if any(datagram[_QUERY_HEAD.size :]):
        raise DiscoveryFormatError("the query's padding is not zero")
    return bytes(nonce)


def encode_answer(answer: Answer) -> bytes:
    name = check_lobby_name(answer.name).encode()
    if len(answer.nonce) != NONCE_BYTES or not 1 <= answer.port <= 65535:
        raise ValueError("an answer needs a 16-byte nonce and a port from 1 to 65535")
    host = _ANY if answer.host is None else ipaddress.IPv4Address(answer.host).packed
    head = _ANSWER_HEAD.pack(
        ANSWER_MAGIC, DISCOVERY_VERSION, answer.nonce, answer.port, host, len(name)
    )
    return head + name


def decode_answer(datagram: bytes) -> Answer:
    """A well-formed answer; DiscoveryFormatError for anything else."""
    if not _ANSWER_HEAD.size < len(datagram) <= ANSWER_MAX_BYTES:
        raise DiscoveryFormatError(f"an answer cannot have {len(datagram)} bytes")
    magic, version, nonce, port, host, length = _ANSWER_HEAD.unpack_from(datagram)
    if magic != ANSWER_MAGIC:
        raise DiscoveryFormatError("not a bohnanza-p2p discovery answer")
    if version != DISCOVERY_VERSION:
        raise DiscoveryFormatError(f"discovery version {version}, not {DISCOVERY_VERSION}")
    if length != len(datagram) - _ANSWER_HEAD.size or port == 0:
        raise DiscoveryFormatError("the answer's name length or port is wrong")
    address = ipaddress.IPv4Address(host)
    if host != _ANY and (address.is_multicast or address.is_unspecified or address.is_reserved):
        raise DiscoveryFormatError(f"the answer names host {address}")
    try:
        name = check_lobby_name(datagram[_ANSWER_HEAD.size :].decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError) as error:
        raise DiscoveryFormatError(f"the answer's name is not acceptable: {error}") from None
    return Answer(bytes(nonce), port, None if host == _ANY else str(address), name)


class DiscoveryResponder:
    """Decides what to answer (pure: the caller passes the clock's time). Answers a
    well-formed query when both the source's bucket and the overall bucket allow it."""

    def __init__(
        self,
        name: str,
        port: int,
        host: str | None = None,
        *,
        per_source: tuple[float, int] = (2.0, 8),
        overall: tuple[float, int] = (50.0, 100),
        max_sources: int = 1024,
        now: float = 0.0,
    ) -> None:
        self.name = check_lobby_name(name)
        self.port = port
        self.host = host
        self._per_source = per_source
        self._overall = TokenBucket(overall[0], overall[1], now)
        self._sources: OrderedDict[str, TokenBucket] = OrderedDict()
        self._max_sources = max_sources
        self.answered = 0
        self.ignored = 0
        self.limited = 0

    def respond(self, datagram: bytes, source_host: str, now: float) -> bytes | None:
        try:
            nonce = decode_query(datagram)
        except DiscoveryFormatError:
            self.ignored += 1
            return None
        bucket = self._sources.get(source_host)
        if bucket is None:
            bucket = TokenBucket(self._per_source[0], self._per_source[1], now)
            self._sources[source_host] = bucket
            while len(self._sources) > self._max_sources:
                self._sources.popitem(last=False)
        self._sources.move_to_end(source_host)
        if not bucket.take(now) or not self._overall.take(now):
            self.limited += 1
            return None
        self.answered += 1
        return encode_answer(Answer(nonce, self.port, self.host, self.name))


class DiscoveryProtocol(DatagramProtocol):
    """The UDP adapter: a datagram in, maybe one answer out to its source."""

    def __init__(self, responder: DiscoveryResponder, clock: Any) -> None:
        self.responder = responder
        self.clock = clock

    def datagramReceived(self, datagram: bytes, addr: Any) -> None:
        host, port = addr[0], addr[1]
        if not port:
            return
        answer = self.responder.respond(datagram, host, self.clock.seconds())
        if answer is not None:
            try:
                self.transport.write(answer, (host, port))
            except OSError as error:
                log.info("discovery answer to {host} failed: {error}", host=host, error=error)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class DiscoveryService(Service):
    """Answers discovery queries on UDP `udp_port` once the lobby's TCP listener is bound,
    with that listener's port. Off (with a log line) when the listener is on loopback or the
    UDP port is taken; the lobby runs either way."""

    def __init__(
        self,
        reactor: Any,
        listening: Deferred[IListeningPort],
        name: str,
        udp_port: int = DISCOVERY_PORT,
    ) -> None:
        self.reactor = reactor
        self.listening = listening
        self.lobby_name = check_lobby_name(name)  # (`name` is the service's own name)
        self.udp_port_number = udp_port
        self.responder: DiscoveryResponder | None = None
        self._udp: Any = None

    def startService(self) -> None:
        super().startService()

        def bound(port: IListeningPort) -> IListeningPort:
            self._answer_for(port)
            return port  # the listener's other waiters get the port too

        self.listening.addCallback(bound)

    def _answer_for(self, port: IListeningPort) -> None:
        if not self.running:
            return
        address: Any = port.getHost()
        host = getattr(address, "host", "")
        if _is_loopback(host):
            log.info("LAN discovery off: the lobby listens on {host} only", host=host)
            return
        specific = None
        try:
            if not ipaddress.ip_address(host).is_unspecified and ":" not in host:
                specific = host
        except ValueError:
            pass
        self.responder = DiscoveryResponder(
            self.lobby_name, address.port, specific, now=self.reactor.seconds()
        )
        try:
            self._udp = self.reactor.listenUDP(
                self.udp_port_number, DiscoveryProtocol(self.responder, self.reactor)
            )
        except CannotListenError as error:
            log.warn(
                "LAN discovery off: UDP port {port} is in use ({error}); players must name "
                "this lobby's address",
                port=self.udp_port_number,
                error=error.socketError,
            )
            return
        log.info(
            "answering LAN discovery on UDP port {udp} as {name!r}",
            udp=self._udp.getHost().port,
            name=self.lobby_name,
        )

    @property
    def udp_port(self) -> int | None:
        return None if self._udp is None else int(self._udp.getHost().port)

    def stopService(self) -> Deferred[Any]:
        super().stopService()
        udp, self._udp = self._udp, None
        return maybeDeferred(udp.stopListening) if udp is not None else succeed(None)
