"""The lobby's state machine without sockets: what it sends to whom, step by step."""

from __future__ import annotations

from typing import Any

import pytest

from lobby.limits import LobbyLimits, TokenBucket
from lobby.rooms import Drop, Effect, Lobby, Send
from protocol.identity import Identity
from protocol.messages import (
    HELLO_DOMAIN,
    PROTOCOL_VERSION,
    Challenge,
    Chat,
    ChatMessage,
    CreateRoom,
    Error,
    GameStart,
    Hello,
    Join,
    Joined,
    Leave,
    ListRooms,
    MemberJoined,
    MemberLeft,
    MemberReady,
    Ok,
    QuickMatch,
    Ready,
    RoomOptions,
    Rooms,
    Welcome,
    hello_signed_payload,
)


class Table:
    """A Lobby and its connections; records every effect per connection."""

    def __init__(self, **limits: Any) -> None:
        self.lobby = Lobby(LobbyLimits(**limits))
        self.now = 0.0
        self.nonces: dict[int, bytes] = {}
        self.next_conn = 1
        self.req = 100

    def connect(self) -> int:
        conn = self.next_conn
        self.next_conn += 1
        [send] = self.lobby.connect(conn, "10.0.0.9", self.now)
        assert isinstance(send, Send) and isinstance(send.message, Challenge)
        self.nonces[conn] = send.message.nonce
        return conn

    def hello(
        self, conn: int, name: str, identity: Identity | None = None, nonce: bytes | None = None
    ) -> list[Effect]:
        identity = identity or Identity.generate()
        signed = hello_signed_payload(
            nonce or self.nonces[conn], name, identity.public_key, 5000, b""
        )
        hello = Hello(
            version=PROTOCOL_VERSION,
            req=1,
            name=name,
            public_key=identity.public_key,
            peer_port=5000,
            signature=identity.sign(HELLO_DOMAIN, signed).signature,
        )
        return self.lobby.receive(conn, hello, self.now)

    def player(self, name: str) -> int:
        conn = self.connect()
        [welcome] = self.hello(conn, name)
        assert isinstance(welcome, Send) and isinstance(welcome.message, Welcome)
        return conn

    def send(self, conn: int, make: Any, **fields: Any) -> list[Effect]:
        self.req += 1
        return self.lobby.receive(conn, make(req=self.req, **fields), self.now)


def sent(effects: list[Effect], kind: type) -> list[tuple[tuple[int, ...], Any]]:
    return [
        (e.to, e.message) for e in effects if isinstance(e, Send) and isinstance(e.message, kind)
    ]


def refusal(effects: list[Effect]) -> str:
    [(_, error)] = sent(effects, Error)
    return error.code


def test_replies_go_to_the_requester_and_events_to_the_other_members() -> None:
    table = Table()
    ann, bob, cat = (table.player(n) for n in ("Ann", "Bob", "Cat"))
    [(to, joined)] = sent(table.send(ann, CreateRoom, name="T", seats=3), Joined)
    assert to == (ann,)
    room_id = joined.room.room_id
    effects = table.send(bob, Join, room_id=room_id)
    assert [to for to, _ in sent(effects, Joined)] == [(bob,)]
    assert [to for to, _ in sent(effects, MemberJoined)] == [(ann,)]
    effects = table.send(cat, Join, room_id=room_id)
    assert [to for to, _ in sent(effects, MemberJoined)] == [(ann, bob)]
    effects = table.send(bob, Ready, ready=True)
    assert sent(effects, Ok)[0][0] == (bob,)
    assert [(to, m.name, m.ready) for to, m in sent(effects, MemberReady)] == [
        ((ann, cat), "Bob", True)
    ]
    effects = table.send(ann, Chat, text="hi")
    assert [to for to, _ in sent(effects, ChatMessage)] == [(ann, bob, cat)]


def test_a_full_ready_room_starts_once_and_is_forgotten() -> None:
    table = Table()
    conns = [table.player(n) for n in ("Ann", "Bob", "Cat")]
    room_id = sent(table.send(conns[0], CreateRoom, name="T", seats=3), Joined)[0][1].room.room_id
    for conn in conns[1:]:
        table.send(conn, Join, room_id=room_id)
    assert sent(table.send(conns[0], Ready, ready=True), GameStart) == []
    assert sent(table.send(conns[1], Ready, ready=True), GameStart) == []
    [(to, start)] = sent(table.send(conns[2], Ready, ready=True), GameStart)
    assert to == tuple(conns)
    assert [(s.name, s.host, s.port) for s in start.seats] == [
        ("Ann", "10.0.0.9", 5000),
        ("Bob", "10.0.0.9", 5000),
        ("Cat", "10.0.0.9", 5000),
    ]
    assert table.lobby.rooms == 0
    [(_, rooms)] = sent(table.send(conns[0], ListRooms), Rooms)
    assert rooms.total == 0
    # Everyone is free again: a new room can be made at once.
    assert sent(table.send(conns[0], QuickMatch, seats=3), Joined)


def test_quick_match_fills_the_oldest_open_room_and_reopens_a_room_someone_left() -> None:
    table = Table()
    first = [table.player(f"P{i}") for i in range(4)]
    rooms = [sent(table.send(c, QuickMatch, seats=4), Joined)[0][1].room.room_id for c in first[:3]]
    assert len(set(rooms)) == 1
    other_options = table.player("Other")
    joined = sent(
        table.send(other_options, QuickMatch, seats=4, options=RoomOptions(proofs=False)), Joined
    )
    assert joined[0][1].room.room_id != rooms[0]
    fourth = table.player("P3b")
    assert refusal(table.send(fourth, Ready, ready=True)) == "not_in_room"
    effects = table.send(fourth, QuickMatch, seats=4)
    assert sent(effects, GameStart)  # the fourth ready member completes the room
    assert table.lobby.rooms == 1  # only the other-options room waits


def test_leaving_a_full_room_opens_its_seat_again() -> None:
    table = Table()
    conns = [table.player(f"P{i}") for i in range(4)]
    room_id = sent(table.send(conns[0], CreateRoom, name="T", seats=3), Joined)[0][1].room.room_id
    table.send(conns[1], Join, room_id=room_id)
    table.send(conns[2], Join, room_id=room_id)
    effects = table.send(conns[2], Leave)
    assert [(to, m.name, m.reason) for to, m in sent(effects, MemberLeft)] == [
        ((conns[0], conns[1]), "P2", "left")
    ]
    assert sent(table.send(conns[3], QuickMatch, seats=3), Joined)[0][1].room.room_id == room_id


def test_the_last_member_out_closes_the_room() -> None:
    table = Table()
    ann = table.player("Ann")
    table.send(ann, CreateRoom, name="T", seats=3)
    assert table.lobby.rooms == 1
    table.send(ann, Leave)
    assert table.lobby.rooms == 0


def test_a_hello_must_sign_this_connections_nonce() -> None:
    table = Table()
    first, second = table.connect(), table.connect()
    effects = table.hello(second, "Ann", nonce=table.nonces[first])
    assert [type(e) for e in effects] == [Drop]
    assert effects[0].error.code == "bad_signature"
    assert table.lobby.players == 0
    assert table.lobby.receive(second, ListRooms(req=1), 0) == []  # forgotten


def test_disconnect_is_idempotent_and_tells_the_room() -> None:
    table = Table()
    ann, bob = table.player("Ann"), table.player("Bob")
    room_id = sent(table.send(ann, CreateRoom, name="T", seats=3), Joined)[0][1].room.room_id
    table.send(bob, Join, room_id=room_id)
    effects = table.lobby.disconnect(bob, "disconnected")
    assert [(to, m.reason) for to, m in sent(effects, MemberLeft)] == [((ann,), "disconnected")]
    assert table.lobby.disconnect(bob, "disconnected") == []
    assert table.lobby.players == 1


def test_expiry_drops_the_silent_and_keeps_the_talkative() -> None:
    table = Table(hello_seconds=5, idle_seconds=60)
    silent = table.connect()
    ann, bob = table.player("Ann"), table.player("Bob")
    room_id = sent(table.send(ann, CreateRoom, name="T", seats=3), Joined)[0][1].room.room_id
    table.send(bob, Join, room_id=room_id)
    table.now = 5.0
    assert table.lobby.expire(table.now) == []
    table.now = 5.5
    [drop] = table.lobby.expire(table.now)
    assert isinstance(drop, Drop) and drop.conn == silent and drop.error.code == "idle_timeout"
    table.now = 50
    table.send(ann, Chat, text="still here")
    table.now = 61
    effects = table.lobby.expire(table.now)
    assert [e.conn for e in effects if isinstance(e, Drop)] == [bob]
    assert [(to, m.reason) for to, m in sent(effects, MemberLeft)] == [((ann,), "idle")]


def test_the_player_cap_drops_the_newcomer() -> None:
    table = Table(max_players=1)
    table.player("Ann")
    [drop] = table.hello(table.connect(), "Bob")
    assert isinstance(drop, Drop) and drop.error.code == "lobby_full" and drop.error.fatal


def test_the_room_cap_refuses_a_new_room_but_not_the_player() -> None:
    table = Table(max_rooms=1)
    ann, bob = table.player("Ann"), table.player("Bob")
    table.send(ann, CreateRoom, name="T", seats=3)
    assert refusal(table.send(bob, CreateRoom, name="U", seats=3)) == "too_many_rooms"
    assert refusal(table.send(bob, QuickMatch, seats=5)) == "too_many_rooms"
    assert sent(table.send(bob, QuickMatch, seats=3), Joined)  # joining still works


def test_the_token_bucket_allows_a_burst_then_the_rate() -> None:
    bucket = TokenBucket(rate=10, burst=3, now=0)
    assert [bucket.take(0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(0.05) is False  # half a token
    assert bucket.take(0.1) is True
    assert [bucket.take(100) for _ in range(4)] == [True, True, True, False]  # capped at burst


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_rooms"):
        LobbyLimits(max_rooms=0)
    with pytest.raises(ValueError, match="idle_seconds"):
        LobbyLimits(idle_seconds=86401)
