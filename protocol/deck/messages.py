"""The deck's wire messages: plain frozen dataclasses with strict `to_wire`/`from_wire`.

`to_wire()` gives only msgpack-native values (dicts with str keys, bytes, int, list, None), and
`from_wire(obj)` accepts exactly that shape back: every field present, no extra field, exact
byte lengths, counts within the protocol's limits. It checks structure only; whether a count
matches this epoch's deck, whether a point is on the curve and whether a proof holds is checked
by the receiving `PublicDeck`, which knows the context and whom to blame. A `WireError` raised
here has no seat; `decode_message` attaches the author.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import msgpack

from .errors import WireError
from .group import RISTRETTO255
from .shuffle_argument import proof_size

MAX_PLAYERS = 7
MAX_CARDS = 154
MAX_EPOCHS = 64
POINT_SIZE = 32
SCALAR_SIZE = 32
HASH_SIZE = 32
DLEQ_PROOF_SIZE = 64  # challenge c and response z, one scalar each


def _fail(reason: str) -> WireError:
    return WireError(reason, blame=None, step="decoding")


def _fields(obj: object, kind: str, names: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(obj, dict):
        raise _fail(f"{kind}: expected a map, got {type(obj).__name__}")
    if not all(isinstance(key, str) for key in obj):
        raise _fail(f"{kind}: field names must be strings")
    missing = [name for name in names if name not in obj]
    extra = sorted(key for key in obj if key not in names)
    if missing:
        raise _fail(f"{kind}: missing field(s) {', '.join(missing)}")
    if extra:
        raise _fail(f"{kind}: unexpected field(s) {', '.join(extra)}")
    return obj


def _int(value: object, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(f"{name} must be an integer")
    if not low <= value <= high:
        raise _fail(f"{name} must be in {low}..{high}, got {value}")
    return value


def _bytes(value: object, name: str, size: int) -> bytes:
    if not isinstance(value, bytes):
        raise _fail(f"{name} must be bytes")
    if len(value) != size:
        raise _fail(f"{name} must be {size} bytes, got {len(value)}")
    return value


def _list(value: object, name: str, max_items: int) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(f"{name} must be a list")
    if len(value) > max_items:
        raise _fail(f"{name} has {len(value)} items, at most {max_items} allowed")
    return value


def _byte_list(value: object, name: str, max_items: int, size: int) -> tuple[bytes, ...]:
    return tuple(
        _bytes(item, f"{name}[{i}]", size) for i, item in enumerate(_list(value, name, max_items))
    )


def _kind(obj: Mapping[str, Any], kind: str) -> None:
    if obj["kind"] != kind:
        raise _fail(f"expected a {kind} message, got kind {obj['kind']!r}")


# Epoch parts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commit:
    """Round 0: the seed commitment and the epoch's card set digest."""

    seed_commitment: bytes
    cards_digest: bytes

    NAME: ClassVar[str] = "commit"
    FIELDS: ClassVar[tuple[str, ...]] = ("seed_commitment", "cards_digest")

    def to_wire(self) -> dict[str, Any]:
        return {"seed_commitment": self.seed_commitment, "cards_digest": self.cards_digest}

    @classmethod
    def from_wire(cls, obj: object) -> Commit:
        fields = _fields(obj, cls.NAME, cls.FIELDS)
        return cls(
            seed_commitment=_bytes(fields["seed_commitment"], "seed_commitment", HASH_SIZE),
            cards_digest=_bytes(fields["cards_digest"], "cards_digest", HASH_SIZE),
        )


@dataclass(frozen=True)
class Shuffle:
    """A shuffler's output deck π(K·D) and its key's public part PK = K·G (the argument proving
    them comes later, in the shuffler's relock round: `Argument`)."""

    deck: tuple[bytes, ...]
    public_key: bytes

    NAME: ClassVar[str] = "shuffle"
    FIELDS: ClassVar[tuple[str, ...]] = ("deck", "public_key")

    def to_wire(self) -> dict[str, Any]:
        return {"deck": list(self.deck), "public_key": self.public_key}

    @classmethod
    def from_wire(cls, obj: object) -> Shuffle:
        fields = _fields(obj, cls.NAME, cls.FIELDS)
        return cls(
            deck=_byte_list(fields["deck"], "deck", MAX_CARDS, POINT_SIZE),
            public_key=_bytes(fields["public_key"], "public_key", POINT_SIZE),
        )

    def __repr__(self) -> str:
        return f"Shuffle(deck=<{len(self.deck)} points>)"


@dataclass(frozen=True)
class Argument:
    """The shuffle argument for the sender's shuffle of this epoch, 32·(4n+5) bytes, sent with
    its relock (proofs on only): proving it is off the deck's chain of shuffles."""

    proof: bytes

    NAME: ClassVar[str] = "argument"
    FIELDS: ClassVar[tuple[str, ...]] = ("proof",)
    SIZES: ClassVar[frozenset[int]] = frozenset(
        proof_size(RISTRETTO255, cards) for cards in range(1, MAX_CARDS + 1)
    )

    def to_wire(self) -> dict[str, Any]:
        return {"proof": self.proof}

    @classmethod
    def from_wire(cls, obj: object) -> Argument:
        proof = _fields(obj, cls.NAME, cls.FIELDS)["proof"]
        if not isinstance(proof, bytes) or len(proof) not in cls.SIZES:
            raise _fail(
                f"proof must be bytes of the size of an argument for 1 to {MAX_CARDS} cards"
            )
        return cls(proof)

    def __repr__(self) -> str:
        return f"Argument(<{len(self.proof)} bytes>)"


@dataclass(frozen=True)
class Relock:
    """A relocker's deck with its global key swapped for one key per slot, the public locks
    Y_j = k_j·G, and one DLEQ proof per slot (empty without proofs)."""

    deck: tuple[bytes, ...]
    locks: tuple[bytes, ...]
    proofs: tuple[bytes, ...]

    NAME: ClassVar[str] = "relock"
    FIELDS: ClassVar[tuple[str, ...]] = ("deck", "locks", "proofs")

    def to_wire(self) -> dict[str, Any]:
        return {"deck": list(self.deck), "locks": list(self.locks), "proofs": list(self.proofs)}

    @classmethod
    def from_wire(cls, obj: object) -> Relock:
        fields = _fields(obj, cls.NAME, cls.FIELDS)
        return cls(
            deck=_byte_list(fields["deck"], "deck", MAX_CARDS, POINT_SIZE),
            locks=_byte_list(fields["locks"], "locks", MAX_CARDS, POINT_SIZE),
            proofs=_byte_list(fields["proofs"], "proofs", MAX_CARDS, DLEQ_PROOF_SIZE),
        )

    def __repr__(self) -> str:
        return f"Relock(deck=<{len(self.deck)} points>, proofs={len(self.proofs)})"


Part = Commit | Shuffle | Relock | Argument
PART_TYPES: tuple[type[Part], ...] = (Commit, Shuffle, Relock, Argument)
PART_NAMES: tuple[str, ...] = tuple(part.NAME for part in PART_TYPES)
_P = TypeVar("_P", Commit, Shuffle, Relock, Argument)


@dataclass(frozen=True)
class EpochMessage:
    """One seat's message for one round of an epoch: the parts the schedule asks of it."""

    epoch: int
    round: int
    commit: Commit | None = None
    shuffle: Shuffle | None = None
    relock: Relock | None = None
    argument: Argument | None = None

    KIND: ClassVar[str] = "deck.epoch"

    def parts(self) -> dict[str, Part]:
        """The parts present, by name, in canonical order."""
        present: dict[str, Part | None] = {
            "commit": self.commit,
            "shuffle": self.shuffle,
            "relock": self.relock,
            "argument": self.argument,
        }
        return {name: part for name, part in present.items() if part is not None}

    @classmethod
    def assemble(cls, epoch: int, round_: int, parts: Mapping[str, Part]) -> EpochMessage:
        """A message from parts by name; a name not matching its part's type is refused."""
        for name, part in parts.items():
            if name not in PART_NAMES or name != part.NAME:
                raise _fail(f"{name!r} is not the name of a {type(part).__name__} part")

        def pick(kind: type[_P]) -> _P | None:
            part = parts.get(kind.NAME)
            return part if isinstance(part, kind) else None

        return cls(
            epoch=epoch,
            round=round_,
            commit=pick(Commit),
            shuffle=pick(Shuffle),
            relock=pick(Relock),
            argument=pick(Argument),
        )

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"kind": self.KIND, "epoch": self.epoch, "round": self.round}
        wire.update({name: part.to_wire() for name, part in self.parts().items()})
        return wire

    @classmethod
    def from_wire(cls, obj: object) -> EpochMessage:
        if not isinstance(obj, dict):
            raise _fail(f"{cls.KIND}: expected a map")
        present = [name for name in PART_NAMES if name in obj]
        fields = _fields(obj, cls.KIND, ("kind", "epoch", "round", *present))
        _kind(fields, cls.KIND)
        parts = {
            part.NAME: part.from_wire(fields[part.NAME])
            for part in PART_TYPES
            if part.NAME in fields
        }
        return cls.assemble(
            _int(fields["epoch"], "epoch", 0, MAX_EPOCHS - 1),
            _int(fields["round"], "round", 0, 2 * MAX_PLAYERS),
            parts,
        )


# Messages outside the epoch rounds -------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    """The sender's own keys for some slots: to seat `to` (a private draw) or to all (None)."""

    epoch: int
    to: int | None
    slots: tuple[int, ...]  # strictly increasing
    keys: tuple[bytes, ...]

    KIND: ClassVar[str] = "deck.keys"

    def to_wire(self) -> dict[str, Any]:
        return {
            "kind": self.KIND,
            "epoch": self.epoch,
            "to": self.to,
            "slots": list(self.slots),
            "keys": list(self.keys),
        }

    @classmethod
    def from_wire(cls, obj: object) -> Keys:
        fields = _fields(obj, cls.KIND, ("kind", "epoch", "to", "slots", "keys"))
        _kind(fields, cls.KIND)
        to = fields["to"]
        slots = tuple(
            _int(slot, f"slots[{i}]", 0, MAX_CARDS - 1)
            for i, slot in enumerate(_list(fields["slots"], "slots", MAX_CARDS))
        )
        if any(a >= b for a, b in itertools.pairwise(slots)):
            raise _fail("slots must be strictly increasing")
        keys = _byte_list(fields["keys"], "keys", MAX_CARDS, SCALAR_SIZE)
        if not slots or len(keys) != len(slots):
            raise _fail("a keys message needs one key per slot, and at least one slot")
        return cls(
            epoch=_int(fields["epoch"], "epoch", 0, MAX_EPOCHS - 1),
            to=None if to is None else _int(to, "to", 0, MAX_PLAYERS - 1),
            slots=slots,
            keys=keys,
        )

    def __repr__(self) -> str:
        return f"Keys(epoch={self.epoch}, to={self.to}, slots={list(self.slots)})"


@dataclass(frozen=True)
class Dispute:
    """The holder says its slot opens to no valid card, and publishes its key to prove it."""

    epoch: int
    slot: int
    key: bytes

    KIND: ClassVar[str] = "deck.dispute"

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.KIND, "epoch": self.epoch, "slot": self.slot, "key": self.key}

    @classmethod
    def from_wire(cls, obj: object) -> Dispute:
        fields = _fields(obj, cls.KIND, ("kind", "epoch", "slot", "key"))
        _kind(fields, cls.KIND)
        return cls(
            epoch=_int(fields["epoch"], "epoch", 0, MAX_EPOCHS - 1),
            slot=_int(fields["slot"], "slot", 0, MAX_CARDS - 1),
            key=_bytes(fields["key"], "key", SCALAR_SIZE),
        )

    def __repr__(self) -> str:
        return f"Dispute(epoch={self.epoch}, slot={self.slot})"


@dataclass(frozen=True)
class SeedReveal:
    """The sender's seed, revealed for the audit (end of game, dispute or abort)."""

    seed: bytes

    KIND: ClassVar[str] = "deck.seed"

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.KIND, "seed": self.seed}

    @classmethod
    def from_wire(cls, obj: object) -> SeedReveal:
        fields = _fields(obj, cls.KIND, ("kind", "seed"))
        _kind(fields, cls.KIND)
        return cls(seed=_bytes(fields["seed"], "seed", 32))

    def __repr__(self) -> str:
        return "SeedReveal(<seed>)"


DeckMessage = EpochMessage | Keys | Dispute | SeedReveal
_BY_KIND: dict[str, type[EpochMessage] | type[Keys] | type[Dispute] | type[SeedReveal]] = {
    cls.KIND: cls for cls in (EpochMessage, Keys, Dispute, SeedReveal)
}


def _packed(wire: object) -> bytes:
    packed: bytes = msgpack.packb(wire, use_bin_type=True)
    return packed


def decode_message(obj: object, author: int) -> DeckMessage:
    """Any deck message from its wire form; a malformed one raises WireError blaming `author`.
    A step message keeps its deck maps as received (protocol.peer_messages), so their key
    order is checked here: a map must be written as `to_wire` writes it, or one deck message
    could travel in two different signed payloads."""
    try:
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise _fail("a deck message is a map with a string 'kind'")
        cls = _BY_KIND.get(obj["kind"])
        if cls is None:
            raise _fail(f"unknown deck message kind {obj['kind']!r}")
        message = cls.from_wire(obj)
        if _packed(message.to_wire()) != _packed(obj):
            raise _fail(
                f"a {cls.KIND} message is not in canonical form (its keys are in another order)"
            )
        return message
    except WireError as error:
        raise WireError(error.reason, blame=author, step="decoding a message") from None
