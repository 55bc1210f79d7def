"""Real processes for end-to-end tests: `bean-lobby` and `bean-client` on 127.0.0.1, each with
its own files (XDG directories under the test's tmp_path) and every wait bounded."""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from client.gamefile import GameFile, GameFileError

BIN = Path(sys.executable).parent
LOCAL = "127.0.0.1"


def isolated_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def next_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The next line the process writes on stdout (opened unbuffered: nothing is read ahead
    of it), waiting at most `timeout` seconds for it to begin."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"no output within {timeout} s")
    return process.stdout.readline().decode()


@contextmanager
def lobby_process(
    env: dict[str, str], hostile: Sequence[str] = (), command: Sequence[str] = ()
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """bean-lobby on a free port of 127.0.0.1, stopped at the end; with `hostile`, the
    lobby of tests/hostile_lobby.py instead, with those arguments (its mode first); with
    `command`, that command (a lobby that says where it listens as bean-lobby does). Its port,
    and the process, for a hostile lobby takes signals and says what it did (`next_line`)."""
    if command:
        command = list(command)
    elif hostile:
        command = [sys.executable, "-m", "tests.hostile_lobby", *hostile]
    else:
        command = [str(BIN / "bean-lobby"), "--listen", f"tcp:0:interface={LOCAL}", "--quiet"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0
    )
    try:
        line = next_line(process, 30)
        found = re.fullmatch(r"bean-lobby listening on [\d.]+:(\d+)\n", line)
        assert found, f"unexpected first line from the lobby: {line!r}"
        yield int(found.group(1)), process
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def running_lobby(env: dict[str, str], hostile: Sequence[str] = ()) -> Iterator[int]:
    """`lobby_process`'s port."""
    with lobby_process(env, hostile) as (port, _):
        yield port


def client_arguments(port: int, seats: int, name: str, *extra: str) -> list[str]:
    return [
        f"{LOCAL}:{port}", "--seats", str(seats), "--name", name, "--json",
        "--listen", f"tcp:0:interface={LOCAL}", *extra,
    ]  # fmt: skip


_started: list[subprocess.Popen[bytes]] = []


def start(command: Sequence[str], env: dict[str, str], log: Path,
          preexec_fn: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:  # fmt: skip
    """A client process, killed at the end of the test if it still runs (`kill_leftovers`);
    `preexec_fn` runs in the child before the client starts (to set its limits)."""
    process = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=log.open("wb"),
                               env=env, preexec_fn=preexec_fn)  # fmt: skip
    _started.append(process)
    return process


def kill_leftovers() -> None:
    """Kill and reap every process `start` made that still runs: a test whose wait failed
    must not leave its clients playing on into the next tests."""
    while _started:
        process = _started.pop()
        if process.poll() is None:
            process.kill()
            process.wait(10)


def start_bot(port: int, seats: int, name: str, env: dict[str, str], tmp_path: Path,
              *extra: str, preexec_fn: Callable[[], None] | None = None,
              ) -> subprocess.Popen[bytes]:  # fmt: skip
    command = [str(BIN / "bean-client"), "bot", *client_arguments(port, seats, name, *extra)]
    return start(command, env, tmp_path / f"{name}.log", preexec_fn)


def results(processes: Sequence[subprocess.Popen[bytes]], timeout: float,
            tmp_path: Path) -> list[dict[str, Any]]:  # fmt: skip
    """Each process's last JSON line, waiting at most `timeout` seconds in all; on a timeout
    the test fails with their logs (and `kill_leftovers` ends them)."""
    deadline = time.monotonic() + timeout
    found = []
    try:
        for process in processes:
            out, _ = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
            lines = out.decode().strip().splitlines()
            assert lines, f"a process printed nothing (exit {process.returncode})"
            found.append(json.loads(lines[-1]) | {"exit": process.returncode})
    except subprocess.TimeoutExpired:
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-1500:]}" for p in tmp_path.glob("*.log"))
        raise AssertionError(f"the game did not end within {timeout} s\n{logs}") from None
    return found


def game_files(env: dict[str, str]) -> dict[str, Path]:
    """Each seat's game file by player name (once the game has started)."""
    folder = Path(env["XDG_DATA_HOME"], "bohnanza-p2p", "games")
    found = {}
    for path in folder.glob("*.game"):
        try:
            saved = GameFile.read(path)
        except GameFileError:  # created this instant, its header not written yet
            continue
        found[saved.roster.seats[saved.seat].name] = path
    return found


def wait_for(condition, seconds: float, what: str):
    """Poll a file-system condition (there is no event to wait on) with a deadline."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
