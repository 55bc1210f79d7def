"""`bean-client audit`, `replay` and `replay --summary` on game files of every way a game can
end, each made by a real game (bean-lobby and bean-client processes over 127.0.0.1): played to
the end, ended by a vote without a seat gone for good, stopped for a named cheat, stopped by a
broken deal (and followed by the others), stopped by its own client's failure in the middle
of a step, left by its person, and cut off by a crash (SIGKILL). Each command runs as a
process: no traceback, and all three state the same outcome in the same words. On the
finished game, the summary on the full screen and in plain lines tell the same harvests, and
the replay shows the seat's own hand."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import selectors
import signal
import struct
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path

import pytest

from client.gamefile import GameFile
from client.screen.story import WIDTH, YOU
from tests.processes import (
    BIN,
    client_arguments,
    game_files,
    isolated_env,
    kill_leftovers,
    results,
    running_lobby,
    start,
    start_bot,
    wait_for,
)

PLAYERS = 3
QUICK = (
    "--step-deadline", "4", "--abandon-after", "2",
)  # fmt: skip
GAME_SECONDS = 180
FOLLOW_TRIES = 3

Files = dict[str, list[tuple[Path, dict[str, str]]]]  # the ending's name: its files, with env


def ending_of(path: Path) -> str:
    """The name of a file's ending, as the tests below sort them."""
    saved = GameFile.read(path)
    end = saved.end
    if end is None:
        return "left" if saved.left else "crash"
    if end["kind"] == "stopped" and "step" not in end:
        return "failed"
    if end["kind"] == "stopped":
        return "cheat" if end.get("seat") is not None else "broken deal"
    return {"end": "end", "abandoned": "vote", "ended_by": "followed"}[end["kind"]]


def played_to_the_end(tmp_path: Path) -> dict[str, str]:
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, f"bot{n}", env, tmp_path, *QUICK) for n in range(3)]
        results(bots, timeout=GAME_SECONDS, tmp_path=tmp_path)
    return env


def one_killed_and_voted_out(tmp_path: Path) -> dict[str, str]:
    """A bot killed mid-game never comes back (its file stops in the middle of a step); the
    other two vote to end without it."""
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = {name: start_bot(port, PLAYERS, name, env, tmp_path, *QUICK)
                for name in ("stays0", "crashes", "stays1")}  # fmt: skip
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        wait_for(lambda: len(GameFile.read(files["crashes"]).steps) >= 30, 120, "step 30")
        bots["crashes"].send_signal(signal.SIGKILL)
        bots["crashes"].wait(10)
        results([bots["stays0"], bots["stays1"]], timeout=GAME_SECONDS, tmp_path=tmp_path)
    return env


def a_cheat_named(tmp_path: Path) -> dict[str, str]:
    """tests/cheater.py ends its turn out of turn; the honest bots stop the game, naming it
    (the cheater's own file is left out: it is killed once the others have stopped)."""
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        command = [
            sys.executable,
            "-m",
            "tests.cheater",
            "out-of-turn",
            *client_arguments(port, PLAYERS, "cheater", *QUICK, "--strategy", "greedy"),
        ]
        start(command, env, tmp_path / "cheater.log")  # fmt: skip
        honest = [start_bot(port, PLAYERS, f"honest{n}", env, tmp_path, *QUICK) for n in (0, 1)]
        results(honest, timeout=GAME_SECONDS, tmp_path=tmp_path)
    kill_leftovers()
    game_files(env)["cheater"].unlink()
    return env


def a_broken_deal(tmp_path: Path) -> dict[str, str]:
    """tests/hostile_player.py shuffles in points of no card, with the proofs off: the deal
    breaks when one is opened, every seat that sees it stops the game, and the audit of the
    seeds names the hostile player. A seat that has not played that step when another's
    ending comes follows it instead: a race, so up to FOLLOW_TRIES games are played (three
    honest seats each) until one of them has a follower."""
    for attempt in range(FOLLOW_TRIES):
        env = isolated_env(tmp_path / f"game{attempt}")
        seats = 4
        options = ("--no-proofs", "--allow-weak-proofs", "--step-deadline", "4")
        with running_lobby(env) as port:
            honest = [
                start_bot(port, seats, f"honest{n}", env, tmp_path, *options) for n in (0, 1, 2)
            ]
            command = [sys.executable, "-m", "tests.hostile_player", "bad-shuffle",
                       *client_arguments(port, seats, "hostile", *options)]  # fmt: skip
            start(command, env, tmp_path / "hostile.log")
            results(honest, timeout=GAME_SECONDS, tmp_path=tmp_path)
        kill_leftovers()
        game_files(env)["hostile"].unlink()
        if "followed" in map(ending_of, game_files(env).values()):
            break
    return env


def a_client_failed(tmp_path: Path) -> dict[str, str]:
    """tests/failing_client.py fails at step 20 (its file records so); the others vote to
    end without it (their files are left out: the vote is told above)."""
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        command = [
            sys.executable,
            "-m",
            "tests.failing_client",
            "20",
            *client_arguments(port, PLAYERS, "fails", *QUICK),
        ]
        failing = start(command, env, tmp_path / "fails.log")
        honest = [start_bot(port, PLAYERS, f"honest{n}", env, tmp_path, *QUICK) for n in (0, 1)]
        results([failing, *honest], timeout=GAME_SECONDS, tmp_path=tmp_path)
    for name, path in game_files(env).items():
        if name != "fails":
            path.unlink()
    return env


def a_person_left(tmp_path: Path) -> dict[str, str]:
    """`bean-client play` in plain mode: the person leaves (`leave`, then `leave` again) once
    the cards are dealt. Only the person's file is kept: what became of the bots' games is
    another part's."""
    env = isolated_env(tmp_path)
    command = [str(BIN / "bean-client"), "play", "--bots", "2", "--plain", "--name", "ann", *QUICK]
    person = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env, text=True)  # fmt: skip
    assert person.stdin is not None and person.stdout is not None
    try:
        for line in person.stdout:  # bounded by the kill in `finally` at the latest
            if line.startswith("dealt:") or "type leave again" in line:
                person.stdin.write("leave\n")
                person.stdin.flush()
            if "You left the game" in line:
                break
        person.stdin.close()
        person.wait(60)
    finally:
        if person.poll() is None:
            person.kill()
            person.wait(10)
    for name, path in game_files(env).items():
        if name != "ann":
            path.unlink()
    return env


@pytest.fixture(scope="session")
def ending_files(tmp_path_factory: pytest.TempPathFactory) -> Files:
    """Every game's files, by their ending; every ending the tests need is there."""
    made = [
        scenario(tmp_path_factory.mktemp(scenario.__name__))
        for scenario in (
            played_to_the_end, one_killed_and_voted_out, a_cheat_named, a_broken_deal,
            a_client_failed, a_person_left,
        )
    ]  # fmt: skip
    found: Files = {}
    for env in made:
        for path in game_files(env).values():
            found.setdefault(ending_of(path), []).append((path, env))
    assert {"end", "vote", "cheat", "broken deal", "failed", "left", "crash"} <= set(found), found
    return found


def bean_client(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "bean-client"), *args], env=env, capture_output=True, text=True, timeout=300
    )


def outcome_of(output: str) -> str:
    said = [line for line in output.splitlines() if line.startswith("Outcome: ")]
    assert len(said) == 1, output[-3000:]
    return said[0]


EXPECTED = {  # the ending: words its outcome says
    "end": r"^Outcome: played to the end, over turn \d+ \(step \d+\): bot\d \d+, .* won\.$",
    "vote": r"^Outcome: ended early at turn \d+ \(step \d+\): stays\d and stays\d voted to end "
    r"it without crashes \(gone for good\); the audit of what was played passed; no winner\.$",
    "crash": r"^Outcome: not over: the file stops at turn \d+ \(step \d+\) with no ending: "
    r"crashes's client stopped in the middle of the game \(a crash\), or plays it still\.$",
    "cheat": r"^Outcome: stopped at turn \d+ \(step \d+\): cheater sent .*rules forbid(?!.*audit)"
    r".*; no winner\.$",
    "broken deal": r"^Outcome: stopped at turn \d+ \(step \d+\): the deal broke \(.*\); the "
    r"audit of what was played found: hostile: .*; no winner\.$",
    "followed": r"^Outcome: ended early at turn \d+ \(step \d+\), as (honest\d|hostile) ended "
    r"it \(the deal broke\); the audit of what was played found: hostile: .*; no winner\.$",
    "failed": r"^Outcome: stopped at turn \d+ \(step 20\): fails's client failed \(a fault put "
    r"in at step 20 by the test\); no winner\.$",
    "left": r"^Outcome: not over: ann left at turn \d+ \(step \d+\), and may resume the game\.$",
}


@pytest.mark.slow
@pytest.mark.parametrize("ending", list(EXPECTED))
def test_audit_replay_and_summary_state_the_same_outcome_of_every_ending(ending, ending_files):
    if ending not in ending_files:
        pytest.skip(f"no seat of these games ended as {ending!r} (a race decides it)")
    for path, env in ending_files[ending]:
        runs = [
            bean_client("audit", str(path), env=env),
            bean_client("replay", str(path), env=env),
            bean_client("replay", "--summary", str(path), env=env),
        ]
        for run in runs:
            assert "Traceback" not in run.stdout + run.stderr and not run.stderr, run.stderr
        said = {outcome_of(run.stdout) for run in runs}
        assert len(said) == 1, said
        assert re.match(EXPECTED[ending], said.pop()), ending
        assert runs[0].returncode == (0 if ending == "end" else 1)
        assert runs[1].returncode == runs[2].returncode == 0


def on_a_terminal(*args: str, env: dict[str, str], seconds: float = 120) -> str:
    """What `bean-client ARGS` shows on a terminal (a pseudo-terminal of 80x24), as text."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([str(BIN / "bean-client"), *args], env=env | {"TERM": "xterm"},
                               stdin=follower, stdout=follower, stderr=follower)  # fmt: skip
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + seconds
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(leader, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(deadline - time.monotonic()):
                    continue
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the process has gone, and its end of the terminal with it
                    break
                if not chunk:
                    break
                shown += chunk
            else:
                raise AssertionError(f"bean-client {' '.join(args)} ran over {seconds} s")
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
        process.wait(10)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]|\r", "", shown.decode())


def screen_harvests(line: str) -> tuple[Counter[str], int | None]:
    """ "1 bot0: 17 coins  chili 13→4 in 3, ...; 26 more cards sold for nothing": each bean
    shown as (cards, coins, times) text, and the cards sold for nothing if said."""
    beans = Counter(
        f"{bean} {cards}→{coins} in {times or 1}"
        for bean, cards, coins, times in re.findall(r"([a-z-]+) (\d+)→(\d+)(?: in (\d+))?", line)
    )
    nothing = re.search(r"(\d+) more cards? sold for nothing", line)
    return beans, int(nothing.group(1)) if nothing else None


def plain_harvests(line: str) -> tuple[dict[str, tuple[int, int, int]], int]:
    """ "summary, bot0: 17 coins; harvests: turn 6 stink 3 cards for 1 coin; ...": each bean's
    cards, coins and harvests that paid, and the cards sold for nothing."""
    totals: dict[str, tuple[int, int, int]] = {}
    for bean, cards, coins in re.findall(r"([a-z-]+) (\d+) cards? for (\d+) coins?", line):
        was = totals.get(bean, (0, 0, 0))
        totals[bean] = (was[0] + int(cards), was[1] + int(coins), was[2] + 1)
    nothing = re.search(r"(\d+) more cards? sold for nothing", line)
    return totals, int(nothing.group(1)) if nothing else 0


@pytest.mark.slow
def test_the_summary_on_the_screen_and_in_plain_lines_tells_the_same_harvests(ending_files):
    """Full screen (as at the end of a game) and plain lines (plain mode), from the same real
    game: every bean the screen shows is the plain lines' total of its paying harvests, the
    beans it has no room for are counted, and the cards sold for nothing are the same (the
    screen says them after every bean that paid, where they fit in the line). The
    file's seat is named, never "you": whoever reads the file may be someone else."""
    path, env = ending_files["end"][0]
    names = [seat.name for seat in GameFile.read(path).roster.seats]
    screen = on_a_terminal("replay", "--summary", str(path), env=env).splitlines()
    plain = bean_client("replay", "--summary", "--plain", str(path), env=env).stdout.splitlines()
    assert not any("you" in line.split(":")[0] for line in screen + plain), plain
    for seat, name in enumerate(names):
        shown_line = next(line for line in screen if line.startswith(f"{seat + 1} {name}: "))
        plain_line = next(line for line in plain if line.startswith(f"summary, {name}: "))
        shown, shown_nothing = screen_harvests(shown_line)
        totals, nothing = plain_harvests(plain_line)
        told = Counter(
            f"{b} {cards}→{coins} in {times}" for b, (cards, coins, times) in totals.items()
        )
        assert shown <= told, (shown_line, plain_line)
        more = re.search(r"(\d+) (?:more )?beans? paid", shown_line)
        assert sum(shown.values()) + (int(more.group(1)) if more else 0) == len(told), shown_line
        if shown_nothing is not None:
            assert shown_nothing == nothing, (shown_line, plain_line)
        elif not more and nothing:  # every bean shown: the cards sold for nothing did not fit
            said = f"; {nothing} more card{'' if nothing == 1 else 's'} sold for nothing"
            assert len(shown_line + said) > WIDTH - len(YOU), (shown_line, plain_line)


@pytest.mark.slow
def test_the_replay_of_a_seats_file_shows_its_own_hand(ending_files):
    """Each turn's table shows the hand the file's seat held, every card of it opened (its
    keys come in the steps after the draw: the file holds them)."""
    path, env = ending_files["end"][0]
    run = bean_client("replay", str(path), env=env)
    hands = [line for line in run.stdout.splitlines() if line.startswith("Your hand:")]
    assert len(hands) >= 10, run.stdout[-2000:]
    assert not [hand for hand in hands if "?" in hand], hands[:5]
    me = GameFile.read(path).roster.seats[GameFile.read(path).seat].name
    assert (
        run.stdout.splitlines()[0]
        == f'The game as {me} saw it, from its file ("you" below is {me}).'
    )
