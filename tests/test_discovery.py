"""LAN discovery: the datagram format and its strict checks, the rate-limited responder, a
search over real UDP on 127.0.0.1, and on the namespace LAN: a player finds the lobbies on its
LAN (and only those that answer), and no datagram leaves the LAN."""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
import struct
import sys
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.protocol import DatagramProtocol
from twisted.python.usage import UsageError

from client.net.discovery import FoundLobby, _Search, find_lobbies
from lobby.discovery import (
    ANSWER_MAX_BYTES,
    QUERY_BYTES,
    Answer,
    DiscoveryFormatError,
    DiscoveryProtocol,
    DiscoveryResponder,
    check_lobby_name,
    decode_answer,
    decode_query,
    encode_answer,
    encode_query,
)
from lobby.service import LobbyOptions, makeService
from tests.netns import lan_fixture  # noqa: F401  (the make_lan fixture)
from tests.waiting import Watched, within

NONCE = bytes(range(16))


# -- the format ------------------------------------------------------------------------------


def test_a_query_and_an_answer_round_trip_and_the_answer_is_smaller() -> None:
    query = encode_query(NONCE)
    assert len(query) == QUERY_BYTES
    assert decode_query(query) == NONCE
    longest = Answer(NONCE, 7777, "10.0.0.5", "ß" * 32)
    encoded = encode_answer(longest)
    assert len(encoded) == ANSWER_MAX_BYTES < QUERY_BYTES
    assert decode_answer(encoded) == longest
    anywhere = Answer(NONCE, 1, None, "Friday beans")
    assert decode_answer(encode_answer(anywhere)) == anywhere


def _patched(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


MALFORMED_QUERIES = {
    "empty": b"",
    "short": encode_query(NONCE)[:-1],
    "long": encode_query(NONCE) + b"\0",
    "huge": encode_query(NONCE) + bytes(4000),
    "magic": _patched(encode_query(NONCE), 0, b"BNZA"),
    "version": _patched(encode_query(NONCE), 4, b"\x02"),
    "padding": _patched(encode_query(NONCE), 100, b"\x01"),
    "msgpack": b"\x81\xa4type\xa5query" + bytes(QUERY_BYTES - 12),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED_QUERIES))
def test_malformed_queries_are_refused(kind: str) -> None:
    with pytest.raises(DiscoveryFormatError):
        decode_query(MALFORMED_QUERIES[kind])
    responder = DiscoveryResponder("lobby", 7777)
    assert responder.respond(MALFORMED_QUERIES[kind], "10.0.0.9", 0.0) is None
    assert responder.ignored == 1


GOOD_ANSWER = encode_answer(Answer(NONCE, 7777, None, "lobby"))
MALFORMED_ANSWERS = {
    "empty": b"",
    "no name": GOOD_ANSWER[:-5],
    "long name length": _patched(GOOD_ANSWER, 27, b"\x09"),
    "too long": GOOD_ANSWER + b"x" * 80,
    "magic": _patched(GOOD_ANSWER, 0, b"BNZQ"),
    "version": _patched(GOOD_ANSWER, 4, b"\x07"),
    "port 0": _patched(GOOD_ANSWER, 21, b"\0\0"),
    "multicast host": _patched(GOOD_ANSWER, 23, bytes([224, 0, 0, 1])),
    "broadcast host": _patched(GOOD_ANSWER, 23, b"\xff\xff\xff\xff"),
    "bad utf-8": _patched(GOOD_ANSWER, 28, b"\xff"),
    "control character": _patched(GOOD_ANSWER, 28, b"\x1b"),
    "space around": _patched(GOOD_ANSWER, 28, b" "),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED_ANSWERS))
def test_malformed_answers_are_refused(kind: str) -> None:
    assert decode_answer(GOOD_ANSWER).name == "lobby"
    with pytest.raises(DiscoveryFormatError):
        decode_answer(MALFORMED_ANSWERS[kind])


def test_a_search_keeps_only_well_formed_answers_to_its_own_nonce() -> None:
    search = _Search(NONCE)
    search.datagramReceived(encode_answer(Answer(bytes(16), 1111, None, "stale")), ("10.0.0.2", 1))
    for datagram in MALFORMED_ANSWERS.values():
        search.datagramReceived(datagram, ("10.0.0.3", 7778))
    search.datagramReceived(encode_answer(Answer(NONCE, 7777, None, "one")), ("10.0.0.4", 7778))
    search.datagramReceived(encode_answer(Answer(NONCE, 7777, None, "one")), ("10.0.0.4", 7778))
    search.datagramReceived(encode_answer(Answer(NONCE, 7000, "10.0.0.8", "two")), ("10.0.0.5", 1))
    assert sorted(search.found.values()) == [
        FoundLobby("one", "10.0.0.4", 7777),
        FoundLobby("two", "10.0.0.8", 7000),
    ]


def test_lobby_names_are_checked() -> None:
    assert check_lobby_name("Friday beans") == "Friday beans"
    for bad in ("", " x", "x ", "a\nb", "x" * 33, "\x1b[31m"):
        with pytest.raises(ValueError):
            check_lobby_name(bad)
    with pytest.raises(UsageError, match=r"--name: .*printable"):
        LobbyOptions().parseOptions(["--name", "\x1b[2J"])


# -- the responder's rate limits -------------------------------------------------------------


def test_answers_are_rate_limited_per_source_and_overall() -> None:
    responder = DiscoveryResponder("lobby", 7777, per_source=(2.0, 4), overall=(10.0, 6))
    query = encode_query(NONCE)
    answers = [responder.respond(query, "10.0.0.2", 100.0) for _ in range(10)]
    assert sum(a is not None for a in answers) == 4  # the source's burst
    assert responder.respond(query, "10.0.0.3", 100.0) is not None
    assert responder.respond(query, "10.0.0.3", 100.0) is not None
    assert responder.respond(query, "10.0.0.4", 100.0) is None  # the overall burst is spent
    # A second later: 2 more for the first source (its rate), within the overall budget.
    later = [responder.respond(query, "10.0.0.2", 101.0) for _ in range(5)]
    assert sum(a is not None for a in later) == 2
    assert decode_answer(later[0] or b"") == Answer(NONCE, 7777, None, "lobby")


def test_the_responder_forgets_the_oldest_sources_beyond_its_limit() -> None:
    responder = DiscoveryResponder("lobby", 7777, per_source=(1.0, 1), max_sources=3)
    query = encode_query(NONCE)
    for i in range(10):
        assert responder.respond(query, f"10.0.0.{i}", float(i)) is not None
    assert len(responder._sources) == 3


# -- real UDP on 127.0.0.1 -------------------------------------------------------------------


class Collector(DatagramProtocol, Watched):
    def __init__(self) -> None:
        Watched.__init__(self)
        self.datagrams: list[bytes] = []

    def datagramReceived(self, datagram: bytes, addr: Any) -> None:
        self.datagrams.append(datagram)
        self.changed()


async def _responder_on_loopback(name: str = "Test lobby") -> Any:
    responder = DiscoveryResponder(name, 7777)
    return responder, reactor.listenUDP(
        0, DiscoveryProtocol(responder, reactor), interface="127.0.0.1"
    )


@pytest_twisted.ensureDeferred
async def test_a_search_finds_a_lobby_answering_on_loopback() -> None:
    responder, udp = await _responder_on_loopback()
    try:
        found = await within(
            find_lobbies(reactor, 0.3, port=udp.getHost().port, targets=["127.0.0.1"])
        )
        assert found == [FoundLobby("Test lobby", "127.0.0.1", 7777)]
        assert responder.answered == 3  # three attempts, one lobby listed
    finally:
        await udp.stopListening()


@pytest_twisted.ensureDeferred
async def test_malformed_datagrams_get_no_answer_and_a_good_query_one() -> None:
    responder, udp = await _responder_on_loopback()
    collector = Collector()
    client = reactor.listenUDP(0, collector, interface="127.0.0.1")
    try:
        target = ("127.0.0.1", udp.getHost().port)
        for datagram in MALFORMED_QUERIES.values():
            client.write(datagram, target)
        nonce = secrets.token_bytes(16)
        client.write(encode_query(nonce), target)  # sent last: its answer comes after any other
        await collector.when(lambda c: len(c.datagrams) >= 1)
        assert len(collector.datagrams) == 1
        assert decode_answer(collector.datagrams[0]) == Answer(nonce, 7777, None, "Test lobby")
        assert responder.ignored == len(MALFORMED_QUERIES)
    finally:
        await client.stopListening()
        await udp.stopListening()


@pytest_twisted.ensureDeferred
async def test_a_lobby_on_loopback_only_does_not_answer_discovery() -> None:
    options = {"listen": "tcp:0:interface=127.0.0.1", "discovery": True, "name": "Mine"}
    service = makeService(options, reactor)
    service.startService()
    try:
        await within(service.getServiceNamed("listener").listening)
        finder = service.getServiceNamed("discovery")
        assert finder.lobby_name == "Mine"
        assert finder.responder is None and finder.udp_port is None
    finally:
        await within(Deferred.fromCoroutine(_stop(service)))
    quiet = makeService({"listen": "tcp:0:interface=127.0.0.1"}, reactor)
    assert [s.name for s in quiet] == ["listener", "expiry"]
    parsed = LobbyOptions()
    parsed.parseOptions([])
    assert parsed["discovery"] is True
    parsed = LobbyOptions()
    parsed.parseOptions(["--no-discovery"])
    assert parsed["discovery"] is False


async def _stop(service: Any) -> None:
    await service.stopService()


# -- on the namespace LAN --------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_a_player_finds_the_lobbies_on_its_lan(make_lan) -> None:
    lan = make_lan(players=2)
    second = lan.add_host("lobby2")
    first_lobby = await lan.start_lobby(args=["--name", "Friday beans"])
    second_lobby = await lan.start_lobby(second, ["--listen", "tcp:7777", "--name", "Second"])
    await lan.start_lobby(lan.players[1], ["--no-discovery"])
    search = lan.spawn_python(lan.players[0], "client.net.discovery", "--json", "--timeout", "1")
    assert await search.finished() == 0, search.describe()
    assert json.loads(search.lines()[-1]) == [
        {"name": "Friday beans", "host": lan.lobby.address, "port": first_lobby.port},
        {"name": "Second", "host": second.address, "port": 7777},
    ]
    assert second_lobby.address == "0.0.0.0"  # listening everywhere: the answer's source counts


ETH_P_ALL = 0x0003
IGMP = 2
LINK_LOCAL_MULTICAST = ipaddress.IPv4Network("224.0.0.0/24")  # never forwarded by routers


def _capture(interfaces: list[str]) -> list[socket.socket]:
    sockets = []
    for interface in interfaces:
        capture = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        capture.bind((interface, 0))
        capture.setblocking(False)
        sockets.append(capture)
    return sockets


def _frames(sockets: list[socket.socket]) -> list[bytes]:
    frames = []
    for capture in sockets:
        while True:
            try:
                frames.append(capture.recv(65535))
            except BlockingIOError:
                break
        capture.close()
    return frames


@pytest_twisted.ensureDeferred
async def test_discovery_datagrams_never_leave_the_lan(make_lan) -> None:
    lan = make_lan(players=1)
    lobby = await lan.start_lobby()
    targets = lan.run(
        lan.players[0],
        [
            *(sys.executable, "-c"),
            "from client.net.discovery import broadcast_targets; print(broadcast_targets())",
        ],
    )
    assert targets.stdout.strip() == repr([str(lan.subnet.broadcast_address)])
    sockets = _capture([host.veth for host in lan.hosts.values()])
    search = lan.spawn_python(lan.players[0], "client.net.discovery", "--json", "--timeout", "0.6")
    assert await search.finished() == 0, search.describe()
    frames = _frames(sockets)
    udp = []
    for frame in frames:
        ethertype = struct.unpack("!H", frame[12:14])[0]
        assert ethertype in (0x0800, 0x0806), hex(ethertype)  # IPv4 and ARP only
        if ethertype != 0x0800:
            continue
        header_length = (frame[14] & 0x0F) * 4
        protocol = frame[23]
        source = ipaddress.IPv4Address(frame[26:30])
        destination = ipaddress.IPv4Address(frame[30:34])
        if protocol == IGMP:  # the kernel's own multicast reports, to 224.0.0.22
            assert destination in LINK_LOCAL_MULTICAST
            continue
        assert source in lan.subnet
        assert destination in lan.subnet  # the subnet broadcast or a host of the LAN
        if protocol == 17:
            ports = struct.unpack("!HH", frame[14 + header_length : 18 + header_length])
            udp.append((str(source), str(destination), ports))
    player, lobby_address = lan.players[0].address, lobby.address
    broadcast = str(lan.subnet.broadcast_address)
    assert any(s == player and d == broadcast and p[1] == 7778 for s, d, p in udp)
    assert any(s == lobby_address and d == player and p[0] == 7778 for s, d, p in udp)
    assert json.loads(search.lines()[-1])[0]["host"] == lobby_address
