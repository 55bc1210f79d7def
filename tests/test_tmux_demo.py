"""A person's view, in a real terminal: scripts/tmux-demo plays a few turns of `bean-client
play` in tmux by typing (plant, stop, a gift, end trading, plant kept cards), waiting each time
for the screen to show what a person would wait for, and saves the screen when its next turn
comes. The screen must show the table, what the others did, and a toolbar that is up to date;
nothing may be left behind."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import BIN

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tmux-demo"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_person_plays_a_few_turns_in_tmux(tmp_path: Path) -> None:
    saved = tmp_path / "screen.txt"
    session = f"bean-demo-test-{os.getpid()}"
    command = [sys.executable, str(SCRIPT), str(saved), "--session", session]
    run = subprocess.run(
        [*command, "--client", str(BIN / "bean-client")],
        capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    screen = saved.read_text() if saved.exists() else ""
    assert run.returncode == 0, run.stderr + screen
    assert "traded" in run.stdout  # with a bot, at least once
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), screen
    toolbar = r"Turn \d+ · your turn · step 1, plant · deck \d+, exhausted \d/\d · \d+ coins?"
    assert re.fullmatch(toolbar, lines[-2]), screen
    assert lines[-1] == "Waiting: you: plant the front card", screen
    assert any(
        re.match(r"Bot\d (planted|offered|accepted|rejected|ended|drew)", line) for line in lines
    )
    assert any(line.startswith("You may:") for line in lines), screen  # the table, asked for
    assert "Traceback" not in screen
    left = subprocess.run(["tmux", "has-session", "-t", session], capture_output=True)
    assert left.returncode != 0, "the tmux session was left behind"
