"""A flood of links at a client's peer port (issue 26, problem 9), as a hostile peer would
send it: links that cost the victim a socket and a TLS handshake each, and never join a game.

    python -m tests.link_flood HOST PORT|- [--links N] [--rate R] [--drip] [--every S]
        [--hold S]

- sealed (the default): N TLS links, each with a fresh identity (the project's own
  `client.net.sealed.dial`), each sending a `peer_hello` for a game nobody plays, and then
  kept open until the victim closes it;
- `--drip`: N plain TCP connections, each sending a real TLS ClientHello one byte every
  `--every` seconds (2 s), so that no handshake ever ends, until the victim closes it.

Every sealed link's identity and TLS context are made before the first link starts, so that
the flood goes as fast as the victim lets it. With `-` for PORT the flood makes them, then
reads the port from its standard input: a test can start it before it knows the victim's
port. The links are started at `--rate` a second. Once all are started, the flood waits up to
`--hold` seconds for the victim to close them, closes the rest itself and prints one JSON
line: how many links it started, how many connected, how many got through the TLS handshake
(and sent their hello), how many the victim closed, the most it held open at once, how long
the victim kept the longest one, and the bytes it sent.

The `Flood` class runs the same flood inside a test's own reactor (`bind` picks the source
address, e.g. one of 127.0.0.0/8, to flood from several addresses).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import resource
import secrets
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from OpenSSL import SSL
from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.error import ConnectError, ConnectingCancelledError
from twisted.internet.interfaces import IHandshakeListener, IStreamClientEndpoint
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.internet.task import LoopingCall, react
from twisted.python.failure import Failure
from zope.interface import implementer

from client.net import sealed
from protocol.identity import Identity
from protocol.messages import PROTOCOL_VERSION, encode, frame
from protocol.peer_messages import HANDSHAKE_MAX_FRAME, PeerHello
from protocol.sealed import context as tls_context

CONNECT_TIMEOUT = 30
TICK = 0.01  # seconds between looks at how many links are due


@dataclass
class Report:
    links: int = 0  # started
    connected: int = 0  # TCP connected (the victim's system answered; the victim may not have
    # taken the connection from it yet)
    sealed: int = 0  # the TLS handshake ended and the hello went out
    failed: int = 0  # the connection could not be made
    why_failed: dict[str, int] = field(default_factory=dict)
    unanswered: int = 0  # the victim had not yet accepted the connection at the end
    cut_by_victim: int = 0  # closed by the victim (some before this side saw them connect)
    most_open: int = 0  # links open at once, at most
    longest_held: float = 0.0  # seconds the victim kept one link open, at most
    bytes_sent: int = 0  # hellos, or dripped bytes (the TLS handshakes not counted)
    seconds: float = 0.0  # from the first link started to the report


def client_hello() -> bytes:
    """The first flight of a real TLS 1.3 handshake with a fresh identity."""
    context = tls_context(Identity.generate(), sealed.now(), lambda key: True)
    connection = SSL.Connection(context, None)
    connection.set_connect_state()
    with contextlib.suppress(SSL.WantReadError):  # it waits for the server's answer
        connection.do_handshake()
    return connection.bio_read(65536)


class _Link(Protocol):
    def __init__(self, flood: Flood) -> None:
        self.flood = flood
        self.opened_at = 0.0
        self.closing = False  # the flood itself closes it

    def connectionMade(self) -> None:
        flood = self.flood
        self.opened_at = flood.reactor.seconds()
        flood.open.add(self)
        flood.report.connected += 1
        flood.report.most_open = max(flood.report.most_open, len(flood.open))

    def write(self, data: bytes) -> None:
        self.flood.report.bytes_sent += len(data)
        self.transport.write(data)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        flood = self.flood
        flood.open.discard(self)
        if not self.closing:
            flood.report.cut_by_victim += 1
            held = flood.reactor.seconds() - self.opened_at
            flood.report.longest_held = max(flood.report.longest_held, held)
        flood.settled()


@implementer(IHandshakeListener)
class _SealedLink(_Link):
    """TLS with a fresh key, then a hello for a game nobody plays."""

    def handshakeCompleted(self) -> None:
        self.flood.report.sealed += 1
        hello = PeerHello(PROTOCOL_VERSION, secrets.token_bytes(16), 0)
        self.write(frame(encode(hello), HANDSHAKE_MAX_FRAME))


class _DrippingLink(_Link):
    """A ClientHello, one byte at a time."""

    def connectionMade(self) -> None:
        super().connectionMade()
        self.pending = self.flood.hello
        self.dripping = LoopingCall(self._drip)
        self.dripping.clock = self.flood.reactor
        self.dripping.start(self.flood.every)

    def _drip(self) -> None:
        if self.pending:
            self.write(self.pending[:1])
            self.pending = self.pending[1:]

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        if self.dripping.running:
            self.dripping.stop()
        super().connectionLost(reason)


@implementer(IStreamClientEndpoint)
class _ToTheVictim:
    """The victim's port as the flood knows it when the link starts (it may learn it late)."""

    def __init__(self, flood: Flood) -> None:
        self.flood = flood

    def connect(self, factory: Any) -> Deferred[Any]:
        connecting: Deferred[Any] = self.flood.plain_endpoint().connect(factory)
        return connecting


class Flood:
    """`links` links at host, `rate` a second, from `start(port)`; `done` fires with the
    report."""

    def __init__(
        self,
        reactor: Any,
        host: str,
        links: int,
        rate: float,
        drip: bool = False,
        every: float = 2.0,
        hold: float = 15.0,
        bind: str | None = None,
    ) -> None:
        self.reactor = reactor
        self.host, self.port, self.bind = host, 0, bind
        self.drip, self.every, self.hold = drip, every, hold
        self.wanted, self.rate = links, rate
        self.hello = client_hello() if drip else b""
        fresh = () if drip else range(links)
        self.sealed_endpoints = [
            sealed.dial(_ToTheVictim(self), Identity.generate(), lambda key: True, reactor)
            for _ in fresh
        ]
        self.report = Report()
        self.open: set[_Link] = set()
        self.attempts: set[Deferred[Any]] = set()  # connections not yet made
        self.done: Deferred[Report] = Deferred()
        self._began = 0.0
        self._starting = LoopingCall(self._start_due)
        self._starting.clock = reactor
        self._give_up: Any = None

    def start(self, port: int) -> Deferred[Report]:
        self.port = port
        self._began = self.reactor.seconds()
        self._starting.start(TICK)
        return self.done

    def stop(self) -> None:
        """End the flood now: nothing more is started, every link is closed; the report
        comes once all are gone."""
        if self._starting.running:
            self._starting.stop()
        self.wanted = self.report.links
        for attempt in list(self.attempts):
            attempt.cancel()
        for link in list(self.open):
            link.closing = True
            link.transport.abortConnection()
        self.settled()

    def _start_due(self) -> None:
        due = min(self.wanted, int((self.reactor.seconds() - self._began) * self.rate) + 1)
        while self.report.links < due:
            self._start_one()
        if self.report.links >= self.wanted:
            self._starting.stop()
            self._give_up = self.reactor.callLater(self.hold, self.stop)
            self.settled()

    def _start_one(self) -> None:
        self.report.links += 1
        if self.drip:
            endpoint: Any = self.plain_endpoint()
            factory = Factory.forProtocol(lambda: _DrippingLink(self))
        else:
            endpoint = self.sealed_endpoints.pop()
            factory = Factory.forProtocol(lambda: _SealedLink(self))
        attempt = endpoint.connect(factory)
        self.attempts.add(attempt)
        attempt.addBoth(self._attempted, attempt)

    def plain_endpoint(self) -> TCP4ClientEndpoint:
        bind = None if self.bind is None else (self.bind, 0)
        return TCP4ClientEndpoint(
            self.reactor, self.host, self.port, CONNECT_TIMEOUT, bindAddress=bind
        )

    def _attempted(self, result: object, attempt: Deferred[Any]) -> None:
        self.attempts.discard(attempt)
        if isinstance(result, Failure):
            if result.check(CancelledError, ConnectingCancelledError):
                self.report.unanswered += 1
            elif result.check(ConnectError) and result.value.osError == errno.ECONNRESET:
                self.report.cut_by_victim += 1  # accepted and cut before this side saw it
            else:
                self.report.failed += 1
                why = f"{result.type.__name__}: {result.getErrorMessage()[:60]}"
                self.report.why_failed[why] = self.report.why_failed.get(why, 0) + 1
        self.settled()

    def settled(self) -> None:
        """Report once every link is started and none is open or connecting."""
        if self.report.links >= self.wanted and not self.open and not self.attempts:
            self._finish()

    def _finish(self) -> None:
        if self.done.called:
            return
        if self._give_up is not None and self._give_up.active():
            self._give_up.cancel()
        self.report.seconds = round(self.reactor.seconds() - self._began, 2)
        self.report.longest_held = round(self.report.longest_held, 2)
        self.done.callback(self.report)


def _more_files() -> None:
    """The flood may hold thousands of sockets: lift this process's own limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _main(reactor: Any, args: argparse.Namespace) -> None:
    flood = Flood(reactor, args.host, args.links, args.rate, args.drip, args.every, args.hold)
    port = int(sys.stdin.readline() if args.port == "-" else args.port)
    report = await flood.start(port)
    print(json.dumps(asdict(report)), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", help="the victim's port, or - to read it once ready")
    parser.add_argument("--links", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=500.0, help="links started a second")
    parser.add_argument("--drip", action="store_true", help="plain TCP, one byte at a time")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between drips")
    parser.add_argument("--hold", type=float, default=15.0, help="seconds to wait at the end")
    args = parser.parse_args(argv)
    _more_files()
    react(lambda reactor: Deferred.fromCoroutine(_main(reactor, args)))


if __name__ == "__main__":
    main(sys.argv[1:])
