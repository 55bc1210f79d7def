"""A lobby whose players cannot reach each other directly, and whose relay may be hostile: the
real lobby (lobby.service.makeService: its rooms, its relay), with the rosters' ports changed
and, on demand, a relay that misbehaves as a machine on the path may.

    python -m tests.hostile_relay [--unreachable all|none|SEAT] [--misbehave KIND]
        [--times N] [--listen HOST]

`--unreachable all`: every roster gives each seat a port of 127.0.0.1 where nothing listens,
so no seat reaches another directly and every link goes through the relay; `--unreachable
SEAT`: that seat only, so only the links into it (dialled by the seats before it) need the
relay: with SEAT 1, the one link between seats 0 and 1; `none`: the rosters as they are (on
a LAN whose hosts cannot reach each other: tests/test_lan_game.py). The rosters stay the same
for all. `--listen HOST`: the address to listen on (127.0.0.1 by default).

`--misbehave` (the first `--times` links it splices, 3 by default; then it relays honestly):
- `drop`: drops a chunk of one direction's bytes, some way into the link;
- `delay`: holds every chunk of every link 50 ms (no limit on the number of links);
- `cut`: aborts the link some way into it;
- `replay`: sends again, some way into the link, bytes it carried earlier on it;
- `cross`: joins an end of one link of a table to the other end of another of its links
  (what a relay that pairs wrongly does).

The first stdout line is the lobby's: `bean-lobby listening on HOST:PORT`; then a line
`spliced` for each link it joins and `misbehaved KIND` for each attack made.
"""

from __future__ import annotations

import argparse
import dataclasses
import socket
from typing import Any

from twisted.internet.defer import Deferred

from lobby.limits import LobbyLimits
from lobby.relay import Relay, RelayConnection, RelayTable
from lobby.rooms import Effect, Lobby, Room, Send
from lobby.service import makeService
from protocol.messages import MAX_SEATS, GameStart
from protocol.relay import RelayRole

LOCAL = "127.0.0.1"
KINDS = ("drop", "delay", "cut", "replay", "cross")
ATTACK_AT = 20_000  # bytes into a link's direction: past its handshake and hellos
DELAY = 0.05


def say(line: str) -> None:
    print(line, flush=True)


class UnreachableLobby(Lobby):
    """Gives the seats named unreachable a port where nothing listens, in every roster."""

    def __init__(self, limits: LobbyLimits, unreachable: str | None) -> None:
        super().__init__(limits)
        self.unreachable = unreachable
        # Ports of 127.0.0.1 nothing listens on, one per seat (no two seats of a roster may
        # share an address): connections there are refused. A seat resumed after a crash
        # listens on its roster port, so it is free for it.
        self.dead_ports = [free_port() for _ in range(MAX_SEATS)]

    def _start_if_ready(self, room: Room) -> list[Effect]:
        effects = super()._start_if_ready(room)
        return [self._rewrite(effect) for effect in effects]

    def _rewrite(self, effect: Effect) -> Effect:
        if not isinstance(effect, Send) or not isinstance(effect.message, GameStart):
            return effect
        roster = effect.message
        seats = tuple(
            dataclasses.replace(seat, port=self.dead_ports[n]) if self._cut_off(n) else seat
            for n, seat in enumerate(roster.seats)
        )
        return Send(effect.to, dataclasses.replace(roster, seats=seats))

    def _cut_off(self, seat: int) -> bool:
        return self.unreachable == "all" or self.unreachable == str(seat)


def free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago (the kernel does not hand it out
    again soon)."""
    with socket.socket() as probe:
        probe.bind((LOCAL, 0))
        port: int = probe.getsockname()[1]
    return port


class HostileRelay(Relay):
    def __init__(self, limits: LobbyLimits, clock: Any, kind: str | None, times: int) -> None:
        super().__init__(limits, clock)
        self.kind = kind
        self.attacks_left = times

    def connection(self, address: str) -> RelayConnection:
        return HostileConnection(self, address)

    def attack(self, kind: str) -> bool:
        """Whether to make one more attack of `kind` (and count it)."""
        if self.kind != kind or self.attacks_left <= 0:
            return False
        self.attacks_left -= 1
        say(f"misbehaved {kind}")
        return True

    def requested(
        self, connection: RelayConnection, role: RelayRole, pair: bytes, secret: bytes
    ) -> None:
        table = self.pairs.get(pair)
        if table is not None and self.kind == "cross" and self.attacks_left > 0:
            other = self._other_link_waiting(table, pair, role)
            if other is not None and self.attack("cross"):
                connection.table, connection.role = table, role
                connection.pair, connection.secret = pair, secret
                self._splice(table, other, connection, self.clock.seconds())
                return
        super().requested(connection, role, pair, secret)

    def _other_link_waiting(
        self, table: RelayTable, pair: bytes, role: RelayRole
    ) -> RelayConnection | None:
        for (waiting_pair, waiting_role), end in self.waiting.items():
            for waiting in end.values():
                if waiting_pair != pair and waiting_role != role and waiting.table is table:
                    return waiting
        return None

    def _splice(
        self, table: RelayTable, first: RelayConnection, second: RelayConnection, now: float
    ) -> None:
        super()._splice(table, first, second, now)
        say("spliced")
        if self.kind == "delay" and not self.spliced - 1:
            say("misbehaved delay")  # every link, from the first
        for end in (first, second):
            assert isinstance(end, HostileConnection)
            end.attacked = self.kind in ("drop", "cut", "replay") and self.attacks_left > 0


class HostileConnection(RelayConnection):
    """An end whose bytes to the other end the relay may drop, hold, cut or replay."""

    relay: HostileRelay

    def __init__(self, relay: HostileRelay, address: str) -> None:
        super().__init__(relay, address)
        self.attacked = False  # this link is one the relay attacks
        self.carried = bytearray()

    def dataReceived(self, data: bytes) -> None:
        if self.partner is None or self.finished:
            super().dataReceived(data)
            return
        before = len(self.carried)
        self.carried += data
        past = before < ATTACK_AT <= len(self.carried)
        if self.attacked and past and self.relay.attack(self.relay.kind or ""):
            kind = self.relay.kind
            if kind == "drop":
                return
            if kind == "cut":
                self.transport.abortConnection()
                return
            if kind == "replay":
                data = data + bytes(self.carried[ATTACK_AT // 2 : ATTACK_AT // 2 + 2000])
        if self.relay.kind == "delay":
            partner = self.partner
            self.relay.clock.callLater(DELAY, self._late, partner, data)
            return
        super().dataReceived(data)

    def _late(self, partner: RelayConnection, data: bytes) -> None:
        if self.partner is partner and not self.finished and self.relay.carried(self, len(data)):
            partner.transport.write(data)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.hostile_relay")
    parser.add_argument("--unreachable", default="all", help="all, none, or a seat number")
    parser.add_argument("--listen", default=LOCAL, help="the address to listen on")
    parser.add_argument("--misbehave", choices=KINDS, default=None)
    parser.add_argument("--times", type=int, default=3)
    options = parser.parse_args()

    from twisted.internet import reactor

    limits = LobbyLimits()
    lobby = UnreachableLobby(limits, options.unreachable)
    relay = HostileRelay(limits, reactor, options.misbehave, options.times)
    service = makeService(
        {"listen": f"tcp:0:interface={options.listen}", "limits": limits},
        reactor,
        lobby=lobby,
        relay=relay,
    )

    def listening(port: Any) -> None:
        say(f"bean-lobby listening on {options.listen}:{port.getHost().port}")

    service.startService()
    started: Deferred[Any] = service.getServiceNamed("listener").listening
    started.addCallback(listening)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
