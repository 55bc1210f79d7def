"""Waiting in tests without sleeps: fire when a condition holds, always with a timeout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self

from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed

TIMEOUT = 10.0


def within(deferred: Deferred[Any], seconds: float = TIMEOUT) -> Deferred[Any]:
    """Every wait in a test has a timeout."""
    return deferred.addTimeout(seconds, reactor)


class Watched:
    """Something tests wait on: `when(condition)` fires once the condition holds; the object
    calls `changed()` whenever what the conditions read may have changed."""

    def __init__(self) -> None:
        self._waiters: list[tuple[Callable[[Any], bool], Deferred[Any]]] = []

    def when(self, condition: Callable[[Self], bool], seconds: float = TIMEOUT) -> Deferred[Self]:
        if condition(self):
            return succeed(self)
        waiter: Deferred[Self] = Deferred(lambda d: self._forget(d))
        self._waiters.append((condition, waiter))
        return within(waiter, seconds)

    def changed(self) -> None:
        for condition, waiter in list(self._waiters):
            if condition(self):
                self._forget(waiter)
                waiter.callback(self)

    def _forget(self, waiter: Deferred[Any]) -> None:
        self._waiters = [(c, w) for c, w in self._waiters if w is not waiter]
