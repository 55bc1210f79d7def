"""End to end: the real `bean-lobby` console script in its own process matches three clients,
and its log says who came, which room opened and which game started."""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure

from protocol.identity import fingerprint
from tests.lobby_support import Clients, within

BEAN_LOBBY = Path(sys.executable).parent / "bean-lobby"


class LobbyProcess(ProcessProtocol):
    """Collects the lobby's output; `listening` fires with the port from its first line."""

    def __init__(self) -> None:
        self.stdout = b""
        self.stderr = b""
        self.listening: Deferred[int] = Deferred()
        self.ended: Deferred[Any] = Deferred()

    def outReceived(self, data: bytes) -> None:
        self.stdout += data
        first, newline, _ = self.stdout.partition(b"\n")
        if newline and not self.listening.called:
            found = re.fullmatch(rb"bean-lobby listening on 127\.0\.0\.1:(\d+)", first)
            if found:
                self.listening.callback(int(found.group(1)))
            else:
                self.listening.errback(AssertionError(f"unexpected first line {first!r}"))

    def errReceived(self, data: bytes) -> None:
        self.stderr += data

    def processEnded(self, reason: Failure) -> None:
        if not self.listening.called:
            self.listening.errback(AssertionError(f"bean-lobby ended: {self.stderr!r}"))
        self.ended.callback(reason.value)


@pytest_twisted.ensureDeferred
async def test_bean_lobby_in_its_own_process_matches_three_clients() -> None:
    assert BEAN_LOBBY.exists(), "install the project first: .venv/bin/pip install -e '.[test]'"
    process = LobbyProcess()
    transport = reactor.spawnProcess(
        process,
        str(BEAN_LOBBY),
        [str(BEAN_LOBBY), "--listen", "tcp:0:interface=127.0.0.1"],
        env=None,
    )
    clients = Clients(0)
    try:
        clients.port = await within(process.listening, 30)
        players = [await clients.player(name, 4100 + i) for i, name in enumerate("ABC")]
        starts = [within(p.next_game()) for p in players]
        rooms = await within(gatherResults([p.quick_match(3) for p in players]))
        assert len({room.room_id for room in rooms}) == 1
        rosters = await within(gatherResults(starts))
        assert all(roster == rosters[0] for roster in rosters)
        assert sorted((s.name, s.host, s.port) for s in rosters[0].seats) == [
            ("A", "127.0.0.1", 4100),
            ("B", "127.0.0.1", 4101),
            ("C", "127.0.0.1", 4102),
        ]
    finally:
        await clients.close()
        if not process.ended.called:
            transport.signalProcess(signal.SIGTERM)
        await within(process.ended, 30)
    assert b"Traceback" not in process.stderr, process.stderr.decode()
    logged = [line.split("] ", 1)[-1] for line in process.stderr.decode().splitlines()]
    for name, player in zip("ABC", players, strict=True):
        key = fingerprint(player.identity.public_key)
        assert any(
            re.fullmatch(rf"{name} connected from 127\.0\.0\.1 \(key {key}, "
                         r"connection \d+\)", line)
            for line in logged
        ), logged  # fmt: skip
    room = rf"room {rooms[0].room_id} 'Quick match for 3'"
    assert [line for line in logged if re.fullmatch(rf"{room} opened by [ABC]: 3 seats", line)]
    started = rf"{room} is full and ready: game ([0-9a-f]+) starts for (\w), (\w), (\w)"
    (found,) = [found for line in logged if (found := re.fullmatch(started, line))]
    assert bytes.fromhex(found[1]) == rosters[0].game_id
    assert sorted(found.groups()[1:]) == ["A", "B", "C"]
