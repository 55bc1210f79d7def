"""An in-memory table for deck tests: k separate DeckPlayer objects that share nothing but
msgpack-encoded wire messages, delivered in lockstep order like the real lockstep will.

Every message is encoded once by its sender (optionally tampered with at the wire level first)
and decoded separately by every receiver. The table keeps the transcript for the audit and records
which slots each seat is entitled to see.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import msgpack

from protocol.deck import DeckConfig, DeckPlayer, Opening, audit, decode_message
from protocol.deck.errors import AuditError, DeckError, WireError
from protocol.deck.group import RISTRETTO255, Point, Scalar
from protocol.deck.messages import DeckMessage, EpochMessage, Keys, Relock, Shuffle
from protocol.deck.public import EpochState

Tamper = Callable[[int, dict[str, Any]], dict[str, Any]]


def seed_for(label: str, seat: int) -> bytes:
    """A reproducible 32-byte seed per test and seat (tests must be repeatable)."""
    return hashlib.sha256(f"deck test seed {label} {seat}".encode()).digest()


def pack(message: DeckMessage | dict[str, Any]) -> bytes:
    obj = message if isinstance(message, dict) else message.to_wire()
    return msgpack.packb(obj, use_bin_type=True)


def unpack(data: bytes, author: int) -> DeckMessage:
    return decode_message(msgpack.unpackb(data, raw=False, strict_map_key=True), author)


class Blamed(Exception):
    """Some players raised DeckErrors while receiving: `errors` by receiving seat."""

    def __init__(self, errors: dict[int, DeckError]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"seat {seat} says: {error}" for seat, error in errors.items()))

    def blamed_by(self, seats: Sequence[int]) -> set[int | None]:
        """The set of seats these receivers blame (a single seat when they agree)."""
        return {self.errors[seat].blame for seat in seats}


class Table:
    """k players around one in-memory wire."""

    def __init__(
        self,
        players: int,
        *,
        label: str = "table",
        proofs: bool = True,
        executor: Executor | None = None,
        factories: dict[int, Callable[..., DeckPlayer]] | None = None,
        game_id: bytes | None = None,
    ) -> None:
        self.config = DeckConfig(
            game_id=game_id or hashlib.sha256(f"game {label}".encode()).digest()[:16],
            players=players,
            proofs=proofs,
        )
        self.seeds = [seed_for(label, seat) for seat in range(players)]
        factories = factories or {}
        self.players = [
            factories.get(seat, DeckPlayer)(self.config, seat, self.seeds[seat], executor=executor)
            for seat in range(players)
        ]
        self.transcript: list[tuple[int, DeckMessage]] = []
        self.epoch_cards: list[tuple[int, ...]] = []
        self.tamper: dict[int, Tamper] = {}  # seat -> rewrite of its wire objects
        self.entitled: list[set[tuple[int, int]]] = [set() for _ in range(players)]

    @property
    def seats(self) -> range:
        return range(self.config.players)

    def honest(self, *cheaters: int) -> list[int]:
        return [seat for seat in self.seats if seat not in cheaters]

    def _send(self, seat: int, message: DeckMessage) -> bytes:
        obj = message.to_wire()
        if seat in self.tamper:
            obj = self.tamper[seat](seat, obj)
        data = pack(obj)
        with contextlib.suppress(WireError):  # malformed: every receiver refuses it, no one logs it
            self.transcript.append((seat, unpack(data, seat)))
        return data

    def _deliver(self, action: Callable[[DeckPlayer], None]) -> None:
        errors: dict[int, DeckError] = {}
        for player in self.players:
            try:
                action(player)
            except DeckError as error:
                errors[player.seat] = error
        if errors:
            raise Blamed(errors)

    # Epochs -------------------------------------------------------------------------------------

    def run_epoch(self, epoch: int, cards: Sequence[int]) -> None:
        self.begin_epoch(epoch, cards)
        for round_ in range(self.config.rounds):
            self.run_round(round_)

    def begin_epoch(self, epoch: int, cards: Sequence[int]) -> None:
        self.epoch_cards.append(tuple(cards))
        for player in self.players:
            player.begin_epoch(epoch, cards)

    def run_round(self, round_: int) -> None:
        sent: dict[int, bytes] = {}
        for player in self.players:
            message = player.epoch_message(round_)
            if message is not None:
                sent[player.seat] = self._send(player.seat, message)

        def receive(player: DeckPlayer) -> None:
            decoded: dict[int, EpochMessage | None] = {}
            for seat, data in sent.items():
                message = unpack(data, seat)
                assert isinstance(message, EpochMessage)
                decoded[seat] = message
            player.receive_round(round_, decoded)

        self._deliver(receive)

    # Keys ---------------------------------------------------------------------------------------

    def publish_keys(
        self, sender: int, message: Keys, expected: Sequence[int] | None = None
    ) -> None:
        data = self._send(sender, message)

        def receive(player: DeckPlayer) -> None:
            decoded = unpack(data, sender)
            assert isinstance(decoded, Keys)
            player.receive_keys(sender, decoded, expected)

        self._deliver(receive)

    def deal(self, epoch: int, slots: Sequence[int], to: int) -> None:
        """Everyone but `to` publishes its keys for `slots`, so that `to` can open them."""
        opening = Opening(epoch, tuple(slots), to)
        for sender in self.seats:
            if sender != to:
                self.publish_keys(sender, self.players[sender].keys_for(epoch, slots, to), opening)
        self.entitled[to].update((epoch, slot) for slot in slots)

    def draw(self, epoch: int, slots: Sequence[int], to: int) -> list[int]:
        """Deal `slots` to seat `to`, which opens them."""
        self.deal(epoch, slots, to)
        return [self.players[to].open_private(epoch, slot) for slot in slots]

    def reveal(self, epoch: int, slots: Sequence[int]) -> list[int]:
        """Turn draw-pile slots face up: every seat publishes its keys; everyone opens them."""
        opening = Opening(epoch, tuple(slots), None)
        for sender in self.seats:
            self.publish_keys(sender, self.players[sender].keys_for(epoch, slots, None), opening)
        return self._open_public(epoch, slots)

    def play(self, epoch: int, slot: int, holder: int) -> int:
        """The holder plays (or shows) a hand card by publishing its own key; everyone opens it."""
        message = self.players[holder].keys_for(epoch, [slot], None)
        self.publish_keys(holder, message, Opening(epoch, (slot,), None))
        return self._open_public(epoch, [slot])[0]

    def _open_public(self, epoch: int, slots: Sequence[int]) -> list[int]:
        for seat in self.seats:
            self.entitled[seat].update((epoch, slot) for slot in slots)
        cards: dict[int, list[int]] = {}

        def open_all(player: DeckPlayer) -> None:
            cards[player.seat] = [player.open_public(epoch, slot) for slot in slots]

        self._deliver(open_all)
        first = cards[0]
        assert all(opened == first for opened in cards.values()), "views disagree on a public card"
        return first

    # Audit --------------------------------------------------------------------------------------

    def audit(
        self, seeds: dict[int, bytes | None] | None = None, *, checked_live: bool = False
    ) -> None:
        revealed: dict[int, bytes | None] = dict(enumerate(self.seeds)) if seeds is None else seeds
        audit(self.config, self.epoch_cards, self.transcript, revealed, checked_live=checked_live)

    def audit_both(self, seeds: dict[int, bytes | None] | None = None) -> AuditError | None:
        """The audit in full and as a seat at the end of its game runs it (checked_live): both
        must reach the same verdict, finding for finding. The error, or None if it passed."""
        verdicts: list[AuditError | None] = []
        for checked_live in (False, True):
            try:
                self.audit(seeds, checked_live=checked_live)
                verdicts.append(None)
            except AuditError as error:
                verdicts.append(error)
        full, live = (verdict_of(error) for error in verdicts)
        assert live == full, f"the quick audit says {live}, the full one {full}"
        return verdicts[0]


def verdict_of(error: AuditError | None) -> list[tuple[str, int | None, str, str]] | None:
    """An audit's outcome as plain data: each finding's type, blame, step and reason."""
    if error is None:
        return None
    return [(type(e).__name__, e.blame, e.step, e.reason) for e in error.findings]


# Wire-level tampering -------------------------------------------------------------------------


def flip(data: bytes) -> bytes:
    """The same bytes with one bit of the last byte changed."""
    return data[:-1] + bytes([data[-1] ^ 1])


def rewrite_part(part: str, change: Callable[[dict[str, Any]], None]) -> Tamper:
    """A tamper that edits `part` (in place on a copy) in whichever epoch message carries it."""

    def tamper(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == "deck.epoch" and part in obj:
            obj = {
                **obj,
                part: {key: list(v) if isinstance(v, list) else v for key, v in obj[part].items()},
            }
            change(obj[part])
        return obj

    return tamper


def rewrite_kind(kind: str, change: Callable[[dict[str, Any]], None]) -> Tamper:
    """A tamper that edits every message of one kind (deck.keys, deck.dispute, ...)."""

    def tamper(seat: int, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("kind") == kind:
            obj = {key: list(v) if isinstance(v, list) else v for key, v in obj.items()}
            change(obj)
        return obj

    return tamper


# Cheating players --------------------------------------------------------------------------------

GROUP = RISTRETTO255


def fixed_scalar(label: str) -> Scalar:
    return GROUP.scalar_from_wide(hashlib.sha512(label.encode()).digest())


def slot_key(player: DeckPlayer, epoch: int, slot: int) -> bytes:
    """A seat's secret key for a slot: what a test (or a cheater) needs to forge messages."""
    return bytes(player._slot_key(epoch, slot))


class DeckCheater(DeckPlayer):
    """A player that runs the honest code and then changes one output (set by the test). A
    changed shuffle comes with the best proof it can make: its argument (sent with its relock)
    is run on the changed statement, as received, with its real key and permutation."""

    shuffle_change: Callable[[EpochState, list[Point]], list[Point]] | None = None
    relock_change: Callable[[EpochState, list[Point]], list[Point]] | None = None

    def _shuffle(self, state: EpochState, round_: int) -> Shuffle:
        honest = super()._shuffle(state, round_)
        if self.shuffle_change is None:
            return honest
        self._proving.pop(state.epoch, None)  # the honest statement's: proved again later
        return Shuffle(tuple(self.shuffle_change(state, list(honest.deck))), honest.public_key)

    def _relock(self, state: EpochState, round_: int) -> Relock:
        honest = super()._relock(state, round_)
        if self.relock_change is None:
            return honest
        deck = tuple(self.relock_change(state, list(honest.deck)))
        return Relock(deck, honest.locks, honest.proofs)


class Peeker(DeckCheater):
    """CRYPTO.md P10: copies r·(the victim's slot) into its own draw slot, as the last shuffler
    ("shuffle") or as the first relocker ("relock"); then `peek` reads the victim's card."""

    victim_slot = 0
    own_slot = 1
    factor = fixed_scalar("peek factor")
    form = "shuffle"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shuffle_change = lambda state, deck: self._copy_at("shuffle", deck)
        self.relock_change = lambda state, deck: self._copy_at("relock", deck)

    def _copy_at(self, step: str, deck: list[Point]) -> list[Point]:
        if step == self.form:
            deck[self.own_slot] = GROUP.mul(self.factor, deck[self.victim_slot])
        return deck

    def peek(self, epoch: int) -> int:
        """The victim's card: this seat's own slot, stripped of every lock and of r."""
        state = self.public.dealt(epoch)
        slot = self.own_slot
        others = [
            state.keys[slot][seat] for seat in range(self.config.players) if seat != self.seat
        ]
        if self.form == "shuffle":
            extra = GROUP.scalar_mul(self.factor, self._slot_key(epoch, slot))
        else:  # my relock put my key of the victim's slot on the copy
            extra = GROUP.scalar_mul(self.factor, self._slot_key(epoch, self.victim_slot))
        product = extra
        for key in others:
            product = GROUP.scalar_mul(product, key)
        point = GROUP.mul(GROUP.scalar_invert(product), state.decks[-1][slot])
        return state.table[point]
