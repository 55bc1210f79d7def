"""Fixtures for every test: a test must leave the reactor as it found it, and no client
process it started may outlive it; the environment and the reactor's hearing of child
processes are put back after each. Also `keyboard`, prompt_toolkit's pipe for a REPL's keys;
and Hypothesis without its per-example wall-clock deadline (a property is a law, not a
timing: a loaded machine that stalls one example must not fail it; scripts/bench measures
speed).

A test that leaves a timer, a connection, a listening port or a process pipe behind fails, and
what it left is cleaned up so that the next test starts clean. Connections that are closing when
the test ends get a short grace period to finish (their last steps run on later reactor turns).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from hypothesis import settings
from prompt_toolkit.input import PipeInput, create_pipe_input
from twisted.internet import defer, task

from tests.processes import kill_leftovers

GRACE_SECONDS = 2.0

settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


@pytest.fixture(autouse=True)
def environment_kept() -> Iterator[None]:
    """Each test finds the environment as the run began, whatever an earlier one set. Plain
    mode sets PROMPT_TOOLKIT_NO_CPR for its whole process (it never asks a terminal where
    the cursor is); a test that chose plain mode in this process left it set, the tmux tests'
    bean-client inherited it, and prompt_toolkit, never told how many rows lie below the
    prompt, drew no toolbar: a person who started the game waited for it for 180 s."""
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


@pytest.fixture(autouse=True)
def child_exits_heard() -> Iterator[None]:
    """After each test, Twisted hears a child process end again. It hears that through the
    signal wake-up fd, which a prompt_toolkit prompt run in this process hands to asyncio
    (for its SIGWINCH handler) and clears when the prompt ends (client.bots.process reaps
    its bots itself for that reason): after test_play_again.py, the LAN tests' processes
    ended unheard and test_relay.py timed out waiting for them. The reactor's own signal
    handling (not public API, hence the care) is installed again, which also reaps any
    process that ended meanwhile."""
    from twisted.internet import reactor

    yield
    signals = getattr(reactor, "_signals", None)
    if getattr(signals, "_installed", False):
        signals.install()


@pytest.fixture
def keyboard() -> Iterator[PipeInput]:
    """Keys for a REPL under test: what is sent to the pipe is typed at its prompt."""
    with create_pipe_input() as pipe:
        yield pipe


def _selectables(reactor: Any) -> set[Any]:
    """Sockets and pipes the reactor watches, less its own wakers (made when it starts)."""
    watched = set(reactor.getReaders()) | set(reactor.getWriters())
    return {s for s in watched if not type(s).__name__.endswith("Waker")}


def _leftovers(reactor: Any, sockets_before: set[Any], calls_before: set[Any]) -> list[Any]:
    calls = [call for call in reactor.getDelayedCalls() if call not in calls_before]
    return calls + [s for s in _selectables(reactor) if s not in sockets_before]


@defer.inlineCallbacks
def _settle(reactor: Any, sockets_before: set[Any], calls_before: set[Any]) -> Any:
    """Let closing connections finish; stop as soon as nothing is left over."""
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        sockets = [s for s in _selectables(reactor) if s not in sockets_before]
        calls = [c for c in reactor.getDelayedCalls() if c not in calls_before]
        if not sockets and not calls:
            return
        yield task.deferLater(reactor, 0.01, lambda: None)


def _clean(leftover: Any) -> None:
    if hasattr(leftover, "cancel") and hasattr(leftover, "active"):
        if leftover.active():
            leftover.cancel()
    elif hasattr(leftover, "stopListening"):
        leftover.stopListening()
    elif hasattr(leftover, "abortConnection"):
        leftover.abortConnection()
    elif hasattr(leftover, "loseConnection"):
        leftover.loseConnection()


@pytest.fixture(autouse=True)
def reactor_left_clean() -> Any:
    from twisted.internet import reactor

    sockets_before = _selectables(reactor)
    calls_before = set(reactor.getDelayedCalls())
    yield
    pytest_twisted.blockon(_settle(reactor, sockets_before, calls_before))
    leftovers = _leftovers(reactor, sockets_before, calls_before)
    if leftovers:
        for leftover in leftovers:
            _clean(leftover)
        pytest_twisted.blockon(_settle(reactor, sockets_before, calls_before))
        described = "\n  ".join(repr(leftover) for leftover in leftovers)
        pytest.fail(f"the test left these behind in the reactor:\n  {described}")


@pytest.fixture(autouse=True)
def processes_ended() -> Any:
    yield
    kill_leftovers()


@pytest.fixture(autouse=True)
def own_config_dir(tmp_path: Any, monkeypatch: Any) -> None:
    """Keys, and the keys a client remembers (lobbies, players), go to the test's own
    directory, never to the user's: a lobby key remembered by one test must not meet
    another test's lobby on the same port."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
