"""The LAN mistakes (client/net/lan_checks.py): each recognised from what real sockets do, on
127.0.0.1 where that shows it and on the namespace LAN where only other hosts do, and each
explained with the fix."""

from __future__ import annotations

import errno
import socket
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults
from twisted.internet.error import CannotListenError
from twisted.internet.protocol import Factory, Protocol

from client.net import LobbyClient
from client.net.lan_checks import (
    AddressNotHere,
    LoopbackListener,
    PortNeedsPrivilege,
    SharedAddress,
    check_listen_address,
    check_roster,
    explain_bind_error,
    explain_lobby_error,
    is_loopback,
)
from protocol.identity import Identity
from tests.netns import lan_fixture  # noqa: F401  (the make_lan fixture)
from tests.processes import BIN, LOCAL, isolated_env
from tests.waiting import within


class Seat(NamedTuple):
    name: str
    host: str
    port: int


def kinds(problems: list[Any]) -> list[str]:
    return [type(problem).__name__ for problem in problems]


# -- pure checks -----------------------------------------------------------------------------


def test_loopback_addresses_are_recognised() -> None:
    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"):
        assert is_loopback(host), host
    for host in ("10.213.0.11", "0.0.0.0", "::", "192.168.1.5", "lobby.local", "fe80::1"):
        assert not is_loopback(host), host


def test_a_loopback_listener_is_fine_only_when_the_lobby_is_on_this_machine() -> None:
    problem = check_listen_address("127.0.0.1", "192.168.1.20")
    assert isinstance(problem, LoopbackListener)
    assert "127.0.0.1" in str(problem) and "0.0.0.0" in str(problem)
    assert check_listen_address("127.0.0.1", "localhost") is None
    assert check_listen_address("0.0.0.0", "192.168.1.20") is None
    assert check_listen_address("192.168.1.7", "192.168.1.20") is None


def test_a_roster_on_one_machine_or_on_a_lan_has_no_problem() -> None:
    local = [Seat("Ann", "127.0.0.1", 4000), Seat("Bob", "127.0.0.1", 4001)]
    assert check_roster(local, "Ann", "127.0.0.1") == []
    lan = [Seat("Ann", "10.0.0.1", 4000), Seat("Bob", "10.0.0.2", 4000)]
    assert check_roster(lan, "Ann", "0.0.0.0") == []


def test_roster_problems_name_the_seat_and_the_fix() -> None:
    seats = [Seat("Ann", "127.0.0.1", 4000), Seat("Bob", "10.0.0.2", 4000)]
    ann = check_roster(seats, "Ann", "127.0.0.1")
    assert kinds(ann) == ["LoopbackListener", "LoopbackAdvertised"]
    assert "Bob at 10.0.0.2" in str(ann[0]) and "0.0.0.0" in str(ann[0])
    assert "LAN address" in str(ann[1])
    bob = check_roster(seats, "Bob", "0.0.0.0")
    assert kinds(bob) == ["LoopbackAdvertised"]
    assert str(bob[0]).startswith("Ann is listed at 127.0.0.1:4000")
    twins = [Seat("Ann", "10.0.0.1", 4000), Seat("Bob", "10.0.0.1", 4000)]
    (shared,) = check_roster(twins, "Ann")
    assert isinstance(shared, SharedAddress) and "own peer port" in str(shared)
    assert str(shared).startswith("Ann and Bob both announced 10.0.0.1:4000")


def test_a_privileged_port_is_explained() -> None:
    problem = explain_bind_error(OSError(errno.EACCES, "Permission denied"), "0.0.0.0", 80)
    assert isinstance(problem, PortNeedsPrivilege) and "1024" in str(problem)


def test_a_refusal_suggests_a_lobby_on_loopback_only_when_the_address_was_not_loopback() -> None:
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert "does not listen on 127.0.0.1 only" in str(explain_lobby_error(refused, "10.0.0.9", 7))
    for host in ("127.0.0.1", "localhost", "::1"):
        problem = str(explain_lobby_error(refused, host, 7777))
        assert "127.0.0.1 only" not in problem, host
        assert problem.startswith(f"this machine ({host}) refused the connection to port 7777")
        assert "bean-lobby is running on this machine" in problem


# -- real sockets on 127.0.0.1 ---------------------------------------------------------------


def test_a_port_in_use_is_explained_with_the_fix() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with pytest.raises(CannotListenError) as failed:
            reactor.listenTCP(port, Factory.forProtocol(Protocol), interface="127.0.0.1")
        problem = explain_bind_error(failed.value, "127.0.0.1", port)
        assert type(problem).__name__ == "PortInUse"
        assert f"port {port} is already in use" in str(problem)
        assert "0 to let the system pick" in str(problem)
    finally:
        holder.close()


def test_an_address_of_another_machine_cannot_be_listened_on() -> None:
    with pytest.raises(CannotListenError) as failed:
        reactor.listenTCP(0, Factory.forProtocol(Protocol), interface="203.0.113.77")
    problem = explain_bind_error(failed.value, "203.0.113.77", 4000)
    assert isinstance(problem, AddressNotHere)
    assert "203.0.113.77 is not an address of this machine" in str(problem)


@pytest_twisted.ensureDeferred
async def test_a_lobby_port_with_nothing_behind_it_is_a_refusal() -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # bound, never listened: the port refuses
    client = LobbyClient(reactor, Identity.generate())
    with pytest.raises(Exception) as failed:
        await within(client.connect("127.0.0.1", port, timeout=5))
    problem = explain_lobby_error(failed.value, "127.0.0.1", port)
    assert type(problem).__name__ == "LobbyRefused"
    assert "no lobby listens there" in str(problem)
    assert "bean-lobby listening on HOST:PORT" in str(problem)
    assert "127.0.0.1 only" not in str(problem)  # it was 127.0.0.1


@contextmanager
def plain_bytes_listener() -> Iterator[int]:
    """A port of 127.0.0.1 that answers whatever comes with plain bytes (a web server's
    refusal): what a person meets who gives another program's port for the lobby's."""

    class Answer(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(4096)
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    with socketserver.ThreadingTCPServer((LOCAL, 0), Answer) as server:
        threading.Thread(target=server.serve_forever, name="plain bytes", daemon=True).start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()


def test_a_port_that_does_not_speak_the_sealed_protocol_is_told_in_words(tmp_path: Path) -> None:
    """`connect` (the person's screen) and `bot` both say what happened, not OpenSSL's words."""
    env = isolated_env(tmp_path)
    listen = ["--listen", f"tcp:0:interface={LOCAL}"]
    with plain_bytes_listener() as port:
        address = f"{LOCAL}:{port}"
        person = subprocess.run(
            [str(BIN / "bean-client"), "connect", address, "--plain", *listen],
            input="quit\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        bot = subprocess.run(
            [str(BIN / "bean-client"), "bot", address, *listen],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    sentence = (
        f"the program at {address} answered, but it does not speak the lobby's sealed protocol: "
        "is that the lobby's port?"
    )
    shown = " ".join(person.stdout.split())  # an error is wrapped to the screen's width
    assert person.returncode == 0 and sentence in shown, person.stdout + person.stderr
    assert bot.returncode == 1 and bot.stderr.startswith(f"bean-client: {sentence}"), bot.stderr
    for said in (person.stdout + person.stderr, bot.stdout + bot.stderr):
        assert "SSL" not in said and "Traceback" not in said


# -- on the namespace LAN --------------------------------------------------------------------


def events(process: Any, kind: str) -> list[dict[str, Any]]:
    return [event for event in process.json_lines() if event["event"] == kind]


def player(lan: Any, host: Any, lobby: str, name: str, *extra: str) -> Any:
    return lan.spawn_python(
        host,
        "tests.lan_agent",
        "player",
        *("--lobby", lobby, "--name", name, "--seats", "3", "--peer-port", "4000"),
        *("--dial-timeout", "1.5", "--serve-seconds", "2.5"),
        *extra,
    )


async def all_finished(processes: list[Any]) -> None:
    codes = await within(gatherResults([p.finished() for p in processes]), 60)
    assert codes == [0] * len(processes), "\n".join(p.describe() for p in processes)


@pytest_twisted.ensureDeferred
async def test_a_lobby_that_does_not_answer_is_told_apart_from_one_that_is_not_there(
    make_lan,
) -> None:
    lan = make_lan(players=1)
    host = lan.players[0]
    nobody = str(lan.subnet.network_address + 250)  # on the LAN, but no machine has it

    def connect(address: str) -> Any:
        return lan.spawn_python(host, "tests.lan_agent", "lobby-connect", address, "--timeout", "1")

    silent = connect(f"{nobody}:7777")
    elsewhere = connect("1.1.1.1:7777")
    closed = connect(f"{lan.lobby.address}:7")  # a host that is there, with nothing on port 7
    unnamed = connect("no-such-lobby.invalid:7777")  # no name server reachable from the LAN
    await all_finished([silent, elsewhere, closed, unnamed])
    (no_answer,) = events(silent, "failed")
    assert no_answer["kind"] == "LobbySilent"
    assert no_answer["problem"].startswith(f"no answer from {nobody}:7777")
    assert "firewall" in no_answer["problem"]
    (no_route,) = events(elsewhere, "failed")
    assert no_route["kind"] == "LobbyUnreachable" and no_route["seconds"] < 1
    assert "no route to 1.1.1.1" in no_route["problem"]
    (refused,) = events(closed, "failed")
    assert refused["kind"] == "LobbyRefused" and refused["seconds"] < 1
    (unknown,) = events(unnamed, "failed")
    assert unknown["kind"] == "UnknownHost"
    assert "cannot find a machine called no-such-lobby.invalid" in unknown["problem"]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_player_listening_on_loopback_is_told_and_the_others_see_refusals(
    make_lan,
) -> None:
    lan = make_lan(players=3)
    lobby = await lan.start_lobby()
    one, two, three = lan.players
    mistaken = player(lan, one, lobby.endpoint, "P1", "--listen-host", "127.0.0.1")
    others = [player(lan, two, lobby.endpoint, "P2"), player(lan, three, lobby.endpoint, "P3")]
    await all_finished([mistaken, *others])
    (early,) = events(mistaken, "problem")
    assert early["kind"] == "LoopbackListener"
    (roster,) = events(mistaken, "roster")
    assert [p["kind"] for p in roster["problems"]] == ["LoopbackListener"]
    text = roster["problems"][0]["problem"]  # (the seats in joining order)
    assert f"P2 at {two.address}" in text and f"P3 at {three.address}" in text
    assert "are on another machine and cannot reach you there" in text
    # P1 reaches the others (it can dial out), but nobody reaches P1.
    assert {e["seat"] for e in events(mistaken, "reached")} == {"P2", "P3"}
    assert events(mistaken, "not-reached")[0]["missing"] == ["P2", "P3"]
    for process in others:
        (unreachable,) = events(process, "unreachable")
        assert unreachable["seat"] == "P1" and unreachable["kind"] == "PeerRefused"
        assert "127.0.0.1 only" in unreachable["problem"]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_player_who_reached_the_lobby_through_loopback_is_advertised_there(
    make_lan,
) -> None:
    lan = make_lan(players=2)
    lobby = await lan.start_lobby(args=["--listen", "tcp:0"])  # every address of its host
    at_home = player(lan, lan.lobby, f"127.0.0.1:{lobby.port}", "Host")
    guests = [
        player(lan, host, f"{lan.lobby.address}:{lobby.port}", f"P{i}")
        for i, host in enumerate(lan.players, 1)
    ]
    await all_finished([at_home, *guests])
    (roster,) = events(at_home, "roster")
    hosts = {seat["name"]: seat["host"] for seat in roster["seats"]}
    one, two = (host.address for host in lan.players)
    assert hosts == {"Host": "127.0.0.1", "P1": one, "P2": two}
    assert [p["kind"] for p in roster["problems"]] == ["LoopbackAdvertised"]
    assert "connect to the lobby at this machine's LAN address" in roster["problems"][0]["problem"]
    for guest in guests:
        (seen,) = events(guest, "roster")
        assert [p["kind"] for p in seen["problems"]] == ["LoopbackAdvertised"]
        assert seen["problems"][0]["problem"].startswith("Host is listed at 127.0.0.1:4000")
        # What goes wrong without the check: dialling "Host" reaches the guest itself.
        (reached,) = [e for e in events(guest, "reached") if e["seat"] == "Host"]
        assert reached["said"] != "Host"


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_firewalled_peer_port_times_out_while_the_lobby_works(make_lan) -> None:
    lan = make_lan(players=3)
    lobby = await lan.start_lobby()
    one, two, three = lan.players
    open_players = [player(lan, one, lobby.endpoint, "P1"), player(lan, two, lobby.endpoint, "P2")]
    walled = player(lan, three, lobby.endpoint, "P3", "--plugged")
    await all_finished([*open_players, walled])
    for process in open_players:
        (blocked,) = events(process, "unreachable")
        assert blocked["seat"] == "P3" and blocked["kind"] == "PeerPortBlocked"
        # The 1.5 s dial timeout, not a refusal (milliseconds). The agent times it with another
        # clock than the reactor's timer: CI once read 1.4937 s.
        assert blocked["seconds"] >= 1.0
        text = blocked["problem"]
        assert "although P3 is connected to the lobby" in text
        assert "firewall on P3's machine" in text and "allow TCP port 4000" in text
    (roster,) = events(walled, "roster")
    assert roster["problems"] == []  # nothing in the roster shows a firewall
    (unreached,) = events(walled, "not-reached")
    assert unreached["kind"] == "NoIncomingLinks" and unreached["missing"] == ["P1", "P2"]
    assert "blocks incoming TCP port 4000" in unreached["problem"]
    assert {e["seat"] for e in events(walled, "reached")} == {"P1", "P2"}
