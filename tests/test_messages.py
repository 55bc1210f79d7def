"""Frames, the schema mechanism and the lobby messages; Hypothesis fuzzes the decoder."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.messages import (
    ERROR_CODES,
    FATAL_ERRORS,
    LOBBY_EVENT_MAX_FRAME,
    LOBBY_EVENTS,
    LOBBY_REQUEST_MAX_FRAME,
    LOBBY_REQUESTS,
    PROTOCOL_VERSION,
    Blob,
    Bool,
    Chat,
    Codec,
    CreateRoom,
    Error,
    FrameDecoder,
    GameStart,
    Hello,
    Int,
    ListOf,
    Message,
    MessageError,
    Nested,
    Nullable,
    OneOf,
    QuickMatch,
    Record,
    RoomOptions,
    Seat,
    Spec,
    Text,
    Version,
    encode,
    error_reply,
    frame,
    hello_signed_payload,
    schema_of,
)
from tests.loose_msgpack import AsFloat, LongHeader, Pairs, Wide, pack

ALL_MESSAGES = [*LOBBY_REQUESTS.by_type.values(), *LOBBY_EVENTS.by_type.values()]
PRINTABLE = st.characters(blacklist_categories=("C", "Z"), whitelist_characters=" ")


def strategy_for(spec: Spec) -> st.SearchStrategy[Any]:
    """Every valid value of a field, from its Spec."""
    if isinstance(spec, Version):
        return st.just(PROTOCOL_VERSION)
    if isinstance(spec, Int):
        return st.integers(spec.low, spec.high)
    if isinstance(spec, Bool):
        return st.booleans()
    if isinstance(spec, Text):
        text = st.text(PRINTABLE, min_size=spec.min_chars, max_size=spec.max_chars)
        return text.filter(lambda s: s == s.strip()) if spec.trimmed else text
    if isinstance(spec, Blob):
        return st.binary(min_size=spec.min_bytes, max_size=spec.max_bytes)
    if isinstance(spec, OneOf):
        return st.sampled_from(spec.choices)
    if isinstance(spec, ListOf):
        items = st.lists(strategy_for(spec.item), min_size=spec.min_items, max_size=spec.max_items)
        return items.map(tuple)
    if isinstance(spec, Nullable):
        return st.none() | strategy_for(spec.inner)
    if isinstance(spec, Nested):
        return records(spec.record)
    raise AssertionError(f"no strategy for {spec!r}")


def records(cls: type[Record]) -> st.SearchStrategy[Any]:
    return st.builds(cls, **{f.name: strategy_for(f.spec) for f in schema_of(cls)})


def largest(spec: Spec) -> Any:
    """The value of a field that takes the most bytes on the wire."""
    if isinstance(spec, Version):
        return PROTOCOL_VERSION
    if isinstance(spec, Int):
        return spec.high if abs(spec.high) >= abs(spec.low) else spec.low
    if isinstance(spec, Bool):
        return True
    if isinstance(spec, Text):
        return "𝄞" * spec.max_chars  # four bytes of UTF-8 each
    if isinstance(spec, Blob):
        return b"\xff" * spec.max_bytes
    if isinstance(spec, OneOf):
        return max(spec.choices, key=len)
    if isinstance(spec, ListOf):
        return tuple(largest(spec.item) for _ in range(spec.max_items))
    if isinstance(spec, Nullable):
        return largest(spec.inner)
    if isinstance(spec, Nested):
        return largest_record(spec.record)
    raise AssertionError(f"no largest value for {spec!r}")


def largest_record(cls: type[Record]) -> Any:
    return cls(**{f.name: largest(f.spec) for f in schema_of(cls)})


# -- framing ----------------------------------------------------------------------------------


@given(
    st.lists(st.binary(max_size=300), max_size=8),
    st.lists(st.integers(1, 50), min_size=1, max_size=20),
)
def test_frames_survive_any_split_of_the_stream(payloads: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(frame(p, 300) for p in payloads)
    decoder = FrameDecoder(300)
    received: list[bytes] = []
    position, i = 0, 0
    while position < len(stream):
        step = cuts[i % len(cuts)]
        received += decoder.feed(stream[position : position + step])
        position, i = position + step, i + 1
    assert received == payloads
    assert decoder.buffered == 0


def test_a_frame_over_the_limit_is_refused_both_ways() -> None:
    with pytest.raises(MessageError) as sending:
        frame(b"x" * 11, 10)
    assert sending.value.code == "frame_too_large"
    decoder = FrameDecoder(10)
    assert decoder.feed(frame(b"x" * 10, 10)) == [b"x" * 10]
    with pytest.raises(MessageError) as receiving:
        decoder.feed(struct.pack(">I", 11))
    assert receiving.value.code == "frame_too_large" and "11" in str(receiving.value)
    with pytest.raises(MessageError):  # the stream cannot be trusted any more
        decoder.feed(frame(b"ok", 10))


@pytest.mark.parametrize("message", ALL_MESSAGES, ids=lambda m: m.TYPE)
def test_the_largest_message_of_each_type_fits_its_link(message: type[Message]) -> None:
    limit = LOBBY_REQUEST_MAX_FRAME if message.TYPE in LOBBY_REQUESTS.by_type else None
    limit = limit or LOBBY_EVENT_MAX_FRAME
    biggest = largest_record(message)
    assert len(frame(encode(biggest), limit)) <= limit + 4
    codec = LOBBY_REQUESTS if message.TYPE in LOBBY_REQUESTS.by_type else LOBBY_EVENTS
    assert codec.decode(encode(biggest)) == biggest


# -- the schema -------------------------------------------------------------------------------


@settings(max_examples=30)
@given(st.data())
def test_every_valid_message_round_trips(data: st.DataObject) -> None:
    for message in ALL_MESSAGES:
        value = data.draw(records(message), label=message.TYPE)
        codec = LOBBY_REQUESTS if message.TYPE in LOBBY_REQUESTS.by_type else LOBBY_EVENTS
        assert codec.decode(encode(value)) == value


def wire(message_type: str, **fields: Any) -> bytes:
    return msgpack.packb({"type": message_type, **fields}, use_bin_type=True)


GOOD_HELLO = {
    "version": PROTOCOL_VERSION,
    "req": 4,
    "name": "Ann",
    "public_key": bytes(32),
    "peer_port": 4000,
    "signature": bytes(64),
}


@pytest.mark.parametrize(
    ("payload", "field", "words"),
    [
        (wire("hello", **{**GOOD_HELLO, "name": ""}), "name", "1 to 24 characters"),
        (wire("hello", **{**GOOD_HELLO, "name": " Ann"}), "name", "space"),
        (wire("hello", **{**GOOD_HELLO, "name": "A\nB"}), "name", "printable"),
        (wire("hello", **{**GOOD_HELLO, "name": 5}), "name", "string, not an integer"),
        (wire("hello", **{**GOOD_HELLO, "peer_port": 0}), "peer_port", "from 1 to 65535"),
        (wire("hello", **{**GOOD_HELLO, "peer_port": True}), "peer_port", "not a boolean"),
        (wire("hello", **{**GOOD_HELLO, "signature": b"s"}), "signature", "exactly 64 bytes"),
        (wire("hello", **{**GOOD_HELLO, "extra": 1}), "extra", "not a field of hello"),
        (wire("hello", version=PROTOCOL_VERSION, req=1), "name", "missing"),
        (wire("create_room", req=1, name="T", seats=8), "seats", "from 3 to 7"),
        (
            wire("create_room", req=1, name="T", seats=3, options={"singleton_rule": "x"}),
            "options.singleton_rule",
            "one of protect_if_any_field_has_2plus, rio_grande_literal",
        ),
        (
            wire("create_room", req=1, name="T", seats=3, options={"proof_rounds": 40}),
            "options.proof_rounds",
            "not a field of RoomOptions",
        ),
        (
            wire("create_room", req=1, name="T", seats=3, options={"proofs": 1}),
            "options.proofs",
            "true or false",
        ),
        (
            wire("create_room", req=1, name="T", seats=3, options={"house_rules": 1}),
            "options.house_rules",
            "not a field of RoomOptions",
        ),
        (wire("create_room", req=1, name="T", seats=3, options=[]), "options", "must be a map"),
        (wire("chat", req=1, text="x" * 501), "text", "1 to 500 characters"),
    ],
)
def test_errors_name_the_message_type_and_the_field(payload: bytes, field: str, words: str) -> None:
    with pytest.raises(MessageError) as caught:
        LOBBY_REQUESTS.decode(payload)
    error = caught.value
    assert error.field == field and error.code == "bad_message"
    assert str(error).startswith(f"{error.message_type}: field '{field}'")
    assert words in str(error)
    assert error.req == msgpack.unpackb(payload)["req"]


def test_another_protocol_version_is_reported_before_anything_else() -> None:
    future = wire("hello", version=PROTOCOL_VERSION + 1, req=9, shiny_new_field=True)
    with pytest.raises(MessageError) as caught:
        LOBBY_REQUESTS.decode(future)
    assert caught.value.code == "version_mismatch" and caught.value.req == 9
    assert f"speaks protocol version {PROTOCOL_VERSION}" in str(caught.value)


def test_unknown_and_malformed_messages_are_named() -> None:
    cases = {
        wire("shuffle", req=1): "unknown message type 'shuffle'",
        msgpack.packb([1]): "must be a map",
        msgpack.packb({"req": 1}): "unknown message type nil",
        b"\xc1": "not valid msgpack",
        msgpack.packb({"type": "ping", "req": 1}) + b"\x00": "not valid msgpack",
    }
    for payload, words in cases.items():
        with pytest.raises(MessageError, match=words):
            LOBBY_REQUESTS.decode(payload)
    with pytest.raises(MessageError, match="unknown message type 'hello'"):
        LOBBY_EVENTS.decode(encode(Hello(**GOOD_HELLO)))  # a request is not an event


def test_room_options_fill_in_defaults_and_constructors_validate() -> None:
    created = LOBBY_REQUESTS.decode(wire("create_room", req=1, name="T", seats=3, options={}))
    assert isinstance(created, CreateRoom) and created.options == RoomOptions()
    assert RoomOptions().to_wire() == {
        "singleton_rule": "protect_if_any_field_has_2plus",
        "proofs": True,
        "turn_seconds": 0,
    }
    partial = {"turn_seconds": 60}
    decoded = LOBBY_REQUESTS.decode(wire("quick_match", req=1, seats=4, options=partial))
    assert decoded == dataclasses.replace(decoded, options=RoomOptions(turn_seconds=60))
    with pytest.raises(MessageError, match="chat: field 'text'"):
        Chat(req=1, text="")
    with pytest.raises(MessageError, match="turn_seconds"):
        RoomOptions(turn_seconds=-1)


def test_a_record_field_without_a_spec_is_a_programming_error() -> None:
    @dataclasses.dataclass(frozen=True)
    class Careless(Record):
        count: int

    with pytest.raises(TypeError, match="Annotated"):
        Careless(count=1)


def test_a_codec_refuses_two_classes_for_one_type() -> None:
    with pytest.raises(ValueError, match="two message classes"):
        Codec([Chat, Chat])


def test_error_replies_say_whether_the_link_ends() -> None:
    refusal = error_reply(MessageError("no", code="room_full", req=3))
    assert (refusal.code, refusal.req, refusal.fatal) == ("room_full", 3, False)
    fatal = error_reply(MessageError("x" * 1000 + "\x1b"))
    assert fatal.fatal and fatal.code == "bad_message" and len(fatal.message) == 300
    assert set(FATAL_ERRORS) < set(ERROR_CODES)
    assert LOBBY_EVENTS.decode(encode(fatal)) == fatal
    assert isinstance(fatal, Error)


def test_the_hello_signature_covers_nonce_name_key_port_and_connection() -> None:
    base = (bytes(32), "Ann", bytes(32), 4000, bytes(32))
    variants = [
        (b"\x01" * 32, "Ann", bytes(32), 4000, bytes(32)),
        (bytes(32), "Anne", bytes(32), 4000, bytes(32)),
        (bytes(32), "Ann", b"\x01" * 32, 4000, bytes(32)),
        (bytes(32), "Ann", bytes(32), 4001, bytes(32)),
        (bytes(32), "Ann", bytes(32), 4000, b"\x01" * 32),
    ]
    signed = {hello_signed_payload(*v) for v in [base, *variants]}
    assert len(signed) == 6


# -- fuzzing the decoder ----------------------------------------------------------------------


def decode_or_refuse(codec: Codec, payload: bytes) -> Message | None:
    """Decoding either yields a valid message or raises MessageError; nothing else."""
    try:
        message = codec.decode(payload)
    except MessageError as error:
        assert str(error) and error.code in ERROR_CODES
        return None
    assert codec.decode(encode(message)) == message
    return message


@settings(max_examples=500)
@given(st.binary(max_size=600))
def test_the_decoder_survives_arbitrary_bytes(payload: bytes) -> None:
    decode_or_refuse(LOBBY_REQUESTS, payload)
    decode_or_refuse(LOBBY_EVENTS, payload)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=30)
    | st.binary(max_size=70)
)
structures = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=12) | st.binary(max_size=4), inner, max_size=5)
    ),
    max_leaves=20,
)
field_names = sorted({f.name for m in ALL_MESSAGES for f in schema_of(m)} | {"x"})


@settings(max_examples=300)
@given(
    st.sampled_from(sorted(LOBBY_REQUESTS.by_type) + sorted(LOBBY_EVENTS.by_type) + ["nope"]),
    st.dictionaries(st.sampled_from(field_names), structures, max_size=8),
)
def test_the_decoder_survives_maps_of_any_shape(message_type: str, fields: dict[str, Any]) -> None:
    payload = msgpack.packb({"type": message_type, **fields}, use_bin_type=True)
    decode_or_refuse(LOBBY_REQUESTS, payload)
    decode_or_refuse(LOBBY_EVENTS, payload)


@settings(max_examples=300)
@given(st.data())
def test_the_decoder_survives_corrupted_valid_messages(data: st.DataObject) -> None:
    message_class = data.draw(st.sampled_from(ALL_MESSAGES))
    payload = bytearray(encode(data.draw(records(message_class))))
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        position = data.draw(st.integers(0, max(0, len(payload) - 1)))
        if action == "flip" and payload:
            payload[position] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del payload[position:]
        else:
            payload[position:position] = data.draw(st.binary(min_size=1, max_size=8))
    decode_or_refuse(LOBBY_REQUESTS, bytes(payload))
    decode_or_refuse(LOBBY_EVENTS, bytes(payload))


# -- canonical decoding -----------------------------------------------------------------------

ROSTER = GameStart(
    room_id=7,
    game_id=bytes(range(16)),
    seats=tuple(Seat(f"P{n}", bytes([n]) * 32, "10.0.0.1", 4000 + n) for n in range(3)),
    options=RoomOptions(),
)


def roster_with(**changes: Any) -> bytes:
    """The roster's wire map, fields replaced by `changes` (loose forms), packed."""
    return pack({**ROSTER.to_wire(), **changes})


def reordered(wire: dict[str, Any]) -> dict[str, Any]:
    return dict(reversed(list(wire.items())))


OPTIONS = RoomOptions().to_wire()
NOT_CANONICAL = {
    "a key twice": pack(Pairs([*ROSTER.to_wire().items(), ("room_id", 7)])),
    "a wide integer": roster_with(room_id=Wide(7)),
    "a long string header": roster_with(type=LongHeader("game_start")),
    "a long bytes header": roster_with(game_id=LongHeader(bytes(range(16)))),
    "a long array header": roster_with(seats=LongHeader(ROSTER.to_wire()["seats"])),
    "a long map header": pack(LongHeader(ROSTER.to_wire())),
    "keys in another order": pack(reordered(ROSTER.to_wire())),
    "a key twice in the options": roster_with(
        options=Pairs([*OPTIONS.items(), ("turn_seconds", 0)])
    ),
    "a wide integer in the options": roster_with(options={**OPTIONS, "turn_seconds": Wide(0)}),
    "the options' keys in another order": roster_with(options=reordered(OPTIONS)),
    "a seat's keys in another order": roster_with(
        seats=[reordered(seat.to_wire()) for seat in ROSTER.seats]
    ),
}


def test_each_loose_form_holds_the_very_roster_in_other_bytes() -> None:
    for payload in NOT_CANONICAL.values():
        assert payload != encode(ROSTER)
        assert GameStart.from_wire(msgpack.unpackb(payload)) == ROSTER


@pytest.mark.parametrize("payload", NOT_CANONICAL.values(), ids=NOT_CANONICAL.keys())
def test_a_message_not_in_canonical_form_is_refused(payload: bytes) -> None:
    """Two different byte strings never read as one message: a roster (whose bytes the
    players compare) is read only as the lobby's encoder writes it."""
    with pytest.raises(MessageError, match="game_start: not in canonical form"):
        LOBBY_EVENTS.decode(payload)


def test_a_float_where_an_integer_belongs_is_refused() -> None:
    for payload in (
        roster_with(room_id=AsFloat(7)),
        roster_with(options={**OPTIONS, "turn_seconds": AsFloat(0)}),
    ):
        with pytest.raises(MessageError, match="must be an integer, not a float"):
            LOBBY_EVENTS.decode(payload)


def test_the_lobby_still_fills_in_the_options_a_request_leaves_out() -> None:
    """Requests to the lobby are not canonical: nothing signed or hashed is read from them."""
    request = pack({"type": "quick_match", "req": 1, "seats": 3, "options": {}})
    assert LOBBY_REQUESTS.decode(request) == QuickMatch(req=1, seats=3)


@settings(max_examples=300)
@given(st.data())
def test_a_byte_changed_is_refused_or_is_what_the_message_encodes_to(data: st.DataObject) -> None:
    """For any event the encoder writes, decoding gives it back; with any one byte changed,
    the payload is refused or reads as a message whose encoding is exactly those bytes."""
    message = data.draw(records(data.draw(st.sampled_from(list(LOBBY_EVENTS.by_type.values())))))
    payload = encode(message)
    assert LOBBY_EVENTS.decode(payload) == message
    changed = bytearray(payload)
    changed[data.draw(st.integers(0, len(payload) - 1))] ^= data.draw(st.integers(1, 255))
    try:
        other = LOBBY_EVENTS.decode(bytes(changed))
    except MessageError:
        return
    assert encode(other) == changed
