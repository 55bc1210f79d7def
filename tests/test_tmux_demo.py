"""A person's view, in a real terminal: scripts/tmux-demo plays a few turns of `bean-client
play` in tmux by typing (plant, stop, a gift, end trading, plant kept cards), waiting each time
for the screen to show what a person would wait for, and saves the screen when its next turn
comes; then it plays on to the end and saves the last screen. The first must show the table,
what the others did, and a toolbar that is up to date; the last the outcome and the game's
story, its chart of coins over the turns whole within 80 columns; nothing may be left behind."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from client.bots.player import PATIENT_SECONDS
from tests.processes import BIN

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tmux-demo"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_person_plays_a_few_turns_in_tmux(tmp_path: Path) -> None:
    saved, end = tmp_path / "screen.txt", tmp_path / "end.txt"
    session = f"bean-demo-test-{os.getpid()}"
    command = [sys.executable, str(SCRIPT), str(saved), "--summary", str(end), "--session", session]
    run = subprocess.run(
        [*command, "--client", str(BIN / "bean-client")],
        capture_output=True, text=True, timeout=600,
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
        re.match(r"bot\d (planted|made offer|gave|took|rejected|ended|drew)", line)
        for line in lines
    )
    assert any(re.fullmatch(r"Your turn \d+\.", line) for line in lines), screen
    assert any(line.startswith("You may:") for line in lines), screen  # shown at the start
    assert "Traceback" not in screen
    assert_the_end_shows_the_story(end.read_text())
    left = subprocess.run(["tmux", "has-session", "-t", session], capture_output=True)
    assert left.returncode != 0, "the tmux session was left behind"


def assert_the_end_shows_the_story(screen: str) -> None:
    """The outcome, each player's coins, and the chart: its title, one line per row of coins
    (the axis and the counts on the left), the turns below; a line wider than the pane would
    have wrapped onto a line of its own, which is none of these."""
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), screen
    assert "you>" not in lines, screen  # the prompt the game's end ended is not left behind
    joined = " ".join(screen.split())
    assert re.search(r"Every player's machine agrees; the audit passed\.", joined), screen
    story = lines.index(next(line for line in lines if line.startswith("The game in numbers")))
    assert re.fullmatch(r"The game in numbers, over \d+ turns:", lines[story]), screen
    players = lines[story + 1 : story + 5]  # in seat order, which is the order they joined in
    assert all(
        re.match(rf"{seat} (you|bot\d): \d+ coins? ", line) for seat, line in enumerate(players, 1)
    ), screen
    assert sum(line.split()[1] == "you:" for line in players) == 1, screen
    title = next(n for n, line in enumerate(lines) if line.startswith("Coins at the end of each"))
    rows = lines[title + 1 :]
    axis = next(n for n, line in enumerate(rows) if re.fullmatch(r" {4}\+-+", line))
    assert axis >= 2 and all(re.fullmatch(r" {0,3}\d* *[|+][\d* ]*", row) for row in rows[:axis])
    assert all(len(row) <= len(rows[axis]) for row in rows[:axis])  # no point past the axis
    assert re.fullmatch(r" {5}1 .* \d+ turn", rows[axis + 1]), screen
    assert any(re.search(r"\d", row[5:]) for row in rows[:axis])  # the players are drawn


# A person who answers no offer holds each bot's trading up for as long as a bot waits for
# answers (client.bots.player.PATIENT_SECONDS): over a whole game, minutes. From this turn on
# the person turns offers down at once, so that the test takes less of the suite's time.
ANSWER_FROM_TURN = 13
WHOLE_GAME_SECONDS = 1200
WAIT_SLACK_SECONDS = 3.0


@pytest.mark.slow
@pytest.mark.timeout(WHOLE_GAME_SECONDS)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_one_ctrl_c_not_confirmed_does_not_end_a_game_played_to_its_end(tmp_path: Path) -> None:
    """A person who answers no offer presses Ctrl-C once mid-game and types `hand` when asked
    whether to leave: the game ends normally, and the closing note measures the offers the
    person saw per turn and the longest wait on their answer. (Before: that Ctrl-C left the
    game at once.)"""
    end = tmp_path / "end.txt"
    session = f"bean-demo-ctrl-c-{os.getpid()}"
    command = [sys.executable, str(SCRIPT), str(end), "--ctrl-c", "--session", session]
    command += ["--answer-from", str(ANSWER_FROM_TURN)]
    run = subprocess.run(
        [*command, "--client", str(BIN / "bean-client")],
        capture_output=True, text=True, timeout=WHOLE_GAME_SECONDS - 60,
    )  # fmt: skip
    screen = end.read_text() if end.exists() else ""
    assert run.returncode == 0, run.stderr + screen
    note = re.search(
        r"Bot offers shown to the person per turn: mean (\d+\.\d), max (\d+)\. The longest "
        r"wait on the person's answer: (\d+\.\d) s\.",
        run.stdout,
    )
    assert note, run.stdout
    shown_mean, shown_most, longest_wait = float(note[1]), int(note[2]), float(note[3])
    assert shown_mean <= 3 and shown_most <= 6, note[0]  # what a person sees of bots' offers
    # A bot waits PATIENT_SECONDS (9 s) on a silent person; the screen is polled, and a loaded
    # machine plays the step that ends trading later: the bar of 10 s, with that much slack.
    assert longest_wait <= PATIENT_SECONDS + WAIT_SLACK_SECONDS, note[0]
    assert_the_end_shows_the_story(screen)
    assert "Traceback" not in screen
    left = subprocess.run(["tmux", "has-session", "-t", session], capture_output=True)
    assert left.returncode != 0, "the tmux session was left behind"
