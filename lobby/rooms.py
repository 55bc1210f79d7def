"""The lobby's logic, without sockets: sessions, names, rooms, quick match, start, expiry.

`Lobby` is a state machine. The adapter (lobby/server.py) tells it about connections, decoded
messages and the time; it answers with effects: `Send` a message to some connections, or `Drop`
one with an error. Every request gets exactly one reply (its result or an Error naming it);
events about a room go to its other members. When a room is full and everyone is ready, every
member gets the roster and the lobby forgets the room: it never sees a card.

It logs (twisted.logger, at info) one line per player who says hello (who, from where, their
key's fingerprint), per room opened, and per game started; never a secret, never a chat line.
"""

from __future__ import annotations

import secrets
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from twisted.logger import Logger

from lobby.limits import LobbyLimits
from protocol.identity import SignatureError, SignedEnvelope, fingerprint, verify
from protocol.messages import (
    FATAL_ERRORS,
    GAME_ID_BYTES,
    HELLO_DOMAIN,
    MAX_LISTED_ROOMS,
    MAX_ROOM_ID,
    NONCE_BYTES,
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
    Member,
    MemberJoined,
    MemberLeft,
    MemberReady,
    Message,
    Ok,
    Ping,
    QuickMatch,
    Ready,
    RoomOptions,
    Rooms,
    RoomState,
    RoomSummary,
    Seat,
    Welcome,
    hello_signed_payload,
)

ConnId = int

log = Logger()


@dataclass(frozen=True)
class Send:
    """Send one message to these connections (the adapter encodes it once)."""

    to: tuple[ConnId, ...]
    message: Message


@dataclass(frozen=True)
class Drop:
    """Send this fatal error to a connection and close it; the lobby has already forgotten it."""

    conn: ConnId
    error: Error


Effect = Send | Drop


class Refusal(Exception):
    """A request the lobby will not carry out; becomes an Error reply naming the request."""

    def __init__(self, code: str, sentence: str) -> None:
        super().__init__(sentence)
        self.code = code


@dataclass(eq=False)
class Session:
    conn: ConnId
    host: str
    nonce: bytes
    connected_at: float
    last_seen: float
    name: str | None = None
    public_key: bytes = b""
    peer_port: int = 0
    room: Room | None = None
    ready: bool = False
    channel: bytes = b""  # the connection's TLS exporter value, which the hello must sign

    def member(self) -> Member:
        assert self.name is not None
        return Member(name=self.name, public_key=self.public_key, ready=self.ready)

    def seat(self) -> Seat:
        assert self.name is not None
        return Seat(name=self.name, public_key=self.public_key, host=self.host, port=self.peer_port)


@dataclass(eq=False)
class Room:
    room_id: int
    name: str
    seats: int
    options: RoomOptions
    members: list[Session] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return len(self.members) >= self.seats

    def state(self) -> RoomState:
        return RoomState(
            room_id=self.room_id,
            name=self.name,
            seats=self.seats,
            options=self.options,
            members=tuple(member.member() for member in self.members),
        )

    def others(self, session: Session) -> tuple[ConnId, ...]:
        return tuple(member.conn for member in self.members if member is not session)


def name_key(name: str) -> str:
    """Names that look alike to people are the same name ('Ann', 'ANN', 'Ａｎｎ')."""
    return unicodedata.normalize("NFKC", name).casefold()


class Lobby:
    def __init__(
        self,
        limits: LobbyLimits,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self.limits = limits
        self._token_bytes = token_bytes
        self._sessions: dict[ConnId, Session] = {}
        self._names: dict[str, Session] = {}
        self._keys: dict[bytes, Session] = {}
        self._rooms: dict[int, Room] = {}
        # Rooms with a free seat, by (seats, options), oldest first: quick match in O(1).
        self._open: dict[tuple[int, RoomOptions], dict[int, Room]] = {}
        self._next_room_id = 1
        self._handlers: dict[type[Message], Callable[[Session, Message], list[Effect]]] = {
            ListRooms: self._list_rooms,
            CreateRoom: self._create_room,
            Join: self._join,
            Leave: self._leave,
            Ready: self._ready,
            QuickMatch: self._quick_match,
            Chat: self._chat,
            Ping: self._ping,
        }

    # -- what the adapter reports ------------------------------------------------------------

    @property
    def players(self) -> int:
        return len(self._names)

    @property
    def rooms(self) -> int:
        return len(self._rooms)

    def connect(self, conn: ConnId, host: str, now: float, channel: bytes = b"") -> list[Effect]:
        """A new connection; `channel` is its TLS exporter value (what binds the hello's
        signature to this connection)."""
        nonce = self._token_bytes(NONCE_BYTES)
        self._sessions[conn] = Session(
            conn, host, nonce, connected_at=now, last_seen=now, channel=channel
        )
        return [Send((conn,), Challenge(version=PROTOCOL_VERSION, nonce=nonce))]

    def receive(self, conn: ConnId, message: Message, now: float) -> list[Effect]:
        session = self._sessions.get(conn)
        if session is None:  # already dropped; its last frames do not count
            return []
        session.last_seen = now
        req: int = getattr(message, "req")  # noqa: B009 -- every request has one
        try:
            if isinstance(message, Hello):
                return self._hello(session, message)
            if session.name is None:
                return self.disconnect(
                    conn, "dropped", _fatal("hello_first", f"say hello before {message.TYPE}", req)
                )
            return self._handlers[type(message)](session, message)
        except Refusal as refusal:
            fatal = refusal.code in FATAL_ERRORS
            error = Error(req=req, code=refusal.code, message=str(refusal), fatal=fatal)
            if fatal:
                return self.disconnect(conn, "dropped", error)
            return [Send((conn,), error)]

    def disconnect(self, conn: ConnId, reason: str, error: Error | None = None) -> list[Effect]:
        """Forget a connection (idempotent); its room is told. With `error`, drop it with that."""
        session = self._sessions.pop(conn, None)
        if session is None:
            return []
        effects: list[Effect] = [] if error is None else [Drop(conn, error)]
        if session.name is not None:
            del self._names[name_key(session.name)]
            del self._keys[session.public_key]
        if session.room is not None:
            effects += self._remove_member(session, reason)
        return effects

    def expire(self, now: float) -> list[Effect]:
        """Drop connections that never said hello in time, and sessions idle too long."""
        effects: list[Effect] = []
        for session in list(self._sessions.values()):
            if session.name is None and now - session.connected_at > self.limits.hello_seconds:
                sentence = f"no hello within {self.limits.hello_seconds:g} seconds"
            elif now - session.last_seen > self.limits.idle_seconds:
                sentence = f"nothing received for {self.limits.idle_seconds} seconds"
            else:
                continue
            error = _fatal("idle_timeout", sentence, None)
            effects += self.disconnect(session.conn, "idle", error)
        return effects

    # -- requests ----------------------------------------------------------------------------

    def _hello(self, session: Session, hello: Hello) -> list[Effect]:
        if session.name is not None:
            raise Refusal("already_said_hello", f"this connection is already {session.name!r}")
        signed = hello_signed_payload(
            session.nonce, hello.name, hello.public_key, hello.peer_port, session.channel
        )
        try:
            verify(
                hello.public_key,
                SignedEnvelope(HELLO_DOMAIN, signed, hello.signature),
                HELLO_DOMAIN,
            )
        except SignatureError as error:
            raise Refusal("bad_signature", f"hello signature refused: {error}") from None
        key = name_key(hello.name)
        if key in self._names:
            raise Refusal("name_taken", f"the name {hello.name!r} is taken; choose another")
        if hello.public_key in self._keys:
            raise Refusal("key_in_use", "this key is already connected to the lobby")
        if len(self._names) >= self.limits.max_players:
            raise Refusal("lobby_full", f"the lobby is full ({self.limits.max_players} players)")
        session.name, session.public_key, session.peer_port = (
            hello.name,
            hello.public_key,
            hello.peer_port,
        )
        self._names[key] = session
        self._keys[hello.public_key] = session
        log.info(
            "{name} connected from {host} (key {key}, connection {conn})",
            name=hello.name,
            host=session.host,
            key=fingerprint(hello.public_key),
            conn=session.conn,
        )
        welcome = Welcome(
            req=hello.req,
            name=hello.name,
            host=session.host,
            idle_seconds=self.limits.idle_seconds,
        )
        return [Send((session.conn,), welcome)]

    def _list_rooms(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, ListRooms)
        listed: list[RoomSummary] = []
        for room in self._rooms.values():
            if len(listed) == MAX_LISTED_ROOMS:
                break
            listed.append(
                RoomSummary(
                    room_id=room.room_id,
                    name=room.name,
                    seats=room.seats,
                    taken=len(room.members),
                    options=room.options,
                )
            )
        reply = Rooms(req=request.req, rooms=tuple(listed), total=len(self._rooms))
        return [Send((session.conn,), reply)]

    def _create_room(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, CreateRoom)
        self._require_no_room(session)
        room = self._new_room(request.name, request.seats, request.options, session)
        return self._enter(session, room, request.req, ready=False)

    def _join(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, Join)
        self._require_no_room(session)
        room = self._rooms.get(request.room_id)
        if room is None:
            raise Refusal("no_such_room", f"there is no room {request.room_id} (any more)")
        if room.full:
            raise Refusal("room_full", f"room {room.room_id} ({room.name}) is full")
        return self._enter(session, room, request.req, ready=False)

    def _quick_match(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, QuickMatch)
        self._require_no_room(session)
        waiting = self._open.get((request.seats, request.options))
        if waiting:
            room = next(iter(waiting.values()))
        else:
            room = self._new_room(
                f"Quick match for {request.seats}", request.seats, request.options, session
            )
        return self._enter(session, room, request.req, ready=True)

    def _leave(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, Leave)
        self._require_room(session)
        return [Send((session.conn,), Ok(req=request.req)), *self._remove_member(session, "left")]

    def _ready(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, Ready)
        room = self._require_room(session)
        session.ready = request.ready
        assert session.name is not None
        event = MemberReady(room_id=room.room_id, name=session.name, ready=request.ready)
        effects: list[Effect] = [Send((session.conn,), Ok(req=request.req))]
        effects.append(Send(room.others(session), event))
        return effects + self._start_if_ready(room)

    def _chat(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, Chat)
        room = self._require_room(session)
        assert session.name is not None
        line = ChatMessage(room_id=room.room_id, name=session.name, text=request.text)
        everyone = tuple(member.conn for member in room.members)
        return [Send((session.conn,), Ok(req=request.req)), Send(everyone, line)]

    def _ping(self, session: Session, request: Message) -> list[Effect]:
        assert isinstance(request, Ping)
        return [Send((session.conn,), Ok(req=request.req))]

    # -- rooms -------------------------------------------------------------------------------

    def _require_no_room(self, session: Session) -> None:
        if session.room is not None:
            raise Refusal(
                "already_in_room",
                f"you are in room {session.room.room_id} ({session.room.name}); leave it first",
            )

    def _require_room(self, session: Session) -> Room:
        if session.room is None:
            raise Refusal("not_in_room", "you are not in a room")
        return session.room

    def _new_room(self, name: str, seats: int, options: RoomOptions, by: Session) -> Room:
        if len(self._rooms) >= self.limits.max_rooms:
            raise Refusal(
                "too_many_rooms",
                f"the lobby holds at most {self.limits.max_rooms} rooms; join one instead",
            )
        room_id = self._next_room_id
        self._next_room_id = room_id % MAX_ROOM_ID + 1
        while room_id in self._rooms:  # only after 2**31 rooms, but then ids must stay unique
            room_id = self._next_room_id
            self._next_room_id = room_id % MAX_ROOM_ID + 1
        room = Room(room_id, name, seats, options)
        self._rooms[room_id] = room
        self._open.setdefault((seats, options), {})[room_id] = room
        log.info(
            "room {room} {title!r} opened by {name}: {seats} seats",
            room=room_id,
            title=name,
            name=by.name,
            seats=seats,
        )
        return room

    def _enter(self, session: Session, room: Room, req: int, *, ready: bool) -> list[Effect]:
        session.room, session.ready = room, ready
        room.members.append(session)
        if room.full:
            self._close_seats(room)
        effects: list[Effect] = [
            Send((session.conn,), Joined(req=req, room=room.state())),
            Send(room.others(session), MemberJoined(room_id=room.room_id, member=session.member())),
        ]
        return effects + self._start_if_ready(room)

    def _remove_member(self, session: Session, reason: str) -> list[Effect]:
        room = session.room
        assert room is not None and session.name is not None
        was_full = room.full
        room.members.remove(session)
        session.room, session.ready = None, False
        if not room.members:
            self._forget(room)
            return []
        if was_full:
            self._open.setdefault((room.seats, room.options), {})[room.room_id] = room
        left = MemberLeft(room_id=room.room_id, name=session.name, reason=reason)
        return [Send(room.others(session), left)]

    def _start_if_ready(self, room: Room) -> list[Effect]:
        if not room.full or not all(member.ready for member in room.members):
            return []
        roster = GameStart(
            room_id=room.room_id,
            game_id=self._token_bytes(GAME_ID_BYTES),
            seats=tuple(member.seat() for member in room.members),
            options=room.options,
        )
        everyone = tuple(member.conn for member in room.members)
        log.info(
            "room {room} {title!r} is full and ready: game {game} starts for {names}",
            room=room.room_id,
            title=room.name,
            game=roster.game_id.hex(),
            names=", ".join(seat.name for seat in roster.seats),
        )
        for member in room.members:
            member.room, member.ready = None, False
        self._forget(room)
        return [Send(everyone, roster)]

    def _close_seats(self, room: Room) -> None:
        waiting = self._open.get((room.seats, room.options))
        if waiting is not None:
            waiting.pop(room.room_id, None)
            if not waiting:
                del self._open[(room.seats, room.options)]

    def _forget(self, room: Room) -> None:
        self._close_seats(room)
        del self._rooms[room.room_id]


def _fatal(code: str, sentence: str, req: int | None) -> Error:
    return Error(req=req, code=code, message=sentence, fatal=True)
