"""Fault injection for tests: frames delayed, duplicated, reordered and dropped on their way
out of a seat's mesh, on a repeatable schedule (a seeded protocol.kdf.Stream).

TCP itself never loses or reorders bytes, so this is how the tests show that the game does
not depend on frames arriving once, in order, or at all: the lockstep ignores duplicates,
keeps messages for later steps until their turn, and heartbeats bring back what was lost.
Only authenticated links are affected (the handshake is not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.kdf import Stream

PER_MILLE = 1000


@dataclass
class FrameFaults:
    """What happens to each outgoing frame: chances are per mille; delays up to `delay` s."""

    rng: Stream
    delay: float = 0.03
    duplicate: int = 50
    reorder: int = 50
    drop: int = 20
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("sent", "dropped", "duplicated", "reordered", "delayed"), 0))  # fmt: skip
    _held: list[tuple[Callable[[bytes], None], bytes]] = field(default_factory=list)
    _timers: list[Any] = field(default_factory=list)

    def send(self, reactor: Any, write: Callable[[bytes], None], framed: bytes) -> None:
        """Deliver `framed` through `write`, or not, later, twice, or after the next one."""
        self.counts["sent"] += 1
        if self.rng.chance(self.drop, PER_MILLE):
            self.counts["dropped"] += 1
            return
        if self.rng.chance(self.reorder, PER_MILLE) and not self._held:
            self.counts["reordered"] += 1
            self._held.append((write, framed))  # goes out after the next frame
            return
        copies = 2 if self.rng.chance(self.duplicate, PER_MILLE) else 1
        self.counts["duplicated"] += copies - 1
        for _ in range(copies):
            wait = self.delay * self.rng.randbelow(PER_MILLE) / PER_MILLE
            self.counts["delayed"] += 1
            self._timers.append(reactor.callLater(wait, write, framed))
        held, self._held = self._held, []
        for late_write, late in held:
            self._timers.append(reactor.callLater(self.delay, late_write, late))

    def cancel(self) -> None:
        """Forget what is still on its way (the mesh is closing)."""
        for timer in self._timers:
            if timer.active():
                timer.cancel()
        self._timers.clear()
        self._held.clear()
