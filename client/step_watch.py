"""Who holds up the step being played, and what the others may do about it: the withholding
rule of docs/peer-protocol.md ("Deadlines"), apart from any network so that it can be checked
for every pattern of links (tests/test_step_watch.py).

A step starts here with the first message of it this seat sees or makes; from then on every
seat owes its message, and the time it owes it counts whether its links are up or not, across
any number of reconnects. A seat is *present* while its link is up, it has been heard from in
the last few seconds, and it says it plays this step (so it holds what it needs to answer):

- a seat present for the whole deadline, or for a grace period after it came back once the
  deadline had passed, and still silent, is withholding its message: it is named;
- a seat whose message is still missing when the deadline plus the abandon time have passed,
  however its links came and went, is voted out by the others (protocol/ending.py).

So a seat that drops its links before each deadline and comes back after it gains nothing:
it is named, or at the latest voted out, within deadline + abandon time of the step's start.
An honest seat is never named: present, it answers at once (it holds the step's messages as
soon as its links are up; the heartbeats bring what it lacks).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Judgement:
    """What the step's deadline says now: seats to name for withholding, seats to vote out."""

    named: frozenset[int] = frozenset()
    gone: frozenset[int] = frozenset()


@dataclass
class StepWatch:
    players: int
    me: int
    deadline: float
    grace: float  # at most `deadline`: the least time a seat back after the deadline is given
    abandon_after: float  # <= 0: never vote a seat out
    step: int = -1
    started: float | None = None
    arrived: set[int] = field(default_factory=set)
    _present_since: dict[int, float] = field(default_factory=dict)

    def begin(self, step: int, now: float) -> None:
        """This seat saw or made the first message of `step` (once per step; later calls for
        the same step change nothing)."""
        if step != self.step:
            self.step, self.started, self.arrived = step, now, set()
        elif self.started is None:
            self.started = now

    def waiting(self, step: int) -> None:
        """`step` is the one being played, and nothing of it has been seen yet."""
        if step != self.step:
            self.step, self.started, self.arrived = step, None, set()

    def arrive(self, seat: int) -> None:
        self.arrived.add(seat)

    def presence(self, present: set[int], now: float) -> None:
        """Which seats are present now (see the module docstring); called on every tick."""
        for seat in range(self.players):
            if seat not in present:
                self._present_since.pop(seat, None)
            else:
                self._present_since.setdefault(seat, now)

    @property
    def missing(self) -> frozenset[int]:
        if self.started is None:
            return frozenset()
        return frozenset(s for s in range(self.players) if s != self.me and s not in self.arrived)

    def judge(self, now: float) -> Judgement:
        if self.started is None or now < self.started + self.deadline:
            return Judgement()
        grace = min(self.grace, self.deadline)
        named = frozenset(
            seat
            for seat in self.missing
            if seat in self._present_since and now - self._present_since[seat] >= grace
        )
        limit = self.started + self.deadline + self.abandon_after
        too_long = self.abandon_after > 0 and now >= limit
        return Judgement(named, (self.missing - named) if too_long else frozenset())
