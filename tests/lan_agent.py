"""Small programs the LAN tests run on namespace hosts; each prints JSON lines on stdout.

python -m tests.lan_agent player --lobby HOST:PORT --name Ann --seats 3 --peer-port 4000
    The real lobby client (client/net/lobby_client.py) says hello and quick-matches; at game
    start it prints the roster and the LAN problems client/net/lan_checks.py finds in it, then
    opens a TCP link to every other seat at the address the roster gives (each side says
    its name on the link) and serves the links the others open, until all arrived or
    --serve-seconds passed. It tests the LAN itself (who is seen where, who reaches whom),
    apart from the game; a game across the LAN runs `bean-client bot` on the hosts.
    --listen-host 127.0.0.1 makes the classic mistake; --plugged makes the peer port drop
    connections like a firewall (a listener whose accept queue is full: the kernel drops
    new SYNs, so the others time out; this kernel has no netfilter or tc filters).
python -m tests.lan_agent lobby-connect HOST:PORT [--timeout S]
python -m tests.lan_agent dial HOST:PORT [--timeout S]
    One connection attempt; prints how it ended and, on failure, the explanation.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from typing import Any

from twisted.internet import task
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.protocols.basic import LineOnlyReceiver
from twisted.python.failure import Failure

from client.net import (
    LanProblem,
    LobbyClient,
    check_listen_address,
    check_roster,
    explain_bind_error,
    explain_lobby_error,
    explain_no_incoming_links,
    explain_peer_link_failure,
    parse_lobby_address,
)
from protocol.identity import Identity


def say(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def problem_fields(problem: LanProblem) -> dict[str, str]:
    return {"kind": type(problem).__name__, "problem": str(problem)}


class _Served(LineOnlyReceiver):
    """The listening side of a link: reads the dialer's name, answers with ours."""

    delimiter = b"\n"

    def __init__(self, agent: Player) -> None:
        self.agent = agent

    def lineReceived(self, line: bytes) -> None:
        self.agent.reached_by.append(line.decode(errors="replace"))
        self.sendLine(self.agent.name.encode())
        self.transport.loseConnection()
        self.agent.changed()


class _Dialer(LineOnlyReceiver):
    delimiter = b"\n"

    def __init__(self, own_name: str) -> None:
        self.own_name = own_name
        self.answer: Deferred[str] = Deferred()

    def connectionMade(self) -> None:
        self.sendLine(self.own_name.encode())

    def lineReceived(self, line: bytes) -> None:
        if not self.answer.called:
            self.answer.callback(line.decode(errors="replace"))
        self.transport.loseConnection()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        if not self.answer.called:
            self.answer.errback(reason)


class Player:
    def __init__(self, reactor: Any, args: argparse.Namespace) -> None:
        self.reactor = reactor
        self.args = args
        self.name: str = args.name
        self.reached_by: list[str] = []
        self._waiters: list[tuple[int, Deferred[None]]] = []

    def changed(self) -> None:
        for count, waiter in list(self._waiters):
            if len(self.reached_by) >= count and not waiter.called:
                waiter.callback(None)

    def served(self, count: int, seconds: float) -> Deferred[None]:
        waiter: Deferred[None] = Deferred()
        self._waiters.append((count, waiter))
        self.changed()
        return waiter.addTimeout(seconds, self.reactor)

    def listen(self) -> Any:
        args = self.args
        if args.plugged:
            # A listener whose accept queue (backlog 0) holds one connection nobody accepts:
            # the kernel silently drops every further SYN, as a DROP rule would.
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((args.listen_host, args.peer_port))
            listener.listen(0)
            plug_host = "127.0.0.1" if args.listen_host in ("0.0.0.0", "") else args.listen_host
            plug = socket.create_connection((plug_host, args.peer_port), timeout=5)
            return (listener, plug)
        factory = Factory.forProtocol(lambda: _Served(self))
        return self.reactor.listenTCP(args.peer_port, factory, interface=args.listen_host)

    async def dial(self, seat: Any) -> None:
        started = time.monotonic()
        dialer = _Dialer(self.name)
        endpoint = TCP4ClientEndpoint(self.reactor, seat.host, seat.port, self.args.dial_timeout)
        try:
            await endpoint.connect(Factory.forProtocol(lambda: dialer))
            said = await dialer.answer.addTimeout(self.args.dial_timeout, self.reactor)
        except Exception as error:
            problem = explain_peer_link_failure(seat.name, seat.host, seat.port, error, True)
            say(
                "unreachable",
                seat=seat.name,
                error=repr(error),
                seconds=time.monotonic() - started,
                **problem_fields(problem),
            )
            return
        say("reached", seat=seat.name, said=said, seconds=time.monotonic() - started)

    async def run(self) -> int:
        args = self.args
        try:
            listening = self.listen()
        except Exception as error:
            say("cannot-listen", **problem_fields(explain_bind_error(error, *self.where())))
            return 1
        say("listening", host=args.listen_host, port=args.peer_port)
        lobby_host, lobby_port = parse_lobby_address(args.lobby)
        problem = check_listen_address(args.listen_host, lobby_host)
        if problem is not None:
            say("problem", **problem_fields(problem))
        client = LobbyClient(self.reactor, Identity.generate())
        try:
            try:
                await client.connect(lobby_host, lobby_port, timeout=args.dial_timeout)
            except Exception as error:
                problem = explain_lobby_error(error, lobby_host, lobby_port)
                say("no-lobby", error=repr(error), **problem_fields(problem))
                return 1
            welcome = await client.hello(self.name, args.peer_port)
            say("welcome", host=welcome.host)
            game = client.next_game()
            await client.quick_match(args.seats)
            start = await game.addTimeout(args.match_seconds, self.reactor)
            seats = [{"name": s.name, "host": s.host, "port": s.port} for s in start.seats]
            problems = check_roster(start.seats, self.name, args.listen_host)
            say("roster", seats=seats, problems=[problem_fields(p) for p in problems])
            others = [seat for seat in start.seats if seat.name != self.name]
            await gatherResults([Deferred.fromCoroutine(self.dial(seat)) for seat in others])
            try:
                await self.served(len(others), args.serve_seconds)
            except Exception:
                missing = sorted({s.name for s in others} - set(self.reached_by))
                problem = explain_no_incoming_links(args.peer_port, missing, args.serve_seconds)
                say("not-reached", missing=missing, **problem_fields(problem))
            say("served", reached_by=sorted(self.reached_by))
        finally:
            await client.close()
            if isinstance(listening, tuple):
                for sock in listening:
                    sock.close()
            else:
                await listening.stopListening()
        return 0

    def where(self) -> tuple[str, int]:
        return self.args.listen_host, self.args.peer_port


async def lobby_connect(reactor: Any, args: argparse.Namespace) -> int:
    host, port = parse_lobby_address(args.address)
    client = LobbyClient(reactor, Identity.generate())
    started = time.monotonic()
    try:
        await client.connect(host, port, timeout=args.timeout)
    except Exception as error:
        problem = explain_lobby_error(error, host, port)
        say(
            "failed",
            error=repr(error),
            seconds=time.monotonic() - started,
            **problem_fields(problem),
        )
        return 0
    say("connected", seconds=time.monotonic() - started)
    await client.close()
    return 0


async def dial(reactor: Any, args: argparse.Namespace) -> int:
    host, port = parse_lobby_address(args.address)
    started = time.monotonic()
    endpoint = TCP4ClientEndpoint(reactor, host, port, args.timeout)
    try:
        link = await endpoint.connect(Factory.forProtocol(Protocol))
    except Exception as error:
        problem = explain_peer_link_failure("the peer", host, port, error, True)
        say(
            "failed",
            error=repr(error),
            seconds=time.monotonic() - started,
            **problem_fields(problem),
        )
        return 0
    say("connected", seconds=time.monotonic() - started)
    link.transport.loseConnection()
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.lan_agent")
    commands = parser.add_subparsers(dest="command", required=True)
    player = commands.add_parser("player")
    player.add_argument("--lobby", required=True)
    player.add_argument("--name", required=True)
    player.add_argument("--seats", type=int, default=3)
    player.add_argument("--peer-port", type=int, default=4000)
    player.add_argument("--listen-host", default="0.0.0.0")
    player.add_argument("--plugged", action="store_true")
    player.add_argument("--dial-timeout", type=float, default=5.0)
    player.add_argument("--serve-seconds", type=float, default=15.0)
    player.add_argument("--match-seconds", type=float, default=30.0)
    for name in ("lobby-connect", "dial"):
        command = commands.add_parser(name)
        command.add_argument("address")
        command.add_argument("--timeout", type=float, default=5.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)

    async def run(reactor: Any) -> None:
        if args.command == "player":
            code = await Player(reactor, args).run()
        elif args.command == "lobby-connect":
            code = await lobby_connect(reactor, args)
        else:
            code = await dial(reactor, args)
        if code:
            raise SystemExit(code)

    task.react(lambda reactor: Deferred.fromCoroutine(run(reactor)))


if __name__ == "__main__":
    main()
