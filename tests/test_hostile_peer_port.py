"""Garbage and hostile frames sent to the peer ports of clients in a running game never crash
them or disturb the game: it ends with every peer agreeing and the audit passing. (The ports
speak TLS first, so all of this fails the TLS handshake; tests/test_mesh.py has the attacks
that get through it: a real certificate whose key is not the roster's.)"""

from __future__ import annotations

import secrets
import socket

import pytest

from client.gamefile import GameFile
from protocol.messages import PROTOCOL_VERSION, encode, frame
from protocol.peer_messages import HANDSHAKE_MAX_FRAME, PeerChat, PeerHello
from tests.processes import game_files, isolated_env, results, running_lobby, start_bot, wait_for


def attacks(game_id: bytes, seats: int) -> list[bytes]:
    framed = lambda message: frame(encode(message), HANDSHAKE_MAX_FRAME)  # noqa: E731
    return [
        secrets.token_bytes(500),
        (HANDSHAKE_MAX_FRAME + 1).to_bytes(4, "big") + b"x" * 64,
        (10_000_000).to_bytes(4, "big"),
        b"\x00\x00\x00\x10" + b"\xc1" * 16,
        framed(PeerChat("no handshake first")),
        framed(PeerHello(PROTOCOL_VERSION, secrets.token_bytes(16), 0)),
        # A hello for the real game, claiming a real seat, in the clear.
        framed(PeerHello(PROTOCOL_VERSION, game_id, 0)),
        framed(PeerHello(PROTOCOL_VERSION, game_id, seats + 3)),
        framed(PeerHello(PROTOCOL_VERSION, game_id, 0))[:-7],
        # The start of a TLS ClientHello, then nothing.
        bytes.fromhex("160301") + secrets.token_bytes(40),
    ]


def hammer(host: str, port: int, payloads: list[bytes]) -> int:
    sent = 0
    for payload in payloads:
        try:
            with socket.create_connection((host, port), timeout=5) as connection:
                connection.sendall(payload)
                sent += 1
        except OSError:
            pass  # the client may drop us at once: that is the point
    return sent


@pytest.mark.slow
def test_garbage_on_every_peer_port_during_a_game_changes_nothing(tmp_path):
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [
            start_bot(
                port,
                3,
                f"bot{n}",
                env,
                tmp_path,
            )
            for n in range(3)
        ]
        files = wait_for(lambda: game_files(env), 60, "the game to start")
        roster = GameFile.read(next(iter(files.values()))).roster
        sent = 0
        for _ in range(5):  # rounds of attacks spread over the game
            for seat in roster.seats:
                sent += hammer(seat.host, seat.port, attacks(roster.game_id, len(roster.seats)))
        found = results(bots, timeout=240, tmp_path=tmp_path)
    assert sent >= 100
    assert all(r["ok"] and r["cheat"] is None for r in found), found
    assert len({r["final_state"] for r in found}) == 1
