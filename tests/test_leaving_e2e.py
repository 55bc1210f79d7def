"""Leaving a game by accident, and coming back, with real processes: `bean-client play` in
plain mode (its own process group, as a terminal's foreground job), its bots as the
`bean-client bot` processes it starts, and `bean-client resume`.

A Ctrl-C is SIGINT to the whole foreground process group, as a terminal sends it: it must
reach only the person's client, which asks before leaving; a second one leaves, and the bots
play on in their own sessions, so the person can resume the game. Bots whose person never
comes back vote them out after --abandon-after seconds, which ends the game and the bots."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.processes import BIN, isolated_env

ABANDON_AFTER = 20  # seconds the bots wait for the person who left
STEP_DEADLINE = 60  # bean-client's default: how long a bot lingers after the end at most
SECONDS = 120.0


class Lines:
    """A process's output, line by line, waited for with a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.seen: list[str] = []
        self.first: list[str] = []  # the first lines, shown when a wait fails
        self._partial = b""

    def until(self, pattern: str, seconds: float = SECONDS) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while True:
                for line in self.seen:
                    if re.search(pattern, line):
                        self.seen = self.seen[self.seen.index(line) + 1 :]
                        return line
                left = deadline - time.monotonic()
                said = "\n".join([*self.first, "...", *self.seen[-20:]])
                assert left > 0, f"no {pattern!r}; the first and last lines:\n{said}"
                if selector.select(left):  # read from the pipe: a buffered reader hides lines
                    data = os.read(self.process.stdout.fileno(), 65536)
                    assert data, f"the process ended before {pattern!r}"
                    *lines, self._partial = (self._partial + data).split(b"\n")
                    self.seen += [line.decode(errors="replace") for line in lines]
                    self.first = self.first or self.seen[:15]

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()


def started_here(env: dict[str, str], name: str) -> list[int]:
    """The processes running `name` with this test's own files (the bots a client started)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        mine = f"XDG_DATA_HOME={env['XDG_DATA_HOME']}".encode() in environ
        if mine and name.encode() in command:
            found.append(int(entry.name))
    return found


def wait_until_gone(pids: list[int], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, f"still running after {seconds} s: {pids}"
        time.sleep(0.2)


def start(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=env, start_new_session=True,
    )  # fmt: skip


@pytest.mark.slow
def test_ctrl_c_asks_the_bots_play_on_and_the_person_resumes(tmp_path: Path) -> None:
    """(Before: the first Ctrl-C left at once, and reached the bots too; leaving stopped
    the bots, so the game was lost; a resumed seat showed neither table nor hand.)"""
    env = isolated_env(tmp_path)
    play = start(
        [str(BIN / "bean-client"), "play", "--plain", "--bots", "3", "--no-proofs",
         "--allow-weak-proofs", "--abandon-after", str(ABANDON_AFTER)],
        env,
    )  # fmt: skip
    bots: list[int] = []
    try:
        person = Lines(play)
        person.until(r"^hand: ", 180)  # dealt
        bots = started_here(env, "client.cli")
        assert len(bots) == 3, bots
        os.killpg(play.pid, signal.SIGINT)  # Ctrl-C at the terminal: to its foreground group
        person.until(r"the others cannot go on without you; type leave again \(or press Ctrl-C\)")
        person.type("hand")  # plays on
        person.until(r"^hand: ")
        os.killpg(play.pid, signal.SIGINT)
        person.until(r"the others cannot go on without you")
        os.killpg(play.pid, signal.SIGINT)  # confirms
        said = person.until(r"Your bots play on and wait for you: bean-client resume (\S+)")
        assert play.wait(30) == 0
        assert all(Path(f"/proc/{pid}").exists() for pid in bots), "a bot was stopped"
        path = re.search(r"bean-client resume (\S+\.game)", said)
        assert path is not None, said

        resume = start([str(BIN / "bean-client"), "resume", path.group(1), "--plain"], env)
        back = Lines(resume)
        back.until(r"You are back at the table with bot\d, bot\d and bot\d\.")
        back.until(r"^table: turn \d+")
        back.until(r"^hand: ")
        assert resume.stdin is not None
        resume.stdin.close()  # input ends for good: that leaves, in words
        back.until(r"Your input has ended .* you leave the game")
        resume.wait(30)
        # Nobody comes back: the bots vote the person out, the game ends, and so do they (each
        # lingers up to a step deadline for a peer that missed the last step: the person).
        wait_until_gone(bots, ABANDON_AFTER + STEP_DEADLINE + 60)
    finally:
        for process in (play,):
            if process.poll() is None:
                process.kill()
                process.wait(10)
        for pid in started_here(env, "client.cli"):
            os.kill(pid, signal.SIGKILL)
