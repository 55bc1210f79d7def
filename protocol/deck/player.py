"""The jointly shuffled deck: one seat's player object, and the audit.

A `DeckPlayer` is one seat's view: its secrets (all derived from one committed seed) and its
own `PublicDeck`. Seats exchange only plain messages (`protocol.deck.messages`) on the fixed
round schedule of `protocol.deck.schedule`; the protocol, the checks and the audit are
described in docs/deck.md and CRYPTO.md. Pure code: no I/O, no clock. Pass an Executor to spread
the slots of a deck over cores and to check the others' proofs while the deck goes on.

Usage per epoch (the lockstep does this):

    player.begin_epoch(epoch, card_ids)
    for round_ in range(epoch_rounds(players)):
        mine = player.epoch_message(round_)            # send it (None: send nothing)
        player.receive_round(round_, {seat: message})  # everyone's, own included

then, as the game draws and plays cards: `keys_for` / `receive_keys` / `open_private` /
`open_public`; at the end (or on a dispute) `reveal_seed` and `audit`.
"""

from __future__ import annotations

import contextlib
import hmac
import itertools
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import NoReturn

from .errors import (
    AuditError,
    CommitmentError,
    DeckError,
    MissingKeys,
    RefusedOpen,
    ReplayMismatch,
    ScheduleError,
)
from .group import RISTRETTO255, Group, InvalidPoint, Point, Scalar
from .messages import (
    Argument,
    Commit,
    DeckMessage,
    Dispute,
    EpochMessage,
    Keys,
    Part,
    Relock,
    SeedReveal,
    Shuffle,
    decode_message,
)
from .proofs import dleq_statement, multiply_all, prove_dleq_slots, relock_context, spread
from .public import EpochState, Opening, PublicDeck, account, card_point, card_points
from .schedule import DeckConfig, epoch_rounds, parts_due, relock_round, shuffle_round
from .secrets import SeatSecrets, seed_commitment
from .shuffle_argument import Statement, is_own_proof, prove_shuffle, shuffle_context

__all__ = [
    "Argument",
    "AuditError",
    "Commit",
    "DeckConfig",
    "DeckError",
    "DeckMessage",
    "DeckPlayer",
    "Dispute",
    "EpochMessage",
    "Keys",
    "Opening",
    "PublicDeck",
    "Relock",
    "SeedReveal",
    "Shuffle",
    "audit",
    "card_point",
    "card_points",
    "decode_message",
    "epoch_rounds",
    "parts_due",
    "verify_seed",
]


@dataclass
class _EpochSecrets:
    """This seat's secrets for one epoch, derived once."""

    shuffle_key: Scalar
    key_inverse: Scalar
    permutation: list[int]
    slot_keys: list[Scalar]

    def __repr__(self) -> str:
        return "_EpochSecrets(<secret>)"


class DeckPlayer:
    """One seat of the shared deck: produces its messages, checks everyone's, opens cards.

    Each seat runs its own object; objects share nothing but the messages they exchange.
    """

    def __init__(
        self,
        config: DeckConfig,
        seat: int,
        seed: bytes,
        *,
        group: Group = RISTRETTO255,
        executor: Executor | None = None,
        public: PublicDeck | None = None,
    ) -> None:
        """`seed`: 32 bytes from `secrets.token_bytes`. `public` is shared only by the audit,
        which replays several seats over one public state."""
        if not 0 <= seat < config.players:
            raise ValueError(f"seat {seat} is not in a {config.players}-player game")
        self.config = config
        self.seat = seat
        self.public = (
            public
            if public is not None
            else PublicDeck(config, group=group, executor=executor, own_seat=seat)
        )
        self._group = self.public.group
        self._secrets = SeatSecrets(self._group, config.game_id, seat, seed)
        self._epochs: dict[int, _EpochSecrets] = {}
        self._seen: dict[int, dict[int, int]] = {}
        self._locked: list[Point] | None = None
        self._proving: dict[int, Future[bytes]] = {}  # epoch -> its shuffle argument, under way

    def __repr__(self) -> str:
        return f"DeckPlayer(seat={self.seat}, players={self.config.players})"

    @property
    def commitment(self) -> bytes:
        """The commitment to this seat's seed, sent in round 0 of every epoch."""
        return self._secrets.commitment()

    def reveal_seed(self) -> SeedReveal:
        """The seed, for the audit: only at the end of the game or on a dispute or abort."""
        return SeedReveal(self._secrets.seed)

    # Epochs -----------------------------------------------------------------------------------

    def begin_epoch(self, epoch: int, cards: Sequence[int]) -> None:
        """Start dealing epoch `epoch` from `cards` (sorted ids: the deck, then a discard pile)."""
        self.public.begin_epoch(epoch, cards)
        self._start_epoch(epoch)

    def _start_epoch(self, epoch: int) -> None:
        key = self._secrets.shuffle_key(epoch)
        size = self.public.epoch(epoch).size
        self._epochs[epoch] = _EpochSecrets(
            shuffle_key=key,
            key_inverse=self._group.scalar_invert(key),
            permutation=self._secrets.shuffle_permutation(epoch, size),
            slot_keys=[self._secrets.slot_key(epoch, slot) for slot in range(size)],
        )
        self._seen[epoch] = {}
        self._locked = None

    def epoch_message(self, round_: int) -> EpochMessage | None:
        """This seat's message for `round_` of the current epoch (None: nothing is due)."""
        state = self.public.current
        if state.complete or round_ != state.next_round:
            raise ValueError(f"epoch {state.epoch} is at round {state.next_round}, not {round_}")
        due = parts_due(self.config, round_, self.seat)
        if not due:
            return None
        makers = self._makers()
        parts: dict[str, Part] = {name: makers[name](state, round_) for name in due}
        return EpochMessage.assemble(state.epoch, round_, parts)

    def _makers(self) -> dict[str, Callable[[EpochState, int], Part]]:
        return {
            "commit": self._commit,
            "shuffle": self._shuffle,
            "relock": self._relock,
            "argument": self._argument,
        }

    def receive_round(self, round_: int, messages: Mapping[int, EpochMessage | None]) -> None:
        """Check every seat's message for `round_` (own included) and apply them in seat order.

        Raises a DeckError blaming the first offending seat. If this seat acts next on the deck
        that arrives now, validating it and locking it are one multiplication.
        """
        lock = self._lock_for(round_ + 1)
        self._locked = self.public.receive_round(round_, messages, lock)

    def _lock_for(self, action_round: int) -> list[Scalar] | None:
        state = self.public.current
        if action_round == shuffle_round(self.seat) and self.seat > 0:
            return [self._epochs[state.epoch].shuffle_key] * state.size
        if action_round == relock_round(self.config.players, self.seat):
            return self._witnesses(state)
        return None

    def _locked_input(self, deck: Sequence[Point], scalars: Sequence[Scalar]) -> list[Point]:
        locked, self._locked = self._locked, None
        if locked is None:
            outcome = multiply_all(
                self.public.executor, self._group, list(zip(scalars, deck, strict=True))
            )
            if isinstance(outcome, int):  # validated on receipt, unless the deck is prechecked
                raise InvalidPoint(f"slot {outcome} of the deck is not a point of the group")
            locked = outcome
        return locked

    def _witnesses(self, state: EpochState) -> list[Scalar]:
        """Per slot, k_j·K⁻¹: removes the global key K and puts the slot key k_j."""
        inverse = self._epochs[state.epoch].key_inverse
        return [self._group.scalar_mul(key, inverse) for key in self._epochs[state.epoch].slot_keys]

    def _commit(self, state: EpochState, round_: int) -> Commit:
        return Commit(self.commitment, state.digest)

    def _shuffle(self, state: EpochState, round_: int) -> Shuffle:
        """π(K·D) and PK = K·G. With proofs on and an executor, the argument proving them is
        started there at once, to be sent with this seat's relock (`_argument`)."""
        statement = self._shuffle_statement(state)
        executor = self.public.executor
        if self.config.proofs and executor is not None:
            self._proving[state.epoch] = executor.submit(
                prove_shuffle, self._group, statement, *self._argument_secrets(state.epoch)
            )
        return Shuffle(statement.deck_out, statement.public_key)

    def _argument(self, state: EpochState, round_: int) -> Argument:
        """The argument for this seat's shuffle of the epoch: the one under way, or (without
        an executor, or after a resume) proved now."""
        proving = self._proving.pop(state.epoch, None)
        if proving is not None:
            return Argument(proving.result())
        statement = self.public.shuffle_statement(state, self.seat)
        return Argument(prove_shuffle(self._group, statement, *self._argument_secrets(state.epoch)))

    def _argument_secrets(self, epoch: int) -> tuple[Scalar, list[int], bytes]:
        """The witness of this seat's shuffle argument, and the secret its nonces come from."""
        mine = self._epochs[epoch]
        return mine.shuffle_key, mine.permutation, self._secrets.shuffle_argument_secret(epoch)

    def _shuffle_statement(self, state: EpochState) -> Statement:
        """This seat's shuffle of the current deck, as the statement its argument proves."""
        mine = self._epochs[state.epoch]
        deck_in = state.decks[-1]
        locked = self._locked_input(deck_in, [mine.shuffle_key] * state.size)
        deck_out = tuple(locked[index] for index in mine.permutation)
        c = self.config
        context = shuffle_context(c.game_id, c.players, state.epoch, self.seat, self.seat)
        return Statement(context, deck_in, deck_out, self._group.mul_base(mine.shuffle_key))

    def _relock(self, state: EpochState, round_: int) -> Relock:
        deck_in = state.decks[-1]
        witnesses = self._witnesses(state)
        deck_out = self._locked_input(deck_in, witnesses)
        locks = [self._group.mul_base(key) for key in self._epochs[state.epoch].slot_keys]
        proofs: tuple[bytes, ...] = ()
        if self.config.proofs:
            public_key = state.public_keys[self.seat]
            context = relock_context(
                self.config.game_id, self.config.players, state.epoch, self.seat
            )
            work = []
            for slot in range(state.size):
                statement = dleq_statement(
                    context, slot, public_key, deck_in[slot], locks[slot], deck_out[slot]
                )
                nonce = self._secrets.dleq_nonce(state.epoch, slot, statement)
                work.append((statement, witnesses[slot], deck_in[slot], nonce))
            chunks = spread(self.public.executor, prove_dleq_slots, (self._group, public_key), work)
            proofs = tuple(proof for chunk in chunks for proof in chunk)
        return Relock(tuple(deck_out), tuple(locks), proofs)

    def _slot_key(self, epoch: int, slot: int) -> Scalar:
        return self._epochs[epoch].slot_keys[slot]

    # The quick replay: the audit of a transcript that passed every public check live ---------

    def _deviation(self, round_: int, actual: EpochMessage | None) -> tuple[str, ...] | None:
        """Whether `actual` is what this seat's seed gives for `round_` of the current epoch,
        judged on the premise that every message of the round passed every public check
        (docs/deck.md, "The quick audit"). None: it is. Otherwise the due parts that are not
        (none named: a message missing or not due, or a wrong header), as the full replay
        names them.
        """
        state = self.public.current
        due = parts_due(self.config, round_, self.seat)
        if actual is None or not due:
            return None if actual is None and not due else ()
        theirs = actual.parts()
        differing = tuple(
            name
            for name in due
            if name not in theirs or not self._follows(name, state, round_, theirs[name])
        )
        header = (actual.epoch, actual.round) == (state.epoch, round_)
        return differing if differing or tuple(theirs) != due or not header else None

    def _follows(self, name: str, state: EpochState, round_: int, part: Part) -> bool:
        if isinstance(part, Relock) and self.config.proofs:
            return self._relock_follows(state, round_, part)
        if isinstance(part, Argument):
            return self._argument_follows(state, part)
        if isinstance(part, Shuffle):  # the deck and PK: n + 1 multiplications
            statement = self._shuffle_statement(state)
            return (part.deck, part.public_key) == (statement.deck_out, statement.public_key)
        # commit: hashes; relock without proofs: 2n multiplications.
        return part == self._makers()[name](state, round_)

    def _argument_follows(self, state: EpochState, part: Argument) -> bool:
        """The argument, which verified live for the shuffle received k rounds before, is the
        seed's iff its commitments and responses are (about 2n multiplications)."""
        statement = self.public.shuffle_statement(state, self.seat)
        secrets = self._argument_secrets(state.epoch)
        return is_own_proof(self._group, statement, *secrets, part.proof)

    def _relock_follows(self, state: EpochState, round_: int, part: Relock) -> bool:
        """With proofs: Y is recomputed (n base-point multiplications); once PK and Y are the
        seed's, the DLEQ proofs that passed fix the deck, and a proof is then the seed's iff its
        response z = r + c·w is (c taken from the proof)."""
        mine = self._epochs[state.epoch]
        public_key = state.public_keys[self.seat]
        if public_key != self._group.mul_base(mine.shuffle_key):
            return part == self._relock(state, round_)  # its shuffle deviated already
        locks = tuple(self._group.mul_base(key) for key in mine.slot_keys)
        if part.locks != locks or not len(part.deck) == len(part.proofs) == state.size:
            return False
        context = relock_context(self.config.game_id, self.config.players, state.epoch, self.seat)
        rows = zip(
            state.decks[-1], locks, part.deck, part.proofs, self._witnesses(state), strict=True
        )
        for slot, (deck_in, lock, deck_out, proof, witness) in enumerate(rows):
            statement = dleq_statement(context, slot, public_key, deck_in, lock, deck_out)
            nonce = self._secrets.dleq_nonce(state.epoch, slot, statement)
            challenge = Scalar(proof[:32])
            response = self._group.scalar_add(nonce, self._group.scalar_mul(challenge, witness))
            if proof[32:] != response:
                return False
        return True

    # Keys and opens ---------------------------------------------------------------------------

    def keys_for(
        self, epoch: int, slots: Sequence[int], to: int | None, *, check_routes: bool = True
    ) -> Keys:
        """This seat's keys for `slots`, for seat `to` to draw them or for everyone (None).

        Refuses (RefusedOpen, blaming `to`) what the public state does not allow: a slot out of
        draw order, a slot that is someone else's, another seat's card opened to all. A caller
        whose keys travel with other seats' keys for earlier slots in the same step (the
        lockstep, which checks every route on receipt in slot order) skips that check.
        """
        state = self.public.dealt(epoch)
        wanted = tuple(slots)
        if not wanted or any(a >= b for a, b in itertools.pairwise(wanted)):
            raise ValueError("slots are given strictly increasing, at least one")
        step = f"epoch {epoch} keys of seat {self.seat} for seat {to}"
        if check_routes:
            self.public.routes_after(state, self.seat, to, wanted, to, step)
        keys = tuple(bytes(self._slot_key(epoch, slot)) for slot in wanted)
        return Keys(epoch, to, wanted, keys)

    def receive_keys(self, sender: int, message: Keys, expected: Opening | None = None) -> None:
        """Check and record `sender`'s keys; deliver every Keys message, own ones included.
        `expected`: what the game state says is being opened (pass it; see PublicDeck)."""
        self.public.receive_keys(sender, message, expected)

    def open_private(self, epoch: int, slot: int) -> int:
        """The card at one of this seat's slots: every other seat's key plus its own."""
        state = self.public.dealt(epoch)
        step = f"epoch {epoch} seat {self.seat} opens slot {slot}"
        if state.routes.get(slot, -1) != self.seat:
            raise RefusedOpen(
                f"slot {slot} was not dealt to seat {self.seat}", blame=None, step=step
            )
        others = [seat for seat in range(self.config.players) if seat != self.seat]
        missing = self.public.missing_keys(state, slot, others)
        if missing:
            raise MissingKeys(
                f"waiting for keys from seats {list(missing)}", missing=missing, step=step
            )
        keys = [state.keys[slot][seat] for seat in others]
        keys.append(self._slot_key(epoch, slot))
        card = self.public.decode(state, slot, keys, step)
        account(state.opened, slot, card, step)  # not a card already opened to all elsewhere
        self._remember(epoch, slot, card, step)
        return card

    def open_public(self, epoch: int, slot: int) -> int:
        """The card at a slot opened to all (every seat's key is in)."""
        card = self.public.open_public(epoch, slot)
        self._remember(epoch, slot, card, f"epoch {epoch} open slot {slot} to all")
        return card

    def _remember(self, epoch: int, slot: int, card: int, step: str) -> None:
        known = self._seen[epoch]
        account(known, slot, card, step)
        known[slot] = card

    def seen(self, epoch: int) -> dict[int, int]:
        """Every card this seat has opened in `epoch`, privately or publicly: slot -> card id."""
        return dict(self._seen.get(epoch, {}))

    def dispute(self, epoch: int, slot: int) -> Dispute:
        """Claim that one of this seat's slots opens to no valid card, publishing the key that
        lets everyone check: a false claim is then blamed on this seat."""
        state = self.public.dealt(epoch)
        if state.routes.get(slot, -1) != self.seat:
            raise ValueError(f"slot {slot} was not dealt to seat {self.seat}")
        return Dispute(epoch, slot, bytes(self._slot_key(epoch, slot)))

    def receive_dispute(self, sender: int, message: Dispute) -> NoReturn:
        """Open a disputed slot to all: FalseDispute blames `sender` if the card is valid; an
        AccountingError (no seat) means the deal itself is broken and the audit must name who."""
        self.public.receive_dispute(sender, message)


# The audit --------------------------------------------------------------------------------------


def verify_seed(config: DeckConfig, seat: int, commitment: bytes, seed: bytes) -> bool:
    """Whether `seed` is the one `seat` committed to."""
    return len(seed) == 32 and hmac.compare_digest(
        seed_commitment(config.game_id, seat, seed), commitment
    )


class _Stop(Exception):
    """The transcript cannot be followed past a failed public check."""


class _Unchecked(Exception):
    """A quick audit met a transcript that fails a public check, so it was not checked live:
    it is audited in full instead."""


class _Audit:
    """Replays a transcript over one PublicDeck, and each honest-looking seat from its seed.

    `quick`: the transcript passed every public check live, so the PublicDeck is prechecked and
    each seat is replayed by the comparisons of `DeckPlayer._deviation`; a public check that
    fails anyway raises _Unchecked. Otherwise every check is re-run and every message
    regenerated in full.
    """

    def __init__(
        self,
        epoch_cards: Sequence[Sequence[int]],
        public: PublicDeck,
        replayers: dict[int, DeckPlayer],
        *,
        quick: bool,
    ) -> None:
        self.epoch_cards = epoch_cards
        self.public = public
        self.replayers = replayers
        self.quick = quick
        self.unexplained: list[DeckError] = []
        self._first: dict[int, tuple[int, DeckError]] = {}  # seat -> its earliest finding

    @property
    def config(self) -> DeckConfig:
        return self.public.config

    @property
    def findings(self) -> list[DeckError]:
        """One finding per seat, its earliest, in transcript order."""
        ordered = sorted((position, seat) for seat, (position, _) in self._first.items())
        return [self._first[seat][1] for _, seat in ordered]

    def find(self, position: int, error: DeckError) -> None:
        """Record a finding; a seat keeps its earliest one (the first found, on a tie)."""
        if error.blame is None:
            self.unexplained.append(error)
            return
        first = self._first.get(error.blame)
        if first is None or position < first[0]:
            self._first[error.blame] = (position, error)

    def deviate(self, position: int, seat: int, step: str, parts: Sequence[str]) -> None:
        """A message of `seat` at `position` does not follow from its seed; `parts` name the
        parts that differ."""
        first = self._first.get(seat)
        if first is not None and first[0] <= position:
            return
        self._first[seat] = (position, _mismatch(seat, step, parts))

    def refuse(self, position: int, error: DeckError) -> NoReturn:
        """A public check failed: a finding, and the end of the transcript that can be
        followed; in a quick audit, proof that the transcript was not checked live."""
        if self.quick:
            raise _Unchecked
        self.find(position, error)
        raise _Stop

    def settled(self, seat: int, position: int) -> bool:
        """Whether `seat` has a finding before `position` (nothing later can change it)."""
        first = self._first.get(seat)
        return first is not None and first[0] < position

    def run(self, transcript: Sequence[tuple[int, DeckMessage]]) -> None:
        pending: dict[int, EpochMessage] = {}
        start = 0
        for position, (author, message) in enumerate(transcript):
            if isinstance(message, EpochMessage):
                first = next(iter(pending.values()), None)
                if first is not None and (first.epoch, first.round) != (
                    message.epoch,
                    message.round,
                ):
                    self.round(start, pending)
                    pending = {}
                if not pending:
                    start = position
                if pending.get(author, message) != message:
                    self.refuse(
                        position,
                        ScheduleError(
                            "equivocation: two different messages for one round",
                            blame=author,
                            step=f"epoch {message.epoch} round {message.round}",
                        ),
                    )
                pending[author] = message
                continue
            if pending:
                self.round(start, pending)
                pending = {}
            if isinstance(message, Keys):
                self.keys(position, author, message)
            elif isinstance(message, Dispute):
                self.dispute(position, author, message)
        if pending:
            self.round(start, pending)

    def round(self, position: int, messages: dict[int, EpochMessage]) -> None:
        first = next(iter(messages.values()))
        epoch, round_ = first.epoch, first.round
        self._catch_up(position, epoch, round_, messages)
        step = f"epoch {epoch} round {round_}"
        for seat, replayer in sorted(self.replayers.items()):
            actual = messages.get(seat)
            if self.quick:
                self._quick(position, seat, replayer, round_, actual)
                continue
            expected = replayer.epoch_message(round_)
            if _wire(expected) != _wire(actual):
                self.deviate(position, seat, step, _differing(expected, actual))
        self._receive(position, round_, messages)

    def _quick(
        self,
        position: int,
        seat: int,
        replayer: DeckPlayer,
        round_: int,
        actual: EpochMessage | None,
    ) -> None:
        if self.settled(seat, position):
            return
        try:
            parts = replayer._deviation(round_, actual)
            if parts is not None:
                epoch = self.public.current.epoch
                self.deviate(position, seat, f"epoch {epoch} round {round_}", parts)
        except InvalidPoint:
            raise _Unchecked from None  # a point the live checks would have refused

    def _catch_up(
        self, position: int, epoch: int, round_: int, messages: Mapping[int, EpochMessage]
    ) -> None:
        """Begin epochs and feed empty rounds up to (epoch, round_). A round nobody logged is a
        round whose due messages are missing, which blames the first seat that owed one."""
        while True:
            current = self.public.current if self.public.started else None
            if current is None or current.complete:
                following = self.public.started
                if following > epoch:
                    break
                if following >= len(self.epoch_cards):
                    raise ValueError(f"the audit needs the card set of epoch {following}")
                self.public.begin_epoch(following, self.epoch_cards[following])
                for replayer in self.replayers.values():
                    replayer._start_epoch(following)
            elif (current.epoch, current.next_round) == (epoch, round_):
                return
            elif (current.epoch, current.next_round) < (epoch, round_):
                self._receive(position, current.next_round, {})
            else:
                break
        author = min(messages)
        self.refuse(
            position,
            ScheduleError(
                f"sent a message for epoch {epoch} round {round_} out of sequence",
                blame=author,
                step=f"epoch {epoch} round {round_}",
            ),
        )

    def _receive(self, position: int, round_: int, messages: Mapping[int, EpochMessage]) -> None:
        try:
            self.public.receive_round(round_, messages)
        except DeckError as error:
            self.refuse(position, error)
        for replayer in self.replayers.values():
            replayer._locked = None

    def keys(self, position: int, author: int, message: Keys) -> None:
        try:
            self.public.receive_keys(author, message)
        except DeckError as error:
            self.refuse(position, error)
        replayer = self.replayers.get(author)
        if replayer is not None:
            expected = tuple(bytes(replayer._slot_key(message.epoch, s)) for s in message.slots)
            if expected != message.keys:
                self.deviate(position, author, f"epoch {message.epoch} keys", ())

    def dispute(self, position: int, author: int, message: Dispute) -> None:
        if self.quick:
            raise _Unchecked  # a dispute always ends in a finding, so none passed live
        try:
            self.public.receive_dispute(author, message)
        except DeckError as error:
            self.find(position, error)


def _wire(message: EpochMessage | None) -> object:
    return None if message is None else message.to_wire()


def _differing(expected: EpochMessage | None, actual: EpochMessage | None) -> tuple[str, ...]:
    """The parts of `expected` that `actual` lacks or has otherwise (none: one of the two is
    missing, or only the header or an extra part differs)."""
    if expected is None or actual is None:
        return ()
    theirs = actual.parts()
    return tuple(name for name, part in expected.parts().items() if theirs.get(name) != part)


def _mismatch(seat: int, step: str, parts: Sequence[str]) -> DeckError:
    detail = f" (in {', '.join(parts)})" if parts else ""
    return ReplayMismatch(
        f"its message does not follow from the seed it revealed{detail}", blame=seat, step=step
    )


def _seed_commitments(transcript: Sequence[tuple[int, DeckMessage]]) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    for author, message in transcript:
        if isinstance(message, EpochMessage) and message.epoch == 0 and message.commit is not None:
            found.setdefault(author, message.commit.seed_commitment)
    return found


def _replay(
    config: DeckConfig,
    epoch_cards: Sequence[Sequence[int]],
    transcript: Sequence[tuple[int, DeckMessage]],
    seeds: Mapping[int, bytes],
    group: Group,
    executor: Executor | None,
    quick: bool,
) -> _Audit:
    public = PublicDeck(config, group=group, executor=executor, prechecked=quick)
    replayers = {
        seat: DeckPlayer(config, seat, seed, public=public) for seat, seed in seeds.items()
    }
    auditor = _Audit(epoch_cards, public, replayers, quick=quick)
    with contextlib.suppress(_Stop):
        auditor.run(transcript)
    return auditor


def audit(
    config: DeckConfig,
    epoch_cards: Sequence[Sequence[int]],
    transcript: Sequence[tuple[int, DeckMessage]],
    seeds: Mapping[int, bytes | None],
    *,
    excused: Collection[int] = (),
    group: Group = RISTRETTO255,
    executor: Executor | None = None,
    checked_live: bool = False,
) -> None:
    """Judge a whole game's deck from its transcript and the revealed seeds.

    `epoch_cards[e]`: the sorted card ids epoch e started from (the deck, then each discard
    pile); `transcript`: every deck message with its author, in lockstep order (SeedReveal
    messages are ignored; pass the seeds in `seeds`, None for a seat that withheld its seed;
    `excused` seats owed none, as seats voted out of a game ended early: without a seed they
    are not replayed, and nothing is held against them for it).
    Every public check is re-run; every seat whose seed matches its commitment is replayed, and
    each of its messages must be exactly what its seed gives. Passes silently, or raises an
    AuditError whose `blame` is the first cheater in transcript order; its `findings` list every
    seat found cheating, a withheld or wrong seed counting as cheating at the end.

    `checked_live=True` is for a caller that has itself received exactly this transcript
    through its own DeckPlayer, every check passing (a seat at the end of its game): the public
    checks are then not re-run, and each seat is replayed by cheap comparisons that, given
    those checks, prove the same thing (docs/deck.md, "The quick audit"). The verdict is the
    same as the full audit's; if a public check fails after all, the transcript is audited in
    full. Never pass True for a transcript that was not checked, such as a game file.
    """
    commitments = _seed_commitments(transcript)
    verified: dict[int, bytes] = {}
    seed_findings: list[DeckError] = []
    for seat in range(config.players):
        seed = seeds.get(seat)
        commitment = commitments.get(seat)
        if commitment is None:
            continue  # it never committed; round 0 already blames it
        if seed is None and seat in excused:
            continue
        if seed is None:
            seed_findings.append(
                CommitmentError("withheld its seed", blame=seat, step="seed reveal")
            )
        elif not verify_seed(config, seat, commitment, seed):
            seed_findings.append(
                CommitmentError(
                    "revealed a seed that does not match its commitment",
                    blame=seat,
                    step="seed reveal",
                )
            )
        else:
            verified[seat] = seed
    auditor = None
    if checked_live:
        with contextlib.suppress(_Unchecked):
            auditor = _replay(config, epoch_cards, transcript, verified, group, executor, True)
    if auditor is None:
        auditor = _replay(config, epoch_cards, transcript, verified, group, executor, False)
    for error in seed_findings:
        auditor.find(len(transcript), error)
    if auditor.findings:
        raise AuditError(tuple(auditor.findings))
    if auditor.unexplained:
        raise AuditError(tuple(auditor.unexplained))
