"""Who may be named, and who voted out: the one place a verdict against a seat is made from
what that seat signed, and the bound on how long a stalled game waits for a seat.

- A verdict (`Cheat`) names a seat only on messages it signed: two versions of one step
  message (`equivocation`); a step message signed after its own signed ending
  (`played_after_ending`); a step message the rules refuse or that its author signed malformed
  (protocol.lockstep raises those); a state its own signed inputs contradict
  (`state_verdict`); and, for withholding, its own signed holding saying it has owed its
  message longer than the step deadline (`withheld`). A signature that fails is a link fault
  and names nobody.
- A state made from another version of a third seat's message (`ForkedState`) names nobody:
  it only says where to look for the two signed versions.
- What links did (up, down, silent, slow, one way) and this seat's clock never name anyone:
  they can only vote a seat out as gone (`gone_for_good`), after the step deadline plus the
  abandon time of a started step, or the abandon time of accumulated absence.

Pure: messages, keys and times in; a verdict or a set of seats out. Checked for every schedule
of links and every choice of a hostile seat by tests/test_blame_properties.py.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping, Sequence

from protocol.identity import Verifier
from protocol.peer_messages import Holding


class Cheat(Exception):
    """A seat broke the protocol. `seat` is to blame (None: the deal itself is broken and only
    the audit can name who), `step` says where, `reason` what, in a sentence; `also`: other
    seats found doing the same in the same step (several seats withholding one step)."""

    def __init__(
        self, seat: int | None, step: int, reason: str, also: tuple[int, ...] = ()
    ) -> None:
        who = "the deal" if seat is None else f"seat {seat}"
        super().__init__(f"step {step}: {who}: {reason}")
        self.seat = seat
        self.step = step
        self.reason = reason
        self.also = also

    @property
    def seats(self) -> tuple[int, ...]:
        """Every seat this names."""
        return () if self.seat is None else (self.seat, *self.also)


class ForkedState(Cheat):
    """A message made against another state than this seat's, from another version of some
    seat's message of the step before than the one this seat played (`contested`: each such
    author, with the SHA-256 of the version the message says it played). Its author may be
    honest, given the other half of an equivocation; so may the contested author, if the
    message lies about what it played. It names nobody: the driver looks for the other
    version, and the seat that signed both is named once both are held."""

    def __init__(self, seat: int, step: int, contested: Mapping[int, bytes]) -> None:
        names = ", ".join(f"seat {author}" for author in sorted(contested))
        reason = f"played another version of the message of {names} for step {step - 1}"
        super().__init__(seat, step, reason)
        self.contested = dict(contested)


class InputContradicted(Cheat):
    """A message whose `inputs` say its author played another version of its own message of
    the step before than the one this seat holds, signed by it: its two signatures contradict
    each other (an equivocation whose other half this seat has only as a digest). The driver
    sends its version round, so that a seat holding the other one sees both halves."""


def state_verdict(
    seat: int,
    step: int,
    state: bytes,
    inputs: Sequence[bytes],
    chain: bytes,
    our_inputs: Sequence[bytes],
) -> Cheat | None:
    """What a step message's signed `state` and `inputs` say against this seat's `chain` and
    the digests of the step before's messages it played: None if they agree. Every seat's
    state matched at the step before, so a state made from the same messages of that step is
    the same: one that differs with the same inputs is its author's own wrong state, and one
    whose inputs give another version of its author's own message contradicts what it signed
    (InputContradicted); either names it. One that played another version of a third seat's
    message is a fork (ForkedState): it names nobody until the other version comes."""
    state_matches = hmac.compare_digest(state, chain)
    if len(inputs) != len(our_inputs):
        return Cheat(seat, step, "sent the wrong number of inputs of the step before")
    if state_matches:
        if list(inputs) != list(our_inputs):
            return Cheat(seat, step, "signed our state with inputs that do not make it")
        return None
    if list(inputs) == list(our_inputs):
        return Cheat(
            seat,
            step,
            "made its message against another state than the step before's messages give",
        )
    if inputs[seat] != our_inputs[seat]:
        reason = (
            f"signed two different messages for step {step - 1} (equivocation: the one it "
            "sent, and the one its inputs say it played)"
        )
        return InputContradicted(seat, step, reason)
    contested = {
        author: theirs
        for author, (theirs, ours) in enumerate(zip(inputs, our_inputs, strict=True))
        if theirs != ours
    }
    return ForkedState(seat, step, contested)


def equivocation(author: int, step: int, held: object, other: object) -> Cheat | None:
    """The verdict on `author` if `held` and `other`, both its signed messages for `step`
    (signatures checked by the caller), differ: one seat signs one message a step."""
    if held == other:
        return None
    return Cheat(author, step, f"signed two different messages for step {step} (equivocation)")


def played_after_ending(author: int, ended_at: int, step: int) -> Cheat | None:
    """The verdict on `author` if it signed its message for `step` after its signed ending at
    `ended_at` (an ending promises that its author signs no step message past it)."""
    if step <= ended_at:
        return None
    reason = f"declared the game ended at step {ended_at}, then signed its message for step {step}"
    return Cheat(author, step, reason)


def withheld(
    holding: Holding, verifier: Verifier, game: bytes, step: int, deadline: float
) -> Cheat | None:
    """A verdict on `holding`'s author if, in its own signed words at `step` of `game`, it has
    owed its message at least `deadline` seconds without making it; None otherwise. An honest
    seat starts its message as soon as it owes it, so it never signs this. SignatureError if
    the holding would convict but its signature is not its author's (a link fault: the caller
    names nobody)."""
    owns = holding.have >> holding.seat & 1
    convicts = (
        holding.game == game
        and holding.step == step
        and not owns
        and holding.owed >= round(deadline * 10)
    )
    if not convicts:
        return None
    holding.verify(verifier)
    seconds = holding.owed / 10
    reason = (
        f"withheld its message for step {step}: its own signed heartbeat says it held what "
        f"it needed for {seconds:g} seconds"
    )
    return Cheat(holding.seat, step, reason)


def gone_for_good(
    *,
    now: float,
    started: float | None,
    missing: Iterable[int],
    away: Mapping[int, float],
    left: Mapping[int, float],
    deadline: float,
    abandon: float,
) -> frozenset[int]:
    """The seats this seat votes out, with no finding: those still missing from a step started
    at `started` once the deadline plus the abandon time have passed; those whose absence
    (`away`: accumulated seconds) reaches the abandon time; those that left for good (`left`:
    when their ending that this seat does not follow came) that long ago. `abandon` <= 0:
    nobody is ever voted out."""
    if abandon <= 0:
        return frozenset()
    overdue = started is not None and now >= started + deadline + abandon
    seats = set(missing) if overdue else set()
    seats |= {seat for seat, seconds in away.items() if seconds >= abandon}
    seats |= {seat for seat, since in left.items() if now - since >= abandon}
    return frozenset(seats)
