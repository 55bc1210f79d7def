"""The lobby as a Twisted service tree: a listener on an endpoint string (the lobby's TLS and
the relay share its port), and an expiry timer."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from twisted.application.internet import TimerService
from twisted.application.service import MultiService, Service
from twisted.internet.defer import Deferred, DeferredList, maybeDeferred
from twisted.internet.endpoints import serverFromString
from twisted.internet.interfaces import IListeningPort, IReactorTime, IStreamServerEndpoint
from twisted.python import usage

from client.net import accept, load_or_create_file, lobby_key_path, version_line
from lobby.discovery import DISCOVERY_PORT, DiscoveryService, check_lobby_name, default_lobby_name
from lobby.limits import LobbyLimits
from lobby.relay import Relay, RelayFactory, SharedPort
from lobby.rooms import Lobby
from lobby.server import LobbyFactory
from protocol.identity import Identity, IdentityError

DEFAULT_LISTEN = "tcp:7777"
_DEFAULTS = LobbyLimits()


class LobbyOptions(usage.Options):
    synopsis = "Usage: bean-lobby [--listen ENDPOINT] [options]"
    longdesc = (
        "bean-lobby introduces Bohnanza players on a LAN: they say hello, gather in rooms, and "
        "when a room is full and ready every member gets the roster; the game itself is played "
        "between the players' own machines. The first line on stdout says where it listens."
    )
    optFlags: ClassVar[list[list[Any]]] = [
        ["quiet", "q", "log only warnings and errors"],
        ["no-discovery", None, "do not answer LAN discovery (bean-client connect with no host)"],
        ["no-relay", None, "do not relay links between players who cannot reach each other"],
    ]
    optParameters: ClassVar[list[list[Any]]] = [
        ["listen", "l", DEFAULT_LISTEN, "Twisted endpoint to listen on, e.g. tcp:7777 or tcp:0"],
        ["max-connections", None, _DEFAULTS.max_connections, "open connections at most", int],
        ["max-players", None, _DEFAULTS.max_players, "players (names) at most", int],
        ["max-rooms", None, _DEFAULTS.max_rooms, "waiting rooms at most", int],
        ["hello-seconds", None, _DEFAULTS.hello_seconds, "time to say hello", float],
        ["idle-seconds", None, _DEFAULTS.idle_seconds, "silence before a drop", int],
        ["rate", None, _DEFAULTS.messages_per_second, "messages/second per client", float],
        ["burst", None, _DEFAULTS.message_burst, "messages a client may send at once", int],
        [
            "relay-bytes",
            None,
            _DEFAULTS.relay_bytes_per_table,
            "bytes the relay carries for one table at most",
            int,
        ],
        [
            "relay-links",
            None,
            _DEFAULTS.relay_links_per_table,
            "connections the relay splices for one table at once (two per link)",
            int,
        ],
        ["name", None, None, "the name LAN discovery shows (default: bean-lobby on HOSTNAME)"],
        ["discovery-port", None, DISCOVERY_PORT, "UDP port that LAN discovery answers on", int],
        [
            "key-file",
            None,
            None,
            "the lobby's own key, which clients remember (made on first start; default "
            "$XDG_CONFIG_HOME/bohnanza-p2p/lobby/lobby.key)",
        ],
    ]

    def opt_version(self) -> None:
        """Say this program's version and the protocol version it speaks, and exit."""
        print(version_line("bean-lobby"))
        sys.exit(0)

    def postOptions(self) -> None:
        self["discovery"] = not self["no-discovery"]
        self["relay"] = not self["no-relay"]
        path = Path(self["key-file"]) if self["key-file"] else lobby_key_path()
        try:
            self["identity"] = load_or_create_file(path)
        except (IdentityError, OSError) as error:
            raise usage.UsageError(f"--key-file: {error}") from None
        if self["name"] is not None:
            try:
                check_lobby_name(self["name"])
            except ValueError as error:
                raise usage.UsageError(f"--name: {error}") from None
        try:
            self["limits"] = limits_from(self)
        except ValueError as error:
            raise usage.UsageError(str(error)) from None


def limits_from(options: Mapping[str, Any]) -> LobbyLimits:
    """The limits named in parsed options; the rest keep their defaults."""
    return LobbyLimits(
        max_connections=options["max-connections"],
        max_players=options["max-players"],
        max_rooms=options["max-rooms"],
        hello_seconds=options["hello-seconds"],
        idle_seconds=options["idle-seconds"],
        messages_per_second=options["rate"],
        message_burst=options["burst"],
        relay_bytes_per_table=options["relay-bytes"],
        relay_links_per_table=options["relay-links"],
    )


class ListeningService(Service):
    """Listens on an endpoint while running. `listening` fires with the port once bound, so
    that a caller can learn the real port of `tcp:0`; it fails if the endpoint cannot bind."""

    def __init__(self, endpoint: IStreamServerEndpoint, factory: LobbyFactory, front: Any) -> None:
        self.endpoint = endpoint
        self.factory = factory  # the lobby's own; `front` is what listens (TLS, the relay)
        self.front = front
        self.listening: Deferred[IListeningPort] = Deferred()
        self._port: IListeningPort | None = None

    def startService(self) -> None:
        super().startService()
        bound: Deferred[IListeningPort] = self.endpoint.listen(self.front)

        def remember(port: IListeningPort) -> IListeningPort:
            self._port = port
            return port

        bound.addCallback(remember).chainDeferred(self.listening)

    def stopService(self) -> Deferred[Any]:
        super().stopService()
        stopping: list[Deferred[Any]] = [self.factory.close_all()]
        if isinstance(self.front, SharedPort):
            stopping.append(self.front.close_all())
        if self._port is not None:
            stopping.append(maybeDeferred(self._port.stopListening))
            self._port = None
        return DeferredList(stopping, consumeErrors=True)


def makeService(
    options: Mapping[str, Any],
    reactor: Any = None,
    clock: IReactorTime | None = None,
    *,
    lobby: Lobby | None = None,
    relay: Relay | None = None,
) -> MultiService:
    """The lobby service: `options` as parsed by LobbyOptions (or any mapping with `listen`
    and, optionally, `limits`; `identity`, the lobby's key (without it, a key for this run
    only); `discovery` true adds LAN discovery, with `name` and `discovery-port`; `relay`
    false turns the relay off). `clock` drives expiry (tests pass task.Clock); `lobby` and
    `relay` replace the lobby's state machine and relay (the tests' hostile lobbies)."""
    if reactor is None:
        from twisted.internet import reactor as global_reactor

        reactor = global_reactor
    limits: LobbyLimits = options.get("limits") or LobbyLimits()
    clock = clock or reactor
    relay = relay or Relay(limits, clock, enabled=options.get("relay", True))
    factory = LobbyFactory(limits, clock, lobby, relay)
    identity: Identity = options.get("identity") or Identity.generate()
    service = MultiService()
    service.setName("bean-lobby")
    front = SharedPort(
        accept(factory, identity, False, reactor),
        RelayFactory(relay),
        clock,
        limits.max_connections,
        limits.hello_seconds,
    )
    listener = ListeningService(
        serverFromString(reactor, options.get("listen", DEFAULT_LISTEN)), factory, front
    )
    listener.setName("listener")
    listener.setServiceParent(service)

    def tick() -> None:
        front.tick()
        factory.tick()

    timer = TimerService(limits.tick_seconds, tick)
    timer.clock = clock
    timer.setName("expiry")
    timer.setServiceParent(service)
    if options.get("discovery"):
        name = options.get("name") or default_lobby_name()
        port = options.get("discovery-port", DISCOVERY_PORT)
        finder = DiscoveryService(reactor, listener.listening, name, port)
        finder.setName("discovery")
        finder.setServiceParent(service)
    return service
