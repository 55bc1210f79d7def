"""The peers' decoders, fuzzed: whatever bytes or shapes arrive, the answer is a message or a
MessageError (a deck message: a DeckError naming its author), never anything else."""

from __future__ import annotations

import itertools
import time

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.deck import DeckError, decode_message
from protocol.identity import Identity, SignatureError, Verifier
from protocol.messages import (
    ERROR_TEXT_MAX_CHARS,
    HOST_MAX_CHARS,
    MAX_SEATS,
    NAME_MAX_CHARS,
    FrameDecoder,
    GameStart,
    MessageError,
    RoomOptions,
    Seat,
    encode,
    frame,
    unpack,
)
from protocol.peer_messages import (
    HANDSHAKE,
    HANDSHAKE_MAX_FRAME,
    PEER_LINK,
    PEER_MAX_FRAME,
    ROSTER_MAX_BYTES,
    Ended,
    EndVote,
    Holding,
    PeerChat,
    StepBody,
    StepFrame,
    TableRefusal,
    sign,
)
from protocol.rules import EndPlanting, Harvest
from protocol.table import roster_bytes
from tests.loose_msgpack import AsFloat, LongHeader, Pairs, Wide, pack
from tests.test_deck_messages import messages as deck_messages
from tests.test_messages import records
from tests.test_wire_actions import actions

msgpack_integers = st.integers(-(2**63), 2**64 - 1)
values = st.recursive(
    st.none() | st.booleans() | msgpack_integers | st.floats() | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
FIELDS = ["type", "step", "have", "payload", "signature", "text", "game", "seat", "nonce"]
maps = st.dictionaries(st.sampled_from(FIELDS), values, max_size=6)


def valid_body() -> StepBody:
    return StepBody(
        game=bytes(16), step=12, seat=2, state=bytes(32), actions=(Harvest(1), EndPlanting())
    )


def decoded_or_refused(decode, data) -> None:
    """Decoding gives a message that encodes back to itself, or a MessageError."""
    try:
        message = decode(data)
    except MessageError:
        return
    assert decode(msgpack.packb(message.to_wire(), use_bin_type=True)) == message


@given(st.binary(max_size=300))
def test_any_bytes_are_a_message_or_a_message_error(data):
    for codec in (HANDSHAKE, PEER_LINK):
        decoded_or_refused(codec.decode, data)


@settings(max_examples=300)
@given(maps)
def test_maps_of_any_shape_are_refused_with_a_message_error(wire):
    packed = msgpack.packb(wire, use_bin_type=True)
    for codec in (HANDSHAKE, PEER_LINK):
        decoded_or_refused(codec.decode, packed)
    decoded_or_refused(StepBody.decode, packed)


@given(st.data())
def test_a_step_body_with_any_byte_changed_is_the_body_or_an_error(data):
    payload = bytearray(valid_body().encode())
    position = data.draw(st.integers(0, len(payload) - 1))
    payload[position] = data.draw(st.integers(0, 255))
    try:
        body = StepBody.decode(bytes(payload))
    except MessageError:
        return
    assert StepBody.decode(body.encode()) == body


def test_a_step_body_read_again_is_the_same_body_and_a_malformed_one_fails_every_time():
    """The driver and the lockstep both read each step message: the second read is the
    first one's body, while a malformed payload is refused each time it is read."""
    payload = valid_body().encode()
    first = StepBody.decode(payload)
    assert StepBody.decode(bytes(payload)) is first and first.encode() == payload
    malformed = payload[:-1]
    for _ in range(2):
        with pytest.raises(MessageError):
            StepBody.decode(malformed)


@given(values)
def test_deck_messages_of_any_shape_blame_their_author(wire):
    try:
        decode_message(wire, 3)
    except DeckError as error:
        assert error.blame == 3


def test_link_messages_round_trip():
    step = StepFrame(bytes(16), 12, 2, valid_body().encode())
    vote = EndVote(bytes(16), 12, 2, 0b1001)
    signed_vote = sign(Identity.generate(), vote)
    ended = Ended(bytes(16), 12, 2, "vote", 0b1001, bytes(range(32)), votes=(encode(signed_vote),))
    holding = Holding(bytes(16), 7, 2, 0b101, 35)
    for message in (step, vote, ended, holding, PeerChat("beans!")):
        assert PEER_LINK.decode(msgpack.packb(message.to_wire(), use_bin_type=True)) == message
    assert StepBody.decode(valid_body().encode()) == valid_body()


GAME = bytes(range(16))


@pytest.mark.parametrize(
    "message",
    [
        StepFrame(GAME, 12, 2, valid_body().encode()),
        EndVote(GAME, 12, 2, 0b1001),
        Ended(GAME, 12, 2, "dispute", 0, bytes(32)),
    ],
    ids=lambda message: message.TYPE,
)
def test_a_signature_covers_the_game_the_step_the_seat_and_the_kind(message):
    """A signed message taken to another game (a rematch with the same seats), another step
    or another seat's name fails its signature check."""
    author = Identity.generate()
    signed = sign(author, message)
    signed.verify(Verifier(author.public_key))
    elsewhere = [
        {"game": bytes(16)},
        {"step": message.step + 1},
        {"seat": message.seat + 1},
    ]
    for change in elsewhere:
        wire = {**signed.to_wire(), **change}
        moved = PEER_LINK.decode(msgpack.packb(wire, use_bin_type=True))
        with pytest.raises(SignatureError):
            moved.verify(Verifier(author.public_key))
    # The same body signed as another kind of message is another signature.
    vote, ended = sign(author, EndVote(GAME, 3, 1, 1)), Ended(GAME, 3, 1, "vote", 1)
    assert vote.signed() != ended.signed()


def test_a_frame_of_many_tiny_values_is_refused_before_it_is_built():
    """The flood of issue 12: a frame of tiny maps. Refused by its shape while msgpack reads
    the headers, in about the time it takes to look at the bytes, and a frame longer than a
    peer link allows is refused from its length alone."""
    flood = msgpack.packb([{}] * 200_000)
    began = time.perf_counter()
    with pytest.raises(MessageError):
        unpack(flood)
    assert time.perf_counter() - began < 0.5
    nested = msgpack.packb([[[{}] * 200] * 200] * 5)  # every array short, many values in all
    assert len(nested) < PEER_MAX_FRAME
    unpacked = unpack(nested)  # within the shapes: at most one value per byte
    assert len(unpacked) == 5
    decoder = FrameDecoder(PEER_MAX_FRAME)
    with pytest.raises(MessageError, match="limit"):
        decoder.feed((PEER_MAX_FRAME + 1).to_bytes(4, "big") + b"\x00" * 16)


# -- canonical decoding -----------------------------------------------------------------------


def reordered(wire: dict) -> dict:
    return dict(reversed(list(wire.items())))


def body_with(**changes) -> bytes:
    """The valid body's wire map, fields replaced by `changes` (loose forms), packed."""
    return pack({**valid_body().to_wire(), **changes})


HARVEST, END_PLANTING = valid_body().to_wire()["actions"]
BODY_NOT_CANONICAL = {
    "a key twice": pack(Pairs([*valid_body().to_wire().items(), ("step", 12)])),
    "a wide integer": body_with(step=Wide(12)),
    "a long bytes header": body_with(state=LongHeader(bytes(32))),
    "a long array header": body_with(actions=LongHeader([HARVEST, END_PLANTING])),
    "a long map header": pack(LongHeader(valid_body().to_wire())),
    "keys in another order": pack(reordered(valid_body().to_wire())),
    "a key twice in an action": body_with(
        actions=[Pairs([*HARVEST.items(), ("field", 1)]), END_PLANTING]
    ),
    "a wide integer in an action": body_with(actions=[{**HARVEST, "field": Wide(1)}, END_PLANTING]),
    "a long string header in an action": body_with(
        actions=[{**HARVEST, "type": LongHeader("harvest")}, END_PLANTING]
    ),
    "an action's keys in another order": body_with(actions=[reordered(HARVEST), END_PLANTING]),
}


@pytest.mark.parametrize("payload", BODY_NOT_CANONICAL.values(), ids=BODY_NOT_CANONICAL.keys())
def test_a_step_body_not_in_canonical_form_is_refused(payload):
    """The same step message in other bytes is refused: its author signed those bytes, and two
    different signed payloads must never be one message (or equivocation could pass as one)."""
    assert payload != valid_body().encode()
    assert StepBody.from_wire(msgpack.unpackb(payload)) == valid_body()  # to msgpack, the same
    with pytest.raises(MessageError, match="not in canonical form"):
        StepBody.decode(payload)


def test_a_float_where_a_step_body_holds_an_integer_is_refused():
    for payload in (body_with(step=AsFloat(12)), body_with(actions=[{**HARVEST, "field": 1.0}])):
        with pytest.raises(MessageError, match="must be an integer, not a float"):
            StepBody.decode(payload)


@pytest.mark.parametrize(
    "message",
    [
        StepFrame(GAME, 12, 2, valid_body().encode()),
        EndVote(GAME, 12, 2, 0b1001),
        Holding(GAME, 7, 2, 0b101, 35),
        TableRefusal(GAME, 2, "the lobby gave p0 another key", b"roster"),
    ],
    ids=lambda message: message.TYPE,
)
def test_a_link_message_not_in_canonical_form_is_refused(message):
    wire = message.to_wire()
    loose = [
        pack(Pairs([*wire.items(), ("step", wire["step"])])),
        pack({**wire, "step": Wide(wire["step"])}),
        pack(reordered(wire)),
        pack(LongHeader(wire)),
    ]
    codecs = [codec for codec in (HANDSHAKE, PEER_LINK) if message.TYPE in codec.by_type]
    for payload, codec in itertools.product(loose, codecs):
        with pytest.raises(MessageError, match=f"{message.TYPE}: not in canonical form"):
            codec.decode(payload)


link_messages = st.one_of(
    *(records(cls) for cls in PEER_LINK.by_type.values() if cls is not StepFrame),
    st.builds(
        StepFrame,
        st.binary(min_size=16, max_size=16),
        st.integers(0, 10**7),
        st.integers(0, 6),
        st.binary(min_size=1, max_size=300),
        st.binary(min_size=64, max_size=64),
    ),
)
step_bodies = st.builds(
    StepBody,
    st.binary(min_size=16, max_size=16),
    st.integers(0, 10**7),
    st.integers(0, 6),
    st.binary(min_size=32, max_size=32),
    st.lists(st.binary(min_size=32, max_size=32), max_size=7).map(tuple),
    st.lists(actions, max_size=4).map(tuple),
    st.lists(deck_messages.map(lambda m: m.to_wire()), max_size=2).map(tuple),
    st.none() | st.binary(min_size=32, max_size=32),
    st.none() | st.binary(min_size=32, max_size=32),
    st.none() | st.binary(min_size=32, max_size=32),
)


def changed_byte(data: st.DataObject, payload: bytes) -> bytes:
    changed = bytearray(payload)
    changed[data.draw(st.integers(0, len(payload) - 1))] ^= data.draw(st.integers(1, 255))
    return bytes(changed)


@settings(max_examples=300)
@given(st.data())
def test_a_byte_changed_in_a_link_message_is_refused_or_is_its_encoding(data):
    """For any link message the encoder writes, decoding gives it back; with any one byte
    changed, it is refused or reads as a message whose encoding is exactly those bytes."""
    message = data.draw(link_messages)
    payload = encode(message)
    assert PEER_LINK.decode(payload) == message
    changed = changed_byte(data, payload)
    try:
        other = PEER_LINK.decode(changed)
    except MessageError:
        return
    assert encode(other) == changed


@settings(max_examples=300)
@given(st.data())
def test_a_byte_changed_in_a_step_body_is_refused_or_is_its_encoding(data):
    body = data.draw(step_bodies)
    payload = body.encode()
    assert StepBody.decode(payload) == body
    changed = changed_byte(data, payload)
    try:
        other = StepBody.decode(changed)
    except MessageError:
        return
    assert other.encode() == changed


def the_largest_roster() -> GameStart:
    """Seven seats, every name and host as long as the lobby's protocol admits, in a
    character UTF-8 spends four bytes on, and every option at its largest."""
    wide = "\U0001d505"  # MATHEMATICAL FRAKTUR CAPITAL B: four bytes
    seats = tuple(
        Seat(wide * (NAME_MAX_CHARS - 1) + str(n), Identity.generate().public_key,
             wide * HOST_MAX_CHARS, 65535)
        for n in range(MAX_SEATS)
    )  # fmt: skip
    options = RoomOptions(singleton_rule="rio_grande_literal", proofs=False)
    return GameStart(room_id=2**31 - 1, game_id=bytes(16), seats=seats, options=options)


def test_the_largest_table_refusal_fits_a_frame_before_the_hellos():
    """A refusal is said before the hellos too (to a machine whose key does not match): the
    largest roster and reason fit the small frames of a link not yet up, and read back."""
    roster = roster_bytes(the_largest_roster())
    assert len(roster) <= ROSTER_MAX_BYTES
    refusal = TableRefusal(bytes(16), MAX_SEATS - 1, "\U0001d505" * ERROR_TEXT_MAX_CHARS, roster)
    refusal = sign(Identity.generate(), refusal)
    framed = frame(encode(refusal), HANDSHAKE_MAX_FRAME)  # MessageError if it did not fit
    assert HANDSHAKE.decode(framed[4:]) == refusal == PEER_LINK.decode(framed[4:])


def test_a_table_refusal_signature_covers_the_game_the_seat_the_reason_and_the_roster():
    author = Identity.generate()
    roster = roster_bytes(the_largest_roster())
    signed = sign(author, TableRefusal(GAME, 2, "the lobby gave p0 another key", roster))
    signed.verify(Verifier(author.public_key))
    for change in (
        {"game": bytes(16)},
        {"seat": 3},
        {"reason": "the lobby gave p0 another key!"},
        {"roster": roster[:-1] + b"x"},
    ):
        moved = HANDSHAKE.decode(msgpack.packb({**signed.to_wire(), **change}))
        with pytest.raises(SignatureError):
            moved.verify(Verifier(author.public_key))
    with pytest.raises(MessageError):  # a refusal has no step: nothing to replay it into
        HANDSHAKE.decode(msgpack.packb({**signed.to_wire(), "step": 1}))
