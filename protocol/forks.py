"""Fork resolution: what a seat does when a message of the step it plays was made from another
version of some seat's message of the step before than the one it played.

Such a state names nobody (protocol.blame.ForkedState): the contested author may have signed
two versions and given the other one to the seat whose state differs, or that seat may lie
about what it played. Only the two signed versions side by side name anyone
(`protocol.blame.equivocation`), and the seat that holds the other version has no reason to
send it unless it learns that ours differs. So, until the game ends, the step waits, and this
seat offers its versions of the contested messages to every other seat: at once, on every link
that comes up, and again every `push_every` seconds (the driver sends each through that seat's
catch-up budget, protocol/catch_up.py: once on a link, again on a new one only after a while,
so a peer that cycles its links gains nothing). A seat that played the other version then holds
both, names their author and sends both round. If they never come, the seat whose message is
stuck holds the step up as a missing one does, and is voted out as gone
(`holding_up`, protocol.blame.gone_for_good).

Pure: times come in from the caller's clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.blame import ForkedState

#: Seconds between offers of our versions of a fork's contested messages to every seat.
FORK_PUSH_EVERY = 5.0


@dataclass
class ForkResolution:
    """The fork (if any) that keeps this seat from playing its step, and when its contested
    messages were last offered round."""

    push_every: float = FORK_PUSH_EVERY
    fork: ForkedState | None = None
    _offered: float = float("-inf")

    @property
    def open(self) -> bool:
        """Whether a fork holds the step up (nothing is played until the game ends)."""
        return self.fork is not None

    @property
    def holding_up(self) -> frozenset[int]:
        """The seat whose message cannot be played: unsettled, as a missing one is."""
        return frozenset() if self.fork is None else frozenset(self.fork.seats)

    def suspect(self, fork: ForkedState) -> None:
        """The lockstep found `fork`; the first one found is the one looked into (a step is
        played only once it is settled, so later ones wait for it)."""
        if self.fork is None:
            self.fork = fork
            self._offered = float("-inf")

    def offer_due(self, now: float) -> bool:
        """Whether the contested messages are to be offered to every seat now (at once after
        `suspect`, then every `push_every` seconds); counts the offer as made."""
        if self.fork is None or now - self._offered < self.push_every:
            return False
        self._offered = now
        return True

    def contested_for(self, seat: int) -> tuple[tuple[int, int], ...]:
        """(step, author) of each contested message to offer `seat`: all but its own (it
        holds the versions it signed)."""
        if self.fork is None:
            return ()
        before = self.fork.step - 1
        return tuple((before, author) for author in sorted(self.fork.contested) if author != seat)
