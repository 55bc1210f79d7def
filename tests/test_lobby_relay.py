"""The lobby's relay over real TCP on 127.0.0.1: it splices the two ends of a link of a table
it introduced, blind (the seats' pinned TLS runs inside), and nothing else; and every bound a
connection can push on holds (the lobby's clock is a manual one, so time is the test's)."""

from __future__ import annotations

import secrets
import socketserver
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.internet.task import Clock, deferLater
from twisted.python.failure import Failure

from client.net import LobbyClient, accept, dial, peer_key
from client.net.relayed import RelayEndpoint, RelayRefused
from lobby.limits import LobbyLimits
from protocol.identity import Identity
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.relay import (
    RELAY_MAGIC,
    RelayRole,
    RelayStatus,
    encode_request,
    relay_pair,
    relay_secret,
)
from tests.lobby_support import RunningLobby, start_lobby
from tests.processes import BIN, LOCAL, isolated_env, lobby_process
from tests.waiting import Watched, within


class Ends(Protocol, Watched):
    """One end of a link, as a test sees it: what came, and whether it closed."""

    def __init__(self) -> None:
        Watched.__init__(self)
        self.received = bytearray()
        self.gone = False

    def dataReceived(self, data: bytes) -> None:
        self.received += data
        self.changed()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.gone = True
        self.changed()


Link = tuple[bytes, bytes]  # what an end presents: the link's pair id and its secret


@dataclass(frozen=True)
class Table:
    """A roster, and the identity of each of its seats (which the tests play)."""

    roster: GameStart
    identities: tuple[Identity, ...]

    def link(self, seat: int, other: int) -> Link:
        """The link between `seat` and `other` as `seat` derives it (`other` derives the
        same)."""
        game_id, key = self.roster.game_id, self.roster.seats[other].public_key
        identity = self.identities[seat]
        return relay_pair(game_id, identity.public_key, key), relay_secret(game_id, identity, key)


def table(*identities: Identity) -> Table:
    seats = tuple(
        Seat(name=f"p{n}", public_key=identity.public_key, host="10.9.9.9", port=4000 + n)
        for n, identity in enumerate(identities)
    )
    roster = GameStart(
        room_id=1, game_id=secrets.token_bytes(16), seats=seats, options=RoomOptions()
    )
    return Table(roster, identities)


def made_up() -> Link:
    return secrets.token_bytes(32), secrets.token_bytes(32)


def end(running: RunningLobby, role: RelayRole, link: Link) -> RelayEndpoint:
    return RelayEndpoint(reactor, "127.0.0.1", running.port, role, *link)


async def spliced(running: RunningLobby, link: Link) -> tuple[Ends, Ends]:
    dialler = end(running, RelayRole.DIALS, link).connect(Factory.forProtocol(Ends))
    accepter = end(running, RelayRole.ACCEPTS, link).connect(Factory.forProtocol(Ends))
    return await within(dialler), await within(accepter)


async def refused(endpoint: RelayEndpoint) -> RelayStatus | None:
    return await refused_as(endpoint.connect(Factory.forProtocol(Ends)))


async def raw(running: RunningLobby, first: bytes) -> Ends:
    """A plain TCP connection to the lobby's port that sends `first`."""
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", running.port)
    ends: Ends = await within(endpoint.connect(Factory.forProtocol(Ends)))
    ends.transport.write(first)
    return ends


async def lobby(clock: Any = None, **limits: Any) -> RunningLobby:
    return await start_lobby(LobbyLimits(**limits), clock or Clock())


def quiet(running: RunningLobby) -> bool:
    relay = running.factory.relay
    return not relay.connections and not relay.unmatched and not relay.waiting


def ends_waiting(running: RunningLobby) -> int:
    """The connections waiting at the relay for their other end, at every end."""
    return sum(len(end) for end in running.factory.relay.waiting.values())


@pytest_twisted.ensureDeferred
async def test_the_seats_pinned_tls_runs_through_the_relay_unchanged() -> None:
    """Two seats of an introduced table meet at the relay; the dialler's TLS pins the
    accepter's key and the other way round; what they say arrives, and the relay carried only
    ciphertext (the plaintext never crosses it)."""
    running = await lobby()
    try:
        one, two = Identity.generate(), Identity.generate()
        seats = table(one, two, Identity.generate())
        running.factory.relay.introduce(seats.roster)
        accepted = end(running, RelayRole.ACCEPTS, seats.link(1, 0)).connect(
            accept(Factory.forProtocol(Ends), two, True, reactor)
        )
        dialling = dial(
            end(running, RelayRole.DIALS, seats.link(0, 1)),
            one,
            lambda key: key == two.public_key,
            reactor,
        )
        dialler: Ends = await within(dialling.connect(Factory.forProtocol(Ends)))
        tls = await within(accepted)
        accepter: Ends = tls.wrappedProtocol
        secret = b"the plaintext of a step " + secrets.token_bytes(16)
        dialler.transport.write(secret)
        await accepter.when(lambda e: bytes(e.received) == secret)
        accepter.transport.write(b"and back")
        await dialler.when(lambda e: bytes(e.received) == b"and back")
        assert peer_key(accepter.transport) == one.public_key
        assert peer_key(dialler.transport) == two.public_key
        relay = running.factory.relay
        carried = next(iter(relay.tables.values())).carried
        assert carried > len(secret) and relay.spliced == 1
        dialler.transport.loseConnection()
        await accepter.when(lambda e: e.gone)
        await until(lambda: quiet(running))
    finally:
        await running.stop()


@pytest_twisted.ensureDeferred
async def test_only_the_pairs_of_introduced_tables_are_spliced_and_never_across_tables() -> None:
    """A pair id the lobby did not derive is refused at once; the links of two tables never
    meet (each end waits for its own other end, and times out); the same end of one link only
    once (a newer connection replaces it); and a relay turned off says so."""
    clock = Clock()
    running = await lobby(clock)
    try:
        assert await refused(end(running, RelayRole.DIALS, made_up())) == RelayStatus.UNKNOWN
        first, second = (
            table(*(Identity.generate() for _ in range(3))),
            table(*(Identity.generate() for _ in range(3))),
        )
        for seats in (first, second):
            running.factory.relay.introduce(seats.roster)
        one = end(running, RelayRole.DIALS, first.link(0, 1)).connect(Factory.forProtocol(Ends))
        other = end(running, RelayRole.ACCEPTS, second.link(1, 0)).connect(
            Factory.forProtocol(Ends)
        )
        relay = running.factory.relay
        await until(lambda: ends_waiting(running) == 2)
        assert relay.spliced == 0
        again = end(running, RelayRole.DIALS, first.link(0, 1)).connect(Factory.forProtocol(Ends))
        with pytest.raises(RelayRefused) as replaced:
            await within(one)
        assert replaced.value.status == RelayStatus.REPLACED
        clock.advance(LobbyLimits().relay_wait_seconds + 1)
        for waiting in (other, again):
            with pytest.raises(RelayRefused) as late:
                await within(waiting)
            assert late.value.status == RelayStatus.TIMED_OUT
        await until(lambda: quiet(running))
    finally:
        await running.stop()
    off = await start_lobby_without_relay()
    try:
        seats = table(*(Identity.generate() for _ in range(3)))
        off.factory.relay.introduce(seats.roster)
        assert await refused(end(off, RelayRole.DIALS, seats.link(0, 1))) == RelayStatus.OFF
    finally:
        await off.stop()


async def start_lobby_without_relay() -> RunningLobby:
    from lobby.service import makeService

    service = makeService({"listen": "tcp:0:interface=127.0.0.1", "relay": False}, reactor, Clock())
    service.startService()
    listener = service.getServiceNamed("listener")
    port = await within(listener.listening)
    return RunningLobby(service, port.getHost().port, listener.factory)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until `condition()` holds, looking on each turn of the reactor (the lobby's state
    has no event to wait on), for at most `seconds`."""
    deadline = reactor.seconds() + seconds
    while not condition():
        if reactor.seconds() > deadline:
            raise AssertionError(f"not within {seconds} s")
        await deferLater(reactor, 0.005, lambda: None)


@pytest_twisted.ensureDeferred
async def test_a_player_at_the_table_cannot_take_one_end_of_another_pairs_relayed_link() -> None:
    """Seats 0 and 1 cannot reach each other; seat 2, hostile, holds the roster: it derives
    their link's pair id, and the secrets it shares with each of them, but not theirs. Seat 1
    waits at the relay; seat 2 comes as the dialler before seat 0, with every secret it can
    derive and one made up. The relay splices none of them to seat 1 (on the code before,
    whose token came from public keys only, it spliced the first: relay.spliced == 1); seat 0,
    coming after, is spliced to seat 1, and seat 2's connections wait alone until they time
    out."""
    clock = Clock()
    running = await lobby(clock)
    try:
        seats = table(*(Identity.generate() for _ in range(3)))
        relay = running.factory.relay
        relay.introduce(seats.roster)
        honest_accepter = end(running, RelayRole.ACCEPTS, seats.link(1, 0)).connect(
            Factory.forProtocol(Ends)
        )
        await until(lambda: ends_waiting(running) == 1)
        pair = relay_pair(
            seats.roster.game_id, *(seat.public_key for seat in seats.roster.seats[:2])
        )
        guesses = (seats.link(2, 0)[1], seats.link(2, 1)[1], secrets.token_bytes(32))
        hijackers = [
            end(running, RelayRole.DIALS, (pair, guess)).connect(Factory.forProtocol(Ends))
            for guess in guesses
        ]
        await until(lambda: relay.spliced == 1 or ends_waiting(running) == 1 + len(guesses))
        assert relay.spliced == 0, "the relay joined a third seat to one end of another link"
        honest_dialler = end(running, RelayRole.DIALS, seats.link(0, 1)).connect(
            Factory.forProtocol(Ends)
        )
        dialler, accepter = await within(honest_dialler), await within(honest_accepter)
        dialler.transport.write(b"from seat 0 to seat 1")
        await accepter.when(lambda e: bytes(e.received) == b"from seat 0 to seat 1")
        assert relay.spliced == 1
        clock.advance(LobbyLimits().relay_wait_seconds + 1)
        assert [await refused_as(hijacker) for hijacker in hijackers] == [
            RelayStatus.TIMED_OUT
        ] * len(guesses)
    finally:
        clock.advance(LobbyLimits().relay_wait_seconds + 1)
        await running.stop()


@pytest_twisted.ensureDeferred
async def test_made_up_secrets_at_the_ends_of_a_link_are_held_at_most_so_many_each() -> None:
    """A seat of the table waits at both ends of another pair's link with many made-up
    secrets: the relay holds at most relay_candidates_per_end at each end, refusing the oldest
    as replaced to make room for each newcomer. The honest accepter, the oldest, is pushed out
    so (a hostile seat can deny a relayed link by racing, never join it); it comes again, as
    the mesh does, gets a place, and the honest dialler is spliced to it."""
    clock = Clock()
    bound, flood = 3, 20
    running = await lobby(clock, relay_candidates_per_end=bound)
    try:
        seats = table(*(Identity.generate() for _ in range(3)))
        relay = running.factory.relay
        relay.introduce(seats.roster)
        first_accepter = end(running, RelayRole.ACCEPTS, seats.link(1, 0)).connect(
            Factory.forProtocol(Ends)
        )
        await until(lambda: ends_waiting(running) == 1)
        pair = seats.link(0, 1)[0]
        made_up_ends = [
            end(running, RelayRole(n % 2), (pair, secrets.token_bytes(32))).connect(
                Factory.forProtocol(Ends)
            )
            for n in range(flood)
        ]
        await until(lambda: relay.refused[RelayStatus.REPLACED] == flood + 1 - 2 * bound)
        assert [len(candidates) for candidates in relay.waiting.values()] == [bound, bound]
        assert await refused_as(first_accepter) == RelayStatus.REPLACED
        accepter_again = end(running, RelayRole.ACCEPTS, seats.link(1, 0)).connect(
            Factory.forProtocol(Ends)
        )
        honest_dialler = end(running, RelayRole.DIALS, seats.link(0, 1)).connect(
            Factory.forProtocol(Ends)
        )
        dialler, accepter = await within(honest_dialler), await within(accepter_again)
        dialler.transport.write(b"still joined")
        await accepter.when(lambda e: bytes(e.received) == b"still joined")
        assert relay.spliced == 1 and ends_waiting(running) <= 2 * bound
        clock.advance(LobbyLimits().relay_wait_seconds + 1)
        statuses = {await refused_as(made_up_end) for made_up_end in made_up_ends}
        assert statuses == {RelayStatus.REPLACED, RelayStatus.TIMED_OUT}
        dialler.transport.loseConnection()
        await until(lambda: quiet(running))
    finally:
        await running.stop()


async def refused_as(connecting: Deferred[Ends]) -> RelayStatus | None:
    """The status a relay end's connection was refused with."""
    with pytest.raises(RelayRefused) as caught:
        await within(connecting)
    return caught.value.status


@pytest_twisted.ensureDeferred
async def test_a_table_gets_its_links_and_bytes_and_no_more_and_a_silent_link_is_cut() -> None:
    """Past the table's links at once the relay answers busy; past its bytes every link of
    the table is cut and it relays no more for it; a spliced link silent for the idle time
    is cut."""
    clock = Clock()
    running = await lobby(clock, relay_links_per_table=2, relay_bytes_per_table=4096)
    try:
        seats = table(*(Identity.generate() for _ in range(3)))
        running.factory.relay.introduce(seats.roster)
        dialler, accepter = await spliced(running, seats.link(0, 1))
        zero_two = end(running, RelayRole.DIALS, seats.link(0, 2)).connect(
            Factory.forProtocol(Ends)
        )
        await until(lambda: ends_waiting(running) == 1)
        assert await refused(end(running, RelayRole.ACCEPTS, seats.link(2, 0))) == (
            RelayStatus.BUSY
        )
        dialler.transport.write(bytes(3000))
        await accepter.when(lambda e: len(e.received) == 3000)
        dialler.transport.write(bytes(2000))
        await dialler.when(lambda e: e.gone)
        await accepter.when(lambda e: e.gone)
        assert await refused(end(running, RelayRole.DIALS, seats.link(1, 2))) == (RelayStatus.BUSY)
        other = table(*(Identity.generate() for _ in range(3)))
        running.factory.relay.introduce(other.roster)
        dialler, accepter = await spliced(running, other.link(0, 1))
        clock.advance(LobbyLimits().relay_idle_seconds + 2)
        await dialler.when(lambda e: e.gone)
        await accepter.when(lambda e: e.gone)
        with pytest.raises(RelayRefused) as late:  # the dialler of 0-2 waited all along
            await within(zero_two)
        assert late.value.status == RelayStatus.TIMED_OUT
        await until(lambda: quiet(running))
    finally:
        await running.stop()


@pytest_twisted.ensureDeferred
async def test_a_non_player_abusing_the_relay_costs_the_lobby_a_bounded_amount() -> None:
    """Random pair ids are refused at once and leave nothing held; connections that say
    nothing, or half a request, are held at most so many, from one address and in all, and
    each for a bounded time; bytes sent before the splice cut the connection; through it all
    the lobby relays a real table's link."""
    clock = Clock()
    limits = dict(
        max_connections=20,
        hello_seconds=5.0,
        relay_unmatched=16,
        relay_unmatched_per_address=8,
        relay_request_seconds=5.0,
    )
    running = await lobby(clock, **limits)
    relay = running.factory.relay
    front = running.service.getServiceNamed("listener").front
    try:
        statuses = [await refused(end(running, RelayRole(n % 2), made_up())) for n in range(100)]
        assert set(statuses) == {RelayStatus.UNKNOWN}
        await until(lambda: quiet(running))

        silent = [await raw(running, b"") for _ in range(30)]
        await until(lambda: sum(not s.gone for s in silent) == 20)
        assert len(front.undecided) == 20
        clock.advance(6)
        for connection in silent:
            await connection.when(lambda e: e.gone)
        assert not front.undecided

        halves = [await raw(running, RELAY_MAGIC) for _ in range(12)]
        await until(lambda: sum(not h.gone for h in halves) == 8)
        assert len(relay.unmatched) == 8
        refusals = [h.received for h in halves if h.gone]
        assert all(r.endswith(bytes([RelayStatus.BUSY])) for r in refusals), refusals

        seats = table(*(Identity.generate() for _ in range(3)))
        relay.introduce(seats.roster)
        link = seats.link(0, 1)
        early = await raw(running, encode_request(RelayRole.DIALS, *link) + b"too soon")
        await early.when(lambda e: e.gone)
        clock.advance(6)
        for half in halves:
            await half.when(lambda e: e.gone)
        await until(lambda: quiet(running))

        dialler, accepter = await spliced(running, link)
        dialler.transport.write(b"still relaying")
        await accepter.when(lambda e: bytes(e.received) == b"still relaying")
        dialler.transport.loseConnection()
        await accepter.when(lambda e: e.gone)
    finally:
        await running.stop()


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_real_bean_lobby_relays_the_table_it_introduced_and_not_with_no_relay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bean-lobby process: three players quick-match and get the roster; two of them meet
    at the relay with their link's pair id and secret and are spliced, and `bean-client
    netcheck` says the lobby relays. A bean-lobby run with --no-relay answers that it does not
    relay, and netcheck says so."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    env = isolated_env(tmp_path)
    with lobby_process(env) as (port, _):
        players = [LobbyClient(reactor, Identity.generate()) for _ in range(3)]
        try:
            for n, player in enumerate(players):
                await within(player.connect(LOCAL, port))
                await within(player.hello(f"p{n}", 4000 + n))
            games = [player.next_game() for player in players]
            for player in players:
                await within(player.quick_match(3))
            roster: GameStart = await within(games[0])
        finally:
            for player in players:
                await within(player.close())
        by_key = {player.identity.public_key: player.identity for player in players}
        seats = Table(roster, tuple(by_key[seat.public_key] for seat in roster.seats))
        ends = [
            RelayEndpoint(reactor, LOCAL, port, role, *seats.link(seat, 2 - seat)).connect(
                Factory.forProtocol(Ends)
            )
            for role, seat in zip(RelayRole, (0, 2), strict=True)
        ]
        dialler, accepter = [await within(one) for one in ends]
        dialler.transport.write(b"through a real lobby")
        await accepter.when(lambda e: bytes(e.received) == b"through a real lobby")
        accepter.transport.loseConnection()
        await dialler.when(lambda e: e.gone)
        said = netcheck(port, env)
        assert said.startswith(f"The lobby at {LOCAL}:{port} relays: players who cannot"), said
    command = [str(BIN / "bean-lobby"), "--listen", f"tcp:0:interface={LOCAL}", "--no-relay"]
    with lobby_process(env, command=command) as (port, _):
        asking = RelayEndpoint(reactor, LOCAL, port, RelayRole.DIALS, *seats.link(0, 2))
        with pytest.raises(RelayRefused) as off:
            await within(asking.connect(Factory.forProtocol(Ends)))
        assert off.value.status == RelayStatus.OFF
        said = netcheck(port, env)
        assert "does not relay (it runs with --no-relay)" in said, said


def netcheck(port: int, env: dict[str, str]) -> str:
    """What `bean-client netcheck` says of the lobby on `port`."""
    done = subprocess.run(
        [str(BIN / "bean-client"), "netcheck", f"{LOCAL}:{port}"],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout.decode()


def test_netcheck_says_when_another_program_answers_on_the_lobby_port(tmp_path):
    """A web server (or anything but a bean-lobby) on the port: netcheck says that something
    answered, but not as a relay does, and what may be there, instead of a stack trace."""

    class WebServer(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(64)
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")

    with socketserver.TCPServer((LOCAL, 0), WebServer) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            said = netcheck(server.server_address[1], isolated_env(tmp_path))
        finally:
            server.shutdown()
    assert "did not answer as a bean-lobby relay does" in said, said
    assert "Another program may listen on that port" in said, said
    assert "Traceback" not in said
