"""The lobby's relay, as both ends speak it: the pair token and the two fixed messages.

Two seats that cannot reach each other directly each open a TCP connection to the lobby that
introduced their table and say which link they want: its token and which end of it they are.
The lobby splices the two streams, and the seats run their pinned TLS link inside, unchanged:
the relay carries ciphertext and sees its sizes and timing, nothing else (docs/peer-protocol.md).

    request  38 bytes: b"BNZR" | version u8 | role u8 (0: dials, 1: accepts) | token 32 bytes
    answer    6 bytes: b"BNZR" | version u8 | status u8 (RelayStatus)

After an answer of SPLICED, every byte is the other seat's; any other answer is followed by the
lobby closing the connection. The token of a link is HKDF over the table's identity (the game id
the lobby gave the table) and the keys of its two seats, in byte order: only the lobby and the
seats of that table can derive it, and it names one pair of one table.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from protocol.kdf import derive

RELAY_MAGIC = b"BNZR"
RELAY_VERSION = 1
TOKEN_BYTES = 32
_REQUEST = struct.Struct("!4sBB32s")
_ANSWER = struct.Struct("!4sBB")
REQUEST_BYTES = _REQUEST.size
ANSWER_BYTES = _ANSWER.size


class RelayRole(IntEnum):
    """Which end of the link a connection is: the relay splices one of each."""

    DIALS = 0  # the seat that dials (the TLS client)
    ACCEPTS = 1  # the seat that accepts (the TLS server)


class RelayStatus(IntEnum):
    SPLICED = 0  # the other end is here: what follows is its bytes
    UNKNOWN = 1  # no table this lobby introduced has a link with that token
    OFF = 2  # this lobby does not relay
    BUSY = 3  # the table, or the lobby, is at its relay budget
    TIMED_OUT = 4  # the other end did not come in time
    REPLACED = 5  # the same end of the same link came again: the newer connection waits


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


def relay_token(game_id: bytes, key_a: bytes, key_b: bytes) -> bytes:
    """The token of the link between the seats with keys `key_a` and `key_b` (either order)
    at the table `game_id`."""
    low, high = sorted((key_a, key_b))
    return derive(game_id, "relay token", low, high, length=TOKEN_BYTES)


def encode_request(role: RelayRole, token: bytes) -> bytes:
    if len(token) != TOKEN_BYTES:
        raise ValueError(f"a relay token has {TOKEN_BYTES} bytes")
    return _REQUEST.pack(RELAY_MAGIC, RELAY_VERSION, RelayRole(role), token)


def decode_request(data: bytes) -> tuple[RelayRole, bytes]:
    if len(data) != REQUEST_BYTES:
        raise RelayFormatError(f"a relay request has {REQUEST_BYTES} bytes, not {len(data)}")
    magic, version, role, token = _REQUEST.unpack(data)
    if magic != RELAY_MAGIC or version != RELAY_VERSION:
        raise RelayFormatError("not a relay request of version 1")
    try:
        return RelayRole(role), bytes(token)
    except ValueError:
        raise RelayFormatError(f"no relay role {role}") from None


def encode_answer(status: RelayStatus) -> bytes:
    return _ANSWER.pack(RELAY_MAGIC, RELAY_VERSION, RelayStatus(status))


def decode_answer(data: bytes) -> RelayStatus:
    if len(data) != ANSWER_BYTES:
        raise RelayFormatError(f"a relay answer has {ANSWER_BYTES} bytes, not {len(data)}")
    magic, version, status = _ANSWER.unpack(data)
    if magic != RELAY_MAGIC or version != RELAY_VERSION:
        raise RelayFormatError("not a relay answer of version 1")
    try:
        return RelayStatus(status)
    except ValueError:
        raise RelayFormatError(f"no relay status {status}") from None
