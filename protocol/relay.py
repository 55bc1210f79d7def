"""The lobby's relay, as both ends speak it: a link's pair id and secret, and the two fixed
messages.

Two seats that cannot reach each other directly each open a TCP connection to the lobby that
introduced their table and say which link they want: its pair id, which end of it they are,
and its secret. The lobby splices the two streams, and the seats run their pinned TLS link
inside, unchanged: the relay carries ciphertext and sees its sizes and timing, nothing else
(docs/peer-protocol.md).

    request  70 bytes: b"BNZR" | version u8 (2) | role u8 (0: dials, 1: accepts)
                       | pair id 32 bytes | secret 32 bytes
    answer    6 bytes: b"BNZR" | version u8 (2) | status u8 (RelayStatus)

After an answer of SPLICED, every byte is the other seat's; any other answer is followed by the
lobby closing the connection.

The pair id of a link is public: HKDF over the table's identity (the game id the lobby gave the
table) and the keys of its two seats, in byte order. The lobby derives the pair ids of every
roster it sends, so it knows which table a link is of. The secret is the two seats' own: HKDF
over the X25519 value of their two keys (`Identity.shared_secret`), bound to the game id, the
pair id and both keys. The two seats derive the same secret and nobody else can, neither the
lobby nor another seat of the table: the lobby joins two ends only when they present the same
pair and the same secret, so a third party cannot take one end of a link.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from protocol.identity import Identity
from protocol.kdf import derive

RELAY_MAGIC = b"BNZR"
RELAY_VERSION = 2
PAIR_BYTES = 32
SECRET_BYTES = 32
_REQUEST = struct.Struct(f"!4sBB{PAIR_BYTES}s{SECRET_BYTES}s")
_ANSWER = struct.Struct("!4sBB")
REQUEST_BYTES = _REQUEST.size
ANSWER_BYTES = _ANSWER.size


class RelayRole(IntEnum):
    """Which end of the link a connection is: the relay splices one of each."""

    DIALS = 0  # the seat that dials (the TLS client)
    ACCEPTS = 1  # the seat that accepts (the TLS server)


class RelayStatus(IntEnum):
    SPLICED = 0  # the other end is here: what follows is its bytes
    UNKNOWN = 1  # no table this lobby introduced has a link with that pair id
    OFF = 2  # this lobby does not relay
    BUSY = 3  # the table, or the lobby, is at its relay budget
    TIMED_OUT = 4  # the other end did not come in time
    REPLACED = 5  # the same end of the same link came again (the newer connection waits), or
    # this end is the oldest of too many that claim it with different secrets


STATUS_WORDS = {
    RelayStatus.SPLICED: "the lobby joined the link",
    RelayStatus.UNKNOWN: "the lobby does not know this table (it did not introduce it, or "
    "forgot it)",
    RelayStatus.OFF: "the lobby does not relay (it runs with --no-relay)",
    RelayStatus.BUSY: "the lobby's relay is at its budget for this table",
    RelayStatus.TIMED_OUT: "the other player did not come to the lobby's relay in time",
    RelayStatus.REPLACED: "a newer connection for the same link took this one's place",
}


class RelayFormatError(ValueError):
    """Bytes that are not a relay message of this version."""


def relay_pair(game_id: bytes, key_a: bytes, key_b: bytes) -> bytes:
    """The public id of the link between the seats with keys `key_a` and `key_b` (either order)
    at the table `game_id`: what the lobby knows it by."""
    low, high = sorted((key_a, key_b))
    return derive(game_id, "relay pair", low, high, length=PAIR_BYTES)


def relay_secret(game_id: bytes, identity: Identity, peer_key: bytes) -> bytes:
    """The secret of the link between `identity` and the seat with `peer_key` at the table
    `game_id`: the peer derives the same from its own key and this one's public key, and
    nobody else can. SignatureError for a peer key that is not usable, KeyAgreementError
    rather than a secret derived from an all-zero agreed value."""
    shared = identity.shared_secret(peer_key)
    low, high = sorted((identity.public_key, peer_key))
    pair = relay_pair(game_id, low, high)
    return derive(shared, "relay secret", game_id, pair, low, high, length=SECRET_BYTES)


def encode_request(role: RelayRole, pair: bytes, secret: bytes) -> bytes:
    if len(pair) != PAIR_BYTES or len(secret) != SECRET_BYTES:
        raise ValueError(f"a relay pair id has {PAIR_BYTES} bytes and a secret {SECRET_BYTES}")
    return _REQUEST.pack(RELAY_MAGIC, RELAY_VERSION, RelayRole(role), pair, secret)


def decode_request(data: bytes) -> tuple[RelayRole, bytes, bytes]:
    """The role, the pair id and the secret of a request."""
    if len(data) != REQUEST_BYTES:
        raise RelayFormatError(f"a relay request has {REQUEST_BYTES} bytes, not {len(data)}")
    magic, version, role, pair, secret = _REQUEST.unpack(data)
    if magic != RELAY_MAGIC or version != RELAY_VERSION:
        raise RelayFormatError(f"not a relay request of version {RELAY_VERSION}")
    try:
        return RelayRole(role), bytes(pair), bytes(secret)
    except ValueError:
        raise RelayFormatError(f"no relay role {role}") from None


def encode_answer(status: RelayStatus) -> bytes:
    return _ANSWER.pack(RELAY_MAGIC, RELAY_VERSION, RelayStatus(status))


def decode_answer(data: bytes) -> RelayStatus:
    if len(data) != ANSWER_BYTES:
        raise RelayFormatError(f"a relay answer has {ANSWER_BYTES} bytes, not {len(data)}")
    magic, version, status = _ANSWER.unpack(data)
    if magic != RELAY_MAGIC or version != RELAY_VERSION:
        raise RelayFormatError(f"not a relay answer of version {RELAY_VERSION}")
    try:
        return RelayStatus(status)
    except ValueError:
        raise RelayFormatError(f"no relay status {status}") from None
