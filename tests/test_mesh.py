"""The peer mesh over real TCP on 127.0.0.1: authenticated links, redial, hostile bytes."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import pytest
import pytest_twisted
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import reactor
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.internet.error import ConnectionAborted, ConnectionDone
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock, deferLater
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from client.net import LinkLoss, Mesh, MeshHandler, PeerListener, sealed
from client.net.mesh import (
    CLOSE_GRACE,
    MAX_PENDING,
    MAX_PENDING_PER_ADDRESS,
    PeerLink,
    address_of,
)
from protocol.cards import MAX_PLAYERS
from protocol.identity import Identity
from protocol.messages import PROTOCOL_VERSION, GameStart, Message, RoomOptions, Seat, encode, frame
from protocol.peer_messages import HANDSHAKE_MAX_FRAME, PeerChat, PeerHello, TableRefusal
from tests.link_flood import Flood
from tests.relay import UP, Block, DropUnits, FlipBytes, Inject, Relay, Replay, Tamper, tls_records
from tests.waiting import Watched, within


class Events(MeshHandler, Watched):
    def __init__(self) -> None:
        Watched.__init__(self)
        self.up: set[int] = set()
        self.ever_up: set[int] = set()
        self.downs: list[tuple[int, str]] = []
        self.losses: list[tuple[int, LinkLoss]] = []
        self.messages: list[tuple[int, Message]] = []

    def link_up(self, seat: int) -> None:
        self.up.add(seat)
        self.ever_up.add(seat)
        self.changed()

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> None:
        self.up.discard(seat)
        self.downs.append((seat, reason))
        self.losses.append((seat, loss))
        self.changed()

    def received(self, seat: int, message: Message) -> None:
        self.messages.append((seat, message))
        self.changed()


@dataclass
class Table:
    listeners: list[PeerListener]
    meshes: list[Mesh]
    events: list[Events]
    extra: list[Any] = field(default_factory=list)
    extra_closers: list[Callable[[], Any]] = field(default_factory=list)

    async def close(self) -> None:
        for mesh in self.meshes:
            await within(mesh.close())
        for listener in self.listeners:
            await within(listener.stop())
        for thing in self.extra:
            thing.transport.abortConnection()
        for closer in self.extra_closers:
            await within(closer())


async def table(
    players: int, impostor: int | None = None, start: bool = True, events: type[Events] = Events
) -> Table:
    """Meshes for one game on 127.0.0.1; the impostor seat signs with a key not in the roster."""
    identities = [Identity.generate() for _ in range(players)]
    actual = [Identity.generate() if i == impostor else identities[i] for i in range(players)]
    listeners = [PeerListener(reactor, actual[i], unknown_game_wait=0.5) for i in range(players)]
    ports = [await within(listener.listen("tcp:0:interface=127.0.0.1")) for listener in listeners]
    roster = GameStart(
        room_id=1,
        game_id=secrets.token_bytes(16),
        seats=tuple(
            Seat(f"p{i}", identities[i].public_key, "127.0.0.1", ports[i]) for i in range(players)
        ),
        options=RoomOptions(),
    )
    handlers = [events() for _ in range(players)]
    meshes = []
    for seat in range(players):
        meshes.append(
            Mesh(reactor, actual[seat], roster, seat, handlers[seat], listeners[seat], (0.05, 0.1))
        )
    if start:
        for mesh in meshes:
            mesh.start()
    return Table(listeners, meshes, handlers)


def everyone_but(seat: int, players: int) -> set[int]:
    return set(range(players)) - {seat}


@pytest_twisted.ensureDeferred
async def test_every_pair_of_seats_gets_one_authenticated_link_and_messages_name_their_sender():
    t = await table(4)
    try:
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 4))
        for seat, mesh in enumerate(t.meshes):
            mesh.broadcast(PeerChat(f"hello from {seat}"))
        for seat, events in enumerate(t.events):
            await events.when(lambda e: len(e.messages) == 3)
            assert {(s, m.text) for s, m in events.messages} == {
                (other, f"hello from {other}") for other in everyone_but(seat, 4)
            }
        assert all(len(mesh.links) == 3 for mesh in t.meshes)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_seat_that_cannot_prove_its_roster_key_gets_no_link():
    t = await table(3, impostor=1)
    try:
        await t.events[0].when(lambda e: e.up == {2})
        await t.events[2].when(lambda e: e.up == {0})
        # Seat 0 keeps redialling the impostor; every attempt fails the handshake, and no
        # honest seat ever takes the impostor for seat 1.
        await t.events[0].when(lambda e: len([d for d in e.downs if d[0] == 1]) >= 2)
        assert 1 not in t.events[0].ever_up and 1 not in t.events[2].ever_up
    finally:
        await t.close()


class Refusing(Events):
    """A seat that has refused its table: it says so first on every link (`said`), and
    records the wrong keys the mesh reports."""

    said: ClassVar[list[Message]] = []

    def __init__(self) -> None:
        super().__init__()
        self.wrong: list[tuple[int, bytes | None, bool]] = []

    def wrong_key(self, seat: int, shown: bytes | None, dialled: bool) -> None:
        self.wrong.append((seat, shown, dialled))
        self.changed()

    def said_first(self) -> list[Message]:
        return self.said


def refusals(game: bytes, count: int) -> list[Message]:
    return [
        TableRefusal(game, 0, f"refusal {n}", b"roster", signature=bytes(64)) for n in range(count)
    ]


@pytest_twisted.ensureDeferred
async def test_a_seat_at_a_wrong_key_hears_only_the_refusals_said_first_and_gets_no_link():
    """Seat 0 dials the impostor at seat 1, and the impostor dials seat 2: each honest end
    reports the wrong key (with which side dialled) and says its refusals before the link
    closes; the impostor reads them and never gets a link."""
    t = await table(3, impostor=1, start=False, events=Refusing)
    Refusing.said = refusals(t.meshes[0].roster.game_id, 2)
    shown = t.meshes[1].identity.public_key
    try:
        for mesh in t.meshes:
            mesh.start()
        await t.events[0].when(lambda e: (1, shown, True) in e.wrong)
        await t.events[2].when(lambda e: (1, shown, False) in e.wrong)
        heard = t.events[1]
        await heard.when(lambda e: len([m for m in e.messages if m[1] in Refusing.said]) >= 4)
        assert 1 not in t.events[0].ever_up and 1 not in t.events[2].ever_up
        assert t.events[1].ever_up == set()
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_link_carries_at_most_a_table_of_refusals_before_its_hello():
    t = await table(3, start=False, events=Refusing)
    Refusing.said = refusals(t.meshes[0].roster.game_id, MAX_PLAYERS + 1)
    try:
        t.meshes[0].redial_delays = (30.0,)  # one link: what it carried is all seat 1 read
        t.meshes[1].start()
        t.meshes[0].start()  # dials seat 1: says eight refusals first
        await t.events[0].when(lambda e: any(d[0] == 1 for d in e.downs))
        read = [m for m in t.events[1].messages if m[1] in Refusing.said]
        assert 0 < len(read) <= MAX_PLAYERS
        assert 1 not in t.events[0].ever_up
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_dropped_link_is_dialled_again():
    t = await table(3)
    try:
        await t.events[2].when(lambda e: e.up == {0, 1})
        await t.events[0].when(lambda e: 2 in e.up)
        t.meshes[0].links[2].transport.abortConnection()
        await t.events[2].when(lambda e: any(d[0] == 0 for d in e.downs))
        await t.events[2].when(lambda e: e.up == {0, 1})
        await t.events[0].when(lambda e: any(d[0] == 2 for d in e.downs) and 2 in e.up)
        t.meshes[0].send(2, PeerChat("still here"))
        await t.events[2].when(lambda e: (0, PeerChat("still here")) in e.messages)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_lost_link_says_what_kind_of_loss_it_was():
    """A client that ends closes its links (CLOSED), and its port then refuses the redial
    (NOT_LISTENING); a link dropped for silence is SILENT here and BROKEN at the other end."""
    t = await table(3)
    try:
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 3))
        t.meshes[0].drop(2, "no word for a while")
        await t.events[0].when(lambda e: (2, LinkLoss.SILENT) in e.losses)
        await t.events[2].when(lambda e: (0, LinkLoss.BROKEN) in e.losses)
        await within(t.listeners.pop(1).stop())
        await within(t.meshes[1].close())
        await t.events[2].when(lambda e: (1, LinkLoss.CLOSED) in e.losses)
        await t.events[0].when(lambda e: (1, LinkLoss.NOT_LISTENING) in e.losses)
        assert (1, LinkLoss.CLOSED) in t.events[0].losses  # before the redial was refused
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_peer_may_dial_before_this_client_has_read_the_roster():
    t = await table(3, start=False)
    try:
        t.meshes[0].start()  # dials seats 1 and 2, whose meshes do not exist yet
        t.meshes[2].start()
        t.meshes[1].start()
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 3))
    finally:
        await t.close()


class Raw(Protocol, Watched):
    def __init__(self) -> None:
        Watched.__init__(self)
        self.lost = False

    def connectionLost(self, reason: Any = None) -> None:
        self.lost = True
        self.changed()


async def raw_connection(port: int) -> Raw:
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
    return await within(endpoint.connect(Factory.forProtocol(Raw)))


@pytest_twisted.ensureDeferred
async def test_garbage_on_the_peer_port_is_dropped_and_the_game_goes_on():
    t = await table(3)
    try:
        await t.events[2].when(lambda e: e.up == {0, 1})
        port = t.listeners[2].port.getHost().port
        unknown = PeerHello(PROTOCOL_VERSION, secrets.token_bytes(16), 0)
        attacks = [
            secrets.token_bytes(300),
            (HANDSHAKE_MAX_FRAME + 1).to_bytes(4, "big") + b"x" * 10,
            frame(b"\xc1\xc1", HANDSHAKE_MAX_FRAME),
            frame(encode(PeerChat("before any handshake")), HANDSHAKE_MAX_FRAME),
            frame(encode(unknown), HANDSHAKE_MAX_FRAME),
        ]
        raws = []
        for attack in attacks:
            raw = await raw_connection(port)
            raw.transport.write(attack)
            raws.append(raw)
        t.extra.extend(raws)
        for raw in raws:
            await raw.when(lambda r: r.lost)
        t.meshes[0].send(2, PeerChat("unbothered"))
        await t.events[2].when(lambda e: (0, PeerChat("unbothered")) in e.messages)
        assert t.events[2].up == {0, 1}
    finally:
        await t.close()


# --- a machine on the path: the relay of tests/relay.py between seat 0 and seat 1 -------------


class Judged(Events):
    """Events that also record every verdict the mesh hands the driver."""

    def __init__(self) -> None:
        super().__init__()
        self.blamed: list[tuple[int, str]] = []

    def misbehaved(self, seat: int, reason: str) -> None:
        self.blamed.append((seat, reason))
        self.changed()


async def tampered_table(tamper: Tamper) -> tuple[Table, Relay]:
    """Three seats; seat 0's link to seat 1 crosses an on-path relay that applies `tamper`."""
    t = await table(3, start=False, events=Judged)
    one = t.meshes[1].roster.seats[1]
    relay = Relay(reactor, one.host, one.port, tamper=tamper)
    relay_port = await within(relay.listen())
    roster = t.meshes[0].roster
    seats = list(roster.seats)
    seats[1] = replace(one, port=relay_port)
    t.meshes[0].roster = replace(roster, seats=tuple(seats))
    t.extra_closers.append(relay.stop)
    for mesh in t.meshes:
        mesh.start()
    for seat, events in enumerate(t.events):
        await events.when(lambda e, s=seat: e.up == everyone_but(s, 3))
    return t, relay


def chat_frame(text: str) -> bytes:
    return frame(encode(PeerChat(text)), HANDSHAKE_MAX_FRAME)


async def first_words(t: Table, relay: Relay, tamper: Any) -> int:
    """Seat 0 says something to seat 1 through the relay; then the link is idle, the tamper
    is aimed at its connection, and the offset returned is where the next bytes from seat 0
    will start (a frame boundary)."""
    t.meshes[0].send(1, PeerChat("honest 0"))
    await t.events[1].when(lambda e: (0, PeerChat("honest 0")) in e.messages)
    (live,) = [record for record in relay.records if not record.ended]
    tamper.connections = frozenset({live.index})
    return len(live.captured[UP])


@pytest_twisted.ensureDeferred
async def test_an_eavesdropper_on_a_link_reads_no_message():
    t, relay = await tampered_table(Tamper())
    try:
        secret = "meet me behind the bean field at nine"
        for n in range(3):
            t.meshes[0].send(1, PeerChat(f"{secret} {n}"))
            t.meshes[1].send(0, PeerChat(f"{secret} {n}"))
        await t.events[1].when(lambda e: len(e.messages) == 3)
        await t.events[0].when(lambda e: len(e.messages) == 3)
        captured = relay.captured()
        assert len(captured) > 500
        for plain in (secret.encode(), b"chat", b"type", b"peer_hello", b"text"):
            assert plain not in captured, plain
    finally:
        await t.close()


async def after_the_attack(t: Table, relay: Relay, attacked: Any) -> None:
    """The attacked link is closed and dialled again, nobody is blamed, and a message sent
    afterwards arrives once, from its real sender; nothing the attacker made arrives."""
    t.meshes[0].send(1, PeerChat("honest 1"))
    await relay.when(lambda r: attacked())
    t.meshes[0].send(1, PeerChat("honest 1b"))  # a record after the attacked one
    await t.events[1].when(lambda e: any(d[0] == 0 for d in e.downs))
    await t.events[1].when(lambda e: 0 in e.up)
    await t.events[0].when(lambda e: 1 in e.up)
    assert len(relay.records) >= 2  # the tampered connection, then the redialled one
    t.meshes[0].send(1, PeerChat("honest 2"))
    await t.events[1].when(lambda e: (0, PeerChat("honest 2")) in e.messages)
    for events in t.events:
        assert events.blamed == []
    texts = [m.text for _, m in t.events[1].messages if isinstance(m, PeerChat)]
    sent = ["honest 0", "honest 1", "honest 1b", "honest 2"]
    assert texts == [text for text in sent if text in texts], texts  # each once, in order
    assert texts[0] == "honest 0" and texts[-1] == "honest 2", texts
    reasons = [reason for seat, reason in t.events[1].downs if seat == 0]
    assert any("nobody is blamed" in reason for reason in reasons), reasons


@pytest_twisted.ensureDeferred
async def test_a_flipped_byte_closes_the_link_blames_nobody_and_it_is_dialled_again():
    flip = FlipBytes(connections=frozenset(), direction=UP)
    t, relay = await tampered_table(flip)
    try:
        flip.offsets = (await first_words(t, relay, flip) + 12,)
        await after_the_attack(t, relay, lambda: flip.flipped == 1)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_an_injected_frame_is_never_taken_for_the_seat_and_blames_nobody():
    inject = Inject(connections=frozenset(), direction=UP, payload=chat_frame("injected"))
    t, relay = await tampered_table(inject)
    try:
        inject.at = await first_words(t, relay, inject)
        await after_the_attack(t, relay, lambda: inject.injected == 1)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_replayed_bytes_are_refused_and_blame_nobody():
    replay = Replay(connections=frozenset(), direction=UP)
    t, relay = await tampered_table(replay)
    try:
        (live,) = [record for record in relay.records if not record.ended]
        replay.start = len(live.captured[UP])
        replay.end = replay.after = await first_words(t, relay, replay)  # "honest 0" again, then on
        await after_the_attack(t, relay, lambda: replay.replayed == 1)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_dropping_chosen_records_breaks_the_link_not_the_seat():
    drop = DropUnits(connections=frozenset(), direction=UP, units=tls_records)
    t, relay = await tampered_table(drop)
    try:
        mark = await first_words(t, relay, drop)
        passed = {"bytes": mark}

        def the_next_one(unit: bytes) -> bool:
            at, passed["bytes"] = passed["bytes"], passed["bytes"] + len(unit)
            return at == mark

        drop.pick = the_next_one  # "honest 1" is dropped; what follows is out of sequence
        await after_the_attack(t, relay, lambda: drop.dropped == 1)
    finally:
        await t.close()


@pytest_twisted.ensureDeferred
async def test_a_one_way_block_swallows_messages_and_the_link_breaks_once_it_is_lifted():
    """tests/relay.py's Block on a sealed link: what seat 0 says while it lasts is lost, seat
    1's words still come through, and the first record after it breaks the link (out of
    sequence), which is dialled again, blaming nobody."""
    block = Block()
    t, relay = await tampered_table(block)
    try:
        t.meshes[0].send(1, PeerChat("honest 0"))
        await t.events[1].when(lambda e: (0, PeerChat("honest 0")) in e.messages)
        block.blocked.add(UP)
        t.meshes[0].send(1, PeerChat("swallowed"))
        await relay.when(lambda r: block.dropped[UP] > 0)
        t.meshes[1].send(0, PeerChat("the other way"))
        await t.events[0].when(lambda e: (1, PeerChat("the other way")) in e.messages)
        block.blocked.clear()
        t.meshes[0].send(1, PeerChat("after"))
        await t.events[1].when(lambda e: any(seat == 0 for seat, _ in e.downs))
        await t.events[1].when(lambda e: 0 in e.up)
        await t.events[0].when(lambda e: 1 in e.up)
        t.meshes[0].send(1, PeerChat("again"))
        await t.events[1].when(lambda e: (0, PeerChat("again")) in e.messages)
        texts = [m.text for seat, m in t.events[1].messages if seat == 0]
        assert texts == ["honest 0", "again"], texts
        assert len(relay.records) >= 2  # the broken connection, then the one dialled again
        for events in t.events:
            assert events.blamed == []
    finally:
        await t.close()


# --- a peer that stops reading ----------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_a_peer_that_stops_reading_is_cut_off_at_the_bound():
    """Seat 1 stops reading its link to seat 0, which keeps sending: what waits for seat 1
    is bounded (MAX_UNREAD_BYTES after the buffers filled), then the link is cut, reported
    as the link's doing, and nobody is blamed for it."""
    from client.net.mesh import MAX_UNREAD_BYTES
    from protocol.peer_messages import StepFrame

    t = await table(3, events=Judged)
    try:
        await t.events[0].when(lambda e: e.up == {1, 2})
        await t.events[1].when(lambda e: e.up == {0, 2})
        t.meshes[1].links[0].transport.pauseProducing()
        link = t.meshes[0].links[1]
        big = StepFrame(bytes(16), 1, 0, secrets.token_bytes(200_000))
        sent = 0
        while not link.closed and sent < 40 * MAX_UNREAD_BYTES:
            t.meshes[0].send(1, big)
            sent += 200_000
            unread = getattr(link, "unread", None)
            assert unread is None or unread <= MAX_UNREAD_BYTES + 300_000
            await within(deferLater(reactor, 0, lambda: None))
        assert link.closed, f"{sent} bytes were queued for a peer that does not read"
        await t.events[0].when(lambda e: 1 not in e.up)
        assert [reason for _, reason in t.events[0].blamed] == [
            reason for _, reason in t.events[0].blamed if "stopped reading" in reason
        ]
        assert any("stopped reading" in reason for _, reason in t.events[0].downs)
    finally:
        await t.close()


# --- a flood of links at the peer port (issue 26, problem 9) ----------------------------------


class Held(Watched):
    """What a listener held while links came: the most accepted links that were at once not
    yet in a game (TLS handshaking, or waiting for a hello or for their game), in all and from
    one address, and how many it accepted."""

    def __init__(self, listener: PeerListener) -> None:
        Watched.__init__(self)
        self.accepted = 0
        self.most = 0
        self.most_from_one = 0
        self._held: list[tuple[PeerLink, str]] = []
        build = listener.buildProtocol

        def counted(addr: Any) -> PeerLink | None:
            link = build(addr)
            if link is None:
                return None
            self._held = [
                (old, a) for old, a in self._held if not (old.closed or old.authenticated)
            ]
            self._held.append((link, addr.host))
            self.accepted += 1
            self.most = max(self.most, len(self._held))
            from_one = Counter(address for _, address in self._held).most_common(1)[0][1]
            self.most_from_one = max(self.most_from_one, from_one)
            self.changed()
            return link

        listener.buildProtocol = counted  # type: ignore[method-assign]


async def a_seat_dials_again_during(floods: list[dict[str, Any]]) -> Held:
    """Three seats; the floods (tests/link_flood.py, keyword arguments each) come at seat 2's
    peer port, where seats 0 and 1 dial in. Once 100 flood links came, seat 0's link to seat
    2 is cut; seat 0 dials again from 127.0.0.1 and must be back, and heard, while the floods
    go on. What seat 2's listener held."""
    t = await table(3)
    running: list[Flood] = []
    try:
        for seat, events in enumerate(t.events):
            await events.when(lambda e, s=seat: e.up == everyone_but(s, 3))
        held = Held(t.listeners[2])
        port = t.listeners[2].port.getHost().port
        running = [Flood(reactor, "127.0.0.1", **flood) for flood in floods]
        for flood in running:
            flood.start(port)
        await held.when(lambda h: h.accepted >= 100, 20)
        t.meshes[0].links[2].transport.abortConnection()
        await t.events[2].when(lambda e: any(d[0] == 0 for d in e.downs) and e.up == {0, 1}, 20)
        await t.events[0].when(lambda e: any(d[0] == 2 for d in e.downs) and 2 in e.up)
        t.meshes[0].send(2, PeerChat("through the flood"))
        await t.events[2].when(lambda e: (0, PeerChat("through the flood")) in e.messages)
        assert not any(flood.done.called for flood in running), "the floods ended first"
    finally:
        for flood in running:
            flood.stop()
        for flood in running:
            await within(flood.done)
        await t.close()
    return held


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_flood_from_a_seats_own_address_is_held_to_its_cap_and_the_seat_gets_through():
    """From 127.0.0.1, the seats' own address, 200 links a second for 4 s: TLS links with a
    fresh key each and a hello for a game nobody plays, and connections dripping their
    handshake. The listener never holds more than MAX_PENDING_PER_ADDRESS of them (the
    oldest goes), and seat 0, dialling again from that address in the midst of it, gets in."""
    held = await a_seat_dials_again_during(
        [
            dict(links=400, rate=100, hold=1.0),
            dict(links=400, rate=100, drip=True, every=0.5, hold=1.0),
        ]
    )
    assert held.most_from_one == MAX_PENDING_PER_ADDRESS, held.most_from_one


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_flood_from_many_addresses_is_held_to_the_cap_in_all_and_a_seat_gets_through():
    """Connections dripping their handshake from twelve addresses (127.0.0.2-13), 300 a second
    in all for 4 s: more than MAX_PENDING would be held at once; the listener holds at most
    that many in all and MAX_PENDING_PER_ADDRESS from each, and seat 0 dials in meanwhile."""
    floods = [
        dict(links=100, rate=25, drip=True, every=0.5, hold=1.0, bind=f"127.0.0.{n}")
        for n in range(2, 14)
    ]
    held = await a_seat_dials_again_during(floods)
    assert held.most == MAX_PENDING and held.most_from_one <= MAX_PENDING_PER_ADDRESS, vars(held)


IDENTITY = Identity.generate()


class _Transport(StringTransport):
    """A connection with no socket; as over TCP, one aborted is lost on the next turn."""

    def __init__(self, clock: Clock, link: PeerLink) -> None:
        super().__init__()
        self.clock, self.link = clock, link

    def setTcpNoDelay(self, enabled: bool) -> None:
        pass

    def abortConnection(self) -> None:
        if not self.disconnected:
            super().abortConnection()
            self.clock.callLater(0, self.link.connectionLost, Failure(ConnectionAborted()))


def accept(listener: PeerListener, host: str) -> PeerLink | None:
    """What the listening port does with a connection from `host` (no socket)."""
    link = listener.buildProtocol(IPv4Address("TCP", host, 50000))
    if link is not None:
        link.makeConnection(_Transport(listener.reactor, link))
    return link


def test_over_a_cap_the_oldest_link_of_the_address_holding_the_most_is_cut():
    clock = Clock()
    listener = PeerListener(clock, IDENTITY)
    first = [accept(listener, "10.0.0.1") for _ in range(MAX_PENDING_PER_ADDRESS)]
    newest = accept(listener, "10.0.0.1")
    assert first[0].closed and first[0] not in listener.pending
    assert not any(link.closed for link in [*first[1:], newest])
    others = [accept(listener, f"10.0.1.{n}") for n in range(MAX_PENDING - MAX_PENDING_PER_ADDRESS)]
    stranger = accept(listener, "10.0.2.1")  # one too many in all: 10.0.0.1 holds the most
    assert first[1].closed and len(listener.pending) == MAX_PENDING
    assert not any(link.closed for link in [*others, stranger])
    first[2].connectionLost(Failure(ConnectionDone()))  # a link that ends leaves room
    accept(listener, "10.0.2.2")
    assert not any(link.closed for link in [*first[3:], *others, stranger])


def test_a_burst_faster_than_the_reactor_turns_is_refused_once_many_cut_sockets_wait():
    """Each link cut for room keeps its socket until the reactor's next turn: once
    MAX_PENDING of them wait, new connections are refused at once, and taken again after."""
    clock = Clock()
    listener = PeerListener(clock, IDENTITY)
    burst = [accept(listener, "10.0.0.1") for _ in range(MAX_PENDING_PER_ADDRESS + MAX_PENDING)]
    assert None not in burst and len(listener.cut) == MAX_PENDING
    assert accept(listener, "10.0.0.2") is None
    sealed_port = sealed.accept(listener, IDENTITY, True, clock)  # what the real port calls
    assert sealed_port.buildProtocol(IPv4Address("TCP", "10.0.0.2", 1)) is None
    clock.advance(0)
    assert not listener.cut and accept(listener, "10.0.0.2") is not None


def test_a_link_refused_for_its_key_counts_against_the_caps_until_it_is_gone():
    """A link that names a seat of a game here but shows another key than the roster's is
    refused and parts (it may still read the refusals said to it, for up to CLOSE_GRACE):
    until its socket closes the listener still counts it as pending, so links showing wrong
    keys hold no more sockets than any other links not in a game."""
    clock = Clock()
    listener = PeerListener(clock, IDENTITY)
    keys = [Identity.generate().public_key for _ in range(3)]
    roster = GameStart(
        room_id=1,
        game_id=secrets.token_bytes(16),
        seats=tuple(Seat(f"p{i}", key, "127.0.0.1", 1) for i, key in enumerate(keys)),
        options=RoomOptions(),
    )
    handler = Refusing()
    listener.register(Mesh(clock, IDENTITY, roster, 2, handler, listener))
    link = accept(listener, "10.0.0.1")
    assert link is not None
    link.peer_key = Identity.generate().public_key  # what its certificate showed
    link._hello(PeerHello(PROTOCOL_VERSION, roster.game_id, 0))
    assert link.parting and handler.wrong == [(0, link.peer_key, False)]
    assert link in listener.pending
    clock.advance(CLOSE_GRACE)
    clock.advance(0)
    assert link.closed and link not in listener.pending


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["arrive", "arrive from many", "end", "turn"]),
            st.integers(0, 99),
            st.integers(1, 40),
        )
    )
)
def test_a_listener_never_holds_more_than_its_caps_and_never_cuts_the_newest(events):
    """For any order of links arriving (in bursts of 1-40, from one address or from as many),
    ending, and reactor turns: never more than the caps are pending nor cut and still open, a
    link let in is kept, and the one cut for it (at most one) is the oldest pending link of
    an address that held the most; a link is refused only while MAX_PENDING cut ones wait to
    close."""
    clock = Clock()
    listener = PeerListener(clock, IDENTITY)
    for kind, n, burst in events:
        if kind == "turn":
            clock.advance(0)
        elif kind == "end" and listener.pending:
            gone = list(listener.pending)[n % len(listener.pending)]
            gone.connectionLost(Failure(ConnectionDone()))
        elif kind == "arrive":
            for _ in range(burst):
                arrives_and_makes_room(listener, f"10.0.0.{n}")
        elif kind == "arrive from many":
            for i in range(burst):
                arrives_and_makes_room(listener, f"10.0.0.{(n + i) % 100}")
        assert len(listener.pending) <= MAX_PENDING and len(listener.cut) <= MAX_PENDING
        assert max(Counter(listener.pending.values()).values(), default=0) <= (
            MAX_PENDING_PER_ADDRESS
        )


def arrives_and_makes_room(listener: PeerListener, address: str) -> None:
    before, waiting = dict(listener.pending), len(listener.cut)
    link = accept(listener, address)
    if link is None:
        assert waiting == MAX_PENDING and listener.pending == before
        return
    assert link in listener.pending and not link.closed
    cut = [old for old in before if old not in listener.pending]
    assert len(cut) <= 1 and all(old.closed for old in cut)
    if cut:
        held = Counter([*before.values(), address])
        assert held[before[cut[0]]] == max(held.values())
        assert cut[0] == next(old for old, a in before.items() if a == before[cut[0]])


def test_links_from_one_ipv6_64_or_a_mapped_ipv4_count_as_one_address():
    assert address_of(IPv6Address("TCP", "2001:db8:1:2:aaaa::1", 1)) == "2001:db8:1:2::/64"
    assert address_of(IPv6Address("TCP", "2001:db8:1:2:bbbb::9", 2)) == "2001:db8:1:2::/64"
    assert address_of(IPv6Address("TCP", "::ffff:192.0.2.7", 3)) == "192.0.2.7"
    assert address_of(IPv4Address("TCP", "192.0.2.7", 4)) == "192.0.2.7"


@pytest_twisted.ensureDeferred
async def test_a_mesh_closed_while_a_dial_is_in_its_handshake_closes_that_link_too():
    """Seat 1's address answers TCP and says nothing more: the dial waits in its TLS
    handshake. Closing the mesh closes it too (a refusing seat closes its mesh while it still
    dials); the test's reactor check finds nothing left behind."""
    silent: list[Raw] = []
    server = await within(
        TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(
            Factory.forProtocol(lambda: silent.append(Raw()) or silent[-1])
        )
    )
    t = await table(3, start=False)
    seats = list(t.meshes[0].roster.seats)
    seats[1] = replace(seats[1], port=server.getHost().port)
    t.meshes[0].roster = replace(t.meshes[0].roster, seats=tuple(seats))
    t.extra_closers.append(server.stopListening)
    try:
        t.meshes[0].start()  # dials seat 1 (silent) and seat 2 (not started: it waits)
        await deferLater(reactor, 0.3, lambda: None)  # connected, the handshakes waiting
        assert len(silent) == 1 and not silent[0].lost
        await within(t.meshes[0].close(), 3)
        await silent[0].when(lambda raw: raw.lost, 2)  # not at the handshake timeout (10 s)
    finally:
        await t.close()
