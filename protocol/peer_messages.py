"""Messages between the players' clients (protocol version 1): the link's hellos, signed step
messages and their relays, chat and heartbeats. docs/peer-protocol.md describes the exchange.

Every link is sealed (TLS 1.3, protocol.sealed): its certificates prove the keys, so the hellos
only say which game and seat each side is. Until both hellos are through a link accepts only
small frames, so nobody the roster does not name can make a client buffer much.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, ClassVar

import msgpack

from protocol.cards import MAX_PLAYERS
from protocol.identity import SIGNATURE_BYTES
from protocol.messages import (
    ERROR_TEXT_MAX_CHARS,
    GAME_ID_BYTES,
    LOBBY_EVENT_MAX_FRAME,
    Blob,
    Codec,
    FieldProblem,
    Int,
    ListOf,
    Message,
    MessageError,
    Nullable,
    Record,
    Spec,
    Text,
    Version,
)
from protocol.wire_actions import ActionSpec

HANDSHAKE_MAX_FRAME = 1024
PEER_MAX_FRAME = 8 * 1024 * 1024  # the largest step message is a shuffle with its proof
MAX_STEP = 10**7
STEP_DOMAIN = "bohnanza-p2p/step/v1"

GameId = Annotated[bytes, Blob(GAME_ID_BYTES)]
SeatNumber = Annotated[int, Int(0, MAX_PLAYERS - 1)]
StepNumber = Annotated[int, Int(0, MAX_STEP)]


@dataclasses.dataclass(frozen=True)
class PeerHello(Message):
    """First frame on a link after TLS, both ways: which game (the lobby's room-level id, for
    routing the link; not the game's identity) and which seat. The dialler speaks first."""

    TYPE: ClassVar[str] = "peer_hello"
    version: Annotated[int, Version()]
    game: GameId
    seat: SeatNumber


@dataclasses.dataclass(frozen=True)
class StepFrame(Message):
    """A signed step message (domain STEP_DOMAIN), from its author or relayed by another peer;
    the author is the seat named inside the payload."""

    TYPE: ClassVar[str] = "step"
    payload: Annotated[bytes, Blob(1, PEER_MAX_FRAME)]
    signature: Annotated[bytes, Blob(SIGNATURE_BYTES)]


@dataclasses.dataclass(frozen=True)
class PeerChat(Message):
    TYPE: ClassVar[str] = "chat"
    text: Annotated[str, Text(1, 500)]


@dataclasses.dataclass(frozen=True)
class Heartbeat(Message):
    """Says a link is alive and where its sender is: the step it plays and, as a bit mask by
    seat, whose messages for that step it holds. The other side answers with the signed step
    messages the sender lacks (a peer that rejoined, fell behind, or lost a frame)."""

    TYPE: ClassVar[str] = "heartbeat"
    step: StepNumber
    have: Annotated[int, Int(0, 2**MAX_PLAYERS - 1)]


class WireMap(Spec):
    """A map whose contents another module checks (the deck's messages, with their author)."""

    def parse(self, value: object, path: str) -> dict[str, Any]:
        if type(value) is not dict:
            raise FieldProblem(path, "must be a map")
        return value


Hash = Annotated[bytes, Blob(32)]
MAX_ACTIONS_PER_STEP = 32
MAX_DECK_MESSAGES_PER_STEP = 16


@dataclasses.dataclass(frozen=True)
class StepBody(Record):
    """One seat's signed message for one lockstep step (the payload of a StepFrame).

    `state` is the hash of the shared state the message was made against; `deck` holds the
    deck's messages (epoch rounds, keys, the seed at the end) in their own wire form."""

    game: GameId
    step: StepNumber
    seat: SeatNumber
    state: Hash
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
        try:
            data = msgpack.unpackb(payload, raw=False, strict_map_key=True)
        except Exception as error:  # msgpack raises several types for bad input; all mean this
            reason = f"a step message is not valid msgpack ({type(error).__name__})"
            raise MessageError(reason) from None
        return cls.from_wire(data)


@dataclasses.dataclass(frozen=True)
class EndVote(Message):
    """A vote to end the game without the seats in `gone` (a bit mask), which have been away
    too long: when every seat still here votes for the same step and the same seats, the game
    ends there, and each reveals its seed (EndSeed) so that what was played can be audited."""

    TYPE: ClassVar[str] = "end_vote"
    step: StepNumber
    gone: Annotated[int, Int(1, 2**MAX_PLAYERS - 1)]


@dataclasses.dataclass(frozen=True)
class EndSeed(Message):
    """After a unanimous end vote (never before: the seed opens this seat's cards)."""

    TYPE: ClassVar[str] = "end_seed"
    seed: Annotated[bytes, Blob(32)]


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


@dataclasses.dataclass(frozen=True)
class TableRefusal(Message):
    """The sender will not play this table, and says why (no cards have been dealt)."""

    TYPE: ClassVar[str] = "table_refusal"
    reason: Annotated[str, Text(1, ERROR_TEXT_MAX_CHARS)]


TABLE_MESSAGES = (TableCommit, TableReveal, TableConfirm, TableRefusal)
HANDSHAKE = Codec([PeerHello])
PEER_LINK = Codec([StepFrame, PeerChat, Heartbeat, EndVote, EndSeed, *TABLE_MESSAGES])
