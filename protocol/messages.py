"""Typed wire messages: length-prefixed msgpack frames, a declarative schema, the lobby messages.

Every link (client↔lobby now, peer↔peer later) carries frames: a 4-byte big-endian length, then
that many bytes of msgpack holding one map with a `type` string. A frame longer than the link's
limit ends the link. A message class is a frozen dataclass whose fields are annotated with a
`Spec` (type, length, range, enumeration); decoding rejects unknown and missing fields, and
every problem is a `MessageError` whose text names the message type and the field, so a person
can read what was wrong. Nothing here does I/O. docs/protocol.md lists the lobby messages.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, TypeVar, cast, get_args, get_origin, get_type_hints

import msgpack

# 2: bids and takes, signed end votes and endings, and the order of a step's groups (one
# client of each version at a table would disagree on a step, so the lobby keeps them apart).
# 3: signed holdings in place of heartbeats (a withholder is named on its own word).
# 4: the room option `proofs` (on or off) in place of `proof_rounds`: the deck proves each
# shuffle with one argument instead of rounds of cut-and-choose.
# 5: the shuffle argument travels with the shuffler's relock, not with its shuffle (on
# ristretto255: a deck message of version 4 cannot be read).
PROTOCOL_VERSION = 5

#: Largest frame a client may send to the lobby: the biggest is a chat line of 500 characters.
LOBBY_REQUEST_MAX_FRAME = 4096
#: Largest frame the lobby sends: the biggest is a room list of MAX_LISTED_ROOMS rooms.
LOBBY_EVENT_MAX_FRAME = 64 * 1024

NAME_MAX_CHARS = 24
ROOM_NAME_MAX_CHARS = 32
CHAT_MAX_CHARS = 500
ERROR_TEXT_MAX_CHARS = 300
HOST_MAX_CHARS = 64
MIN_SEATS = 3
MAX_SEATS = 7
MAX_LISTED_ROOMS = 100
MAX_REQUEST_ID = 2**31 - 1
MAX_ROOM_ID = 2**31 - 1
MAX_IDLE_SECONDS = 86400
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
NONCE_BYTES = 32
GAME_ID_BYTES = 16

#: Domain string of the signature a client puts in its hello (see `hello_signed_payload`).
HELLO_DOMAIN = "bohnanza-p2p/lobby-hello/v1"

#: Errors that end the connection; the others refuse one request and the session goes on.
FATAL_ERRORS = frozenset(
    {
        "bad_message",
        "frame_too_large",
        "version_mismatch",
        "bad_signature",
        "hello_first",
        "lobby_full",
        "rate_limited",
        "idle_timeout",
        "write_stalled",
        "internal_error",
    }
)
REFUSALS = frozenset(
    {
        "already_said_hello",
        "name_taken",
        "key_in_use",
        "too_many_rooms",
        "no_such_room",
        "room_full",
        "already_in_room",
        "not_in_room",
    }
)
ERROR_CODES = tuple(sorted(FATAL_ERRORS | REFUSALS))


class MessageError(ValueError):
    """A frame or message that breaks the protocol; `str(error)` is a sentence for a person.

    `code` is one of ERROR_CODES, `message_type` and `field` say where the problem is (when
    known), and `req` is the request id of the offending request when it could be read, so that
    the reply can name the request.
    """

    def __init__(
        self,
        sentence: str,
        *,
        code: str = "bad_message",
        message_type: str | None = None,
        field: str | None = None,
        req: int | None = None,
    ) -> None:
        super().__init__(sentence)
        self.code = code
        self.message_type = message_type
        self.field = field
        self.req = req


# ---------------------------------------------------------------------------------------------
# Framing

_PREFIX = struct.Struct(">I")


def frame(payload: bytes, max_length: int) -> bytes:
    """The payload with its 4-byte big-endian length in front."""
    if len(payload) > max_length:
        raise MessageError(
            f"a frame of {len(payload)} bytes is longer than this link's limit of {max_length}",
            code="frame_too_large",
        )
    return _PREFIX.pack(len(payload)) + payload


class FrameDecoder:
    """Splits a byte stream into frames; a length prefix above `max_length` is an error.

    After an error the stream cannot be resynchronised, so the decoder refuses further input.
    """

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length
        self._buffer = bytearray()
        self._failed: MessageError | None = None

    @property
    def buffered(self) -> int:
        """Bytes received that do not yet make a whole frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """The frames completed by `data`, in order."""
        if self._failed is not None:
            raise self._failed
        buffer = self._buffer
        buffer += data
        frames: list[bytes] = []
        offset = 0
        while len(buffer) - offset >= _PREFIX.size:
            (length,) = _PREFIX.unpack_from(buffer, offset)
            if length > self.max_length:
                del buffer[:]
                self._failed = MessageError(
                    f"a frame announced {length} bytes; this link's limit is {self.max_length}",
                    code="frame_too_large",
                )
                raise self._failed
            end = offset + _PREFIX.size + length
            if len(buffer) < end:
                break
            frames.append(bytes(buffer[offset + _PREFIX.size : end]))
            offset = end
        del buffer[:offset]
        return frames


# ---------------------------------------------------------------------------------------------
# Field specifications


class FieldProblem(Exception):
    """What is wrong with one field; a Record turns it into a MessageError naming its type."""

    def __init__(self, path: str, problem: str, code: str = "bad_message") -> None:
        super().__init__(f"{path} {problem}")
        self.path = path
        self.problem = problem
        self.code = code


def _kind(value: object) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        str: "a string",
        bytes: "bytes",
        list: "a list",
        tuple: "a list",
        dict: "a map",
        type(None): "nil",
    }
    return names.get(type(value), f"a {type(value).__name__}")


class Spec:
    """How one field is checked and converted; `parse` accepts the wire form or the Python form."""

    def parse(self, value: object, path: str) -> Any:
        raise NotImplementedError

    def to_wire(self, value: Any) -> Any:
        return value


class Int(Spec):
    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def parse(self, value: object, path: str) -> int:
        if type(value) is not int:
            raise FieldProblem(path, f"must be an integer, not {_kind(value)}")
        if not self.low <= value <= self.high:
            raise FieldProblem(path, f"must be from {self.low} to {self.high} (got {value})")
        return value


class Version(Spec):
    """The protocol version; a different one gets its own error code so both sides can say so."""

    def parse(self, value: object, path: str) -> int:
        if type(value) is not int:
            raise FieldProblem(path, f"must be an integer, not {_kind(value)}")
        if value != PROTOCOL_VERSION:
            raise FieldProblem(
                path,
                f"is {value}, but this side speaks protocol version {PROTOCOL_VERSION}; "
                "both sides need the same version of bohnanza-p2p",
                code="version_mismatch",
            )
        return value


class Bool(Spec):
    def parse(self, value: object, path: str) -> bool:
        if type(value) is not bool:
            raise FieldProblem(path, f"must be true or false, not {_kind(value)}")
        return value


class Text(Spec):
    """A string of printable characters (no control or escape characters reach a terminal).

    With `trimmed`, no leading or trailing spaces either (names people must tell apart).
    """

    def __init__(self, min_chars: int, max_chars: int, *, trimmed: bool = False) -> None:
        self.min_chars, self.max_chars, self.trimmed = min_chars, max_chars, trimmed

    def parse(self, value: object, path: str) -> str:
        if type(value) is not str:
            raise FieldProblem(path, f"must be a string, not {_kind(value)}")
        if not self.min_chars <= len(value) <= self.max_chars:
            raise FieldProblem(
                path,
                f"must be {self.min_chars} to {self.max_chars} characters long (got {len(value)})",
            )
        if not value.isprintable():
            raise FieldProblem(path, "must hold printable characters only")
        if self.trimmed and value != value.strip():
            raise FieldProblem(path, "must not start or end with a space")
        return value


class Blob(Spec):
    def __init__(self, min_bytes: int, max_bytes: int | None = None) -> None:
        self.min_bytes = min_bytes
        self.max_bytes = min_bytes if max_bytes is None else max_bytes

    def parse(self, value: object, path: str) -> bytes:
        if type(value) is not bytes:
            raise FieldProblem(path, f"must be bytes, not {_kind(value)}")
        if not self.min_bytes <= len(value) <= self.max_bytes:
            wanted = (
                f"exactly {self.min_bytes}"
                if self.min_bytes == self.max_bytes
                else f"{self.min_bytes} to {self.max_bytes}"
            )
            raise FieldProblem(path, f"must be {wanted} bytes long (got {len(value)})")
        return value


class OneOf(Spec):
    def __init__(self, *choices: str) -> None:
        self.choices = choices

    def parse(self, value: object, path: str) -> str:
        if type(value) is not str or value not in self.choices:
            shown = repr(value) if type(value) is str and len(value) <= 40 else _kind(value)
            raise FieldProblem(path, f"must be one of {', '.join(self.choices)} (got {shown})")
        return value


class ListOf(Spec):
    def __init__(self, item: Spec, min_items: int, max_items: int) -> None:
        self.item, self.min_items, self.max_items = item, min_items, max_items

    def parse(self, value: object, path: str) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise FieldProblem(path, f"must be a list, not {_kind(value)}")
        if not self.min_items <= len(value) <= self.max_items:
            raise FieldProblem(
                path,
                f"must hold {self.min_items} to {self.max_items} items (got {len(value)})",
            )
        return tuple(self.item.parse(item, f"{path}[{i}]") for i, item in enumerate(value))

    def to_wire(self, value: Any) -> Any:
        return [self.item.to_wire(item) for item in value]


class Nullable(Spec):
    def __init__(self, inner: Spec) -> None:
        self.inner = inner

    def parse(self, value: object, path: str) -> Any:
        return None if value is None else self.inner.parse(value, path)

    def to_wire(self, value: Any) -> Any:
        return None if value is None else self.inner.to_wire(value)


class Nested(Spec):
    """A field holding another Record (a map on the wire)."""

    def __init__(self, record: type[Record]) -> None:
        self.record = record

    def parse(self, value: object, path: str) -> Record:
        if isinstance(value, self.record):
            return value
        if type(value) is not dict:
            raise FieldProblem(path, f"must be a map, not {_kind(value)}")
        return _build(self.record, value, f"{path}.")

    def to_wire(self, value: Any) -> Any:
        assert isinstance(value, Record)
        return value.to_wire()


# ---------------------------------------------------------------------------------------------
# Records and messages


@dataclasses.dataclass(frozen=True)
class SchemaField:
    """One field of a Record: its name, its Spec, and its default (MISSING: required)."""

    name: str
    spec: Spec
    default: Any  # dataclasses.MISSING when the field is required on the wire


_FIELDS: dict[type[Any], tuple[SchemaField, ...]] = {}

R = TypeVar("R", bound="Record")


def schema_of(cls: type[Record]) -> tuple[SchemaField, ...]:
    """The fields of a Record class in declaration order (read from its annotations once)."""
    cached = _FIELDS.get(cls)
    if cached is None:
        hints = get_type_hints(cls, include_extras=True)
        found = []
        for field in dataclasses.fields(cast(Any, cls)):  # every Record is a dataclass
            hint = hints[field.name]
            specs = [m for m in get_args(hint)[1:] if isinstance(m, Spec)]
            if get_origin(hint) is not Annotated or len(specs) != 1:
                raise TypeError(f"{cls.__name__}.{field.name} needs Annotated[type, Spec]")
            found.append(SchemaField(field.name, specs[0], field.default))
        cached = _FIELDS[cls] = tuple(found)
    return cached


def _build(cls: type[R], data: dict[Any, Any], prefix: str) -> R:
    """An instance of `cls` from a wire map, checking every field once (declared order first,
    so a protocol version is reported before anything a newer version may have changed)."""
    values: dict[str, Any] = {}
    for field in schema_of(cls):
        if field.name in data:
            values[field.name] = field.spec.parse(data[field.name], prefix + field.name)
        elif field.default is not dataclasses.MISSING:
            values[field.name] = field.default
        else:
            raise FieldProblem(prefix + field.name, "is missing")
    if len(data) > len(values) or any(key not in values for key in data):
        unknown = next(key for key in data if key not in values)
        shown = unknown if type(unknown) is str and len(unknown) <= 40 else repr(unknown)[:40]
        raise FieldProblem(f"{prefix}{shown}", f"is not a field of {cls.label()}")
    record = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(record, name, value)
    return record


class Record:
    """Base of the frozen dataclasses on the wire: each field is `Annotated[type, Spec]`.

    Constructing one checks every field (so bad input from a user fails before it is sent);
    `from_wire` checks a received map, rejecting unknown and missing fields.
    """

    def __post_init__(self) -> None:
        for field in schema_of(type(self)):
            value = getattr(self, field.name)
            try:
                parsed = field.spec.parse(value, field.name)
            except FieldProblem as problem:
                raise type(self).error_from(problem) from None
            if parsed is not value:
                object.__setattr__(self, field.name, parsed)

    @classmethod
    def label(cls) -> str:
        return cls.__name__

    @classmethod
    def error_from(cls, problem: FieldProblem, req: int | None = None) -> MessageError:
        return MessageError(
            f"{cls.label()}: field '{problem.path}' {problem.problem}",
            code=problem.code,
            message_type=cls.label(),
            field=problem.path,
            req=req,
        )

    def to_wire(self) -> dict[str, Any]:
        return {f.name: f.spec.to_wire(getattr(self, f.name)) for f in schema_of(type(self))}

    @classmethod
    def from_wire(cls: type[R], data: object, req: int | None = None) -> R:
        """An instance from a received map, or MessageError naming the field at fault."""
        if type(data) is not dict:
            raise MessageError(f"{cls.label()}: must be a map, not {_kind(data)}", req=req)
        try:
            return _build(cls, cls.fields_in(data), "")
        except FieldProblem as problem:
            raise cls.error_from(problem, req) from None

    @classmethod
    def fields_in(cls, data: dict[Any, Any]) -> dict[Any, Any]:
        """The part of a received map that holds this record's fields."""
        return data


class Message(Record):
    """A Record that travels alone in a frame, tagged by its `TYPE` string."""

    TYPE: ClassVar[str]

    @classmethod
    def label(cls) -> str:
        return cls.TYPE

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.TYPE, **super().to_wire()}

    @classmethod
    def fields_in(cls, data: dict[Any, Any]) -> dict[Any, Any]:
        if data.get("type", cls.TYPE) != cls.TYPE:
            raise FieldProblem("type", f"must be {cls.TYPE!r}")
        return {key: value for key, value in data.items() if key != "type"}


# Every msgpack value any link carries fits these shapes: no array is longer than a deck (154
# cards; a room list has 100 rooms, a proof 128 rounds), no map has more than a few dozen
# fields, no string is longer than a few lines of text. msgpack refuses anything larger while
# it reads the headers, before it builds a single object, so a frame of many tiny values costs
# no more than its bytes; it also refuses nesting past its own fixed depth.
MAX_WIRE_ARRAY = 256
MAX_WIRE_MAP = 64
MAX_WIRE_STRING = 4096


def unpack(payload: bytes) -> Any:
    """The one msgpack value in `payload`, within the shapes above; MessageError otherwise."""
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            max_array_len=MAX_WIRE_ARRAY,
            max_map_len=MAX_WIRE_MAP,
            max_str_len=MAX_WIRE_STRING,
            max_bin_len=len(payload),
            max_ext_len=0,
        )
    except Exception as error:  # msgpack raises several types for bad input; all mean this
        reason = f"not valid msgpack within this protocol's limits ({type(error).__name__})"
        raise MessageError(f"a frame is {reason}") from None


def encode(message: Message) -> bytes:
    """The msgpack bytes of a message (not yet framed)."""
    packed: bytes = msgpack.packb(message.to_wire(), use_bin_type=True)
    return packed


def canonical_problem(received: bytes, canonical: bytes) -> str | None:
    """Why `received` is not `canonical`, the bytes this protocol's encoder writes for the
    value read from it; None if they are the same. Decoding is canonical so that two byte
    strings never read as one message: a key given twice, an integer or a length written
    longer than it needs, map keys in another order, all make other bytes of one message,
    which would let a signed message's author send two signed payloads that read the same."""
    if received == canonical:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(received, canonical, strict=False)) if a != b),
        min(len(received), len(canonical)),
    )
    return f"not in canonical form (from byte {at} on, not as this protocol writes it)"


class Codec:
    """Decodes the messages one side of a link may receive, dispatching on `type`.

    A canonical codec (all but the lobby's requests) refuses a payload unless it is exactly
    the encoding of the message it holds (`canonical_problem`). The lobby reads its requests
    leniently: it fills in the options a request leaves out, and nothing signed or hashed is
    read from a request's bytes."""

    def __init__(self, messages: Iterable[type[Message]], *, canonical: bool = True) -> None:
        self.canonical = canonical
        self.by_type: dict[str, type[Message]] = {}
        for message in messages:
            if message.TYPE in self.by_type:
                raise ValueError(f"two message classes for type {message.TYPE!r}")
            self.by_type[message.TYPE] = message

    def decode(self, payload: bytes) -> Message:
        """The message in one frame, or MessageError saying what is wrong with it."""
        data = unpack(payload)
        if type(data) is not dict:
            raise MessageError(f"a message must be a map with a 'type' field, not {_kind(data)}")
        req = data.get("req")
        req = req if type(req) is int and 0 <= req <= MAX_REQUEST_ID else None
        kind = data.get("type")
        cls = self.by_type.get(kind) if type(kind) is str else None
        if cls is None:
            shown = repr(kind)[:40] if type(kind) is str else _kind(kind)
            raise MessageError(
                f"unknown message type {shown}; expected one of {', '.join(self.by_type)}",
                field="type",
                req=req,
            )
        message = cls.from_wire(data, req)
        problem = canonical_problem(payload, encode(message)) if self.canonical else None
        if problem is not None:
            raise MessageError(f"{cls.label()}: {problem}", message_type=cls.label(), req=req)
        return message


# ---------------------------------------------------------------------------------------------
# The lobby's records

Req = Annotated[int, Int(0, MAX_REQUEST_ID)]
RoomId = Annotated[int, Int(1, MAX_ROOM_ID)]
Seats = Annotated[int, Int(MIN_SEATS, MAX_SEATS)]
PlayerName = Annotated[str, Text(1, NAME_MAX_CHARS, trimmed=True)]
PublicKey = Annotated[bytes, Blob(PUBLIC_KEY_BYTES)]
Port = Annotated[int, Int(1, 65535)]

SINGLETON_RULES = ("protect_if_any_field_has_2plus", "rio_grande_literal")


@dataclasses.dataclass(frozen=True)
class RoomOptions(Record):
    """Rules chosen for a room. Every key is optional in a request to the lobby (and written
    by every encoder); unknown keys are rejected."""

    singleton_rule: Annotated[str, OneOf(*SINGLETON_RULES)] = SINGLETON_RULES[0]
    proofs: Annotated[bool, Bool()] = True  # False deals without shuffle and relock proofs
    turn_seconds: Annotated[int, Int(0, 3600)] = 0  # 0 means no turn clock


@dataclasses.dataclass(frozen=True)
class Member(Record):
    name: PlayerName
    public_key: PublicKey
    ready: Annotated[bool, Bool()]


@dataclasses.dataclass(frozen=True)
class RoomState(Record):
    room_id: RoomId
    name: Annotated[str, Text(1, ROOM_NAME_MAX_CHARS, trimmed=True)]
    seats: Seats
    options: Annotated[RoomOptions, Nested(RoomOptions)]
    members: Annotated[tuple[Member, ...], ListOf(Nested(Member), 0, MAX_SEATS)]


@dataclasses.dataclass(frozen=True)
class RoomSummary(Record):
    room_id: RoomId
    name: Annotated[str, Text(1, ROOM_NAME_MAX_CHARS, trimmed=True)]
    seats: Seats
    taken: Annotated[int, Int(0, MAX_SEATS)]
    options: Annotated[RoomOptions, Nested(RoomOptions)]


@dataclasses.dataclass(frozen=True)
class Seat(Record):
    """One player in a roster: who, and where its client listens for peers."""

    name: PlayerName
    public_key: PublicKey
    host: Annotated[str, Text(1, HOST_MAX_CHARS)]
    port: Port


# ---------------------------------------------------------------------------------------------
# Client → lobby


@dataclasses.dataclass(frozen=True)
class Hello(Message):
    """Who I am; `signature` signs `hello_signed_payload` under HELLO_DOMAIN with my key."""

    TYPE: ClassVar[str] = "hello"
    version: Annotated[int, Version()]
    req: Req
    name: PlayerName
    public_key: PublicKey
    peer_port: Port
    signature: Annotated[bytes, Blob(SIGNATURE_BYTES)]


@dataclasses.dataclass(frozen=True)
class ListRooms(Message):
    TYPE: ClassVar[str] = "list_rooms"
    req: Req


@dataclasses.dataclass(frozen=True)
class CreateRoom(Message):
    TYPE: ClassVar[str] = "create_room"
    req: Req
    name: Annotated[str, Text(1, ROOM_NAME_MAX_CHARS, trimmed=True)]
    seats: Seats
    options: Annotated[RoomOptions, Nested(RoomOptions)] = RoomOptions()


@dataclasses.dataclass(frozen=True)
class Join(Message):
    TYPE: ClassVar[str] = "join"
    req: Req
    room_id: RoomId


@dataclasses.dataclass(frozen=True)
class Leave(Message):
    TYPE: ClassVar[str] = "leave"
    req: Req


@dataclasses.dataclass(frozen=True)
class Ready(Message):
    TYPE: ClassVar[str] = "ready"
    req: Req
    ready: Annotated[bool, Bool()]


@dataclasses.dataclass(frozen=True)
class QuickMatch(Message):
    """Join the oldest open room with these seats and options, or open one; joins as ready."""

    TYPE: ClassVar[str] = "quick_match"
    req: Req
    seats: Seats
    options: Annotated[RoomOptions, Nested(RoomOptions)] = RoomOptions()


@dataclasses.dataclass(frozen=True)
class Chat(Message):
    TYPE: ClassVar[str] = "chat"
    req: Req
    text: Annotated[str, Text(1, CHAT_MAX_CHARS)]


@dataclasses.dataclass(frozen=True)
class Ping(Message):
    """Keeps an idle session alive."""

    TYPE: ClassVar[str] = "ping"
    req: Req


# ---------------------------------------------------------------------------------------------
# Lobby → client


@dataclasses.dataclass(frozen=True)
class Challenge(Message):
    """The lobby's first frame on every connection: the nonce the hello must sign."""

    TYPE: ClassVar[str] = "challenge"
    version: Annotated[int, Version()]
    nonce: Annotated[bytes, Blob(NONCE_BYTES)]


@dataclasses.dataclass(frozen=True)
class Welcome(Message):
    """Reply to hello. `host` is the address the lobby sees (what peers will be told)."""

    TYPE: ClassVar[str] = "welcome"
    req: Req
    name: PlayerName
    host: Annotated[str, Text(1, HOST_MAX_CHARS)]
    idle_seconds: Annotated[int, Int(1, MAX_IDLE_SECONDS)]


@dataclasses.dataclass(frozen=True)
class Rooms(Message):
    """Reply to list_rooms: the first MAX_LISTED_ROOMS waiting rooms, oldest first."""

    TYPE: ClassVar[str] = "rooms"
    req: Req
    rooms: Annotated[tuple[RoomSummary, ...], ListOf(Nested(RoomSummary), 0, MAX_LISTED_ROOMS)]
    total: Annotated[int, Int(0, MAX_ROOM_ID)]


@dataclasses.dataclass(frozen=True)
class Joined(Message):
    """Reply to create_room, join and quick_match: the room as it is now."""

    TYPE: ClassVar[str] = "joined"
    req: Req
    room: Annotated[RoomState, Nested(RoomState)]


@dataclasses.dataclass(frozen=True)
class Ok(Message):
    """Reply to leave, ready, chat and ping."""

    TYPE: ClassVar[str] = "ok"
    req: Req


@dataclasses.dataclass(frozen=True)
class Error(Message):
    """A refused request (`req` set) or, when `fatal`, the reason the lobby closes the link."""

    TYPE: ClassVar[str] = "error"
    req: Annotated[int | None, Nullable(Int(0, MAX_REQUEST_ID))]
    code: Annotated[str, OneOf(*ERROR_CODES)]
    message: Annotated[str, Text(1, ERROR_TEXT_MAX_CHARS)]
    fatal: Annotated[bool, Bool()]


@dataclasses.dataclass(frozen=True)
class MemberJoined(Message):
    TYPE: ClassVar[str] = "member_joined"
    room_id: RoomId
    member: Annotated[Member, Nested(Member)]


LEAVE_REASONS = ("left", "disconnected", "idle", "dropped")


@dataclasses.dataclass(frozen=True)
class MemberLeft(Message):
    TYPE: ClassVar[str] = "member_left"
    room_id: RoomId
    name: PlayerName
    reason: Annotated[str, OneOf(*LEAVE_REASONS)]


@dataclasses.dataclass(frozen=True)
class MemberReady(Message):
    TYPE: ClassVar[str] = "member_ready"
    room_id: RoomId
    name: PlayerName
    ready: Annotated[bool, Bool()]


@dataclasses.dataclass(frozen=True)
class ChatMessage(Message):
    TYPE: ClassVar[str] = "chat_message"
    room_id: RoomId
    name: PlayerName
    text: Annotated[str, Text(1, CHAT_MAX_CHARS)]


@dataclasses.dataclass(frozen=True)
class GameStart(Message):
    """The roster: the room is full and ready, the lobby forgets it, the peers take over."""

    TYPE: ClassVar[str] = "game_start"
    room_id: RoomId
    game_id: Annotated[bytes, Blob(GAME_ID_BYTES)]
    seats: Annotated[tuple[Seat, ...], ListOf(Nested(Seat), MIN_SEATS, MAX_SEATS)]
    options: Annotated[RoomOptions, Nested(RoomOptions)]


LOBBY_REQUESTS = Codec(
    [Hello, ListRooms, CreateRoom, Join, Leave, Ready, QuickMatch, Chat, Ping], canonical=False
)
LOBBY_EVENTS = Codec(
    [
        Challenge,
        Welcome,
        Rooms,
        Joined,
        Ok,
        Error,
        MemberJoined,
        MemberLeft,
        MemberReady,
        ChatMessage,
        GameStart,
    ]
)


def error_reply(error: MessageError) -> Error:
    """The Error message telling a peer what was wrong with what it sent."""
    return Error(
        req=error.req,
        code=error.code if error.code in ERROR_CODES else "bad_message",
        message=clip_text(str(error)),
        fatal=error.code not in REFUSALS,
    )


def clip_text(sentence: str) -> str:
    """A sentence as an error or a refusal carries it: printable, at most
    ERROR_TEXT_MAX_CHARS characters."""
    printable = "".join(c if c.isprintable() else "?" for c in sentence) or "error"
    if len(printable) <= ERROR_TEXT_MAX_CHARS:
        return printable
    return printable[: ERROR_TEXT_MAX_CHARS - 1] + "…"


def hello_signed_payload(
    nonce: bytes, name: str, public_key: bytes, peer_port: int, channel: bytes
) -> bytes:
    """What a hello signs: the lobby's nonce bound to the name, key and port it announces, and
    to this TLS connection (`channel`, its exporter value): a machine in the middle that
    relays the lobby's challenge cannot carry the signature over to its own connection."""
    payload: bytes = msgpack.packb([nonce, name, public_key, peer_port, channel], use_bin_type=True)
    return payload
