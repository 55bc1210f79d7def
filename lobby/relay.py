"""The lobby's relay: two seats of a table it introduced, which cannot reach each other, each
connect to it and it splices their TCP streams, blind.

The seats' pinned TLS link runs inside, unchanged: the relay terminates nothing and sees
ciphertext, its sizes and its timing. A connection names its link by a public pair id and a
secret only the link's two seats can derive (protocol/relay.py). The relay knows only the pair
ids of the tables it introduced (`Relay.introduce`, with each roster it sends), so it cannot
pair seats of different tables, and a pair id it did not derive itself is refused at once. It
splices only two connections that present the same pair id and the same secret, from opposite
ends: another seat of the table, which can compute every pair id but no other pair's secret,
is never joined to one end of their link. Such a seat can still wait at an end with made-up
secrets, each a candidate that never matches; the candidates of one end are bounded, and the
oldest goes when a new one comes, so an honest end that comes always gets a place: by racing
the honest ends without pause a hostile seat can deny a relayed link (as a machine on the path
can), never join it.

It shares the lobby's port: `SharedPort` sends a connection whose first byte is the relay
magic's to the relay and every other one to the lobby's TLS listener, so a lobby on a public
address needs one port open.

Everything a connection can make it hold is bounded (`LobbyLimits`, the relay_* fields): the
connections not yet decided (by count and time), a request's time, the connections not
spliced (in all and from one address), the candidates waiting as one end of one link and how
long each waits for its other end, the spliced links of a table at once and the bytes they
carry, a spliced link's silence, the tables remembered and for how long. Past a bound a
connection is told why (`RelayStatus`) and closed.

(magic-wormhole-transit-relay has the same shape but pairs any two connections that present
the same token: it cannot be told to relay only the tables this lobby introduced, nor to
budget bytes and links per table, nor does it time out a token that waits; its handshake is
a line of text on its own port. The splice is small, so it is written here.)
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.internet.interfaces import IAddress, IProtocolFactory
from twisted.internet.protocol import Factory, Protocol, connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure

from lobby.limits import LobbyLimits
from protocol.messages import GameStart
from protocol.relay import (
    RELAY_MAGIC,
    REQUEST_BYTES,
    RelayFormatError,
    RelayRole,
    RelayStatus,
    decode_request,
    encode_answer,
    relay_pair,
)

log = Logger()


@dataclass(eq=False)
class RelayTable:
    """A table the lobby introduced: what its relayed links use of the budget."""

    game_id: bytes
    last_used: float
    pairs: set[bytes] = field(default_factory=set)
    links: set[RelayConnection] = field(default_factory=set)  # spliced now, both ends
    carried: int = 0  # bytes relayed, both ways, all links, ever

    @property
    def label(self) -> str:
        return self.game_id.hex()[:12]


class Relay:
    """The relay's state: the tables it knows, the connections waiting, the links spliced."""

    def __init__(self, limits: LobbyLimits, clock: Any, enabled: bool = True) -> None:
        self.limits = limits
        self.clock = clock
        self.enabled = enabled
        self.tables: OrderedDict[bytes, RelayTable] = OrderedDict()
        self.pairs: dict[bytes, RelayTable] = {}
        self.connections: set[RelayConnection] = set()
        self.unmatched: dict[RelayConnection, str] = {}  # not spliced: their address
        self._unmatched_from: Counter[str] = Counter()
        # The connections waiting at each end (pair id, role), by their secret, oldest first.
        self.waiting: dict[tuple[bytes, RelayRole], OrderedDict[bytes, RelayConnection]] = {}
        self.spliced = 0  # links spliced since the start
        self.refused: Counter[RelayStatus] = Counter()

    # --- what the lobby tells it ---

    def introduce(self, roster: GameStart) -> None:
        """A roster went out: its table's links may be relayed (a table whose members got
        different rosters gets the pair ids of each)."""
        if not self.enabled:
            return
        now = self.clock.seconds()
        table = self.tables.get(roster.game_id)
        if table is None:
            table = self.tables[roster.game_id] = RelayTable(roster.game_id, now)
            while len(self.tables) > self.limits.relay_tables:
                self._forget_table(next(iter(self.tables.values())))
        keys = sorted({seat.public_key for seat in roster.seats})
        for key_a, key_b in combinations(keys, 2):
            if len(table.pairs) >= self.limits.relay_pairs_per_table:
                break
            pair = relay_pair(roster.game_id, key_a, key_b)
            table.pairs.add(pair)
            self.pairs[pair] = table

    # --- what its connections tell it ---

    def connection(self, address: str) -> RelayConnection:
        """A new connection from `address` (tests/hostile_relay.py makes its own)."""
        return RelayConnection(self, address)

    def opened(self, connection: RelayConnection) -> bool:
        """A new connection (no request yet): False if it must be closed at once, over the
        bounds of connections not spliced, in all or from its address."""
        if (
            len(self.unmatched) >= self.limits.relay_unmatched
            or self._unmatched_from[connection.address] >= self.limits.relay_unmatched_per_address
        ):
            self.refused[RelayStatus.BUSY] += 1
            return False
        self.connections.add(connection)
        self.unmatched[connection] = connection.address
        self._unmatched_from[connection.address] += 1
        return True

    def requested(
        self, connection: RelayConnection, role: RelayRole, pair: bytes, secret: bytes
    ) -> None:
        if not self.enabled:
            connection.refuse(RelayStatus.OFF)
            return
        table = self.pairs.get(pair)
        if table is None:
            connection.refuse(RelayStatus.UNKNOWN)
            return
        if table.carried >= self.limits.relay_bytes_per_table:
            connection.refuse(RelayStatus.BUSY)
            return
        now = self.clock.seconds()
        table.last_used = now
        self.tables.move_to_end(table.game_id)
        connection.table, connection.role = table, role
        connection.pair, connection.secret = pair, secret
        other = self.waiting.get((pair, RelayRole(1 - role)), {}).get(secret)
        if other is None:
            self._wait(connection, now)
        elif len(table.links) + 2 > self.limits.relay_links_per_table:
            connection.refuse(RelayStatus.BUSY)
        else:
            self._splice(table, other, connection, now)

    def carried(self, connection: RelayConnection, count: int) -> bool:
        """`count` bytes went across a spliced link: False once the table is past its budget
        (every link of the table is then cut)."""
        table = connection.table
        assert table is not None
        table.carried += count
        table.last_used = connection.active_at = self.clock.seconds()
        if table.carried <= self.limits.relay_bytes_per_table:
            return True
        log.info(
            "relay: table {table} used its {budget} bytes; its relayed links are cut",
            table=table.label,
            budget=self.limits.relay_bytes_per_table,
        )
        for link in list(table.links):
            link.transport.abortConnection()
        return False

    def closed(self, connection: RelayConnection) -> None:
        """The connection is gone."""
        self.connections.discard(connection)
        self.release(connection)

    def release(self, connection: RelayConnection) -> None:
        """The connection waits no more, and is no longer a link of its table."""
        self._unmatch(connection)
        self._stop_waiting(connection)
        if connection.table is not None:
            connection.table.links.discard(connection)

    # --- time ---

    def tick(self) -> None:
        """Close what waited too long: a request, an end's other end, a silent link; and
        forget tables unused for too long."""
        now = self.clock.seconds()
        limits = self.limits
        for connection in list(self.unmatched):
            if connection.waiting_since is not None:
                if now - connection.waiting_since > limits.relay_wait_seconds:
                    connection.refuse(RelayStatus.TIMED_OUT)
            elif now - connection.opened_at > limits.relay_request_seconds:
                connection.transport.abortConnection()
        for table in list(self.tables.values()):
            for link in list(table.links):
                if now - max(link.active_at, link.partner_active_at()) > limits.relay_idle_seconds:
                    link.transport.abortConnection()
            if not table.links and now - table.last_used > limits.relay_table_seconds:
                self._forget_table(table)

    def close_all(self) -> Deferred[None]:
        """Abort every relay connection (the lobby is stopping); fires when all are gone."""
        if not self.connections:
            return succeed(None)
        gone = [connection.lost for connection in self.connections]
        for connection in list(self.connections):
            connection.transport.abortConnection()
        return DeferredList(gone, consumeErrors=True).addCallback(lambda _: None)

    # --- inside ---

    def _wait(self, connection: RelayConnection, now: float) -> None:
        """The connection waits at its end for the other end with its secret: in place of
        an older one with the same secret (the same end come again), or beside the others;
        past the bound of candidates at one end, the oldest is refused to make room."""
        assert connection.pair is not None and connection.role is not None
        assert connection.secret is not None
        end = self.waiting.setdefault((connection.pair, connection.role), OrderedDict())
        older = end.pop(connection.secret, None)
        if older is None and len(end) >= self.limits.relay_candidates_per_end:
            _, older = end.popitem(last=False)
        end[connection.secret] = connection
        connection.waiting_since = now
        if older is not None:
            older.refuse(RelayStatus.REPLACED)

    def _stop_waiting(self, connection: RelayConnection) -> None:
        if connection.pair is None or connection.role is None or connection.secret is None:
            return
        key = (connection.pair, connection.role)
        end = self.waiting.get(key)
        if end is not None and end.get(connection.secret) is connection:
            del end[connection.secret]
            if not end:
                del self.waiting[key]

    def _splice(
        self, table: RelayTable, first: RelayConnection, second: RelayConnection, now: float
    ) -> None:
        for connection in (first, second):
            self._unmatch(connection)
            self._stop_waiting(connection)
            connection.waiting_since = None
            connection.active_at = now
            table.links.add(connection)
        self.spliced += 1
        first.join(second)
        second.join(first)
        log.info("relay: a link of table {table} is spliced", table=table.label)

    def _unmatch(self, connection: RelayConnection) -> None:
        address = self.unmatched.pop(connection, None)
        if address is not None:
            self._unmatched_from[address] -= 1
            if not self._unmatched_from[address]:
                del self._unmatched_from[address]

    def _forget_table(self, table: RelayTable) -> None:
        self.tables.pop(table.game_id, None)
        for pair in table.pairs:
            self.pairs.pop(pair, None)
        for link in list(table.links):
            link.transport.abortConnection()


class RelayConnection(Protocol):
    """One end of a relayed link: its request, its wait, then its bytes to the other end.

    Each end is the producer of the other's transport: when one seat stops reading, the relay
    stops reading from the other, so a link holds no more than the sockets' buffers."""

    def __init__(self, relay: Relay, address: str) -> None:
        self.relay = relay
        self.address = address
        self.opened_at = relay.clock.seconds()
        self.active_at = self.opened_at
        self.request = b""
        self.pair: bytes | None = None
        self.secret: bytes | None = None  # compared, never logged
        self.role: RelayRole | None = None
        self.table: RelayTable | None = None
        self.waiting_since: float | None = None
        self.partner: RelayConnection | None = None
        self.finished = False  # answered with a refusal, or its link is over
        self.lost: Deferred[None] = Deferred()

    def connectionMade(self) -> None:
        if not self.relay.opened(self):
            self.finished = True
            self.transport.write(encode_answer(RelayStatus.BUSY))
            self.transport.loseConnection()  # six bytes: they fit in any socket's buffer

    def dataReceived(self, data: bytes) -> None:
        if self.finished:
            return
        if self.partner is not None:
            if self.relay.carried(self, len(data)):
                self.partner.transport.write(data)
            return
        if self.pair is not None:  # waiting: nothing may come before the answer
            self._cut("sent bytes before its link was spliced")
            return
        self.request += data
        if len(self.request) < REQUEST_BYTES:
            return
        if len(self.request) > REQUEST_BYTES:
            self._cut("sent bytes after its request, before the answer")
            return
        try:
            role, pair, secret = decode_request(self.request)
        except RelayFormatError as error:
            self._cut(str(error))
            return
        self.relay.requested(self, role, pair, secret)

    def join(self, partner: RelayConnection) -> None:
        self.partner = partner
        self.transport.write(encode_answer(RelayStatus.SPLICED))
        self.transport.registerProducer(partner.transport, True)

    def partner_active_at(self) -> float:
        return self.partner.active_at if self.partner is not None else self.active_at

    def refuse(self, status: RelayStatus) -> None:
        """Answer `status` and close (flushing the answer)."""
        if self.finished:
            return
        self.finished = True
        self.relay.refused[status] += 1
        self.relay.release(self)  # no longer waiting, whatever happens to its socket
        self.transport.write(encode_answer(status))
        self.transport.loseConnection()

    def _cut(self, why: str) -> None:
        log.info("relay: a connection from {address} is cut: {why}", address=self.address, why=why)
        self.finished = True
        self.transport.abortConnection()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.finished = True
        self.relay.closed(self)
        partner, self.partner = self.partner, None
        if partner is not None:
            self.transport.unregisterProducer()
            partner.partner = None
            partner.finished = True
            partner.transport.unregisterProducer()
            partner.transport.loseConnection()
        if not self.lost.called:
            self.lost.callback(None)


class RelayFactory(Factory):
    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    def buildProtocol(self, addr: IAddress) -> RelayConnection:
        host = getattr(addr, "host", None)
        return self.relay.connection(host if isinstance(host, str) else str(addr))


class _Undecided(Protocol):
    """A connection to the shared port whose first byte has not come yet."""

    def __init__(self, port: SharedPort, addr: IAddress) -> None:
        self.port = port
        self.addr = addr
        self.inner: Protocol | None = None
        self.opened_at = port.clock.seconds()
        self.lost: Deferred[None] = Deferred()

    def connectionMade(self) -> None:
        self.port.undecided.add(self)
        if len(self.port.undecided) > self.port.limit:
            self.transport.abortConnection()

    def dataReceived(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.dataReceived(data)
            return
        self.port.undecided.discard(self)
        factory = self.port.relay if data[:1] == RELAY_MAGIC[:1] else self.port.lobby
        inner = factory.buildProtocol(self.addr)
        if inner is None:
            self.transport.loseConnection()
            return
        self.inner = inner
        inner.makeConnection(self.transport)
        inner.dataReceived(data)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.port.undecided.discard(self)
        if self.inner is not None:
            self.inner.connectionLost(reason)
        self.lost.callback(None)


class SharedPort(Factory):
    """The lobby's port: each connection goes, by its first byte, to the relay or to the
    lobby (whose TLS handshake begins with 0x16, never the relay magic's b"B"). Connections
    that have sent nothing yet are at most `limit`, each for at most `seconds`."""

    def __init__(
        self,
        lobby: IProtocolFactory,
        relay: IProtocolFactory,
        clock: Any,
        limit: int,
        seconds: float,
    ) -> None:
        self.lobby = lobby
        self.relay = relay
        self.clock = clock
        self.limit = limit
        self.seconds = seconds
        self.undecided: set[_Undecided] = set()

    def doStart(self) -> None:
        self.lobby.doStart()
        self.relay.doStart()

    def doStop(self) -> None:
        self.lobby.doStop()
        self.relay.doStop()

    def buildProtocol(self, addr: IAddress) -> _Undecided:
        return _Undecided(self, addr)

    def tick(self) -> None:
        """Close connections that said nothing in time."""
        now = self.clock.seconds()
        for connection in list(self.undecided):
            if now - connection.opened_at > self.seconds:
                connection.transport.abortConnection()

    def close_all(self) -> Deferred[None]:
        gone = [connection.lost for connection in self.undecided]
        for connection in list(self.undecided):
            connection.transport.abortConnection()
        return DeferredList(gone, consumeErrors=True).addCallback(lambda _: None)
