"""Issue 26, problem 9, end to end: a flood of links at one client's peer port during a game
(tests/link_flood.py: 3,000 TLS links with a fresh key each and a hello for a game nobody
plays, then plain connections dripping a handshake one byte every 2 s) costs that client a
bounded number of open files and bounded memory, and its game goes on to an ordinary end."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from client.gamefile import GameFile
from tests.processes import game_files, isolated_env, results, running_lobby, start_bot, wait_for

PLAYERS = 3
DESKTOP_FILE_LIMIT = 1024  # what many desktops let a process open
FILE_BOUND = 200
MEMORY_BOUND = 200 * 1024 * 1024
SAMPLE_EVERY = 0.05  # seconds between looks at the victim's files and memory
# The stopped seat holds up a step for as long as the floods run (up to 2 x 120 s): nobody
# may vote it out for that.
PATIENT = ("--step-deadline", "300")


@dataclass
class Usage:
    """The most a process held while it was watched."""

    files: int = 0
    memory: int = 0  # VmHWM: its peak resident memory, in bytes

    def look(self, pid: int) -> None:
        try:
            self.files = max(self.files, len(os.listdir(f"/proc/{pid}/fd")))
            status = Path(f"/proc/{pid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return  # it has ended
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                self.memory = max(self.memory, int(line.split()[1]) * 1024)


def desktop_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESKTOP_FILE_LIMIT, DESKTOP_FILE_LIMIT))


@contextmanager
def flood(*arguments: str) -> Iterator[subprocess.Popen[bytes]]:
    """tests/link_flood.py at 127.0.0.1, started now to make its links ready: it floods the
    port `run` gives it. Killed at the end if it still runs."""
    command = [sys.executable, "-m", "tests.link_flood", "127.0.0.1", "-", *arguments]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def run(process: subprocess.Popen[bytes], port: int, victim: int, usage: Usage) -> dict[str, Any]:
    """Let a flood go at the port, watching the victim until it ends; its report."""
    deadline = time.monotonic() + 120
    assert process.stdin is not None
    process.stdin.write(f"{port}\n".encode())
    process.stdin.close()
    while process.poll() is None:
        assert time.monotonic() < deadline, "the flood did not end within 120 s"
        usage.look(victim)
        try:
            process.wait(SAMPLE_EVERY)  # the sampling interval; returns once it ends
        except subprocess.TimeoutExpired:
            continue
    assert process.stdout is not None
    out = process.stdout.read()
    assert process.returncode == 0, out
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return report


@pytest.mark.slow
def test_a_flood_of_3000_links_costs_bounded_files_and_memory_and_the_game_goes_on(tmp_path):
    """The victim may open 1,024 files, as on many desktops. While its game is on, 3,000
    sealed links come at 1,000 a second, then 1,000 dripping connections at 500 a second;
    each flood closes what it still holds a few seconds after its last link. The victim never
    holds 200 files nor 200 MB, and the game ends as usual for every seat. A game is quicker
    than the floods, so one other seat is stopped (SIGSTOP) while they run and let go after:
    the game is surely still on, and the victim keeps its links to both seats meanwhile. (About
    70 s on two busy cores; the floods, 30-45 s of it, are made ready while the lobby seats the
    table.)"""
    env = isolated_env(tmp_path)
    with (
        flood("--links", "3000", "--rate", "1000", "--hold", "3") as sealed_flood,
        flood("--drip", "--links", "1000", "--rate", "500", "--hold", "3") as drip,
        running_lobby(env) as lobby,
    ):
        victim = start_bot(lobby, PLAYERS, "victim", env, tmp_path, *PATIENT,
                           preexec_fn=desktop_file_limit)  # fmt: skip
        others = [start_bot(lobby, PLAYERS, f"h{n}", env, tmp_path, *PATIENT) for n in (1, 2)]
        path = wait_for(lambda: game_files(env).get("victim"), 60, "the game to start")
        roster = GameFile.read(path).roster
        port = next(s.port for s in roster.seats if s.name == "victim")
        began = time.monotonic()
        usage = Usage()
        others[1].send_signal(signal.SIGSTOP)
        try:
            sealed = run(sealed_flood, port, victim.pid, usage)
            dripped = run(drip, port, victim.pid, usage)
        finally:
            others[1].send_signal(signal.SIGCONT)
        flooded = time.monotonic() - began
        still_playing = victim.poll() is None
        found = results([victim, *others], timeout=240, tmp_path=tmp_path)
    print(
        f"\nsealed {json.dumps(sealed)}\ndrip {json.dumps(dripped)}\nthe victim held at most "
        f"{usage.files} files and {usage.memory / 2**20:.0f} MiB; the floods took {flooded:.1f} s"
        f"\nresults {[(r['name'], r['ok'], r['cheat'], r['gone']) for r in found]}"
    )
    assert still_playing, "the victim stopped playing before the floods ended"
    assert usage.files < FILE_BOUND, f"the victim held {usage.files} open files"
    assert usage.memory < MEMORY_BOUND, f"the victim held {usage.memory / 2**20:.0f} MiB"
    # It came: the victim took and cut hundreds (the rest waited in its system's queue while
    # its game computed; on the code before, they held its files until they ran out).
    assert sealed["links"] == 3000 and sealed["cut_by_victim"] >= 250, sealed
    assert dripped["links"] == 1000 and dripped["cut_by_victim"] >= 500, dripped
    assert all(r["ok"] and r["cheat"] is None and not r["gone"] for r in found), found
    assert len({r["final_state"] for r in found}) == 1
