"""What the players check before a game, trusting the lobby for nothing: the game's identity,
the table code, the room's terms and the proof floor.

The lobby hands every client a roster (`GameStart`). Each seat then draws a fresh random
contribution, commits to it (bound to the roster as that seat received it), and reveals it
only once it holds every other seat's commitment (client/table_setup.py runs the exchange over
the sealed mesh). The game's identity is a hash of the whole roster and every contribution:
with one honest seat nobody could choose or predict it, a roster that differs anywhere gives
another identity, and a game id the lobby reuses gives another identity anyway. The genesis of
the lockstep binds it, and every signed step message names it.

The table code is a short form of the identity for people to compare aloud: a lobby that gave
the players different keys (to sit in the middle of their links) cannot make their codes
agree, since it has to commit to its own contributions before it sees theirs. Pure.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, fields

import msgpack

from protocol.identity import SignatureError, Verifier, fingerprint
from protocol.messages import (
    GAME_ID_BYTES,
    LOBBY_EVENTS,
    GameStart,
    MessageError,
    RoomOptions,
)
from protocol.peer_messages import TableRefusal

CONTRIBUTION_BYTES = 32
#: Digits in a table code: 12, read in groups of three. A lobby in the middle gets the codes of
#: two halves of the table to agree once in 10^12 tries, and each try is a game that did not
#: start; digits read aloud the same in any language and need no word list.
CODE_DIGITS = 12
_DOMAIN = b"bohnanza-p2p table v1\x00"


def roster_bytes(roster: GameStart) -> bytes:
    """The roster in one canonical encoding (fields in their declared order)."""
    packed: bytes = msgpack.packb(roster.to_wire(), use_bin_type=True)
    return packed


def roster_digest(roster: GameStart) -> bytes:
    """SHA-256 of the roster's canonical encoding: what a bot tells the client that started
    it about the roster it got."""
    return hashlib.sha256(roster_bytes(roster)).digest()


def _digest(*parts: bytes) -> bytes:
    digest = hashlib.sha256(_DOMAIN)
    for part in parts:
        digest.update(len(part).to_bytes(4, "big"))
        digest.update(part)
    return digest.digest()


def commitment(roster: GameStart, seat: int, contribution: bytes) -> bytes:
    """A seat's commitment to its contribution, for this roster and seat only."""
    return _digest(b"commit", roster_bytes(roster), bytes([seat]), contribution)


def game_identity(roster: GameStart, contributions: Sequence[bytes]) -> bytes:
    """The game's identity: the whole roster (room and lobby game id, seat order, names, keys,
    addresses, all options) and every seat's contribution, in seat order."""
    if len(contributions) != len(roster.seats):
        raise ValueError("one contribution per seat")
    return _digest(b"identity", roster_bytes(roster), *contributions)[:GAME_ID_BYTES]


def table_code(identity: bytes) -> str:
    """The identity as CODE_DIGITS digits in groups of three: '042 917 388 105'."""
    number = int.from_bytes(_digest(b"code", identity), "big") % 10**CODE_DIGITS
    digits = f"{number:0{CODE_DIGITS}d}"
    return " ".join(digits[i : i + 3] for i in range(0, CODE_DIGITS, 3))


CHECK_CODE = "Check that everyone at the table sees this same code; if not, stop: someone sits "
CHECK_CODE += "between the players (the lobby gave them different keys)."


@dataclass(frozen=True)
class AgreedTable:
    """A roster every seat checked, with every seat's revealed contribution."""

    roster: GameStart
    seat: int
    contributions: tuple[bytes, ...]

    @property
    def identity(self) -> bytes:
        return game_identity(self.roster, self.contributions)

    @property
    def code(self) -> str:
        return table_code(self.identity)


def _option_names() -> list[str]:
    return [field.name for field in fields(RoomOptions)]


def option_differences(joined: RoomOptions, given: RoomOptions) -> list[str]:
    """Each option of the roster that is not what the room was when this client joined it."""
    return [
        f"{name} is {_shown(getattr(given, name))}, not {_shown(getattr(joined, name))}"
        for name in _option_names()
        if getattr(given, name) != getattr(joined, name)
    ]


def _shown(value: object) -> str:
    """An option's value in words: on or off for a switch."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return repr(value)


@dataclass(frozen=True)
class RoomTerms:
    """The room a client joined and readied for: how many seats, and the options. The lobby
    may not change them: a roster that says otherwise is refused before any link."""

    seats: int
    options: RoomOptions


def term_differences(terms: RoomTerms, roster: GameStart) -> list[str]:
    """How the roster departs from the room this client joined, in words."""
    found = []
    if len(roster.seats) != terms.seats:
        found.append(
            f"the lobby's roster has {len(roster.seats)} seats; "
            f"the room you joined has {terms.seats}"
        )
    changed = option_differences(terms.options, roster.options)
    if changed:
        found.append("the lobby changed the terms of the room you joined: " + "; ".join(changed))
    return found


def swapped_seats(mine: GameStart, theirs: GameStart) -> list[tuple[int, int]]:
    """The pairs of seats whose whole entries (name, key, address) trade places between two
    rosters: a lobby that reorders the table for one player."""
    if len(mine.seats) != len(theirs.seats):
        return []
    return [
        (i, j)
        for i, j in itertools.combinations(range(len(mine.seats)), 2)
        if mine.seats[i] != mine.seats[j]
        and (theirs.seats[i], theirs.seats[j]) == (mine.seats[j], mine.seats[i])
    ]


def roster_differences(mine: GameStart, theirs: GameStart) -> list[str]:
    """What another seat's roster says that this seat's does not: seats swapped whole, then
    field by field."""
    found = []
    if (mine.room_id, mine.game_id) != (theirs.room_id, theirs.game_id):
        found.append("another room or lobby game id")
    if len(mine.seats) != len(theirs.seats):
        found.append(f"{len(theirs.seats)} seats, not {len(mine.seats)}")
    swapped = swapped_seats(mine, theirs)
    found += [
        f"seats {i} and {j} swapped ({mine.seats[i].name} and {mine.seats[j].name})"
        for i, j in swapped
    ]
    moved = {seat for pair in swapped for seat in pair}
    for index, (a, b) in enumerate(zip(mine.seats, theirs.seats, strict=False)):
        if index in moved:
            continue
        if a.name != b.name:
            found.append(f"seat {index + 1} is {b.name!r}, not {a.name!r}")
        if a.public_key != b.public_key:
            found.append(
                f"{a.name}'s key is {fingerprint(b.public_key)}, not {fingerprint(a.public_key)}"
            )
        if (a.host, a.port) != (b.host, b.port):
            found.append(f"{a.name} is at {b.host}:{b.port}, not {a.host}:{a.port}")
    found += [f"the option {d}" for d in option_differences(mine.options, theirs.options)]
    return found


@dataclass(frozen=True)
class HeardRefusal:
    """A table refusal read against this seat's roster. `author`: the seat of this roster
    whose key signed it (None: no key of this roster did, so the lobby gave this seat another
    key for the one who says it signed it); `words`: what the player reads; `said`: the
    reason this seat signs when it refuses for that (short: the others read the refusal
    itself, relayed)."""

    author: int | None
    words: str
    said: str


def read_refusal(mine: GameStart, refusal: TableRefusal) -> HeardRefusal | None:
    """Who refused the table, and why, in words: the refusal's own roster names the key of
    its author's seat, which must verify it; where that key sits in this seat's roster says
    who spoke, and the two rosters are compared here (a refusal says nothing a reader has to
    take on trust but its reason). None for a refusal of another lobby game, one whose roster
    cannot be read, or one its own author's key does not verify (nobody said it)."""
    if refusal.game != mine.game_id:
        return None
    try:
        theirs = LOBBY_EVENTS.decode(refusal.roster)
    except MessageError:
        return None
    if not isinstance(theirs, GameStart) or theirs.game_id != refusal.game:
        return None
    if refusal.seat >= len(theirs.seats):
        return None
    signer = theirs.seats[refusal.seat]
    try:
        refusal.verify(Verifier(signer.public_key))
    except SignatureError:
        return None
    differences = "; ".join(roster_differences(mine, theirs))
    keys = [member.public_key for member in mine.seats]
    if signer.public_key in keys:
        author = keys.index(signer.public_key)
        name = mine.seats[author].name
        words = f"{name} will not play this table: {refusal.reason}"
        if differences:
            words += f" (the lobby gave {name} another roster than yours: {differences})"
        return HeardRefusal(author, words, f"{name} refused it")
    name = signer.name
    if name in {member.name for member in mine.seats}:
        lie = f"your roster's key for {name} does not verify: the lobby gave you another key for"
    else:
        lie = f"your roster has no {name}: the lobby gave you another roster than"
    return HeardRefusal(
        None,
        f"a refusal in {name}'s name that {lie} {name} ({name}'s roster: {differences}; "
        f"it says: {refusal.reason})",
        f"a refusal in {name}'s name came signed by another key than the lobby gave for {name}",
    )


#: What the table and the toolbar say of a game dealt without proofs. With them, every shuffle
#: and relock is proved at the strength of the group (CRYPTO.md, item 10): nothing to say.
PROOFS_OFF = "proofs: off, a cheating shuffle is caught only by the audit at the end"


def below_the_floor(proofs: bool, allow_weak: bool) -> str | None:
    """Why this client refuses a game (None: it accepts it): proofs off, unless it allows that."""
    if proofs or allow_weak:
        return None
    return (
        f"the game would deal without proofs ({PROOFS_OFF}); a client started with "
        "--allow-weak-proofs accepts that"
    )
