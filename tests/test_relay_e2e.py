"""End to end through the lobby's relay: a real lobby (tests/hostile_relay.py: the real lobby
and relay, with rosters whose ports nobody listens on) and real `bean-client bot` processes on
127.0.0.1 that cannot reach each other directly play whole games to an agreed end, the audit
passing everywhere; and a relay that drops, holds, cuts, replays or mispairs names nobody."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from client.gamefile import GameFile
from tests.processes import (
    BIN,
    game_files,
    isolated_env,
    lobby_process,
    next_line,
    results,
    start,
    start_bot,
    wait_for,
)
from tests.test_game_e2e import assert_one_agreed_game


def relayed_game(tmp_path: Path, players: int, *lobby_args: str) -> tuple[list[dict], list[str]]:
    """A game of `players` bots at the test lobby run with `lobby_args`: each bot's result,
    and what the lobby said (its `spliced` and `misbehaved` lines)."""
    env = isolated_env(tmp_path)
    command = [sys.executable, "-m", "tests.hostile_relay", *lobby_args]
    with lobby_process(env, command=command) as (port, lobby):
        bots = [
            start_bot(port, players, f"bot{n}", env, tmp_path,
                      "--no-proofs", "--allow-weak-proofs")
            for n in range(players)
        ]  # fmt: skip
        found = results(bots, timeout=240, tmp_path=tmp_path)
        said = lines_so_far(lobby)
    return found, said


def lines_so_far(process: subprocess.Popen[bytes]) -> list[str]:
    """What the process has written on stdout by now (each line waited for at most 1 s)."""
    said = []
    while True:
        try:
            said.append(next_line(process, 1.0).strip())
        except AssertionError:
            return said


@pytest.mark.slow
def test_players_who_cannot_reach_each_other_play_a_whole_game_through_the_relay(tmp_path):
    """Every roster port is dead: no link can be made directly, the relay joins every one."""
    found, said = relayed_game(tmp_path, 4, "--unreachable", "all")
    assert_one_agreed_game(found)
    assert said.count("spliced") >= 6, said  # the six links of four seats, at least


@pytest.mark.slow
def test_one_pair_that_cannot_reach_each_other_goes_through_the_relay_the_others_direct(
    tmp_path,
):
    """Only seat 1's port is dead, and only seat 0 dials seat 1: that one link is relayed."""
    found, said = relayed_game(tmp_path, 4, "--unreachable", "1")
    assert_one_agreed_game(found)
    assert said.count("spliced") >= 1, said


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["drop", "cut", "replay", "cross", "delay"])
def test_a_hostile_relay_names_nobody(tmp_path, kind):
    """The relay attacks the links it carries: TLS refuses what it changed, the pin what it
    mispaired; links are made again and the game ends agreed, with no finding against
    anyone (nothing a relay does is signed by a seat)."""
    found, said = relayed_game(
        tmp_path, 3, "--unreachable", "all", "--misbehave", kind, "--times", "3"
    )
    assert_one_agreed_game(found)
    assert f"misbehaved {kind}" in said, said
    if kind in ("drop", "cut", "replay"):  # a link it broke was joined again
        assert said.count("spliced") > 3, said
    # (a crossed end may meet the right seat of another link: that link stands)


@pytest.mark.slow
def test_a_seat_that_crashes_resumes_through_the_relay_and_the_game_ends_agreed(tmp_path):
    """Nobody reaches anybody directly. Seat 0 (it dials every other seat) is killed after
    the deal and comes back with `bean-client resume`: its links are made through the relay
    again (its game file names the lobby) and the game ends agreed, the audit passing."""
    env = isolated_env(tmp_path)
    command = [sys.executable, "-m", "tests.hostile_relay", "--unreachable", "all"]
    with lobby_process(env, command=command) as (port, lobby):
        names = [f"bot{n}" for n in range(4)]
        running = {
            name: start_bot(port, 4, name, env, tmp_path, "--no-proofs",
                            "--allow-weak-proofs")
            for name in names
        }  # fmt: skip
        files = wait_for(lambda: len(game_files(env)) == 4 and game_files(env), 120,
                         "the game to start")  # fmt: skip
        seats = {GameFile.read(path).seat: name for name, path in files.items()}
        victim = seats[0]
        assert GameFile.read(files[victim]).relay == ("127.0.0.1", port)
        wait_for(lambda: len(GameFile.read(files[victim]).steps) >= 15, 120, "step 15")
        before = lines_so_far(lobby).count("spliced")
        running[victim].send_signal(signal.SIGKILL)
        running[victim].wait(10)
        running[victim] = start(
            [str(BIN / "bean-client"), "resume", str(files[victim]), "--bot", "greedy",
             "--json"],
            env, tmp_path / f"{victim}-resumed.log",
        )  # fmt: skip
        found = results(list(running.values()), timeout=200, tmp_path=tmp_path)
        after = lines_so_far(lobby).count("spliced")
    assert all(r["exit"] == 0 and r["ok"] and r["audit"] == [] for r in found), found
    assert len({(r["final_state"], tuple(r["scores"])) for r in found}) == 1
    assert after >= 3, (before, after)  # seat 0's three links, made through the relay again
