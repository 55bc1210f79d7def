"""Bots as processes of their own: `bean-client bot`, started by this client, each with its own
key and secrets, which this process never sees (it reads only what the bot prints).

`bean-client play` seats its bots at its own lobby this way; the lobby prompt's `bot` command
adds one to the person's room (`RoomBot`: `bean-client bot --room N --owned`, which says once
seated who it is, and leaves if this client goes away before the game starts). Both run
`--apart`, in a session of their own: a Ctrl-C at the person's terminal does not reach them,
and once their game has started they play it to its end, with or without their person.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.error import ProcessDone
from twisted.internet.process import reapAllProcesses
from twisted.internet.protocol import ProcessProtocol
from twisted.internet.task import LoopingCall
from twisted.python.failure import Failure

STOP_GRACE = 10.0  # seconds a stopped bot may take to end before it is killed
REAP_SECONDS = 0.5


def bot_profile(owner: str, number: int) -> str:
    """The key profile of a person's `number`th bot (`owner`: the person's profile, or "play"
    for `bean-client play`); resume knows a bot's seat by it (`is_bot_profile`)."""
    return f"{owner}-bot{number}"


def is_bot_profile(profile: str) -> bool:
    return re.fullmatch(r".+-bot\d+", profile) is not None


class BotProcess(ProcessProtocol):
    """One `bean-client bot` process: its output (and each line, as it comes, to `on_line`),
    and a way to stop it."""

    def __init__(self, on_line: Callable[[str], None] = lambda line: None) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.on_line = on_line
        self.ended: Deferred[tuple[bytes, bytes, int]] = Deferred()
        self._partial = b""

    def outReceived(self, data: bytes) -> None:
        self.out += data
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            self.on_line(line.decode(errors="replace"))

    def errReceived(self, data: bytes) -> None:
        self.err += data

    def processEnded(self, reason: Failure) -> None:
        code = 0 if reason.check(ProcessDone) else (reason.value.exitCode or 1)
        self.ended.callback((bytes(self.out), bytes(self.err), code))

    def stop(self, reactor: Any, grace: float = STOP_GRACE) -> None:
        """Ask the bot to end (SIGTERM); one still running after `grace` seconds is killed."""
        if self.ended.called:
            return
        self.transport.signalProcess("TERM")

        def kill() -> None:
            if not self.ended.called:
                self.transport.signalProcess("KILL")

        timer = reactor.callLater(grace, kill)

        def ended(result: object) -> object:
            if timer.active():
                timer.cancel()
            return result

        self.ended.addBoth(ended)

    def last_error(self) -> str:
        """Why the bot stopped, in its own words: the last line of its stderr, else of its
        output (a table it refused is said there)."""
        for said in (self.err, self.out):
            lines = said.decode(errors="replace").strip().splitlines()
            if lines:
                return lines[-1]
        return ""


def spawn_bot(reactor: Any, arguments: list[str], process: BotProcess | None = None) -> BotProcess:
    """Start `python ARGUMENTS` (a bean-client bot) with this process's environment."""
    process = process or BotProcess()
    reactor.spawnProcess(
        process, sys.executable, [sys.executable, *arguments], env=dict(os.environ)
    )
    _reap_until_ended(reactor, process)
    return process


def _reap_until_ended(reactor: Any, process: BotProcess) -> None:
    """Look for the bot's exit every REAP_SECONDS. Twisted hears SIGCHLD through the signal
    wakeup fd, which asyncio takes over while prompt_toolkit's prompt runs and clears when
    it ends; from then on a bot's exit would go unnoticed and `ended` never fire."""
    reaper = LoopingCall(reapAllProcesses)
    reaper.clock = reactor
    reaper.start(REAP_SECONDS, now=False)

    def ended(result: object) -> object:
        if reaper.running:
            reaper.stop()
        return result

    process.ended.addBoth(ended)


@dataclass
class RoomBot:
    """A bot this client added to its room: its strategy, and, once it is seated, the name and
    the public key it says it has (the key is what `who` knows it by)."""

    strategy: str
    room: int
    profile: str  # the name of its key file
    process: BotProcess = field(default_factory=BotProcess)
    name: str | None = None
    key: bytes | None = None
    seated: Deferred[RoomBot] = field(default_factory=Deferred)
    table: tuple[bytes, bytes] | None = None  # the roster digest and identity it derived
    reported: Deferred[None] = field(default_factory=Deferred)

    def heard(self, line: str) -> None:
        """The bot's `--owned` lines: {"seated": ROOM, "name": ..., "key": HEX} once it sits
        in the room, {"table": ROOM, "roster": HEX, "identity": HEX} once it derived its
        table (protocol.table.roster_digest, game_identity). Anything else is its own."""
        try:
            said = json.loads(line)
            if not isinstance(said, dict):
                return
            if said.get("seated") == self.room and not self.seated.called:
                self.name, self.key = str(said["name"]), bytes.fromhex(said["key"])
                self.seated.callback(self)
            elif said.get("table") == self.room and not self.reported.called:
                self.table = bytes.fromhex(said["roster"]), bytes.fromhex(said["identity"])
                self.reported.callback(None)
        except (ValueError, KeyError, TypeError):
            return


def start_room_bot(
    reactor: Any,
    lobby: str,
    room: int,
    strategy: str,
    profile: str,
    listen: str,
    options: list[str],
) -> RoomBot:
    """`bean-client bot LOBBY --room ROOM --owned` with its own key (`profile`), listening on
    `listen`; `options`: more of its command line (deadlines, the proof floor). `seated`
    fires once it sits in the room, or fails with its own words if it ends before."""
    bot = RoomBot(strategy, room, profile)
    bot.process.on_line = bot.heard
    command = [
        "-m", "client.cli", "bot", lobby, "--room", str(room), "--owned", "--apart",
        "--strategy", strategy, "--profile", profile, "--listen", listen, *options,
    ]  # fmt: skip

    def ended(result: tuple[bytes, bytes, int]) -> tuple[bytes, bytes, int]:
        if not bot.seated.called:
            why = bot.process.last_error() or f"it ended with status {result[2]}"
            bot.seated.errback(BotFailed(why.removeprefix("bean-client: ")))
        return result

    bot.process.ended.addCallback(ended)
    spawn_bot(reactor, command, bot.process)
    return bot


class BotFailed(Exception):
    """A bot could not take its seat; the sentence says why (the bot's own words)."""
