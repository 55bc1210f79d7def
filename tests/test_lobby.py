"""The lobby over real TCP on 127.0.0.1, through the real client: every message and flow."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import DeferredList, gatherResults
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock

from client.net import LobbyClient, LobbyDisconnected, LobbyError, accept, channel_binding
from lobby.limits import LobbyLimits
from protocol.identity import Identity
from protocol.messages import (
    HELLO_DOMAIN,
    PROTOCOL_VERSION,
    MessageError,
    RoomOptions,
    frame,
    hello_signed_payload,
)
from protocol.table import RoomTerms
from tests.lobby_support import (
    Clients,
    Recorder,
    RunningLobby,
    connect_raw,
    start_lobby,
    within,
)


@pytest_twisted.async_yield_fixture
async def lobby() -> Any:
    running = await start_lobby()
    yield running
    await running.stop()


@pytest_twisted.async_yield_fixture
async def clients(lobby: RunningLobby) -> Any:
    made = Clients(lobby.port)
    yield made
    await made.close()


async def refused(deferred: Any) -> LobbyError:
    """The LobbyError a request fails with (the test fails if it succeeds)."""
    try:
        await within(deferred)
    except LobbyError as error:
        return error
    raise AssertionError("the lobby accepted a request it should have refused")


def recorder(client: LobbyClient) -> Recorder:
    assert isinstance(client.listener, Recorder)
    return client.listener


def game_started(client: LobbyClient) -> Any:
    return within(client.next_game())


# -- hello ------------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_hello_is_welcomed_with_the_address_the_lobby_sees(clients: Clients) -> None:
    client = await clients.connect()
    welcome = await within(client.hello("Ann", 4123))
    assert welcome.name == "Ann"
    assert welcome.host == "127.0.0.1"
    assert welcome.idle_seconds == LobbyLimits().idle_seconds
    assert (await within(client.ping())) is None


@pytest_twisted.ensureDeferred
async def test_names_are_unique_ignoring_case_and_a_refused_hello_can_be_retried(
    clients: Clients,
) -> None:
    ann = await clients.player("Ann")
    other = await clients.connect()
    for taken in ("Ann", "ANN", "ａｎｎ"):
        error = await refused(other.hello(taken, 4000))
        assert error.code == "name_taken" and not error.fatal
        assert "taken" in str(error)
    assert (await within(other.hello("Bob", 4000))).name == "Bob"
    await within(ann.close())
    again = await clients.connect()
    assert (await within(again.hello("ann", 4000))).name == "ann"


@pytest_twisted.ensureDeferred
async def test_one_key_cannot_be_in_the_lobby_twice(clients: Clients) -> None:
    first = await clients.player("Ann")
    twin = LobbyClient(reactor, first.identity, Recorder())
    clients.all.append(twin)
    await within(twin.connect("127.0.0.1", clients.port))
    error = await refused(twin.hello("Ann2", 4000))
    assert error.code == "key_in_use" and not error.fatal


@pytest_twisted.ensureDeferred
async def test_a_hello_signed_over_another_nonce_is_refused_and_dropped(
    lobby: RunningLobby,
) -> None:
    raw = await connect_raw(lobby.port)
    await raw.has_received(1)  # the challenge
    identity = Identity.generate()
    payload = hello_signed_payload(
        bytes(32), "Mallory", identity.public_key, 4000, channel_binding(raw.transport)
    )
    hello = {
        "type": "hello",
        "version": PROTOCOL_VERSION,
        "req": 7,
        "name": "Mallory",
        "public_key": identity.public_key,
        "peer_port": 4000,
        "signature": identity.sign(HELLO_DOMAIN, payload).signature,
    }
    raw.transport.write(frame(msgpack.packb(hello), 4096))
    await within(raw.closed)
    [error] = raw.errors()
    assert (error.code, error.req, error.fatal) == ("bad_signature", 7, True)


@pytest_twisted.ensureDeferred
async def test_a_hello_with_another_protocol_version_is_told_so_and_dropped(
    lobby: RunningLobby,
) -> None:
    raw = await connect_raw(lobby.port)
    other = PROTOCOL_VERSION + 1
    hello = {"type": "hello", "version": other, "req": 1, "name": "Zed", "future_field": True}
    raw.transport.write(frame(msgpack.packb(hello), 4096))
    await within(raw.closed)
    [error] = raw.errors()
    assert error.code == "version_mismatch" and error.fatal and error.req == 1
    assert "version" in error.message and str(other) in error.message


@pytest_twisted.ensureDeferred
async def test_the_client_refuses_a_lobby_of_another_protocol_version() -> None:
    class FutureLobby(Protocol):
        def connectionMade(self) -> None:
            challenge = {"type": "challenge", "version": PROTOCOL_VERSION + 1, "nonce": bytes(32)}
            self.transport.write(frame(msgpack.packb(challenge), 4096))

    port = await within(
        TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(
            accept(Factory.forProtocol(FutureLobby), Identity.generate(), False, reactor)
        )
    )
    try:
        client = LobbyClient(reactor, Identity.generate(), Recorder())
        with pytest.raises(LobbyError) as caught:
            await within(client.connect("127.0.0.1", port.getHost().port))
        assert caught.value.code == "version_mismatch"
        assert not client.connected
    finally:
        await within(port.stopListening())


@pytest_twisted.ensureDeferred
async def test_requests_before_hello_are_refused_and_the_connection_dropped(
    lobby: RunningLobby,
) -> None:
    raw = await connect_raw(lobby.port)
    raw.transport.write(frame(msgpack.packb({"type": "list_rooms", "req": 3}), 4096))
    await within(raw.closed)
    [error] = raw.errors()
    assert (error.code, error.req, error.fatal) == ("hello_first", 3, True)


@pytest_twisted.ensureDeferred
async def test_a_second_hello_is_refused(clients: Clients) -> None:
    ann = await clients.player("Ann")
    error = await refused(ann.hello("Ann", 4000))
    assert error.code == "already_said_hello" and not error.fatal


# -- rooms ------------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_create_list_join_ready_and_start(clients: Clients) -> None:
    ann, bob, cat = [await clients.player(n, 4000 + i) for i, n in enumerate(["Ann", "Bob", "Cat"])]
    options = RoomOptions(singleton_rule="rio_grande_literal", proofs=False, turn_seconds=90)
    room = await within(ann.create_room("Beans", 3, options))
    assert (room.name, room.seats, room.options) == ("Beans", 3, options)
    assert [(m.name, m.ready) for m in room.members] == [("Ann", False)]

    listing = await within(bob.list_rooms())
    assert listing.total == 1
    [summary] = listing.rooms
    assert (summary.room_id, summary.taken, summary.seats) == (room.room_id, 1, 3)

    assert [m.name for m in (await within(bob.join(room.room_id))).members] == ["Ann", "Bob"]
    await recorder(ann).when(lambda r: ("member_joined", "Bob") in r.events)
    await within(cat.join(room.room_id))
    await recorder(bob).when(lambda r: ("member_joined", "Cat") in r.events)
    assert [m.name for m in ann.room.members] == ["Ann", "Bob", "Cat"]
    # The terms each joined for, a roster is checked against: seats and options.
    assert ann.terms == bob.terms == cat.terms == RoomTerms(3, options)

    starts = [game_started(c) for c in (ann, bob, cat)]
    for client in (ann, bob, cat):
        await within(client.ready())
    rosters = [await start for start in starts]
    assert len({r.game_id for r in rosters}) == 1 and len(rosters[0].game_id) == 16
    roster = rosters[0]
    assert all(r == roster for r in rosters)
    assert roster.options == options
    assert [(s.name, s.public_key, s.host, s.port) for s in roster.seats] == [
        ("Ann", ann.identity.public_key, "127.0.0.1", 4000),
        ("Bob", bob.identity.public_key, "127.0.0.1", 4001),
        ("Cat", cat.identity.public_key, "127.0.0.1", 4002),
    ]
    assert ann.room is None and bob.room is None
    assert (await within(ann.list_rooms())).total == 0  # the lobby forgot the room


@pytest_twisted.ensureDeferred
async def test_a_full_room_waits_until_everyone_is_ready(clients: Clients) -> None:
    ann, bob, cat = [await clients.player(n) for n in ("Ann", "Bob", "Cat")]
    room = await within(ann.create_room("Wait", 3))
    for client in (bob, cat):
        await within(client.join(room.room_id))
    await within(ann.ready())
    await within(bob.ready())
    await within(bob.ready(False))
    await recorder(cat).when(
        lambda r: (
            r.rooms[-1] is not None
            and [m.ready for m in r.rooms[-1].members] == [True, False, False]
        )
    )
    await within(cat.ready())
    assert ann.room is not None  # Bob is not ready: no start
    start = game_started(ann)
    await within(bob.ready())
    assert [s.name for s in (await start).seats] == ["Ann", "Bob", "Cat"]


@pytest_twisted.ensureDeferred
async def test_a_member_who_leaves_before_the_start_is_replaced(clients: Clients) -> None:
    ann, bob, cat, dan = [await clients.player(n) for n in ("Ann", "Bob", "Cat", "Dan")]
    room = await within(ann.create_room("Leavers", 3))
    await within(bob.join(room.room_id))
    await within(cat.join(room.room_id))
    await within(cat.leave())
    assert cat.room is None
    for client in (ann, bob):
        await recorder(client).when(lambda r: ("member_left", "Cat", "left") in r.events)
    assert [m.name for m in ann.room.members] == ["Ann", "Bob"]
    await within(dan.join(room.room_id))
    starts = [game_started(c) for c in (ann, bob, dan)]
    for client in (ann, bob, dan):
        await within(client.ready())
    assert [s.name for s in (await starts[2]).seats] == ["Ann", "Bob", "Dan"]
    assert cat.room is None and "game_starting" not in recorder(cat).kinds()


@pytest_twisted.ensureDeferred
async def test_a_client_that_disconnects_leaves_its_room_and_frees_its_name(
    clients: Clients,
) -> None:
    ann, bob = [await clients.player(n) for n in ("Ann", "Bob")]
    room = await within(ann.create_room("Drop", 4))
    await within(bob.join(room.room_id))
    await within(bob.close())
    await recorder(ann).when(lambda r: ("member_left", "Bob", "disconnected") in r.events)
    assert [m.name for m in ann.room.members] == ["Ann"]
    assert isinstance(recorder(bob).of_kind("disconnected")[0][1], LobbyDisconnected)
    again = await clients.player("Bob")
    assert (await within(again.join(room.room_id))).room_id == room.room_id


@pytest_twisted.ensureDeferred
async def test_full_rooms_missing_rooms_and_being_in_the_wrong_place_are_refused(
    clients: Clients,
) -> None:
    ann, bob, cat, dan = [await clients.player(n) for n in ("Ann", "Bob", "Cat", "Dan")]
    room = await within(ann.create_room("Full", 3))
    await within(bob.join(room.room_id))
    await within(cat.join(room.room_id))
    error = await refused(dan.join(room.room_id))
    assert error.code == "room_full" and not error.fatal
    assert (await refused(dan.join(room.room_id + 1000))).code == "no_such_room"
    assert (await refused(ann.create_room("Another", 3))).code == "already_in_room"
    assert (await refused(bob.join(room.room_id))).code == "already_in_room"
    assert (await refused(cat.quick_match(3))).code == "already_in_room"
    for request in (dan.leave(), dan.ready(), dan.chat("hello?")):
        assert (await refused(request)).code == "not_in_room"
    assert (await within(dan.ping())) is None  # refusals are not fatal


@pytest_twisted.ensureDeferred
async def test_several_rooms_fill_at_once(clients: Clients) -> None:
    sizes = [3, 4, 5, 7]
    hosts = [await clients.player(f"Host{size}") for size in sizes]
    rooms = [await within(h.create_room(f"Room {s}", s)) for h, s in zip(hosts, sizes, strict=True)]
    guests = {
        room.room_id: [await clients.player(f"G{room.seats}-{i}") for i in range(room.seats - 1)]
        for room in rooms
    }
    everyone = {
        room.room_id: [host, *guests[room.room_id]] for host, room in zip(hosts, rooms, strict=True)
    }
    starts = {id(c): game_started(c) for members in everyone.values() for c in members}
    joins = [g.join(room_id) for room_id, gs in guests.items() for g in gs]
    await within(gatherResults(joins))
    await within(gatherResults([c.ready() for members in everyone.values() for c in members]))
    game_ids = set()
    for room in rooms:
        members = everyone[room.room_id]
        rosters = [await starts[id(c)] for c in members]
        assert all(r == rosters[0] for r in rosters)
        assert rosters[0].room_id == room.room_id
        assert {s.public_key for s in rosters[0].seats} == {c.identity.public_key for c in members}
        game_ids.add(rosters[0].game_id)
    assert len(game_ids) == len(rooms)


@pytest_twisted.ensureDeferred
async def test_quick_match_fills_rooms_of_the_asked_size_and_options(clients: Clients) -> None:
    fives = [await clients.player(f"Five{i}") for i in range(10)]
    threes = [await clients.player(f"Three{i}") for i in range(3)]
    fast = RoomOptions(proofs=False)
    starts = {id(c): game_started(c) for c in fives + threes}
    quick = [c.quick_match(5) for c in fives] + [c.quick_match(3, fast) for c in threes]
    rooms = await within(gatherResults(quick))
    assert all(room.seats == 5 for room in rooms[:10]) and rooms[10].options == fast
    assert len({room.room_id for room in rooms[:10]}) == 2
    rosters = [await starts[id(c)] for c in fives + threes]
    assert len({r.game_id for r in rosters[:10]}) == 2
    assert all(len(r.seats) == 5 for r in rosters[:10])
    assert {len(r.seats) for r in rosters[10:]} == {3} and rosters[10].options == fast


@pytest_twisted.ensureDeferred
async def test_quick_match_joins_a_waiting_room_that_was_created_by_hand(
    clients: Clients,
) -> None:
    ann, bob = [await clients.player(n) for n in ("Ann", "Bob")]
    room = await within(ann.create_room("Open", 3))
    joined = await within(bob.quick_match(3))
    assert joined.room_id == room.room_id
    assert [(m.name, m.ready) for m in joined.members] == [("Ann", False), ("Bob", True)]


@pytest_twisted.ensureDeferred
async def test_chat_reaches_every_member_of_the_room_in_order(clients: Clients) -> None:
    ann, bob, out = [await clients.player(n) for n in ("Ann", "Bob", "Out")]
    room = await within(ann.create_room("Talk", 3))
    await within(bob.join(room.room_id))
    await within(ann.chat("beans?"))
    await within(bob.chat("always ☕"))
    for client in (ann, bob):
        await recorder(client).when(lambda r: len(r.of_kind("chat")) == 2)
        assert recorder(client).of_kind("chat") == [
            ("chat", "Ann", "beans?"),
            ("chat", "Bob", "always ☕"),
        ]
    assert recorder(out).of_kind("chat") == []


@pytest_twisted.ensureDeferred
async def test_the_client_checks_a_request_before_sending_it(clients: Clients) -> None:
    ann = await clients.player("Ann")
    for bad in (
        lambda: ann.create_room("Too big", 8),
        lambda: ann.chat("\x1b[2J"),
        lambda: ann.quick_match(2),
    ):
        with pytest.raises(MessageError):
            await within(bad())
    assert (await within(ann.list_rooms())).total == 0


# -- caps and expiry --------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_rooms_players_and_connections_are_capped() -> None:
    lobby = await start_lobby(LobbyLimits(max_rooms=1, max_players=2, max_connections=3))
    clients = Clients(lobby.port)
    try:
        ann, bob = [await clients.player(n) for n in ("Ann", "Bob")]
        await within(ann.create_room("Only", 3))
        assert (await refused(bob.create_room("Second", 3))).code == "too_many_rooms"
        assert (await refused(bob.quick_match(4))).code == "too_many_rooms"
        third = await clients.connect()
        error = await refused(third.hello("Cat", 4000))
        assert error.code == "lobby_full" and error.fatal
        await recorder(third).when(lambda r: "disconnected" in r.kinds())

        await clients.connect()  # the third connection: allowed
        raw = await connect_raw(lobby.port)  # the fourth: told and dropped
        await within(raw.closed)
        assert [e.code for e in raw.errors()] == ["lobby_full"]
    finally:
        await clients.close()
        await lobby.stop()


@pytest_twisted.ensureDeferred
async def test_silent_connections_expire_on_the_lobby_clock() -> None:
    clock = Clock()
    limits = LobbyLimits(hello_seconds=10, idle_seconds=60, tick_seconds=1)
    lobby = await start_lobby(limits, clock)
    clients = Clients(lobby.port)
    try:
        raw = await connect_raw(lobby.port)
        ann, bob = [await clients.player(n) for n in ("Ann", "Bob")]
        room = await within(ann.create_room("Idle", 3))
        await within(bob.join(room.room_id))

        clock.advance(11)  # past hello_seconds: the silent raw connection goes
        await within(raw.closed)
        assert [(e.code, e.fatal) for e in raw.errors()] == [("idle_timeout", True)]
        assert ann.connected and bob.connected

        clock.advance(30)
        await within(ann.ping())  # Ann shows she is alive; Bob stays silent
        clock.advance(31)  # Bob: 61 s without a word
        await recorder(bob).when(lambda r: "disconnected" in r.kinds())
        assert recorder(bob).of_kind("dropped")[0][1].code == "idle_timeout"
        await recorder(ann).when(lambda r: ("member_left", "Bob", "idle") in r.events)
        assert ann.connected
    finally:
        await clients.close()
        await lobby.stop()


@pytest_twisted.ensureDeferred
async def test_stopping_the_lobby_disconnects_its_clients() -> None:
    lobby = await start_lobby()
    clients = Clients(lobby.port)
    ann = await clients.player("Ann")
    pending = ann.list_rooms()
    await lobby.stop()
    results = await within(DeferredList([pending], consumeErrors=True))
    assert not ann.connected
    assert results[0][0] or isinstance(results[0][1].value, LobbyDisconnected)
    await clients.close()
