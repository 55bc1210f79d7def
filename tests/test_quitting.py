"""Ctrl-C and Ctrl-D at the lobby's prompts, as a person presses them: `bean-client connect`
runs in a pseudo-terminal against a real `bean-lobby`, the keys are written to the terminal
(in plain mode, SIGINT is sent and standard input closed, as a terminal in line mode does).
The program ends with one line of words and status 0, never a traceback."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import BIN, LOCAL, isolated_env, running_lobby

SECONDS = 30.0
CTRL_C, CTRL_D = b"\x03", b"\x04"


class Pty:
    """A process in a pseudo-terminal: what it printed so far, keys to type."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        env = env | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        self.process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.output = b""

    def text(self) -> str:
        """What was printed, escape sequences taken out."""
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r", "", self.output.decode())

    def read(self, seconds: float) -> None:
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:  # the process has ended and closed the terminal
                time.sleep(seconds)

    def until(self, pattern: str) -> None:
        deadline = time.monotonic() + SECONDS
        while not re.search(pattern, self.text()):
            assert time.monotonic() < deadline, f"no {pattern!r} in:\n{self.text()}"
            self.read(0.1)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def ended(self) -> int:
        """The exit status, once the process has ended (what it printed meanwhile is read)."""
        deadline = time.monotonic() + SECONDS
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"still running:\n{self.text()}"
            self.read(0.1)
        self.read(0.1)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        os.close(self.master)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
def lobby(env: dict[str, str]) -> Iterator[int]:
    with running_lobby(env) as port:
        yield port


def connect(port: int, name: str, *extra: str) -> list[str]:
    return [str(BIN / "bean-client"), "connect", f"{LOCAL}:{port}", "--name", name, *extra]


@pytest.mark.slow
@pytest.mark.parametrize("key, said", [(CTRL_C, "Ctrl-C"), (CTRL_D, "Ctrl-D")])
def test_ctrl_c_or_ctrl_d_at_the_lobby_prompt_ends_in_a_line_of_words(
    lobby: int, env: dict[str, str], key: bytes, said: str
) -> None:
    """(Before: Ctrl-C printed a traceback ending in KeyboardInterrupt, status 130.)"""
    person = Pty(connect(lobby, "ann"), env)
    try:
        person.until(r"lobby>")
        person.type(key)
        assert person.ended() == 0, person.text()
        assert f"{said}: bean-client ends. Goodbye." in person.text()
        assert "Traceback" not in person.text()
    finally:
        person.close()


@pytest.mark.slow
def test_ctrl_c_at_your_name_ends_the_program_in_a_line_of_words(
    lobby: int, env: dict[str, str], tmp_path: Path
) -> None:
    """The name is taken, so the lobby asks for another; Ctrl-C there ends the program."""
    first = Pty(connect(lobby, "ann"), env)
    first.until(r"lobby>")
    second = Pty(connect(lobby, "ann"), isolated_env(tmp_path / "second"))
    try:
        second.until(r"Your name:")
        second.type(CTRL_C)
        assert second.ended() == 0, second.text()
        assert "Ctrl-C: bean-client ends. Goodbye." in second.text()
        assert "Traceback" not in second.text()
    finally:
        second.close()
        first.close()


@pytest.mark.slow
def test_plain_mode_ends_in_words_on_sigint_and_when_input_ends(
    lobby: int, env: dict[str, str]
) -> None:
    """Plain mode reads lines as they come: a SIGINT ends the program, and so does the end
    of standard input, each said in words. (Before: SIGINT left it running, and the end of
    input ended it without a word.)"""
    for ending, said in (("sigint", "Ctrl-C"), ("eof", "Your input has ended")):
        person = subprocess.Popen(
            connect(lobby, f"cy-{ending}", "--plain"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        try:
            assert person.stdout is not None and person.stdin is not None
            line = b""
            while b"Connected to the lobby" not in line:
                line = person.stdout.readline()
                assert line, "bean-client ended before it connected"
            if ending == "sigint":  # input stays open until the program has ended
                person.send_signal(signal.SIGINT)
                person.wait(SECONDS)
            person.stdin.close()
            person.stdin = None  # (communicate would flush it)
            out, _ = person.communicate(timeout=SECONDS)
            assert person.returncode == 0, out
            assert f"{said}: bean-client ends. Goodbye." in out.decode(), out
            assert b"Traceback" not in out
        finally:
            if person.poll() is None:
                person.kill()
                person.wait(10)
