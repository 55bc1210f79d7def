"""What this seat may send one other seat to help it catch up: bounded per seat and per time
window, however often that seat's link comes back.

A peer asks for the step messages it lacks (its heartbeat says where it is and what it holds)
and is answered from what this seat holds; a message new here is passed on to a peer that said
it lacks it; a new link is told what the peer may have missed. That is traffic a peer can make
this seat send at will, and a link is no unit to bound it by: a peer that drops its link and
comes back every half second, asking each time about every step of the game, was sent the
whole game again on each new link (issue 26: 6.6 MB in 40 s). So the bound belongs to the seat:

- at most `budget` bytes in any `window` seconds (a sliding window: however the window is
  placed); past it, what was asked waits until it fits, so an honest peer's catch-up slows
  down, never fails (the budget holds at least two of the largest frames a link carries);
- a message sent to the seat is not sent to it again on the same link (the link delivers
  what it was given, or breaks), nor on a new one within `resend_after` seconds;
- what must go whatever the budget (how the game ended: a peer can learn it from no one else;
  a few hundred bytes a link) is counted, and leaves that much less for the rest.

Pure: times come in from the caller's clock; a clock set back counts as no time passing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field

from protocol.peer_messages import PEER_MAX_FRAME

#: Bytes of catch-up one seat may be sent per window: two of the largest frames a link may
#: carry, more than five times the two largest deck rounds of a 7-player game (the last two
#: relock rounds, each with a shuffle argument: 56.6 and 38.0 kB, measured), so a seat back from
#: a cut catches up a deal without waiting on the budget.
CATCHUP_BYTES = 2 * PEER_MAX_FRAME
CATCHUP_WINDOW = 10.0  # seconds
RESEND_AFTER = 5.0  # seconds before a message sent to a seat goes to it again


@dataclass
class CatchUp:
    """One peer seat's catch-up: the bytes sent it in the window, and what was sent when."""

    budget: int = CATCHUP_BYTES
    window: float = CATCHUP_WINDOW
    resend_after: float = RESEND_AFTER
    in_window: int = 0  # bytes counted in the window ending at the last time seen
    _spent: deque[tuple[float, int]] = field(default_factory=deque)  # (when, bytes), oldest first
    _sent: dict[Hashable, float] = field(default_factory=dict)  # what: when, oldest first
    _on_link: set[Hashable] = field(default_factory=set)  # sent on the seat's current link
    _now: float = float("-inf")

    def __post_init__(self) -> None:
        if not 0 < self.resend_after <= self.window or self.budget < PEER_MAX_FRAME:
            raise ValueError("a budget must hold the largest frame, and resends fit a window")

    def new_link(self) -> None:
        """The seat is on a new link: what the old one carried may have been lost with it."""
        self._on_link = set()

    def sent_already(self, what: Hashable, now: float) -> bool:
        """Whether `what` went to the seat on its current link, or less than `resend_after`
        seconds ago on any."""
        self._at(now)
        return what in self._on_link or what in self._sent

    def spend(self, size: int, now: float, what: Hashable = None) -> bool:
        """Whether `size` more bytes fit the window ending now; if they do, they are counted
        (and `what`, if given, is remembered as sent now)."""
        if not 0 < size <= self.budget:
            raise ValueError(f"{size} bytes cannot be sent within a budget of {self.budget}")
        self._at(now)
        if self.in_window + size > self.budget:
            return False
        self._spent.append((now, size))
        self.in_window += size
        if what is not None:
            self._sent.pop(what, None)
            self._sent[what] = now
            self._on_link.add(what)
        return True

    def charge(self, size: int, now: float) -> None:
        """Count bytes that went whatever the budget (how the game ended, which a peer can
        learn from no one else): they leave that much less for the rest of the window."""
        self._at(now)
        self._spent.append((now, size))
        self.in_window += size

    def fits_at(self, size: int, now: float) -> float:
        """The earliest time at which `size` bytes fit the window (`now` if they fit now)."""
        self._at(now)
        over = self.in_window + size - self.budget
        for when, spent in self._spent:
            if over <= 0:
                break
            over -= spent
            now = when + self.window
        return now

    def _at(self, now: float) -> None:
        """Move to `now`: forget what the window and the resend time no longer hold. A time
        before the last one seen (a clock set back) shifts what is held with it."""
        if now < self._now:
            back = self._now - now
            self._spent = deque((when - back, size) for when, size in self._spent)
            self._sent = {what: when - back for what, when in self._sent.items()}
        self._now = now
        while self._spent and self._spent[0][0] + self.window <= now:
            self.in_window -= self._spent.popleft()[1]
        while self._sent:
            oldest = next(iter(self._sent))
            if self._sent[oldest] + self.resend_after > now:
                break
            del self._sent[oldest]
