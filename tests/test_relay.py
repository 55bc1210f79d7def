"""The slow and lossy relay (tests/relay.py): its schedule, and real TCP through it on
127.0.0.1 (bytes intact and in order, delay, bandwidth, stalls, resets where the schedule says,
clean closes passed on)."""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.internet.error import ConnectionDone
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.python.failure import Failure

from tests.netns import lan_fixture  # noqa: F401  (the make_lan fixture)
from tests.relay import DOWN, UP, Block, LinkProfile, LinkSchedule, Relay, Tamper, parse_arguments
from tests.waiting import Watched, within

# -- the schedule (pure) ---------------------------------------------------------------------


def first_fates(profile: LinkProfile, connection: int = 0, direction: str = UP, n: int = 500):
    fates = LinkSchedule(profile, connection, direction).fates()
    return [next(fates) for _ in range(n)]


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    profile = LinkProfile(jitter=0.05, reset_chance=0.02, stall_chance=0.02, stall_seconds=1)
    assert first_fates(profile) == first_fates(profile)
    other_seed = LinkProfile(
        jitter=0.05, reset_chance=0.02, stall_chance=0.02, stall_seconds=1, seed=b"other"
    )
    assert first_fates(profile) != first_fates(other_seed)
    assert first_fates(profile, connection=1) != first_fates(profile)
    assert first_fates(profile, direction=DOWN) != first_fates(profile)


def test_resets_stalls_and_jitter_follow_the_profile() -> None:
    profile = LinkProfile(jitter=0.08, reset_chance=0.01, stall_chance=0.05, stall_seconds=2)
    fates = first_fates(profile, n=20_000)
    resets = sum(fate.reset for fate in fates)
    stalls = [fate.stall for fate in fates if fate.stall]
    assert 150 <= resets <= 250  # 200 expected
    assert 850 <= len(stalls) <= 1150  # 1000 expected
    assert set(stalls) == {2.0}
    assert all(0 <= fate.jitter <= 0.08 for fate in fates)
    assert 0.035 <= sum(fate.jitter for fate in fates) / len(fates) <= 0.045
    assert not any(fate.reset for fate in first_fates(LinkProfile(), n=2000))


def test_first_reset_is_the_offset_of_the_first_reset_segment() -> None:
    profile = LinkProfile(reset_chance=0.1, segment=100)
    fates = first_fates(profile)
    index = next(i for i, fate in enumerate(fates) if fate.reset)
    assert LinkSchedule(profile, 0, UP).first_reset(10**6) == index * 100
    assert LinkSchedule(profile, 0, UP).first_reset(index * 100) is None


def test_profiles_refuse_nonsense() -> None:
    for bad in ({"delay": -1}, {"reset_chance": 1.5}, {"segment": 0}, {"stall_chance": -0.1}):
        with pytest.raises(ValueError):
            LinkProfile(**bad)


def test_the_command_line_reads_a_profile() -> None:
    options = parse_arguments(
        ["--listen", "10.0.0.1:0", "--to", "10.0.0.2:4000", "--delay", "0.2", "--seed", "x"]
    )
    assert options.listen == ("10.0.0.1", 0)
    assert options.target == ("10.0.0.2", 4000)
    assert options.profile == LinkProfile(delay=0.2, seed=b"x")


# -- real TCP through the relay on 127.0.0.1 -------------------------------------------------


class Peer(Protocol, Watched):
    """One end of a connection: records what arrives and how the connection ended; echoes
    when asked to, and may send something as soon as it connects."""

    def __init__(self, echo: bool = False, greeting: bytes = b"") -> None:
        Watched.__init__(self)
        self.echo = echo
        self.greeting = greeting
        self.data = bytearray()
        self.arrivals: list[tuple[float, int]] = []  # (time, total bytes so far)
        self.reason: Failure | None = None

    def connectionMade(self) -> None:
        if self.greeting:
            self.transport.write(self.greeting)

    def dataReceived(self, data: bytes) -> None:
        self.data += data
        self.arrivals.append((time.monotonic(), len(self.data)))
        if self.echo:
            self.transport.write(data)
        self.changed()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.reason = reason
        self.changed()

    @property
    def closed(self) -> bool:
        return self.reason is not None

    def has(self, count: int, seconds: float = 10.0) -> Deferred[Any]:
        return self.when(lambda p: len(p.data) >= count, seconds)

    def gone(self, seconds: float = 10.0) -> Deferred[Any]:
        return self.when(lambda p: p.closed, seconds)


class Target(Factory, Watched):
    """The server the relay forwards to: one Peer per connection."""

    def __init__(self, echo: bool = False) -> None:
        Watched.__init__(self)
        self.echo = echo
        self.peers: list[Peer] = []

    def buildProtocol(self, addr: Any) -> Peer:
        peer = Peer(self.echo)
        self.peers.append(peer)
        self.changed()
        return peer


class Bench:
    """A target on 127.0.0.1, a relay in front of it, and clients; `close` cleans up."""

    def __init__(
        self, profile: LinkProfile, echo: bool = False, tamper: Tamper | None = None
    ) -> None:
        self.profile = profile
        self.tamper = tamper
        self.target = Target(echo)
        self.clients: list[Peer] = []

    async def start(self, target_port: int | None = None) -> Bench:
        self.port = await TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(self.target)
        port = self.port.getHost().port if target_port is None else target_port
        self.relay = Relay(reactor, "127.0.0.1", port, self.profile, tamper=self.tamper)
        self.relay_port = await self.relay.listen()
        return self

    async def connect(self, greeting: bytes = b"") -> Peer:
        client = Peer(greeting=greeting)
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", self.relay_port)
        await within(endpoint.connect(Factory.forProtocol(lambda: client)))
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            if not client.closed:
                client.transport.abortConnection()
                await client.gone()
        await within(self.relay.stop())
        for peer in self.target.peers:
            await peer.gone()
        await within(self.port.stopListening())


@pytest_twisted.ensureDeferred
async def test_bytes_arrive_intact_and_in_order_both_ways_despite_jitter() -> None:
    bench = await Bench(LinkProfile(delay=0.002, jitter=0.02, segment=700), echo=True).start()
    try:
        blob = secrets.token_bytes(600_000)  # more than the relay queues before pushing back
        client = await bench.connect(greeting=blob)
        await client.has(len(blob), 30)
        assert bytes(bench.target.peers[0].data) == blob
        assert bytes(client.data) == blob
        assert not client.closed
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_each_way_is_delayed_by_the_configured_delay() -> None:
    bench = await Bench(LinkProfile(delay=0.1, jitter=0.05), echo=True).start()
    try:
        client = await bench.connect()
        for round_trip in range(1, 4):
            started = time.monotonic()
            client.transport.write(b"ping")
            await client.has(4 * round_trip)
            elapsed = time.monotonic() - started
            assert 0.2 <= elapsed < 0.2 + 2 * 0.05 + 0.25, elapsed
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_the_bandwidth_cap_holds_and_pushes_back() -> None:
    bench = await Bench(LinkProfile(bandwidth=2_000_000)).start()
    try:
        blob = secrets.token_bytes(1_000_000)
        started = time.monotonic()
        client = await bench.connect(greeting=blob)
        await bench.target.when(lambda t: bool(t.peers))
        await bench.target.peers[0].has(len(blob))
        assert time.monotonic() - started >= 0.5  # 1 MB at 2 MB/s
        assert bytes(bench.target.peers[0].data) == blob
        assert bench.relay.pauses > 0  # the relay stopped reading rather than queue it all
        assert not client.closed
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_a_stall_freezes_the_link_and_keeps_it() -> None:
    profile = LinkProfile(stall_chance=1.0, stall_seconds=0.3, segment=1 << 20)
    bench = await Bench(profile, echo=True).start()
    try:
        client = await bench.connect()
        started = time.monotonic()
        client.transport.write(b"hello")
        await client.has(5)
        # One stall each way before the first segment; then the rest of the segment is quick.
        assert time.monotonic() - started >= 0.6
        started = time.monotonic()
        client.transport.write(b"again")
        await client.has(10)
        assert time.monotonic() - started < 0.6  # no stall this time: one each way is 0.6 s
        assert not client.closed
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_resets_drop_both_sides_where_the_schedule_says() -> None:
    profile = LinkProfile(reset_chance=0.05, segment=256, seed=b"test resets")
    bench = await Bench(profile).start()
    sent = 64 * 1024
    try:
        expected = [LinkSchedule(profile, i, UP).first_reset(sent) for i in range(5)]
        assert all(offset is not None for offset in expected)  # this seed resets each time
        for index in range(5):
            blob = secrets.token_bytes(sent)
            client = await bench.connect(greeting=blob)
            await client.gone()
            await bench.target.when(lambda t, n=index: len(t.peers) > n)
            server_side = bench.target.peers[index]
            await server_side.gone()
            # Both ends saw the link drop, not a clean close.
            assert client.reason is not None and not client.reason.check(ConnectionDone)
            assert server_side.reason is not None
            assert not server_side.reason.check(ConnectionDone)
            # The target got a prefix of what was sent, no more than the schedule allowed.
            assert bytes(server_side.data) == blob[: len(server_side.data)]
            assert len(server_side.data) <= expected[index]
            await bench.relay.when(lambda r, n=index: r.records[n].ended)
            assert bench.relay.records[index].reset == (UP, expected[index])
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_a_clean_close_arrives_after_the_delayed_bytes() -> None:
    bench = await Bench(LinkProfile(delay=0.1)).start()
    try:
        client = await bench.connect(greeting=b"last words")
        client.transport.loseConnection()
        await bench.target.when(lambda t: bool(t.peers))
        server_side = bench.target.peers[0]
        await server_side.gone()
        assert bytes(server_side.data) == b"last words"
        assert server_side.reason is not None and server_side.reason.check(ConnectionDone)
        await bench.relay.when(lambda r: r.records[0].ended)
        assert bench.relay.records[0].up == len(b"last words")
        assert bench.relay.records[0].reset is None
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_a_target_that_is_not_there_drops_the_client() -> None:
    closed = await TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(Target())
    nobody = closed.getHost().port
    await closed.stopListening()
    bench = await Bench(LinkProfile()).start(target_port=nobody)
    try:
        client = await bench.connect()
        await client.gone()
        await bench.relay.when(lambda r: r.records and r.records[0].ended)
        assert "refused" in (bench.relay.records[0].target_failed or "")
    finally:
        await bench.close()


@pytest_twisted.ensureDeferred
async def test_a_block_drops_one_way_while_it_lasts_and_new_connections_get_nothing_through():
    block = Block()
    bench = await Bench(LinkProfile(), tamper=block).start()
    try:
        client = await bench.connect(greeting=b"before ")
        await bench.target.when(lambda t: bool(t.peers))
        server_side = bench.target.peers[0]
        await server_side.has(len(b"before "))
        block.blocked.add(UP)
        client.transport.write(b"lost ")
        await bench.relay.when(lambda r: block.dropped[UP] == len(b"lost "))
        server_side.transport.write(b"answer")  # the other way is open
        await client.has(len(b"answer"))
        late = await bench.connect(greeting=b"hello?")  # its first words vanish
        await bench.relay.when(lambda r: block.dropped[UP] == len(b"lost hello?"))
        block.blocked.clear()
        client.transport.write(b"after")
        await server_side.has(len(b"before after"))
        # A hole in the stream, not a delay: what the block swallowed never comes.
        assert bytes(server_side.data) == b"before after"
        assert block.dropped == {UP: len(b"lost hello?"), DOWN: 0}
        await bench.target.when(lambda t: len(t.peers) == 2)
        assert bytes(bench.target.peers[1].data) == b""
        assert not client.closed and not late.closed
    finally:
        await bench.close()


# -- on the namespace LAN: a player behind a relay host --------------------------------------


@pytest_twisted.ensureDeferred
async def test_every_link_of_a_player_behind_the_relay_crosses_it_slowly(make_lan) -> None:
    lan = make_lan(players=3)
    lobby = await lan.start_lobby()
    one, two, three = lan.players
    route = await lan.put_behind_relay(three, lobby, 4000, LinkProfile(delay=0.15))
    agents = {
        name: lan.spawn_python(
            host,
            "tests.lan_agent",
            "player",
            *("--lobby", lobby.endpoint, "--name", name, "--seats", "3", "--peer-port", "4000"),
        )
        for name, host in (("P1", one), ("P2", two), ("P3", three))
    }
    codes = await within(gatherResults([a.finished() for a in agents.values()]), 60)
    assert codes == [0, 0, 0], "\n".join(a.describe() for a in agents.values())
    (welcome,) = [e for e in agents["P3"].json_lines() if e["event"] == "welcome"]
    assert welcome["host"] == route.address  # the lobby saw P3 at the relay host
    for name, agent in agents.items():
        (roster,) = [e for e in agent.json_lines() if e["event"] == "roster"]
        seats = {seat["name"]: (seat["host"], seat["port"]) for seat in roster["seats"]}
        assert seats == {
            "P1": (one.address, 4000),
            "P2": (two.address, 4000),
            "P3": (route.address, 4000),
        }
        reached = {e["seat"]: e for e in agent.json_lines() if e["event"] == "reached"}
        assert {seat: e["said"] for seat, e in reached.items()} == {
            other: other for other in agents if other != name
        }
        for seat, event in reached.items():
            if "P3" in (name, seat):  # 0.15 s each way through the relay, whoever dialled
                assert event["seconds"] >= 0.3, (name, seat, event)
    # P3's links, in and out, went through the relay; P1 and P2 reached each other directly.
    assert route.opened() == {"inbound": 2, f"lobby:{lobby.port}": 1, "p1:4000": 1, "p2:4000": 1}
