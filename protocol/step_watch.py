"""The clocks a stalled game is judged by, apart from any network, so that they can be checked
for every pattern of links (tests/test_step_watch.py). None of them names anybody: a verdict
rests only on what a seat signed (protocol.blame); these say when a seat holding the game up
may be voted out as gone, and how long this seat itself has owed its message.

- `StepWatch`: a step starts here with the first message of it this seat sees or makes; from
  then on every seat owes its message, and the time counts whether its links are up or not,
  across any number of reconnects.
- `AwayClock`: how long a seat has been away. A link that comes back does not stop it; only a
  link that then stays up `settle` seconds, or a step played (which held that seat's message),
  does. So a seat whose links come and go adds up its absence as a steady one does.
- `Obligation`: how long this seat has owed its own message without making it, for its signed
  holdings (protocol.peer_messages.Holding). An honest client starts making its message in the
  same moment it comes to owe it, so this stays near zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The most one reading of an obligation adds: a machine that was asleep longer does not sign
#: that it owed its message all that time.
OBLIGATION_STEP = 2.0


@dataclass
class StepWatch:
    """Which seats the step being played still lacks, since when."""

    players: int
    me: int
    step: int = -1
    started: float | None = None
    arrived: set[int] = field(default_factory=set)

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

    @property
    def missing(self) -> frozenset[int]:
        """The other seats whose message for a started step has not come."""
        if self.started is None:
            return frozenset()
        return frozenset(s for s in range(self.players) if s != self.me and s not in self.arrived)


@dataclass
class AwayClock:
    """Accumulated absence per seat (see the module docstring)."""

    settle: float  # seconds a link must stay up before an absence is over
    _since: dict[int, float] = field(default_factory=dict)  # away since, per seat
    _up_since: dict[int, float] = field(default_factory=dict)  # link up since, per seat

    def link_down(self, seat: int, now: float) -> None:
        self._up_since.pop(seat, None)
        self._since.setdefault(seat, now)

    def link_up(self, seat: int, now: float) -> None:
        self._up_since[seat] = now

    def progress(self, now: float) -> None:
        """A step was played: every seat's message of it was here, so nobody was away; a
        seat whose link is still down is away again from now."""
        for seat in list(self._since):
            if seat in self._up_since:
                del self._since[seat]
            else:
                self._since[seat] = now

    def reading(self, seat: int, now: float) -> float:
        """Seconds `seat` has been away (0: it is not)."""
        since = self._since.get(seat)
        if since is None:
            return 0.0
        up = self._up_since.get(seat)
        if up is not None and now - up >= self.settle:
            del self._since[seat]
            return 0.0
        return now - since


@dataclass
class Obligation:
    """How long this seat has owed its message for `step` while not making it."""

    step: int = -1
    owed: float = 0.0
    _idle_since: float | None = None  # owing and not composing since, at the last reading

    def reading(self, now: float, step: int, owes: bool, composing: bool) -> float:
        """Seconds owed so far at `step`, given what this seat does now. Each reading adds
        the time since the last one if this seat owed and was not composing then, at most
        OBLIGATION_STEP."""
        if step != self.step:
            self.step, self.owed, self._idle_since = step, 0.0, None
        if self._idle_since is not None:
            self.owed += min(max(now - self._idle_since, 0.0), OBLIGATION_STEP)
        self._idle_since = now if owes and not composing else None
        return self.owed
