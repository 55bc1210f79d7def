"""Sealed links over Twisted: the TLS endpoints of the peer mesh and of the lobby client.

The contexts are protocol.sealed's (TLS 1.3 only, Ed25519 certificates made from identity
keys); this module hands them to Twisted's TLS (`TLSMemoryBIOFactory`, `wrapClientTLS`),
which encrypts and checks every byte after the handshake and works with producers and the
asyncio reactor. After the handshake, `transport.getHandle()` is the pyOpenSSL connection:
`peer_key` and `channel_binding` read it.

`UNSEALED_LINKS_FOR_BENCHMARKS_ONLY` turns the peer links back into plain TCP with no check of
any key: `scripts/bench game` sets it in its own bot processes to measure what sealing costs.
No command line reaches it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from OpenSSL import SSL
from twisted.internet.endpoints import wrapClientTLS
from twisted.internet.interfaces import (
    IOpenSSLClientConnectionCreator,
    IOpenSSLServerConnectionCreator,
    IProtocolFactory,
    IStreamClientEndpoint,
)
from twisted.protocols.tls import TLSMemoryBIOFactory
from zope.interface import implementer

from protocol import sealed
from protocol.identity import Identity

UNSEALED_LINKS_FOR_BENCHMARKS_ONLY = False


@implementer(IOpenSSLClientConnectionCreator)
class _Dialling:
    def __init__(self, context: SSL.Context) -> None:
        self.context = context

    def clientConnectionForTLS(self, tls_protocol: Any) -> SSL.Connection:
        return SSL.Connection(self.context, None)


@implementer(IOpenSSLServerConnectionCreator)
class _Accepting:
    def __init__(self, context: SSL.Context) -> None:
        self.context = context

    def serverConnectionForTLS(self, tls_protocol: Any) -> SSL.Connection:
        return SSL.Connection(self.context, None)


def now() -> datetime:
    return datetime.now(UTC)


def dial(
    endpoint: IStreamClientEndpoint,
    identity: Identity | None,
    check_peer: sealed.KeyCheck,
    reactor: Any,
) -> IStreamClientEndpoint:
    """`endpoint` sealed: this side shows `identity`'s certificate (None: none, as to the
    lobby), and the handshake fails unless the other side's key passes `check_peer`."""
    context = sealed.context(identity, now(), check_peer)
    return wrapClientTLS(_Dialling(context), endpoint, reactor)


class _AcceptingFactory(TLSMemoryBIOFactory):
    """Twisted's TLS factory, but a connection the wrapped factory refuses (builds no
    protocol for) is closed at once, as it would be without TLS."""

    def buildProtocol(self, addr: Any) -> Any:
        inner = self.wrappedFactory.buildProtocol(addr)
        return None if inner is None else self.protocol(self, inner)


def accept(
    factory: IProtocolFactory, identity: Identity, clients_show_keys: bool, reactor: Any
) -> Any:
    """`factory` sealed, to listen with: this side shows `identity`'s certificate; with
    `clients_show_keys`, every client must show an Ed25519 certificate (whose key the
    protocol compares with the one it expects, once it knows which that is)."""
    check = (lambda key: True) if clients_show_keys else None
    context = sealed.context(identity, now(), check)
    return _AcceptingFactory(_Accepting(context), False, factory, reactor)


def connection_of(transport: Any) -> SSL.Connection | None:
    """The pyOpenSSL connection under a sealed transport (None under a plain one)."""
    handle = getattr(transport, "getHandle", None)
    connection = handle() if handle is not None else None
    return connection if isinstance(connection, SSL.Connection) else None


def peer_key(transport: Any) -> bytes | None:
    connection = connection_of(transport)
    return None if connection is None else sealed.peer_key(connection)


def channel_binding(transport: Any) -> bytes:
    """The TLS exporter value of a sealed transport (empty bytes for a plain one)."""
    connection = connection_of(transport)
    return b"" if connection is None else sealed.channel_binding(connection)


def integrity_failure(reason: Any) -> bool:
    """Whether a connection ended because TLS refused its bytes (tampered with, or broken)."""
    return bool(getattr(reason, "check", lambda *_: None)(SSL.Error))
