"""A table judged by protocol.blame and the clocks of protocol.step_watch, on a simulated
network with a simulated clock: the world of the property test of issue 26
(tests/test_blame_properties.py).

Each honest seat wires the pure pieces as client/game.py does: it owes its message once the
step is urgent or another seat's message of it is in, and starts making it then
(`Obligation` signs no time owed while it does); it sends a signed `Holding` every tick and
answers one with what its sender lacks; it names a seat only through `blame.withheld` (a
holding of its own), `blame.state_verdict` (a state its own inputs contradict) or two
versions of one message (`blame.equivocation`); a fork (`forks.ForkResolution`) offers our
versions of the contested messages on every link that comes up and every few seconds; and it
votes seats out only through `blame.gone_for_good`, with `StepWatch` and `AwayClock`, and the
vote `ending.EndOfGame` asks for (its first vote ends the seat's game here: what a unanimous
vote takes is protocol/ending.py's own test's). Step contents are opaque: a message
is (author, step, version), its digest the SHA-256 of that, a seat's chain the SHA-256 of the
chain before and the digests it played.

The network delivers each message after its link's delay unless a cut of that direction is
on; a cut takes the link down at both ends while it lasts. One seat may be hostile
(`Hostile`): it withholds a step (with honest, paced, lying or no holdings), signs two
versions of a message for some seats, lies in its inputs, or cycles its links.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from protocol.blame import Cheat, ForkedState, equivocation, gone_for_good, state_verdict, withheld
from protocol.ending import EndOfGame, seats_in
from protocol.forks import ForkResolution
from protocol.identity import Identity, Verifier
from protocol.peer_messages import MAX_OWED, Holding, sign
from protocol.step_watch import AwayClock, Obligation, StepWatch

TICK = 1.0
DEADLINE = 4.0
ABANDON = 10.0
IDLE_PACE = 5.0
ANSWER_INTERVAL = 0.5  # a peer's holdings are answered at most this often (client/game.py)
GAME = bytes(16)
HOLDINGS = ("honest", "idle", "lie-owed", "lie-own", "silent")


@dataclass(frozen=True)
class StepKind:
    urgent: bool  # every seat owes at once (a deck round)
    mover: int  # else: the seat whose move starts it
    thinks: float  # ... after thinking this long, from when it reached the step


@dataclass(frozen=True)
class Cut:
    source: int
    target: int
    start: float
    end: float


@dataclass(frozen=True)
class Hostile:
    seat: int
    withhold_at: int | None = None
    holdings: str = "honest"
    equivocate_at: int | None = None
    equivocate_to: frozenset[int] = frozenset()  # the seats given the second version
    lie_inputs_at: int | None = None
    cycle: tuple[float, float, float] | None = None  # from, up, down


@dataclass(frozen=True)
class StepMessage:
    author: int
    step: int
    version: int
    state: bytes
    inputs: tuple[bytes, ...]

    @property
    def digest(self) -> bytes:
        return digest_of(self.author, self.step, self.version)


def digest_of(author: int, step: int, version: int) -> bytes:
    return hashlib.sha256(f"{author}/{step}/{version}".encode()).digest()


@dataclass
class Seat:
    """One seat's state, as client/game.py keeps it."""

    number: int
    players: int
    identity: Identity
    step: int = 0
    chain: dict[int, bytes] = field(default_factory=lambda: {0: bytes(32)})
    inputs: dict[int, tuple[bytes, ...]] = field(default_factory=lambda: {0: ()})
    held: dict[int, dict[int, StepMessage]] = field(default_factory=dict)
    composing_until: float | None = None
    reached: float = 0.0  # when it reached its step
    obligation: Obligation = field(default_factory=Obligation)
    watch: StepWatch = field(init=False)
    away: AwayClock = field(default_factory=lambda: AwayClock(settle=DEADLINE))
    latest: dict[int, Holding] = field(default_factory=dict)
    forks: ForkResolution = field(default_factory=ForkResolution)
    end: EndOfGame = field(init=False)
    verdicts: list[Cheat] = field(default_factory=list)
    votes: list[tuple[float, frozenset[int]]] = field(default_factory=list)
    started: dict[int, float] = field(default_factory=dict)
    played: dict[int, float] = field(default_factory=dict)
    versions_seen: dict[tuple[int, int], set[int]] = field(default_factory=dict)
    paced: float = -IDLE_PACE
    ended_at: float | None = None  # when it named a seat or voted one out
    signed: Holding | None = None  # its last holding, signed again only when it changes
    answered: dict[int, float] = field(default_factory=dict)  # when each peer was answered
    links_up: dict[int, bool] = field(default_factory=dict)  # as it last heard, by peer

    def __post_init__(self) -> None:
        self.watch = StepWatch(self.players, self.number)
        self.end = EndOfGame(self.players, self.number, DEADLINE)

    @property
    def done(self) -> bool:
        return bool(self.verdicts or self.votes)

    def mine(self, step: int) -> StepMessage | None:
        return self.held.get(step, {}).get(self.number)

    def have(self) -> int:
        return sum(1 << author for author in self.held.get(self.step, {}))


class Table:
    """The simulated table: `run` it, then read each seat's verdicts, votes and steps."""

    def __init__(
        self,
        players: int,
        kinds: list[StepKind],
        cuts: list[Cut],
        delays: dict[tuple[int, int], float],
        compose: dict[tuple[int, int], float],
        hostile: Hostile | None,
    ) -> None:
        self.players, self.kinds, self.cuts = players, kinds, cuts
        self.delays, self.compose, self.hostile = delays, compose, hostile
        self.now = 0.0
        self.seats = [Seat(n, players, Identity.generate()) for n in range(players)]
        self.keys = [Verifier(seat.identity.public_key) for seat in self.seats]
        self._queue: list[tuple[float, int, Any]] = []
        self._order = itertools.count()

    # --- the world --------------------------------------------------------------------------

    def link_up(self, a: int, b: int, at: float) -> bool:
        """Whether what `a` says reaches `b` at `at`."""
        for cut in self.cuts:
            if cut.source == a and cut.target == b and cut.start <= at < cut.end:
                return False
        return not (self._cycling(a, at) or self._cycling(b, at))

    def _cycling(self, seat: int, at: float) -> bool:
        hostile = self.hostile
        if hostile is None or hostile.seat != seat or hostile.cycle is None:
            return False
        start, up, down = hostile.cycle
        return at >= start and (at - start) % (up + down) >= up

    def _honest(self, seat: int) -> bool:
        return self.hostile is None or self.hostile.seat != seat

    def _later(self, delay: float, event: Any) -> None:
        heapq.heappush(self._queue, (self.now + delay, next(self._order), event))

    def send(self, source: int, target: int, message: Any) -> None:
        if source != target and self.link_up(source, target, self.now):
            self._later(self.delays[(source, target)], ("deliver", source, target, message))

    def broadcast(self, source: int, message: Any) -> None:
        for target in range(self.players):
            self.send(source, target, message)

    def run(self, horizon: float) -> None:
        edges = sorted(
            {c.start for c in self.cuts}
            | {c.end for c in self.cuts}
            | set(self._cycle_edges(horizon))
        )
        for at in edges:
            heapq.heappush(self._queue, (at, next(self._order), ("links",)))
        for tick in range(1, int(horizon / TICK) + 1):
            heapq.heappush(self._queue, (tick * TICK, next(self._order), ("tick",)))
        for seat in self.seats:
            self._reach(seat)
        while self._queue:
            self.now, _, event = heapq.heappop(self._queue)
            if self.now > horizon:
                break
            getattr(self, "_on_" + event[0])(*event[1:])

    def _cycle_edges(self, horizon: float) -> list[float]:
        if self.hostile is None or self.hostile.cycle is None:
            return []
        start, up, down = self.hostile.cycle
        edges, at = [], start
        while at < horizon:
            # Just after each edge: the state there is read without rounding doubts.
            edges += [at + up + 1e-6, at + up + down + 1e-6]
            at += up + down
        return edges

    # --- events -----------------------------------------------------------------------------

    def _on_links(self) -> None:
        """Each seat hears its links go down or come up (a cut either way takes it down)."""
        for seat in self.seats:
            for other in range(self.players):
                if other == seat.number:
                    continue
                up = self.link_up(other, seat.number, self.now) and self.link_up(
                    seat.number, other, self.now
                )
                was = seat.links_up.get(other, True)
                seat.links_up[other] = up
                if up and not was:
                    seat.away.link_up(other, self.now)
                    self._holding_to(seat, other)
                    self._offer_contested(seat, [other])
                elif was and not up:
                    seat.away.link_down(other, self.now)

    def _on_tick(self) -> None:
        for seat in self.seats:
            if seat.done:
                continue
            holding = self._holding(seat)
            if self._says_where(seat):
                for other in range(self.players):
                    self.send(seat.number, other, holding)
            if not self._honest(seat.number):
                continue
            if seat.forks.offer_due(self.now):
                self._offer_contested(seat, range(self.players))
            self._judge(seat)

    def _on_composed(self, number: int, step: int) -> None:
        seat = self.seats[number]
        if seat.step != step or seat.done or seat.mine(step) is not None:
            return
        seat.composing_until = None
        hostile = self.hostile if not self._honest(number) else None
        versions = [self._made(seat, step, 0)]
        second_to: frozenset[int] = frozenset()
        if hostile is not None and hostile.equivocate_at == step:
            versions.append(self._made(seat, step, 1))
            second_to = hostile.equivocate_to
        seat.held.setdefault(step, {})[number] = versions[0]
        seat.watch.begin(step, self.now)
        seat.started.setdefault(step, self.now)
        for other in range(self.players):
            self.send(number, other, versions[1] if other in second_to else versions[0])
        self._advance(seat)

    def _on_deliver(self, source: int, target: int, message: Any) -> None:
        seat = self.seats[target]
        if seat.done:
            return
        if isinstance(message, Holding):
            self._holding_received(seat, source, message)
        else:
            self._step_message(seat, message)

    def _on_move(self, number: int, step: int) -> None:
        seat = self.seats[number]
        if seat.step == step:
            self._maybe_compose(seat, mover=True)

    # --- one seat ---------------------------------------------------------------------------

    def _made(self, seat: Seat, step: int, version: int) -> StepMessage:
        inputs, state = seat.inputs[step], seat.chain[step]
        hostile = self.hostile
        lies = hostile is not None and hostile.seat == seat.number and hostile.lie_inputs_at == step
        if lies and inputs:
            other = (seat.number + 1) % self.players
            inputs = tuple(
                hashlib.sha256(b"lie").digest() if n == other else d for n, d in enumerate(inputs)
            )
            state = hashlib.sha256(b"lie state").digest()
        return StepMessage(seat.number, step, version, state, inputs)

    def _reach(self, seat: Seat) -> None:
        """`seat` is at a new step: it owes at once if the step is urgent; its mover moves."""
        seat.reached = self.now
        seat.watch.waiting(seat.step)
        if seat.held.get(seat.step):  # messages of it came while it played the one before
            seat.watch.begin(seat.step, self.now)
            seat.started.setdefault(seat.step, self.now)
            seat.watch.arrived = set(seat.held[seat.step])
        if seat.step >= len(self.kinds):
            return
        kind = self.kinds[seat.step]
        if not kind.urgent and kind.mover == seat.number:
            self._later(kind.thinks, ("move", seat.number, seat.step))
        self._maybe_compose(seat)

    def _owes(self, seat: Seat) -> bool:
        if seat.step >= len(self.kinds) or seat.mine(seat.step) is not None:
            return False
        return self.kinds[seat.step].urgent or bool(seat.held.get(seat.step))

    def _maybe_compose(self, seat: Seat, mover: bool = False) -> None:
        if seat.composing_until is not None or seat.forks.open or seat.done:
            return
        if seat.step >= len(self.kinds) or seat.mine(seat.step) is not None:
            return
        if not (mover or self._owes(seat)):
            return
        if self._withholds(seat):
            return  # never makes it: it owes, and does not compose
        seat.composing_until = self.now + self.compose[(seat.number, seat.step)]
        self._later(seat.composing_until - self.now, ("composed", seat.number, seat.step))

    def _withholds(self, seat: Seat) -> bool:
        hostile = self.hostile
        if hostile is None or hostile.seat != seat.number or hostile.withhold_at is None:
            return False
        return seat.step >= hostile.withhold_at

    def _holding(self, seat: Seat) -> Holding:
        composing = seat.composing_until is not None
        owed = seat.obligation.reading(self.now, seat.step, self._owes(seat), composing)
        have, tenths = seat.have(), min(int(owed * 10), MAX_OWED)
        hostile = self.hostile
        if hostile is not None and hostile.seat == seat.number:
            if hostile.holdings in ("lie-owed", "lie-own"):
                tenths = 0
            if hostile.holdings == "lie-own":
                have |= 1 << seat.number
        unsigned = Holding(GAME, seat.step, seat.number, have, tenths)
        if seat.signed is None or seat.signed.signed() != unsigned.signed():
            seat.signed = sign(seat.identity, unsigned)
        return seat.signed

    def _says_where(self, seat: Seat) -> bool:
        hostile = self.hostile
        if hostile is None or hostile.seat != seat.number or hostile.withhold_at is None:
            return True
        if seat.step < hostile.withhold_at or hostile.holdings in ("honest", "lie-owed", "lie-own"):
            return True
        if hostile.holdings == "idle" and self.now - seat.paced >= IDLE_PACE:
            seat.paced = self.now
            return True
        return False

    def _answers(self, seat: Seat) -> bool:
        """Whether it answers holdings and links that come up (a paced or silent withholder
        answers nothing once it withholds)."""
        hostile = self.hostile
        if hostile is None or hostile.seat != seat.number or hostile.withhold_at is None:
            return True
        return seat.step < hostile.withhold_at or hostile.holdings not in ("idle", "silent")

    def _holding_to(self, seat: Seat, other: int) -> None:
        if self._answers(seat):
            self.send(seat.number, other, self._holding(seat))

    def _kept_apart(self, seat: Seat, message: StepMessage) -> bool:
        """An equivocator never sends a version of its two to a seat it did not give it."""
        hostile = self.hostile
        return (
            hostile is not None
            and seat.number == hostile.seat == message.author
            and message.step == hostile.equivocate_at
        )

    def _holding_received(self, seat: Seat, source: int, holding: Holding) -> None:
        if holding.seat != source:
            return
        seat.latest[source] = holding
        if not self._answers(seat) or self.now - seat.answered.get(source, -1.0) < ANSWER_INTERVAL:
            return
        seat.answered[source] = self.now
        # Answer with what it lacks, of its step and the next.
        for step in (holding.step, holding.step + 1):
            for author, message in sorted(seat.held.get(step, {}).items()):
                lacks = step > holding.step or not holding.have >> author & 1
                if author != source and lacks and not self._kept_apart(seat, message):
                    self.send(seat.number, source, message)
        if holding.step == seat.step and holding.have and seat.mine(seat.step) is None:
            self.send(seat.number, source, self._holding(seat))  # tell it where we stand

    def _step_message(self, seat: Seat, message: StepMessage) -> None:
        key = (message.step, message.author)
        seat.versions_seen.setdefault(key, set()).add(message.version)
        if message.step > seat.step + 1:
            return
        held = seat.held.get(message.step, {}).get(message.author)
        if held is not None:
            cheat = equivocation(message.author, message.step, held, message)
            if cheat is not None and self._honest(seat.number):
                for half in (held, message):  # each seat may lack one half or the other
                    self.broadcast(seat.number, half)
                self._name(seat, cheat)
            return
        seat.held.setdefault(message.step, {})[message.author] = message
        if message.step == seat.step:
            seat.watch.begin(seat.step, self.now)
            seat.watch.arrive(message.author)
            seat.started.setdefault(seat.step, self.now)
        self._maybe_compose(seat)
        self._advance(seat)

    def _advance(self, seat: Seat) -> None:
        """Play every step whose messages are all here, checking their states."""
        while not seat.done and not seat.forks.open:
            messages = seat.held.get(seat.step, {})
            if len(messages) < self.players:
                return
            if self._honest(seat.number):
                for author in range(self.players):
                    m = messages[author]
                    verdict = state_verdict(
                        author, seat.step, m.state, m.inputs, seat.chain[seat.step],
                        seat.inputs[seat.step],
                    )  # fmt: skip
                    if isinstance(verdict, ForkedState):
                        seat.forks.suspect(verdict)
                        if seat.forks.offer_due(self.now):
                            self._offer_contested(seat, range(self.players))
                        return
                    if verdict is not None:
                        self._name(seat, verdict)
                        return
            digests = tuple(messages[author].digest for author in range(self.players))
            chain = hashlib.sha256(seat.chain[seat.step] + b"".join(digests)).digest()
            seat.played[seat.step] = self.now
            seat.step += 1
            seat.chain[seat.step], seat.inputs[seat.step] = chain, digests
            seat.away.progress(self.now)
            self._reach(seat)

    def _offer_contested(self, seat: Seat, targets: Iterable[int]) -> None:
        if not self._honest(seat.number):
            return
        for target in targets:
            for step, author in seat.forks.contested_for(target):
                self.send(seat.number, target, seat.held[step][author])

    def _judge(self, seat: Seat) -> None:
        here = seat.held.get(seat.step, {})
        for other, holding in sorted(seat.latest.items()):
            if other in here:
                continue
            cheat = withheld(holding, self.keys[other], GAME, seat.step, DEADLINE)
            if cheat is not None:
                self._name(seat, cheat)
                return
        gone = gone_for_good(
            now=self.now,
            started=seat.watch.started,
            missing=seat.watch.missing | seat.forks.holding_up,
            away={
                o: seat.away.reading(o, self.now) for o in range(self.players) if o != seat.number
            },
            left=seat.end.left,
            deadline=DEADLINE,
            abandon=ABANDON,
        )
        mask = seat.end.vote_wanted(seat.step, gone, self.now)
        if mask is not None:
            seat.votes.append((self.now, frozenset(seats_in(mask))))
            seat.ended_at = self.now

    def _name(self, seat: Seat, cheat: Cheat) -> None:
        seat.verdicts.append(cheat)
        seat.ended_at = self.now
