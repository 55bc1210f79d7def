"""The deck's wire messages: exact round trips, strict decoding, nothing secret in reprs."""

import dataclasses

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import ALL_CARDS, Bean
from protocol.deck.errors import WireError
from protocol.deck.messages import (
    MAX_CARDS,
    MAX_PLAYERS,
    Argument,
    Commit,
    Dispute,
    EpochMessage,
    Keys,
    Relock,
    SeedReveal,
    Shuffle,
    decode_message,
)
from protocol.messages import MessageError, frame
from protocol.peer_messages import (
    MAX_ACTIONS_PER_STEP,
    MAX_DECK_MESSAGES_PER_STEP,
    PEER_MAX_FRAME,
    StepBody,
    StepFrame,
)
from protocol.rules import MakeOffer, Slot
from tests.loose_msgpack import LongHeader, Pairs, Wide, pack

GAME = bytes(range(16))


def blobs(size: int, max_items: int, min_items: int = 0) -> st.SearchStrategy[tuple[bytes, ...]]:
    item = st.binary(min_size=size, max_size=size)
    return st.lists(item, min_size=min_items, max_size=max_items).map(tuple)


commits = st.builds(
    Commit, st.binary(min_size=32, max_size=32), st.binary(min_size=32, max_size=32)
)
shuffles = st.builds(Shuffle, blobs(32, 154), st.binary(min_size=32, max_size=32))
arguments = st.integers(1, 154).map(lambda cards: Argument(bytes(32 * (4 * cards + 5))))
relocks = st.builds(Relock, blobs(32, 30), blobs(32, 30), blobs(64, 30))
epoch_messages = st.builds(
    EpochMessage,
    st.integers(0, 63),
    st.integers(0, 14),
    st.none() | commits,
    st.none() | shuffles,
    st.none() | relocks,
    st.none() | arguments,
)
slot_lists = st.lists(st.integers(0, 153), min_size=1, max_size=20, unique=True).map(
    lambda slots: tuple(sorted(slots))
)
keys_messages = slot_lists.flatmap(
    lambda slots: st.builds(
        Keys,
        st.integers(0, 63),
        st.none() | st.integers(0, 6),
        st.just(slots),
        blobs(32, len(slots), len(slots)),
    )
)
disputes = st.builds(
    Dispute, st.integers(0, 63), st.integers(0, 153), st.binary(min_size=32, max_size=32)
)
seed_reveals = st.builds(SeedReveal, st.binary(min_size=32, max_size=32))
messages = epoch_messages | keys_messages | disputes | seed_reveals


def through_the_wire(obj: object) -> object:
    return msgpack.unpackb(msgpack.packb(obj), raw=False, strict_map_key=True)


@given(messages)
def test_every_message_survives_the_wire_exactly(message):
    assert decode_message(through_the_wire(message.to_wire()), author=0) == message


@given(messages)
def test_wire_forms_hold_only_msgpack_native_values(message):
    def native(value: object) -> bool:
        if isinstance(value, dict):
            return all(isinstance(k, str) and native(v) for k, v in value.items())
        if isinstance(value, list):
            return all(native(v) for v in value)
        return value is None or (
            isinstance(value, (bytes, int, str)) and not isinstance(value, bool)
        )

    assert native(message.to_wire())


SAMPLE_KEYS = Keys(1, 2, (3, 4), (bytes(32), bytes(32)))


def test_a_missing_field_is_an_error_that_names_it():
    wire = SAMPLE_KEYS.to_wire()
    del wire["to"]
    with pytest.raises(WireError, match=r"missing field.*to"):
        Keys.from_wire(wire)


def test_an_extra_field_is_an_error_that_names_it():
    wire = SAMPLE_KEYS.to_wire() | {"note": "hi"}
    with pytest.raises(WireError, match=r"unexpected field.*note"):
        Keys.from_wire(wire)


def test_an_extra_field_inside_a_part_is_an_error():
    message = EpochMessage(0, 1, shuffle=Shuffle((bytes(32),), bytes(32)))
    wire = message.to_wire()
    wire["shuffle"]["shadow_commitments"] = []
    with pytest.raises(WireError, match="unexpected field"):
        EpochMessage.from_wire(wire)


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("epoch", True, "integer"),
        ("epoch", -1, "0..63"),
        ("epoch", "1", "integer"),
        ("slots", [4, 3], "strictly increasing"),
        ("slots", [3, 3], "strictly increasing"),
        ("slots", [154], "0..153"),
        ("slots", [], "at least one slot"),
        ("keys", [bytes(32)], "one key per slot"),
        ("keys", [bytes(31), bytes(32)], "32 bytes"),
        ("keys", [bytearray(32), bytes(32)], "bytes"),
        ("to", 7, "0..6"),
        ("kind", "deck.dispute", "expected a deck.keys"),
    ],
)
def test_keys_decoding_is_strict(field, value, why):
    wire = SAMPLE_KEYS.to_wire() | {field: value}
    with pytest.raises(WireError, match=why):
        Keys.from_wire(wire)


@pytest.mark.parametrize(
    ("part", "wire", "why"),
    [
        ("shuffle", {"deck": [bytes(32)] * 155, "public_key": bytes(32)}, "154"),
        ("shuffle", {"deck": [bytes(33)], "public_key": bytes(32)}, "32 bytes"),
        ("shuffle", {"deck": [], "public_key": bytes(31)}, "32 bytes"),
        ("shuffle", {"deck": [bytes(32)]}, "missing"),
        ("shuffle", {"deck": [], "public_key": bytes(32), "proof": b""}, "unexpected field"),
        ("argument", {"proof": b""}, "1 to 154 cards"),
        ("argument", {"proof": bytes(287)}, "1 to 154 cards"),
        ("argument", {"proof": bytes(32 * (4 * 155 + 5))}, "1 to 154 cards"),
        ("argument", {"proof": [bytes(288)]}, "bytes"),
        ("argument", {}, "missing"),
        ("relock", {"deck": [], "locks": [], "proofs": [bytes(63)]}, "64 bytes"),
        ("commit", {"seed_commitment": bytes(32)}, "missing"),
        ("shadows", {"commitments": []}, "unexpected field"),
    ],
)
def test_epoch_parts_are_decoded_strictly(part, wire, why):
    with pytest.raises(WireError, match=why):
        EpochMessage.from_wire({"kind": "deck.epoch", "epoch": 0, "round": 0, part: wire})


def test_decode_message_blames_the_author_and_refuses_unknown_kinds():
    with pytest.raises(WireError) as caught:
        decode_message({"kind": "deck.cheat"}, author=4)
    assert caught.value.blame == 4
    with pytest.raises(WireError) as caught:
        decode_message([1, 2], author=2)
    assert caught.value.blame == 2


def test_reprs_show_no_keys_seeds_or_permutations():
    secret = bytes(range(32))
    shown = [
        repr(Keys(0, None, (1,), (secret,))),
        repr(Dispute(0, 1, secret)),
        repr(SeedReveal(secret)),
        repr(Argument(secret * 9)),
    ]
    for text in shown:
        assert secret.hex() not in text and str(secret) not in text and "\\x01\\x02" not in text


# --- the largest step message a peer link must carry ---------------------------------------


def largest_step_body() -> StepBody:
    """The largest step message the deck's and the rules' own limits admit: an epoch message
    with every part at its largest, and keys for a whole deck in every other deck message."""
    point, scalar = bytes(32), bytes(32)
    epoch = EpochMessage(
        epoch=63,
        round=2 * MAX_PLAYERS,
        commit=Commit(bytes(32), bytes(32)),
        shuffle=Shuffle((point,) * MAX_CARDS, point),
        relock=Relock((point,) * MAX_CARDS, (point,) * MAX_CARDS, (bytes(64),) * MAX_CARDS),
        argument=Argument(bytes(32 * (4 * MAX_CARDS + 5))),
    )
    keys = Keys(63, MAX_PLAYERS - 1, tuple(range(MAX_CARDS)), (scalar,) * MAX_CARDS)
    deck = (epoch.to_wire(), *[keys.to_wire()] * (MAX_DECK_MESSAGES_PER_STEP - 1))
    hand = tuple((Slot(999, position), card) for position, card in enumerate(ALL_CARDS[:150]))
    offer = MakeOffer(None, hand, (), (), tuple((bean, 24) for bean in Bean))
    return StepBody(
        game=GAME,
        step=10**7,
        seat=MAX_PLAYERS - 1,
        state=bytes(32),
        actions=(offer,) * MAX_ACTIONS_PER_STEP,
        deck=deck,
        start_commit=bytes(32),
        start_coin=bytes(32),
        final=bytes(32),
    )


def test_the_largest_step_message_fits_a_frame_and_is_read_back():
    body = largest_step_body()
    payload = body.encode()
    message = StepFrame(GAME, body.step, body.seat, payload, bytes(64))
    framed = frame(msgpack.packb(message.to_wire(), use_bin_type=True), PEER_MAX_FRAME)
    assert len(framed) <= PEER_MAX_FRAME
    assert StepBody.decode(payload) == body
    assert isinstance(decode_message(body.deck[0], 3), EpochMessage)
    assert all(isinstance(decode_message(wire, 3), Keys) for wire in body.deck[1:])


# --- canonical decoding ----------------------------------------------------------------------

SAMPLE_EPOCH = EpochMessage(0, 1, commit=Commit(bytes(32), bytes(range(32))))


def reordered(wire: dict) -> dict:
    return dict(reversed(list(wire.items())))


@pytest.mark.parametrize(
    "wire",
    [
        reordered(SAMPLE_KEYS.to_wire()),
        reordered(SAMPLE_EPOCH.to_wire()),
        {**SAMPLE_EPOCH.to_wire(), "commit": reordered(SAMPLE_EPOCH.commit.to_wire())},
    ],
    ids=["a deck map's keys", "an epoch message's keys", "the keys of a part of one"],
)
def test_a_deck_map_in_another_key_order_is_refused_naming_its_author(wire):
    """A deck map is kept in a step message as received: its key order is read here, as the
    deck's encoder writes it, so that no two step messages differ by it alone."""
    with pytest.raises(WireError, match="not in canonical form") as caught:
        decode_message(through_the_wire(wire), author=5)
    assert caught.value.blame == 5


def body_with_deck(deck: object) -> bytes:
    wire = StepBody(GAME, 3, 1, bytes(32)).to_wire()
    return pack({**wire, "deck": [deck]})


@pytest.mark.parametrize(
    "payload",
    [
        body_with_deck(Pairs([*SAMPLE_KEYS.to_wire().items(), ("epoch", 1)])),
        body_with_deck({**SAMPLE_KEYS.to_wire(), "epoch": Wide(1)}),
        body_with_deck({**SAMPLE_KEYS.to_wire(), "keys": LongHeader([bytes(32)] * 2)}),
        body_with_deck({**SAMPLE_KEYS.to_wire(), "kind": LongHeader("deck.keys")}),
        body_with_deck(LongHeader(SAMPLE_KEYS.to_wire())),
    ],
    ids=["a key twice", "a wide integer", "a long array header", "a long str header", "a long map"],
)
def test_a_step_message_with_a_deck_map_not_in_canonical_form_is_refused(payload):
    assert decode_message(msgpack.unpackb(payload)["deck"][0], 1) == SAMPLE_KEYS
    with pytest.raises(MessageError, match="not in canonical form"):
        StepBody.decode(payload)


def test_a_float_where_a_deck_map_holds_an_integer_is_refused():
    with pytest.raises(WireError, match="epoch must be an integer"):
        decode_message({**SAMPLE_KEYS.to_wire(), "epoch": 1.0}, 2)


# Deck messages of up to 154 points are slow to draw on a loaded machine: that is no failure.
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages, st.data())
def test_a_byte_changed_in_a_deck_message_is_refused_or_is_its_encoding(message, data):
    """For any deck message the encoder writes, with any one byte of it changed inside a step
    message, the step message is refused or reads as messages whose encoding is exactly those
    bytes (the unchanged round trip is test_every_message_survives_the_wire_exactly's). The whole
    path is tried, as lockstep reads it: the step body's canonical check sees integer widths,
    decode_message sees the rest."""
    payload = body_with_deck(message.to_wire())
    start = payload.index(msgpack.packb(message.to_wire(), use_bin_type=True))
    changed = bytearray(payload)
    changed[data.draw(st.integers(start, len(payload) - 1))] ^= data.draw(st.integers(1, 255))
    try:
        body = StepBody.decode(bytes(changed))
        read = tuple(decode_message(wire, 0).to_wire() for wire in body.deck)
    except (MessageError, WireError, ValueError):
        return
    assert dataclasses.replace(body, deck=read).encode() == changed
