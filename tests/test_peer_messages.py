"""The peers' decoders, fuzzed: whatever bytes or shapes arrive, the answer is a message or a
MessageError (a deck message: a DeckError naming its author), never anything else."""

from __future__ import annotations

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.deck import DeckError, decode_message
from protocol.messages import MessageError
from protocol.peer_messages import HANDSHAKE, PEER_LINK, Heartbeat, PeerChat, StepBody, StepFrame
from protocol.rules import EndPlanting, Harvest

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


@given(values)
def test_deck_messages_of_any_shape_blame_their_author(wire):
    try:
        decode_message(wire, 3)
    except DeckError as error:
        assert error.blame == 3


def test_link_messages_round_trip():
    for message in (StepFrame(valid_body().encode(), bytes(64)), Heartbeat(7, 0b101),
                    PeerChat("beans!")):  # fmt: skip
        assert PEER_LINK.decode(msgpack.packb(message.to_wire(), use_bin_type=True)) == message
    assert StepBody.decode(valid_body().encode()) == valid_body()
