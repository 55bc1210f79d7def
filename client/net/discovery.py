"""LAN discovery, the client's side: find the lobbies on this LAN without knowing an address.

    lobbies = await find_lobbies(reactor, timeout=1.5)   # [FoundLobby(name, host, port), ...]

A query (lobby/discovery.py has the format) goes to the broadcast address of every IPv4
interface that is up and can broadcast (never loopback), three times over the timeout because
UDP may lose one; every lobby that hears it answers by unicast. Only answers that carry this
search's random nonce count, so a stray or forged datagram from an earlier search is ignored,
as is anything malformed. Broadcasts stay on the local link: routers do not forward them.

`python -m client.net.discovery [--timeout S] [--json]` prints what it finds (`bean-client
connect` with no host will call `find_lobbies`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import socket
import struct
import sys
from dataclasses import asdict, dataclass
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.protocol import DatagramProtocol

from lobby.discovery import (
    ANSWER_MAX_BYTES,
    DISCOVERY_PORT,
    NONCE_BYTES,
    DiscoveryFormatError,
    decode_answer,
    encode_query,
)

LIMITED_BROADCAST = "255.255.255.255"
DEFAULT_TIMEOUT = 1.5
ATTEMPTS = 3

# Linux ioctls on an IPv4 socket; struct ifreq: 16-byte name, then the union.
_SIOCGIFFLAGS = 0x8913
_SIOCGIFBRDADDR = 0x8919
_IFF_UP, _IFF_BROADCAST, _IFF_LOOPBACK = 0x1, 0x2, 0x8


@dataclass(frozen=True, order=True)
class FoundLobby:
    name: str
    host: str
    port: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def broadcast_targets() -> list[str]:
    """The directed broadcast address of every IPv4 interface that is up, not loopback, and
    can broadcast; the limited broadcast (255.255.255.255) when none can be listed (not
    Linux) or none has one."""
    found: set[str] = set()
    try:
        import fcntl

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _, name in socket.if_nameindex():
                request = struct.pack("256s", name.encode()[:15])
                try:
                    flags = struct.unpack_from("H", fcntl.ioctl(probe, _SIOCGIFFLAGS, request), 16)
                    wanted = flags[0] & (_IFF_UP | _IFF_BROADCAST | _IFF_LOOPBACK)
                    if wanted != _IFF_UP | _IFF_BROADCAST:
                        continue
                    reply = fcntl.ioctl(probe, _SIOCGIFBRDADDR, request)
                except OSError:
                    continue  # no IPv4 address on this interface
                address = socket.inet_ntoa(reply[20:24])
                if address != "0.0.0.0":
                    found.add(address)
    except (ImportError, OSError):
        pass
    return sorted(found) or [LIMITED_BROADCAST]


class _Search(DatagramProtocol):
    def __init__(self, nonce: bytes) -> None:
        self.nonce = nonce
        self.found: dict[tuple[str, int], FoundLobby] = {}

    def datagramReceived(self, datagram: bytes, addr: Any) -> None:
        if len(datagram) > ANSWER_MAX_BYTES:
            return
        try:
            answer = decode_answer(datagram)
        except DiscoveryFormatError:
            return
        if not secrets.compare_digest(answer.nonce, self.nonce):
            return
        host = answer.host or addr[0]
        self.found.setdefault((host, answer.port), FoundLobby(answer.name, host, answer.port))


def find_lobbies(
    reactor: Any,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    port: int = DISCOVERY_PORT,
    targets: list[str] | None = None,
    attempts: int = ATTEMPTS,
) -> Deferred[list[FoundLobby]]:
    """Ask the LAN for lobbies for `timeout` seconds; fires with those that answered (sorted,
    one per address). `targets` replaces the broadcast addresses (tests use 127.0.0.1)."""
    search = _Search(secrets.token_bytes(NONCE_BYTES))
    udp = reactor.listenUDP(0, search)
    udp.setBroadcastAllowed(True)
    query = encode_query(search.nonce)
    addresses = broadcast_targets() if targets is None else list(targets)
    calls: list[IDelayedCall] = []

    def send() -> None:
        for address in addresses:
            # An interface that cannot send now (no route, down) must not stop the others.
            with contextlib.suppress(OSError):
                udp.write(query, (address, port))

    def finish() -> None:
        for call in calls:
            if call.active():
                call.cancel()
        stopped = maybeDeferred(udp.stopListening)
        stopped.addBoth(lambda _: sorted(search.found.values())).chainDeferred(result)

    def cancel(_: Deferred[Any]) -> None:
        for call in calls:
            if call.active():
                call.cancel()
        udp.stopListening()

    result: Deferred[list[FoundLobby]] = Deferred(cancel)
    send()
    calls.extend(reactor.callLater(timeout * i / attempts, send) for i in range(1, attempts))
    calls.append(reactor.callLater(timeout, finish))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m client.net.discovery",
        description="List the bean-lobby servers on this LAN.",
    )
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds")
    parser.add_argument("--port", type=int, default=DISCOVERY_PORT, help="UDP port")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from twisted.internet import task

    async def run(reactor: Any) -> None:
        found = await find_lobbies(reactor, args.timeout, port=args.port)
        if args.json:
            print(json.dumps([asdict(lobby) for lobby in found]), flush=True)
        elif found:
            for lobby in found:
                print(f"{lobby.name}\t{lobby.address}", flush=True)
        else:
            print(
                f"no lobby answered on this LAN within {args.timeout:g} s (UDP port {args.port});"
                " is bean-lobby running on this network, with discovery on?",
                file=sys.stderr,
            )
            raise SystemExit(1)

    task.react(lambda reactor: Deferred.fromCoroutine(run(reactor)))


if __name__ == "__main__":
    main()
