"""Many bad clients at once over real TCP: each is told what it did wrong and dropped, while a
well-behaved table on the same lobby plays a whole match from hello to roster."""

from __future__ import annotations

import secrets
import struct
from typing import Any

import msgpack
import pytest_twisted
from twisted.internet.defer import Deferred, gatherResults

from lobby.limits import LobbyLimits
from protocol.identity import Identity
from protocol.messages import FATAL_ERRORS, LOBBY_REQUEST_MAX_FRAME, PROTOCOL_VERSION, Ok, frame
from tests.lobby_support import (
    Clients,
    RawClient,
    connect_raw,
    hello_frame,
    start_lobby,
    within,
)

LIMIT = LOBBY_REQUEST_MAX_FRAME


def packed(value: Any) -> bytes:
    return frame(msgpack.packb(value, use_bin_type=True), LIMIT)


def valid_hello_fields(**changes: Any) -> dict[str, Any]:
    fields = {
        "type": "hello",
        "version": PROTOCOL_VERSION,
        "req": 1,
        "name": "Eve",
        "public_key": bytes(32),
        "peer_port": 4000,
        "signature": bytes(64),
    }
    return {**fields, **changes}


# What each bad client sends, and the error code it must get (None: any fatal error).
BAD_INPUTS: dict[str, tuple[bytes, str | None]] = {
    "random bytes": (secrets.token_bytes(300), None),
    "random bytes in a frame": (frame(secrets.token_bytes(300), LIMIT), "bad_message"),
    "oversized frame": (struct.pack(">I", 50_000_000) + b"x" * 100, "frame_too_large"),
    "one byte over the limit": (struct.pack(">I", LIMIT + 1), "frame_too_large"),
    "truncated frame, then silence": (struct.pack(">I", 100) + b"\x81" * 50, "idle_timeout"),
    "empty frame": (struct.pack(">I", 0), "bad_message"),
    "a list": (packed([1, 2, 3]), "bad_message"),
    "an integer": (packed(7), "bad_message"),
    "nil": (packed(None), "bad_message"),
    "integer map keys": (packed({1: "hello"}), "bad_message"),
    "no type": (packed({"req": 1}), "bad_message"),
    "type is a number": (packed({"type": 5, "req": 1}), "bad_message"),
    "unknown type": (packed({"type": "deal_me_aces", "req": 1}), "bad_message"),
    "name is a number": (packed(valid_hello_fields(name=12)), "bad_message"),
    "req is a boolean": (packed(valid_hello_fields(req=True)), "bad_message"),
    "port is a float": (packed(valid_hello_fields(peer_port=4000.0)), "bad_message"),
    "key too short": (packed(valid_hello_fields(public_key=b"k")), "bad_message"),
    "name as bytes": (packed(valid_hello_fields(name=b"Eve")), "bad_message"),
    "unknown field": (packed(valid_hello_fields(admin=True)), "bad_message"),
    "missing field": (
        packed({"type": "hello", "version": PROTOCOL_VERSION, "req": 1}),
        "bad_message",
    ),
    "terminal escapes": (packed(valid_hello_fields(name="\x1b[2J")), "bad_message"),
    "future version": (packed(valid_hello_fields(version=99)), "version_mismatch"),
    "bad signature": (packed(valid_hello_fields()), "bad_signature"),
    "invalid utf-8": (frame(b"\x81\xa4type\xa3\xff\xfe\xfd", LIMIT), "bad_message"),
    "deep nesting": (frame(b"\x91" * 4000 + b"\x00", LIMIT), "bad_message"),
    "an ext type": (frame(b"\xd4\x05\x01", LIMIT), "bad_message"),
    "a timestamp": (packed({"type": "ping", "req": msgpack.Timestamp(1)}), "bad_message"),
    "request before hello": (packed({"type": "list_rooms", "req": 1}), "hello_first"),
}


async def misbehave(port: int, payload: bytes) -> RawClient:
    raw = await connect_raw(port)
    raw.transport.write(payload)
    await within(raw.closed)
    return raw


async def flood(port: int) -> RawClient:
    """Says hello properly, then sends far more than the rate limit allows."""
    raw = await connect_raw(port)
    await raw.has_received(1)
    raw.transport.write(hello_frame(raw, Identity.generate(), f"Flood{secrets.token_hex(4)}"))
    raw.transport.write(packed({"type": "ping", "req": 2}) * 500)
    await within(raw.closed)
    return raw


async def play_a_match(clients: Clients) -> list[Any]:
    ann, bob, cat = [await clients.player(name) for name in ("Ann", "Bob", "Cat")]
    room = await within(ann.create_room("Good table", 3))
    starts = [within(c.next_game()) for c in (ann, bob, cat)]
    await within(bob.join(room.room_id))
    await within(bob.chat("hi"))
    await within(cat.join(room.room_id))
    await within(gatherResults([c.ready() for c in (ann, bob, cat)]))
    return [await start for start in starts]


@pytest_twisted.ensureDeferred
async def test_bad_clients_are_told_and_dropped_while_a_good_table_plays() -> None:
    lobby = await start_lobby(LobbyLimits(hello_seconds=1.0, tick_seconds=0.1))
    clients = Clients(lobby.port)
    try:
        copies = 3
        names = [name for name in BAD_INPUTS for _ in range(copies)]
        bad = [misbehave(lobby.port, BAD_INPUTS[name][0]) for name in names]
        floods = [flood(lobby.port) for _ in range(copies)]
        match = play_a_match(clients)
        results = await within(
            gatherResults(
                [Deferred.fromCoroutine(c) for c in [*bad, *floods, match]], consumeErrors=True
            )
        )
        *bad_clients, rosters = results

        for name, raw in zip(names + ["flood"] * copies, bad_clients, strict=True):
            errors = raw.errors()
            assert errors, f"{name}: dropped without an error"
            assert errors[-1].fatal and errors[-1].code in FATAL_ERRORS, name
            expected = "rate_limited" if name == "flood" else BAD_INPUTS[name][1]
            if expected is not None:
                assert errors[-1].code == expected, f"{name}: {errors[-1]}"
        flooded = bad_clients[-1]
        answered = [m for m in flooded.received if isinstance(m, Ok)]
        assert 0 < len(answered) <= LobbyLimits().message_burst

        assert len(rosters) == 3 and all(r == rosters[0] for r in rosters)
        assert [s.name for s in rosters[0].seats] == ["Ann", "Bob", "Cat"]
        # Still serving: a newcomer is welcomed, and nothing of the bad clients remains.
        newcomer = await clients.player("Dan")
        assert (await within(newcomer.list_rooms())).total == 0
        assert lobby.factory.lobby.players == 4
    finally:
        await clients.close()
        await lobby.stop()
