"""Who may be named, and who voted out: the one place a verdict against a seat is made from
what that seat signed, and the bound on how long a stalled game waits for a seat.

- A verdict names a seat only on messages it signed: two versions of one step message; a step
  message the rules refuse or that its author signed malformed (protocol.lockstep raises those
  as `Cheat`); and, for withholding, its own signed holding saying it has owed its message
  longer than the step deadline (`withheld`). A signature that fails is a link fault and names
  nobody.
- What links did (up, down, silent, slow, one way) and this seat's clock never name anyone:
  they can only vote a seat out as gone (`gone_for_good`), after the step deadline plus the
  abandon time of a started step, or the abandon time of accumulated absence.

Pure: messages, keys and times in; a verdict or a set of seats out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from protocol.identity import Verifier
from protocol.lockstep import Cheat
from protocol.peer_messages import Holding


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
