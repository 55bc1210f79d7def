"""Messages between the players' clients: the link's hellos, the signed messages (steps, end
votes, endings, holdings) and their relays, and chat.
docs/peer-protocol.md describes the exchange and its limits.

Every link is sealed (TLS 1.3, protocol.sealed): its certificates prove the keys, so the hellos
only say which game and seat each side is. Until both hellos are through a link accepts only
small frames (a hello, or a signed refusal of the table), so nobody the roster does not name
can make a client buffer much. A signed
message carries its header (game, step, seat) beside its body, so that a receiver can drop it
on the header alone; the signature covers both, and the kind (`signed_bytes`).
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Annotated, Any, ClassVar, TypeVar

import msgpack

from protocol.cards import MAX_PLAYERS
from protocol.identity import SIGNATURE_BYTES, Identity, SignedEnvelope, Verifier
from protocol.messages import (
    ERROR_TEXT_MAX_CHARS,
    GAME_ID_BYTES,
    LOBBY_EVENT_MAX_FRAME,
    PROTOCOL_VERSION,
    Blob,
    Codec,
    FieldProblem,
    Int,
    ListOf,
    Message,
    MessageError,
    Nullable,
    OneOf,
    Record,
    Spec,
    Text,
    Version,
    canonical_problem,
    unpack,
)
from protocol.wire_actions import ActionSpec

#: The largest frame before both hellos are through: a hello, or a table refusal with its
#: roster (`TableRefusal`: the largest is 4.3 KiB, tests/test_peer_messages.py builds it).
HANDSHAKE_MAX_FRAME = 6 * 1024
#: The largest frame a peer link carries once both hellos are through. The largest step message
#: a game needs is the last relocker's, with its shuffle argument: 39.5 KB measured (3 players,
#: 150 cards); the largest the deck's and the rules' own limits admit is 160 KiB
#: (tests/test_deck_messages.py builds it), so a quarter of a MiB leaves room and bounds what
#: one frame can cost to unpack.
PEER_MAX_FRAME = 256 * 1024
MAX_STEP_PAYLOAD = PEER_MAX_FRAME - 1024  # what is left for the payload inside a step frame
MAX_STEP = 10**7
PEER_DOMAIN = "bohnanza-p2p/peer/v3"

GameId = Annotated[bytes, Blob(GAME_ID_BYTES)]
SeatNumber = Annotated[int, Int(0, MAX_PLAYERS - 1)]
StepNumber = Annotated[int, Int(0, MAX_STEP)]
SeatMask = Annotated[int, Int(0, 2**MAX_PLAYERS - 1)]
Signature = Annotated[bytes, Blob(SIGNATURE_BYTES)]
_HEADER = struct.Struct(f">B{GAME_ID_BYTES}sIB")


def signed_bytes(kind: str, game: bytes, step: int, seat: int, body: bytes) -> bytes:
    """What a peer's signature covers: the message kind, the protocol version, the game's
    identity, the step and the author's seat, then the body. A signature is good for one
    kind of message of one seat at one step of one game, and nowhere else: relayed into
    another game (a rematch with the same seats), another step or another seat's name, it
    fails, and blames nobody."""
    return kind.encode() + b"\x00" + _HEADER.pack(PROTOCOL_VERSION, game, step, seat) + body


@dataclasses.dataclass(frozen=True)
class PeerHello(Message):
    """First frame on a link after TLS, both ways: which game (the lobby's room-level id, for
    routing the link; not the game's identity) and which seat. The dialler speaks first."""

    TYPE: ClassVar[str] = "peer_hello"
    version: Annotated[int, Version()]
    game: GameId
    seat: SeatNumber


class Signed(Message):
    """A message its author signed (kind TYPE, over `signed_bytes`): a step message, an end
    vote, an ending. Its header (game, step, seat) is read and checked against this game and
    its step window before anything else: the signature, then the body, only after that."""

    game: bytes
    step: int
    seat: int
    signature: bytes

    def body(self) -> bytes:
        raise NotImplementedError

    def signed(self) -> bytes:
        return signed_bytes(self.TYPE, self.game, self.step, self.seat, self.body())

    def verify(self, verifier: Verifier) -> None:
        """SignatureError unless the seat's key signed exactly this, for this header."""
        verifier.verify(SignedEnvelope(PEER_DOMAIN, self.signed(), self.signature), PEER_DOMAIN)


S = TypeVar("S", bound=Signed)


def sign(identity: Identity, unsigned: S) -> S:
    """The message with its author's signature over its header and body."""
    signature = identity.sign(PEER_DOMAIN, unsigned.signed()).signature
    signed: S = dataclasses.replace(unsigned, signature=signature)  # type: ignore[type-var]
    return signed


@dataclasses.dataclass(frozen=True)
class StepFrame(Signed):
    """A seat's signed message for one lockstep step, from its author or from a peer that
    holds it (asked for it). `payload` is the msgpack of a StepBody naming the same game,
    step and seat."""

    TYPE: ClassVar[str] = "step"
    game: GameId
    step: StepNumber
    seat: SeatNumber
    payload: Annotated[bytes, Blob(1, MAX_STEP_PAYLOAD)]
    signature: Signature = bytes(SIGNATURE_BYTES)

    def body(self) -> bytes:
        return self.payload

    @property
    def frame(self) -> tuple[bytes, bytes]:
        """What the game file keeps of it (the header is read again from the payload)."""
        return self.payload, self.signature

    def read(self) -> StepBody:
        """The body (after `verify`); MessageError if it is malformed, or names another game,
        step or seat than the header its author signed with it."""
        body = StepBody.decode(self.payload)
        if (body.game, body.step, body.seat) != (self.game, self.step, self.seat):
            raise MessageError("a step message names another game, step or seat inside")
        return body


@dataclasses.dataclass(frozen=True)
class EndVote(Signed):
    """A seat's vote to end the game at `step` without the seats in `gone` (a bit mask). The
    game ends there once every seat outside `gone` has signed the same vote; each seat then
    records the ending before it reveals its seed (`Ended`). Relayed by every seat that gets
    one from its author, so that every seat can show the whole vote (protocol/ending.py)."""

    TYPE: ClassVar[str] = "end_vote"
    game: GameId
    step: StepNumber
    seat: SeatNumber
    gone: Annotated[int, Int(1, 2**MAX_PLAYERS - 1)]
    signature: Signature = bytes(SIGNATURE_BYTES)

    def body(self) -> bytes:
        return bytes([self.gone])


ENDINGS = ("vote", "dispute", "stopped", "followed")
#: The most bytes one encoded EndVote in an ending may take (one takes about 150).
MAX_VOTE_BYTES = 256


@dataclasses.dataclass(frozen=True)
class Ended(Signed):
    """The author has ended this game at `step`, for good, and written so to its game file:
    it will never sign a message for this game again. `why`: a unanimous vote without the
    seats in `gone`; a dispute (the deal broke and only the seeds can say who broke it); a
    stop (a cheat this seat saw); or another seat's ending it followed. `seed` is revealed
    with a vote or a dispute, for the audit of what was played; never before the ending is
    on disk. `votes`: with a vote, the encoded EndVotes it rests on, each signed by its own
    seat, for nobody follows a vote it cannot check (protocol.ending.ending_problem); the
    signature covers them too, so that no seat relaying the ending can strip them."""

    TYPE: ClassVar[str] = "ended"
    game: GameId
    step: StepNumber
    seat: SeatNumber
    why: Annotated[str, OneOf(*ENDINGS)]
    gone: SeatMask = 0
    seed: Annotated[bytes | None, Nullable(Blob(32))] = None
    votes: Annotated[tuple[bytes, ...], ListOf(Blob(1, MAX_VOTE_BYTES), 0, MAX_PLAYERS)] = ()
    signature: Signature = bytes(SIGNATURE_BYTES)

    def body(self) -> bytes:
        seed = self.seed or b""
        votes = b"".join(len(vote).to_bytes(2, "big") + vote for vote in self.votes)
        counts = bytes([len(seed)]) + seed + bytes([len(self.votes)])
        return self.why.encode() + b"\x00" + bytes([self.gone]) + counts + votes


@dataclasses.dataclass(frozen=True)
class PeerChat(Message):
    TYPE: ClassVar[str] = "chat"
    text: Annotated[str, Text(1, 500)]


#: The most a holding may say its author has owed its message: tenths of a second (about 11 days).
MAX_OWED = 10**7


@dataclasses.dataclass(frozen=True)
class Holding(Signed):
    """Where the author is, in its own words, as a heartbeat: the step it plays; whose messages
    of that step it holds (a bit per seat; its own bit: it has made its message and sends it
    to anyone who lacks it); and for how long, in tenths of a second by its own clock, it has
    owed its message without making it. A seat owes its message once it holds what the step
    needs of it (the step is urgent, or another seat's message of it is in), and an honest
    client starts making it at once, so an honest `owed` stays near zero. The signature is the
    point: a holding whose `owed` passes the step deadline convicts its author of withholding
    on its own word (protocol.blame), whatever its links did.

    The fields route answers unverified (the link already authenticates its sender); the
    signature is checked only when the holding would convict."""

    TYPE: ClassVar[str] = "holding"
    game: GameId
    step: StepNumber
    seat: SeatNumber
    have: SeatMask
    owed: Annotated[int, Int(0, MAX_OWED)] = 0
    signature: Signature = bytes(SIGNATURE_BYTES)

    def body(self) -> bytes:
        return bytes([self.have]) + self.owed.to_bytes(4, "big")


class WireMap(Spec):
    """A deck message (a map tagged by `kind`), whose contents protocol.deck checks with its
    author; its size and shape are already bounded by `protocol.messages.unpack`."""

    def parse(self, value: object, path: str) -> dict[str, Any]:
        if type(value) is not dict or type(value.get("kind")) is not str:
            raise FieldProblem(path, "must be a deck message (a map with a 'kind')")
        return value


Hash = Annotated[bytes, Blob(32)]
MAX_ACTIONS_PER_STEP = 32
MAX_DECK_MESSAGES_PER_STEP = 16


@dataclasses.dataclass(frozen=True)
class StepBody(Record):
    """One seat's signed message for one lockstep step (the payload of a StepFrame).

    `state` is the hash of the shared state the message was made against; `inputs` the SHA-256
    of every seat's message of the step before, in seat order, as its author played them (so a
    state that differs says which message it was made from: protocol.lockstep); `deck` holds
    the deck's messages (epoch rounds, keys, a dispute, the seed at the end) in their own wire
    form."""

    game: GameId
    step: StepNumber
    seat: SeatNumber
    state: Hash
    inputs: Annotated[tuple[bytes, ...], ListOf(Blob(32), 0, MAX_PLAYERS)] = ()
    actions: Annotated[tuple[Any, ...], ListOf(ActionSpec(), 0, MAX_ACTIONS_PER_STEP)] = ()
    deck: Annotated[tuple[Any, ...], ListOf(WireMap(), 0, MAX_DECK_MESSAGES_PER_STEP)] = ()
    start_commit: Annotated[bytes | None, Nullable(Blob(32))] = None
    start_coin: Annotated[bytes | None, Nullable(Blob(32))] = None
    final: Annotated[bytes | None, Nullable(Blob(32))] = None

    def encode(self) -> bytes:
        packed: bytes = msgpack.packb(self.to_wire(), use_bin_type=True)
        return packed

    @classmethod
    def decode(cls, payload: bytes) -> StepBody:
        """The body in a signed payload; MessageError says what is wrong with it."""
        return _read_body(payload)


@functools.lru_cache(maxsize=2 * MAX_PLAYERS)
def _read_body(payload: bytes) -> StepBody:
    """Each step message is read twice: by the driver as it comes (client.game) and by the
    lockstep as it plays the step. The second read is the first one's body (a frozen record):
    the last few are kept, at most 2 * MAX_PLAYERS bodies of MAX_STEP_PAYLOAD bytes at most."""
    body = StepBody.from_wire(unpack(payload))
    problem = canonical_problem(payload, body.encode())
    if problem is not None:
        raise MessageError(f"a step message is {problem}")
    return body


@dataclasses.dataclass(frozen=True)
class TableCommit(Message):
    """Before anything else on a new table: the roster exactly as the lobby gave it to the
    sender (the msgpack of its game_start), and the sender's commitment to its contribution
    (protocol.table). Sent again on every link that comes up until the game has ended."""

    TYPE: ClassVar[str] = "table_commit"
    roster: Annotated[bytes, Blob(1, LOBBY_EVENT_MAX_FRAME)]
    commitment: Hash


@dataclasses.dataclass(frozen=True)
class TableReveal(Message):
    """The sender's contribution, sent only once it holds every other seat's commitment."""

    TYPE: ClassVar[str] = "table_reveal"
    contribution: Annotated[bytes, Blob(32)]


@dataclasses.dataclass(frozen=True)
class TableConfirm(Message):
    """The game identity the sender derived from the roster and every contribution."""

    TYPE: ClassVar[str] = "table_confirm"
    identity: GameId


#: The most a roster takes in a refusal (protocol.table.roster_bytes of a `game_start`): seven
#: seats of a 24-character name and a 64-character host, every character 4 bytes of UTF-8, with
#: keys, ports and options, is 3 KiB (tests/test_peer_messages.py builds it).
ROSTER_MAX_BYTES = 4096


@dataclasses.dataclass(frozen=True)
class TableRefusal(Signed):
    """The author will not play this table, and says why (no cards have been dealt). Signed,
    with the roster as the lobby gave it to the author: a reader checks who said it by the key
    that roster gives the author's seat, finds that key in its own roster (or not: the lobby
    gave it another key), and compares the two rosters itself. `game` is the lobby's game id
    and `seat` the author's seat in its own roster; there is no step. Every seat relays a
    refusal it verified once to every link, and a refusing seat says its refusals first on
    every link it tries, before the hellos, even where the keys do not match (docs/
    peer-protocol.md, "The table, before the first card")."""

    TYPE: ClassVar[str] = "table_refusal"
    game: GameId
    seat: SeatNumber
    reason: Annotated[str, Text(1, ERROR_TEXT_MAX_CHARS)]
    roster: Annotated[bytes, Blob(1, ROSTER_MAX_BYTES)]
    step: Annotated[int, Int(0, 0)] = 0
    signature: Signature = bytes(SIGNATURE_BYTES)

    def body(self) -> bytes:
        reason = self.reason.encode()
        return len(reason).to_bytes(2, "big") + reason + self.roster


TABLE_MESSAGES = (TableCommit, TableReveal, TableConfirm, TableRefusal)
HANDSHAKE = Codec([PeerHello, TableRefusal])
PEER_LINK = Codec([StepFrame, EndVote, Ended, PeerChat, Holding, *TABLE_MESSAGES])
