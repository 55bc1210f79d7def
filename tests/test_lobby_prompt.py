"""The lobby's questions as a person meets them: a real `bean-client connect --plain` against a
real `bean-lobby`, its lines piped in as typed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from protocol.messages import NAME_MAX_CHARS
from tests.processes import BIN, LOCAL, isolated_env, running_lobby


def test_an_empty_name_is_asked_for_again_with_the_reason(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    too_long = "x" * (NAME_MAX_CHARS + 1)  # refused: "Your name:" is asked
    with running_lobby(env) as port:
        person = subprocess.run(
            [str(BIN / "bean-client"), "connect", f"{LOCAL}:{port}", "--plain", "--name", too_long,
             "--listen", f"tcp:0:interface={LOCAL}"],
            input="\n  \nann\nquit\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )  # fmt: skip
    lines = person.stdout.splitlines()
    assert person.returncode == 0, person.stdout + person.stderr
    asked = [n for n, line in enumerate(lines) if line.endswith("Your name:")]
    assert len(asked) == 3, lines  # after the long name, the empty line and the blank one
    empty = "a name cannot be empty: type the name the others will see you by"
    assert all(empty in lines[n + 1] for n in asked[:2]), lines
    assert any(f"Connected to the lobby at {LOCAL}:{port} as ann." in line for line in lines), lines
    assert "Not connected" not in person.stdout
