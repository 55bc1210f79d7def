"""The relay's formats (protocol/relay.py): a link's pair id is public, its secret the two
seats' own; and the request and answer as they go on the wire."""

from __future__ import annotations

import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from protocol.identity import Identity, SignatureError
from protocol.relay import (
    ANSWER_BYTES,
    PAIR_BYTES,
    RELAY_MAGIC,
    REQUEST_BYTES,
    SECRET_BYTES,
    RelayFormatError,
    RelayRole,
    RelayStatus,
    decode_answer,
    decode_request,
    encode_answer,
    encode_request,
    relay_pair,
    relay_secret,
)

seeds = st.binary(min_size=32, max_size=32)
game_ids = st.binary(min_size=16, max_size=16)


def identity(seed: bytes) -> Identity:
    return Identity(Ed25519PrivateKey.from_private_bytes(seed))


@given(seeds, seeds, game_ids)
def test_both_seats_of_a_link_derive_the_same_secret_and_the_same_pair(
    one_seed: bytes, other_seed: bytes, game_id: bytes
) -> None:
    one, other = identity(one_seed), identity(other_seed)
    secret = relay_secret(game_id, one, other.public_key)
    assert secret == relay_secret(game_id, other, one.public_key)
    assert len(secret) == SECRET_BYTES
    pair = relay_pair(game_id, one.public_key, other.public_key)
    assert pair == relay_pair(game_id, other.public_key, one.public_key)
    assert len(pair) == PAIR_BYTES and pair != secret


@given(seeds, seeds, seeds, game_ids, game_ids)
def test_a_third_seat_or_another_table_derives_another_secret(
    one_seed: bytes, other_seed: bytes, third_seed: bytes, game_id: bytes, other_game: bytes
) -> None:
    """A third seat of the table knows both keys and the game id, and derives the secrets it
    shares with each seat: none is the pair's. Another table's game id gives another."""
    one, other, third = identity(one_seed), identity(other_seed), identity(third_seed)
    secret = relay_secret(game_id, one, other.public_key)
    if third.public_key not in (one.public_key, other.public_key):
        assert secret not in (
            relay_secret(game_id, third, one.public_key),
            relay_secret(game_id, third, other.public_key),
        )
    if other_game != game_id:
        assert secret != relay_secret(other_game, one, other.public_key)
        assert relay_pair(game_id, one.public_key, other.public_key) != relay_pair(
            other_game, one.public_key, other.public_key
        )


def test_no_secret_is_derived_with_a_key_of_small_order() -> None:
    """Such a key gives an X25519 value anyone knows: it is refused before any agreement."""
    one = Identity.generate()
    for small_order in (bytes(32), (1).to_bytes(32, "little")):
        with pytest.raises(SignatureError, match="small order"):
            relay_secret(bytes(16), one, small_order)


@given(st.sampled_from(RelayRole), st.binary(min_size=32, max_size=32), seeds)
def test_a_request_round_trips(role: RelayRole, pair: bytes, secret: bytes) -> None:
    encoded = encode_request(role, pair, secret)
    assert len(encoded) == REQUEST_BYTES == 70
    assert decode_request(encoded) == (role, pair, secret)


@given(st.binary(max_size=2 * REQUEST_BYTES))
def test_bytes_that_are_not_a_request_of_version_2_are_refused(data: bytes) -> None:
    good = data[:4] == RELAY_MAGIC and data[4:5] == b"\x02" and data[5:6] in (b"\x00", b"\x01")
    if len(data) == REQUEST_BYTES and good:
        assert decode_request(data)[1:] == (data[6:38], data[38:])
    else:
        with pytest.raises(RelayFormatError):
            decode_request(data)


def test_a_request_of_version_1_or_of_the_wrong_size_is_refused() -> None:
    token = bytes(range(32))
    version_1 = struct.pack("!4sBB32s", RELAY_MAGIC, 1, RelayRole.DIALS, token)
    with pytest.raises(RelayFormatError, match=f"{REQUEST_BYTES} bytes, not 38"):
        decode_request(version_1)
    as_long = version_1 + bytes(32)
    with pytest.raises(RelayFormatError, match="not a relay request of version 2"):
        decode_request(as_long)
    request = encode_request(RelayRole.ACCEPTS, token, token)
    with pytest.raises(RelayFormatError, match="no relay role 7"):
        decode_request(request[:5] + b"\x07" + request[6:])
    with pytest.raises(ValueError):
        encode_request(RelayRole.DIALS, token[:31], token)
    with pytest.raises(ValueError):
        encode_request(RelayRole.DIALS, token, token + b"x")


@given(st.sampled_from(RelayStatus))
def test_an_answer_round_trips(status: RelayStatus) -> None:
    encoded = encode_answer(status)
    assert len(encoded) == ANSWER_BYTES and encoded[4] == 2
    assert decode_answer(encoded) == status
