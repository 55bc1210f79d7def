"""The public state of the shared deck, as every machine (and the audit) sees and checks it.

`PublicDeck` holds no secret. It takes every seat's messages and checks everything that can be
checked from public data: the schedule, counts, every received point, distinctness, key reuse,
commitments, both proofs, every published key against its lock, who may open which slot, and
the accounting after every open. Each failure names the seat to blame. A `DeckPlayer` wraps one
`PublicDeck` with one seat's secrets; the audit runs one `PublicDeck` over a whole transcript
(a `prechecked` one when the transcript already passed every check live: see `PublicDeck`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import NoReturn

from protocol.kdf import encode_label

from .errors import (
    AccountingError,
    BadKey,
    BadPoint,
    CommitmentError,
    FalseDispute,
    MissingKeys,
    ProofError,
    RefusedOpen,
    ScheduleError,
    WireError,
)
from .group import RISTRETTO255, Group, InvalidPoint, InvalidScalar, Point, Scalar
from .messages import (
    MAX_CARDS,
    Argument,
    Commit,
    Dispute,
    EpochMessage,
    Keys,
    Part,
    Relock,
    Shuffle,
)
from .proofs import check_dleq_slots, find_invalid, multiply_all, relock_context
from .schedule import DeckConfig, parts_due
from .secrets import VERSION
from .shuffle_argument import Statement, check_shuffle, proof_size, prove_shuffle, shuffle_context

ALL_CARDS = MAX_CARDS  # physical cards in the box, ids 0..153; the rules own their bean types
CARD_POINT_LABEL = b"bohnanza-p2p card point v1"


def card_point(group: Group, game_id: bytes, card: int) -> Point:
    """M_c = from_uniform(h[0:32]) + from_uniform(h[32:64]), h = SHA-512(label ‖ game ‖ c):
    one point per physical card, with no known discrete-log relation to any other (P2, P3)."""
    digest = hashlib.sha512(encode_label(CARD_POINT_LABEL, game_id, card)).digest()
    return group.hash_to_point(digest)


def require_distinct(points: Sequence[bytes]) -> None:
    """Refuse a card table in which two cards share a point (P2)."""
    first: dict[bytes, int] = {}
    for index, point in enumerate(points):
        if point in first:
            raise ValueError(f"cards {first[point]} and {index} have the same point")
        first[point] = index


@functools.lru_cache(maxsize=16)
def card_points(group: Group, game_id: bytes) -> tuple[Point, ...]:
    """The points of all 154 cards of a game, checked valid, non-identity and distinct."""
    points = tuple(card_point(group, game_id, card) for card in range(ALL_CARDS))
    require_distinct(points)
    return points


def cards_digest(game_id: bytes, epoch: int, cards: Sequence[int]) -> bytes:
    """The digest of an epoch's card set, compared in round 0 (a tampered discard set)."""
    return hashlib.sha256(encode_label(VERSION, "cards", game_id, epoch, *cards)).digest()


def account(known: Mapping[int, int], slot: int, card: int, step: str) -> None:
    """The accounting after an open: a slot never opens to two cards, a card never sits in two
    slots. With every opened id drawn from the epoch's card table, this keeps the opened slots
    plus the hidden ones exactly the epoch's card set."""
    if known.get(slot, card) != card:
        raise AccountingError(
            f"slot {slot} opens to card {card}, but opened to card {known[slot]} before",
            blame=None,
            step=step,
        )
    for other_slot, other_card in known.items():
        if other_card == card and other_slot != slot:
            raise AccountingError(
                f"card {card} opens at slot {slot} and at slot {other_slot}",
                blame=None,
                step=step,
            )


@dataclass(frozen=True)
class Opening:
    """What the game state opens now: `slots` of `epoch`, to seat `to` (a draw) or to all."""

    epoch: int
    slots: tuple[int, ...]
    to: int | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", tuple(self.slots))

    def __str__(self) -> str:
        return f"epoch {self.epoch} slots {list(self.slots)} to {_where(self.to)}"


_PartHandler = Callable[
    ["EpochState", int, int, Part, Sequence[Scalar] | None, str], list[Point] | None
]


def _where(route: int | None) -> str:
    return "all players" if route is None else f"seat {route}"


@dataclass(frozen=True)
class PendingCheck:
    """A proof checked on the executor (`running`) or already here (`failure`): whose, at
    which step, and why it fails (None: it holds)."""

    seat: int
    step: str
    failure: str | None = None
    running: Future[str | None] | None = None

    def result(self) -> str | None:
        return self.failure if self.running is None else self.running.result()


def shuffle_proof_failure(group: Group, statement: Statement, proof: bytes) -> str | None:
    """Why a shuffle argument fails, in words (None: it holds). Module-level: runs in a pool."""
    reason = check_shuffle(group, statement, proof)
    return None if reason is None else f"its shuffle proof fails: {reason}"


def relock_proof_failure(
    group: Group,
    context: bytes,
    public_key: Point,
    slots: Sequence[tuple[int, Point, Point, Point, bytes]],
) -> str | None:
    """Why a relock's DLEQ proofs fail, in words (None: they hold). Runs in a pool."""
    failing = check_dleq_slots(group, context, public_key, slots, 0)
    if failing is None:
        return None
    return (
        f"its relock proof for slot {failing} does not verify (the global key was not swapped "
        "for the slot key it published)"
    )


#: The work a seat hands its executor to run beside the deck's chain: the others' proofs it
#: checks, and its own shuffle argument. A client runs it on threads of its own, so that it
#: never queues ahead of the chain's bulk work, and a benchmark times it apart.
BACKGROUND_WORK = (shuffle_proof_failure, relock_proof_failure, prove_shuffle)


@dataclass
class EpochState:
    """Everything public about one epoch. `decks[r]` is the deck published in round r
    (`decks[0]` the plain card points); the last one is the dealt deck, slot j = draw j."""

    epoch: int
    cards: tuple[int, ...]
    digest: bytes
    table: dict[bytes, int]
    decks: list[tuple[Point, ...]]
    rounds: int
    next_round: int = 0
    commits: dict[int, Commit] = field(default_factory=dict)
    public_keys: dict[int, Point] = field(default_factory=dict)
    # Proofs being checked on the executor, in the order received: the epoch waits for them.
    proof_checks: list[PendingCheck] = field(default_factory=list)
    locks: dict[int, tuple[Point, ...]] = field(default_factory=dict)
    routes: dict[int, int | None] = field(default_factory=dict)  # slot -> seat, or None: all
    keys: dict[int, dict[int, Scalar]] = field(default_factory=dict)
    opened: dict[int, int] = field(default_factory=dict)  # slots opened to all -> card id

    @property
    def size(self) -> int:
        return len(self.cards)

    @property
    def complete(self) -> bool:
        return self.next_round == self.rounds

    def __repr__(self) -> str:
        return f"EpochState(epoch={self.epoch}, cards={self.size}, next_round={self.next_round})"


class PublicDeck:
    """The public side of the deck for one game: feed it every message, in lockstep order.

    `own_seat` is the seat whose view this is: the proofs it made are not checked again (the
    argument is complete, tests/test_deck_shuffle_argument.py; the audit checks every seat's).
    `prechecked=True` is for the audit of a transcript that has already passed every check of
    this class in a live view of the same game: it then keeps the state and the cheap checks
    (schedule, counts, repeats, key reuse, digests, commitments, routes) but skips the costly
    ones, which cannot fail again on the same messages: point validation, both proofs, keys
    against their locks, and decoding the cards opened to all (so it keeps no accounting and
    does not check that a discard pile was opened; `receive_dispute` still checks in full).
    """

    def __init__(
        self,
        config: DeckConfig,
        *,
        group: Group = RISTRETTO255,
        executor: Executor | None = None,
        own_seat: int | None = None,
        prechecked: bool = False,
    ) -> None:
        self.config = config
        self.group = group
        self.executor = executor
        self.own_seat = own_seat
        self.prechecked = prechecked
        self._points = card_points(group, config.game_id)
        self._epochs: list[EpochState] = []
        self._seed_commitments: dict[int, bytes] = {}
        self._locks_seen: dict[bytes, str] = {}  # every PK and Y of the game (P9)
        self._public_cards: set[int] = set()  # cards whose latest slot was opened to all

    def __repr__(self) -> str:
        return f"PublicDeck(players={self.config.players}, epochs={len(self._epochs)})"

    # State ------------------------------------------------------------------------------------

    def epoch(self, epoch: int) -> EpochState:
        if not 0 <= epoch < len(self._epochs):
            raise ValueError(f"there is no epoch {epoch}")
        return self._epochs[epoch]

    @property
    def started(self) -> int:
        """How many epochs have begun."""
        return len(self._epochs)

    @property
    def current(self) -> EpochState:
        if not self._epochs:
            raise ValueError("no epoch has begun")
        return self._epochs[-1]

    def dealt(self, epoch: int) -> EpochState:
        """The state of an epoch whose rounds are all in, so its slots may be opened."""
        state = self.epoch(epoch)
        if not state.complete:
            raise ValueError(f"epoch {epoch} is still being dealt (round {state.next_round})")
        return state

    def begin_epoch(self, epoch: int, cards: Sequence[int]) -> None:
        """Start epoch `epoch` from the plain points of `cards` (sorted ids). After epoch 0 the
        cards must be a public discard pile: each one opened to all since it was last dealt."""
        if epoch != len(self._epochs):
            raise ValueError(f"the next epoch is {len(self._epochs)}, not {epoch}")
        if self._epochs and not self._epochs[-1].complete:
            raise ValueError("the previous epoch is still being dealt")
        ids = tuple(cards)
        if not ids or any(not 0 <= card < ALL_CARDS for card in ids):
            raise ValueError(f"an epoch needs card ids in 0..{ALL_CARDS - 1}")
        if any(a >= b for a, b in itertools.pairwise(ids)):
            raise ValueError("the card ids of an epoch are given sorted, without repeats")
        if epoch > 0 and not self.prechecked:
            hidden = [card for card in ids if card not in self._public_cards]
            if hidden:
                raise AccountingError(
                    f"cards {hidden} have not been opened to all since they were dealt, so "
                    "they cannot be in the discard pile",
                    blame=None,
                    step=f"epoch {epoch} begin",
                )
            self._public_cards.difference_update(ids)
        points = tuple(self._points[card] for card in ids)
        self._epochs.append(
            EpochState(
                epoch=epoch,
                cards=ids,
                digest=cards_digest(self.config.game_id, epoch, ids),
                table={point: card for point, card in zip(points, ids, strict=True)},
                decks=[points],
                rounds=self.config.rounds,
            )
        )

    # Epoch rounds -----------------------------------------------------------------------------

    def receive_round(
        self,
        round_: int,
        messages: Mapping[int, EpochMessage | None],
        lock: Sequence[Scalar] | None = None,
    ) -> list[Point] | None:
        """Check and apply every seat's message for `round_`, in seat order.

        Raises a DeckError blaming the first seat (in seat order) whose message is missing,
        late, extra, malformed or false. If `lock` is given (one scalar per slot), the deck that
        arrives this round is validated by multiplying it with those scalars, and the products
        are returned: the next actor's own work doubles as the check.
        """
        state = self.current
        if state.complete or round_ != state.next_round:
            raise ValueError(f"expected round {state.next_round} of epoch {state.epoch}")
        strangers = set(messages) - set(range(self.config.players))
        if strangers:
            raise ValueError(f"no such seats: {sorted(strangers)}")
        step = f"epoch {state.epoch} round {round_}"
        products = None
        for seat in range(self.config.players):
            message = messages.get(seat)
            due = parts_due(self.config, round_, seat)
            self._check_schedule(state, round_, seat, message, due, step)
            if message is None:
                continue
            for name, part in message.parts().items():
                outcome = self._handler(name)(state, round_, seat, part, lock, f"{step} {name}")
                products = outcome if outcome is not None else products
        self._end_round(state, round_)
        state.next_round += 1
        return products

    def _check_schedule(
        self,
        state: EpochState,
        round_: int,
        seat: int,
        message: EpochMessage | None,
        due: tuple[str, ...],
        step: str,
    ) -> None:
        if message is None:
            if due:
                raise ScheduleError(
                    f"sent nothing; {', '.join(due)} was due", blame=seat, step=step
                )
            return
        if not due:
            raise ScheduleError(
                "sent a message in a round where nothing was due", blame=seat, step=step
            )
        if (message.epoch, message.round) != (state.epoch, round_):
            raise ScheduleError(
                f"sent a message for epoch {message.epoch} round {message.round}",
                blame=seat,
                step=step,
            )
        sent = tuple(message.parts())
        if sent != due:
            raise ScheduleError(
                f"sent parts {', '.join(sent) or 'none'}; {', '.join(due)} was due",
                blame=seat,
                step=step,
            )

    def _handler(self, name: str) -> _PartHandler:
        handlers: dict[str, _PartHandler] = {
            "commit": self._commit,
            "shuffle": self._shuffle,
            "relock": self._relock,
            "argument": self._argument,
        }
        return handlers[name]

    def _end_round(self, state: EpochState, round_: int) -> None:
        """The epoch's last round waits for every proof checked meanwhile; the first failure
        in the order received is blamed. Every seat settles them there and nowhere else,
        whatever its executor and however fast it is, so that all seats stop a deal with a
        false proof at the same round."""
        if round_ != state.rounds - 1:
            return
        checks, state.proof_checks = state.proof_checks, []
        for check in checks:
            failure = check.result()
            if failure is not None:
                raise ProofError(failure, blame=check.seat, step=check.step)

    def _check_proof(
        self,
        state: EpochState,
        seat: int,
        step: str,
        check: Callable[..., str | None],
        *args: object,
    ) -> None:
        """Run `check` on the executor while the deck goes on (here without one); its verdict
        is settled in the epoch's last round (`_end_round`)."""
        if self.executor is None:
            pending = PendingCheck(seat, step, failure=check(*args))
        else:
            pending = PendingCheck(seat, step, running=self.executor.submit(check, *args))
        state.proof_checks.append(pending)

    def _count(
        self, items: Sequence[object], expected: int, what: str, seat: int, step: str
    ) -> None:
        if len(items) != expected:
            raise WireError(
                f"{what} has {len(items)} items; this epoch needs {expected}", blame=seat, step=step
            )

    def _commit(
        self,
        state: EpochState,
        round_: int,
        seat: int,
        part: Part,
        lock: Sequence[Scalar] | None,
        step: str,
    ) -> None:
        assert isinstance(part, Commit)
        if part.cards_digest != state.digest:
            raise CommitmentError(
                "committed to a different card set for this epoch (a tampered discard pile)",
                blame=seat,
                step=step,
            )
        earlier = self._seed_commitments.setdefault(seat, part.seed_commitment)
        if earlier != part.seed_commitment:
            raise CommitmentError(
                "equivocation: its seed commitment differs from the one it made in epoch 0",
                blame=seat,
                step=step,
            )
        state.commits[seat] = part

    def _shuffle(
        self,
        state: EpochState,
        round_: int,
        seat: int,
        part: Part,
        lock: Sequence[Scalar] | None,
        step: str,
    ) -> list[Point] | None:
        assert isinstance(part, Shuffle)
        self._count(part.deck, state.size, "deck", seat, step)
        products = self._accept_deck(part.deck, lock, seat, step)
        public_key = self._accept_point(part.public_key, "the public key PK", seat, step)
        self._register_lock(public_key, f"PK of seat {seat} in epoch {state.epoch}", seat, step)
        state.decks.append(tuple(Point(point) for point in part.deck))
        state.public_keys[seat] = public_key
        return products

    def shuffle_statement(self, state: EpochState, seat: int) -> Statement:
        """What `seat`'s shuffle argument proves: its round's deck and PK, once received."""
        c = self.config
        context = shuffle_context(c.game_id, c.players, state.epoch, seat, seat)
        decks = state.decks
        return Statement(context, decks[seat], decks[seat + 1], state.public_keys[seat])

    def _argument(
        self,
        state: EpochState,
        round_: int,
        seat: int,
        part: Part,
        lock: Sequence[Scalar] | None,
        step: str,
    ) -> None:
        """The argument for `seat`'s shuffle, k rounds after it (docs/deck.md)."""
        assert isinstance(part, Argument)
        expected = proof_size(self.group, state.size)
        if len(part.proof) != expected:
            raise WireError(
                f"its shuffle proof is {len(part.proof)} bytes; this epoch needs {expected}",
                blame=seat,
                step=step,
            )
        if not self.prechecked and seat != self.own_seat:
            statement = self.shuffle_statement(state, seat)
            self._check_proof(
                state, seat, step, shuffle_proof_failure, self.group, statement, part.proof
            )

    def _relock(
        self,
        state: EpochState,
        round_: int,
        seat: int,
        part: Part,
        lock: Sequence[Scalar] | None,
        step: str,
    ) -> list[Point] | None:
        assert isinstance(part, Relock)
        size = state.size
        self._count(part.deck, size, "deck", seat, step)
        self._count(part.locks, size, "locks", seat, step)
        self._count(part.proofs, size if self.config.proofs else 0, "proofs", seat, step)
        deck_in = state.decks[-1]
        products = self._accept_deck(part.deck, lock, seat, step)
        bad = None if self.prechecked else find_invalid(self.executor, self.group, part.locks)
        if bad is not None:
            raise BadPoint(
                f"the lock Y of slot {bad} is not an element of the group",
                blame=seat,
                step=step,
            )
        locks = tuple(Point(point) for point in part.locks)
        for slot, point in enumerate(locks):
            self._register_lock(
                point, f"Y of seat {seat} slot {slot} in epoch {state.epoch}", seat, step
            )
        deck = tuple(Point(point) for point in part.deck)
        if self.config.proofs and not self.prechecked and seat != self.own_seat:
            context = relock_context(self.config.game_id, self.config.players, state.epoch, seat)
            work = list(zip(range(size), deck_in, locks, deck, part.proofs, strict=True))
            public_key = state.public_keys[seat]
            self._check_proof(
                state, seat, step, relock_proof_failure, self.group, context, public_key, work
            )
        state.decks.append(deck)
        state.locks[seat] = locks
        return products

    def _accept_deck(
        self, deck: Sequence[bytes], lock: Sequence[Scalar] | None, seat: int, step: str
    ) -> list[Point] | None:
        """Validate every point of an incoming deck and refuse repeats (a copied ciphertext)."""
        first: dict[bytes, int] = {}
        for slot, point in enumerate(deck):
            if point in first:
                raise BadPoint(f"slot {slot} repeats slot {first[point]}", blame=seat, step=step)
            first[point] = slot
        products = None
        if lock is None:
            bad = None if self.prechecked else find_invalid(self.executor, self.group, deck)
        else:
            outcome = multiply_all(self.executor, self.group, list(zip(lock, deck, strict=True)))
            bad, products = (outcome, None) if isinstance(outcome, int) else (None, outcome)
        if bad is not None:
            raise BadPoint(f"slot {bad} is not an element of the group", blame=seat, step=step)
        return products

    def _accept_point(self, point: bytes, what: str, seat: int, step: str) -> Point:
        if self.prechecked:
            return Point(point)
        try:
            return self.group.validate(point)
        except InvalidPoint:
            raise BadPoint(
                f"{what} is not an element of the group", blame=seat, step=step
            ) from None

    def _register_lock(self, point: Point, where: str, seat: int, step: str) -> None:
        """Every PK and Y of the game must be new: a repeat is a reused key (P9)."""
        earlier = self._locks_seen.setdefault(point, where)
        if earlier != where:
            raise BadKey(f"key reuse: {where} equals {earlier}", blame=seat, step=step)

    # Keys, opens and disputes ----------------------------------------------------------------

    def check_keys(
        self,
        state: EpochState,
        sender: int,
        slots: Sequence[int],
        keys: Sequence[bytes],
        step: str,
        *,
        against_locks: bool = True,
    ) -> list[Scalar]:
        """Each key canonical, non-zero and (unless `against_locks` is off: a prechecked
        transcript) matching the sender's public lock Y for its slot."""
        scalars = []
        for slot, key in zip(slots, keys, strict=True):
            if not 0 <= slot < state.size:
                raise WireError(f"slot {slot} is not in this epoch's deck", blame=sender, step=step)
            try:
                scalar = self.group.decode_scalar(key)
            except InvalidScalar as error:
                raise BadKey(f"its key for slot {slot}: {error}", blame=sender, step=step) from None
            if against_locks and self.group.mul_base(scalar) != state.locks[sender][slot]:
                raise BadKey(
                    f"its key for slot {slot} does not match its public lock Y",
                    blame=sender,
                    step=step,
                )
            scalars.append(scalar)
        return scalars

    def routes_after(
        self,
        state: EpochState,
        sender: int,
        to: int | None,
        slots: Sequence[int],
        blame: int | None,
        step: str,
    ) -> dict[int, int | None]:
        """The new routes if `sender` publishes its keys for `slots` to `to` (None: to all).

        Cards are drawn from the top of the pile in order; a slot opened to one seat stays that
        seat's until that seat alone opens it to all; a slot open to all stays so.
        """
        if to is not None and not 0 <= to < self.config.players:
            raise WireError(f"there is no seat {to}", blame=sender, step=step)
        if to == sender:
            raise RefusedOpen(
                f"seat {sender} sent keys to itself, which would open its own slots",
                blame=blame,
                step=step,
            )
        new: dict[int, int | None] = {}
        top = len(state.routes)
        for slot in slots:
            if not 0 <= slot < state.size:
                raise WireError(f"slot {slot} is not in this epoch's deck", blame=sender, step=step)
            if slot not in state.routes:
                if slot != top:
                    raise RefusedOpen(
                        f"slot {slot} is not the top of the draw pile (slot {top} is)",
                        blame=blame,
                        step=step,
                    )
                new[slot] = to
                top += 1
                continue
            current = state.routes[slot]
            if to is None and current == sender:
                new[slot] = None  # the holder plays or shows its card
            elif to is None and current is not None:
                raise RefusedOpen(
                    f"slot {slot} is seat {current}'s card; only seat {current} can open it to all",
                    blame=blame,
                    step=step,
                )
            elif to is not None and current != to:
                raise RefusedOpen(
                    f"slot {slot} was opened to {_where(current)}, not to seat {to}",
                    blame=blame,
                    step=step,
                )
        return new

    def _dealt_for(self, sender: int, epoch: int, step: str) -> EpochState:
        """The dealt epoch a received message names; naming another is the sender's fault."""
        if not 0 <= epoch < len(self._epochs) or not self._epochs[epoch].complete:
            raise ScheduleError(f"names epoch {epoch}, which is not dealt", blame=sender, step=step)
        return self._epochs[epoch]

    def receive_keys(self, sender: int, message: Keys, expected: Opening | None = None) -> None:
        """Check `sender`'s keys (against its locks Y and the routing rules) and record them.

        `expected` is what the game state says is being opened now (which slots, to whom); the
        lockstep should always pass it, so that a message opening anything else (another slot,
        out of hand order, to another seat) is blamed on its sender. Without it the first keys
        for a fresh slot decide its route.
        """
        step = f"epoch {message.epoch} keys from seat {sender}"
        if expected is not None and expected != Opening(message.epoch, message.slots, message.to):
            raise RefusedOpen(
                f"sent keys for {Opening(message.epoch, message.slots, message.to)}; the game "
                f"is opening {expected}",
                blame=sender,
                step=step,
            )
        state = self._dealt_for(sender, message.epoch, step)
        scalars = self.check_keys(
            state, sender, message.slots, message.keys, step, against_locks=not self.prechecked
        )
        routes = self.routes_after(state, sender, message.to, message.slots, sender, step)
        state.routes.update(routes)
        for slot, scalar in zip(message.slots, scalars, strict=True):
            state.keys.setdefault(slot, {})[sender] = scalar
        if self.prechecked:
            return  # the cards opened to all were decoded and accounted for live
        everyone = range(self.config.players)
        for slot in message.slots:
            public = slot in state.routes and state.routes[slot] is None
            if public and slot not in state.opened and not self.missing_keys(state, slot, everyone):
                self.open_public(message.epoch, slot)  # every view opens it, the audit too

    def missing_keys(self, state: EpochState, slot: int, seats: Sequence[int]) -> tuple[int, ...]:
        have = state.keys.get(slot, {})
        return tuple(seat for seat in seats if seat not in have)

    def decode(self, state: EpochState, slot: int, keys: Sequence[Scalar], step: str) -> int:
        """The card under `slot` once every seat's key is removed; unknown points are refused."""
        product = keys[0]
        for key in keys[1:]:
            product = self.group.scalar_mul(product, key)
        point = self.group.mul(self.group.scalar_invert(product), state.decks[-1][slot])
        card = state.table.get(point)
        if card is None:
            raise AccountingError(
                f"slot {slot} opens to no card of this epoch", blame=None, step=step
            )
        return card

    def open_public(self, epoch: int, slot: int) -> int:
        """The card at a slot opened to all, once every seat's key for it is in (the last of
        those keys opens it already, in every view, so this mostly reads the result)."""
        state = self.dealt(epoch)
        step = f"epoch {epoch} open slot {slot} to all"
        if slot not in state.routes or state.routes[slot] is not None:
            where = "in the draw pile" if slot not in state.routes else _where(state.routes[slot])
            raise RefusedOpen(
                f"slot {slot} is not open to all (it is {where})", blame=None, step=step
            )
        if slot in state.opened:
            return state.opened[slot]
        seats = range(self.config.players)
        missing = self.missing_keys(state, slot, seats)
        if missing:
            raise MissingKeys(
                f"waiting for keys from seats {list(missing)}", missing=missing, step=step
            )
        card = self.decode(state, slot, [state.keys[slot][seat] for seat in seats], step)
        account(state.opened, slot, card, step)
        state.opened[slot] = card
        self._public_cards.add(card)
        return card

    def receive_dispute(self, sender: int, message: Dispute) -> NoReturn:
        """The holder claims its slot opens to no valid card and publishes its key: everyone
        opens the slot. A valid card means a false claim (FalseDispute blames the holder);
        otherwise the AccountingError (no seat yet) calls for the audit."""
        slot = message.slot
        step = f"epoch {message.epoch} dispute of slot {slot} by seat {sender}"
        state = self._dealt_for(sender, message.epoch, step)
        if state.routes.get(slot, -1) != sender:
            raise RefusedOpen(
                f"disputes slot {slot}, which it does not hold", blame=sender, step=step
            )
        others = [seat for seat in range(self.config.players) if seat != sender]
        if self.missing_keys(state, slot, others):
            raise RefusedOpen(
                f"disputes slot {slot} before it could open it", blame=sender, step=step
            )
        (scalar,) = self.check_keys(state, sender, [slot], [message.key], step)
        state.keys[slot][sender] = scalar
        state.routes[slot] = None
        card = self.open_public(message.epoch, slot)
        raise FalseDispute(
            f"claimed slot {slot} opens to no valid card, but it opens to card {card}",
            blame=sender,
            step=step,
        )
