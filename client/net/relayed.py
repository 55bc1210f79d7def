"""The ways a seat's link may travel: directly to the peer's address, or through the lobby's
relay (lobby/relay.py, protocol/relay.py) when the peers cannot reach each other.

These are Twisted client endpoints, below the mesh's link logic: whichever way the bytes go,
the mesh runs the same pinned TLS link, the same hellos and the same frames over them.

- `RelayEndpoint`: a TCP connection to the lobby that asks for one link (its pair id and
  secret, this end's role) and, once the lobby has spliced it to the other end, is that link;
- `DirectFirst`: the peer's address first (every address its name resolves to), and the relay
  if the direct attempt has failed or has not connected within `relay_after` seconds.
"""

from __future__ import annotations

import secrets
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.interfaces import IProtocolFactory, IStreamClientEndpoint
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.python.failure import Failure
from zope.interface import implementer

from client.net.lan_checks import explain_lobby_error
from protocol.relay import (
    ANSWER_BYTES,
    STATUS_WORDS,
    RelayFormatError,
    RelayRole,
    RelayStatus,
    decode_answer,
    encode_request,
)
from protocol.relay import PAIR_BYTES as RELAY_PAIR_BYTES
from protocol.relay import SECRET_BYTES as RELAY_SECRET_BYTES

RELAY_AFTER = 3.0  # seconds a direct dial may take before the relay is tried too
RELAY_CONNECT_TIMEOUT = 10.0  # to open the TCP connection to the lobby
RELAY_WAIT = 45.0  # the lobby answers within its relay_wait_seconds (30 by default)


class RelayRefused(Exception):
    """The lobby's relay did not join the link: its answer, in words."""

    def __init__(self, status: RelayStatus | None, words: str) -> None:
        super().__init__(words)
        self.status = status


class NoPath(Exception):
    """Neither way reached the peer: why the direct dial failed, and why the relay did."""

    def __init__(self, direct: BaseException, relayed: BaseException | None) -> None:
        super().__init__(str(direct))
        self.direct = direct
        self.relayed = relayed


class _AskRelay(Protocol):
    """The connection to the relay: the request, the answer, then the link's own protocol."""

    def __init__(self, request: bytes, factory: IProtocolFactory, done: Deferred[Any]) -> None:
        self.request = request
        self.link_factory = factory  # (`factory` is Twisted's: the one that built this)
        self.done = done
        self.answer = b""
        self.inner: Any = None

    def connectionMade(self) -> None:
        self.transport.write(self.request)

    def dataReceived(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.dataReceived(data)
            return
        self.answer += data
        if len(self.answer) < ANSWER_BYTES:
            return
        answer, rest = self.answer[:ANSWER_BYTES], self.answer[ANSWER_BYTES:]
        try:
            status = decode_answer(answer)
        except RelayFormatError as error:
            self._refused(RelayRefused(None, f"the lobby's relay answered nonsense ({error})"))
            return
        if status != RelayStatus.SPLICED:
            self._refused(RelayRefused(status, STATUS_WORDS[status]))
            return
        inner = self.link_factory.buildProtocol(self.transport.getPeer())
        if inner is None:
            self.transport.abortConnection()
            return
        self.inner = inner
        inner.makeConnection(self.transport)
        if not self.done.called:
            self.done.callback(inner)
        if rest:
            inner.dataReceived(rest)

    def _refused(self, error: RelayRefused) -> None:
        if not self.done.called:
            self.done.errback(error)
        self.transport.abortConnection()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        if self.inner is not None:
            self.inner.connectionLost(reason)
        elif not self.done.called:
            words = "the lobby's relay closed the connection before joining the link"
            self.done.errback(RelayRefused(None, words))


@implementer(IStreamClientEndpoint)
class RelayEndpoint:
    """One link through the lobby's relay at host:port: this end `role` of the link `pair`,
    whose two seats both know `secret`. Connects once the lobby has spliced both ends (fails
    with RelayRefused otherwise)."""

    def __init__(
        self,
        reactor: Any,
        host: str,
        port: int,
        role: RelayRole,
        pair: bytes,
        secret: bytes,
        wait: float = RELAY_WAIT,
    ) -> None:
        self.reactor = reactor
        self.host = host
        self.port = port
        self.request = encode_request(role, pair, secret)
        self.wait = wait

    def connect(self, factory: IProtocolFactory) -> Deferred[Any]:
        asking: list[_AskRelay] = []

        def cancel(_: Deferred[Any]) -> None:
            connecting.cancel()
            for protocol in asking:
                if protocol.transport is not None:
                    protocol.transport.abortConnection()

        done: Deferred[Any] = Deferred(cancel)

        def build() -> _AskRelay:
            protocol = _AskRelay(self.request, factory, done)
            asking.append(protocol)
            return protocol

        tcp = HostnameEndpoint(self.reactor, self.host, self.port, timeout=RELAY_CONNECT_TIMEOUT)
        connecting = tcp.connect(Factory.forProtocol(build))
        connecting.addErrback(lambda failure: None if done.called else done.errback(failure))
        return done.addTimeout(self.wait, self.reactor)


@implementer(IStreamClientEndpoint)
class DirectFirst:
    """The direct endpoint first; the relay (if any) once the direct attempt has failed or
    `relay_after` seconds have passed without it connecting (it is then given up).
    `relayed` says which way the last connection went."""

    def __init__(
        self,
        reactor: Any,
        direct: IStreamClientEndpoint,
        relay: IStreamClientEndpoint | None,
        relay_after: float = RELAY_AFTER,
    ) -> None:
        self.reactor = reactor
        self.direct = direct
        self.relay = relay
        self.relay_after = relay_after
        self.relayed = False
        self.direct_error: BaseException | None = None  # why the last direct attempt failed

    def connect(self, factory: IProtocolFactory) -> Deferred[Any]:
        attempts: list[Deferred[Any]] = []
        timers: list[Any] = []
        given_up: list[bool] = []

        def give_up(_: Deferred[Any]) -> None:
            """The caller cancelled: every attempt and the timer go, and no relay is asked."""
            given_up.append(True)
            stop_timer()
            for attempt in attempts:
                attempt.cancel()

        result: Deferred[Any] = Deferred(give_up)
        self.relayed = False
        self.direct_error = None

        def fall_back() -> None:
            """The direct attempt failed, or was too slow: it is given up for the relay."""
            if result.called or self.relayed or given_up:
                return
            self.relayed = True
            stop_timer()
            if self.direct_error is None:
                self.direct_error = TimeoutError(f"no answer within {self.relay_after:g} s")
            attempts[0].cancel()  # its failure (a cancellation) is then ignored
            assert self.relay is not None
            relaying = self.relay.connect(factory)
            attempts.append(relaying)
            relaying.addCallbacks(succeeded, relay_failed)

        def stop_timer() -> None:
            for timer in timers:
                if timer.active():
                    timer.cancel()

        def succeeded(protocol: Any) -> None:
            stop_timer()
            if result.called:  # given up meanwhile: the connection is not wanted
                protocol.transport.abortConnection()
            else:
                result.callback(protocol)

        def direct_failed(failure: Failure) -> None:
            if self.relayed or result.called:
                return
            self.direct_error = failure.value
            if self.relay is None:
                result.errback(failure)
                return
            fall_back()

        def relay_failed(failure: Failure) -> None:
            if not result.called:
                assert self.direct_error is not None
                result.errback(NoPath(self.direct_error, failure.value))

        direct = self.direct.connect(factory)
        attempts.append(direct)
        if self.relay is not None:
            timers.append(self.reactor.callLater(self.relay_after, fall_back))
        direct.addCallbacks(succeeded, direct_failed)
        return result


async def relay_answers(reactor: Any, host: str, port: int) -> str:
    """Whether the lobby at host:port relays, in words (`netcheck`): it is asked for a link
    with a pair id no table has, which a relaying lobby refuses as unknown."""
    pair, secret = secrets.token_bytes(RELAY_PAIR_BYTES), secrets.token_bytes(RELAY_SECRET_BYTES)
    asking = RelayEndpoint(
        reactor, host, port, RelayRole.DIALS, pair, secret, wait=RELAY_CONNECT_TIMEOUT
    )
    where = f"The lobby at {host}:{port}"
    try:
        protocol = await asking.connect(Factory.forProtocol(Protocol))
    except RelayRefused as refused:
        if refused.status == RelayStatus.UNKNOWN:
            return (
                f"{where} relays: players who cannot reach each other directly are linked "
                "through it."
            )
        if refused.status == RelayStatus.OFF:
            return (
                f"{where} does not relay (it runs with --no-relay): players who cannot reach "
                "each other directly cannot play together there."
            )
        if refused.status == RelayStatus.BUSY:
            return f"{where} relays, but is at its relay budget now."
        return (
            f"{where} did not answer as a bean-lobby relay does: {refused}. Another program "
            "may listen on that port, or the bean-lobby there is older than the relay."
        )
    except Exception as error:
        problem = explain_lobby_error(error, host, port)
        return f"{where} could not be asked whether it relays: {problem}"
    protocol.transport.abortConnection()  # a relay never joins a pair no table has
    return f"{where} joined a link nobody asked for: it is not a bean-lobby relay."
