"""Crashes: a bot killed with SIGKILL at a random step comes back with `bean-client resume`
from its game file, and every game still ends with all peers agreeing and the audit passing;
nothing a player signed before its crash is lost or changed."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from client.gamefile import GameFile
from protocol.kdf import Stream
from tests.processes import (
    BIN,
    game_files,
    isolated_env,
    results,
    running_lobby,
    start,
    start_bot,
    wait_for,
)

PLAYERS = 4
GAMES = 4
KILLS_PER_GAME = 5


def play_with_crashes(tmp_path: Path, game: int, rng: Stream) -> tuple[int, list[dict]]:
    env = isolated_env(tmp_path / f"game{game}")
    names = [f"g{game}p{n}" for n in range(PLAYERS)]
    kills = 0
    with running_lobby(env) as port:
        running = {
            name: start_bot(
                port,
                PLAYERS,
                name,
                env,
                tmp_path,
            )
            for name in names
        }
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        step = 12  # after the deal
        for _ in range(KILLS_PER_GAME):
            step += 10 + rng.randbelow(50)
            victim = names[rng.randbelow(PLAYERS)]
            reached = wait_for(
                lambda v=victim, s=step: (
                    len(GameFile.read(files[v]).steps) >= s or running[v].poll() is not None
                ),
                120,
                f"{victim} to reach step {step}",
            )
            if running[victim].poll() is not None or not reached:
                break  # the game ended before this crash was due
            running[victim].send_signal(signal.SIGKILL)
            running[victim].wait(10)
            kills += 1
            running[victim] = start(
                [str(BIN / "bean-client"), "resume", str(files[victim]), "--bot", "greedy",
                 "--json"],
                env, tmp_path / f"{victim}-resumed-{kills}.log",
            )  # fmt: skip
        found = results(list(running.values()), timeout=300, tmp_path=tmp_path)
    transcripts = [GameFile.read(path).steps for path in files.values()]
    assert all(t == transcripts[0] for t in transcripts), "the seats' signed transcripts differ"
    return kills, found


@pytest.mark.slow
def test_bots_killed_at_random_steps_resume_and_every_game_ends_agreed(tmp_path):
    rng = Stream(b"bohnanza-p2p crash test seed", "kills")
    total = 0
    for game in range(GAMES):
        kills, found = play_with_crashes(tmp_path, game, rng)
        total += kills
        assert all(r["exit"] == 0 and r["ok"] for r in found), found
        assert len({(r["final_state"], tuple(r["scores"])) for r in found}) == 1
    # A game may end before its last crash is due; most of them happen.
    assert total >= 0.8 * GAMES * KILLS_PER_GAME, f"only {total} crashes happened"


@pytest.mark.slow
def test_killing_the_lobby_in_the_middle_of_a_game_does_not_affect_it(tmp_path):
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [
            start_bot(
                port,
                3,
                f"bot{n}",
                env,
                tmp_path,
            )
            for n in range(3)
        ]
        wait_for(lambda: len(game_files(env)) == 3, 60, "the game to start")
    # The lobby is gone now (the context stopped it); the game goes on between the bots.
    found = results(bots, timeout=180, tmp_path=tmp_path)
    assert all(r["ok"] for r in found)
    assert len({r["final_state"] for r in found}) == 1


def test_resuming_a_finished_game_or_without_the_key_is_refused_in_words(tmp_path):
    env = isolated_env(tmp_path)
    missing = subprocess.run(
        [str(BIN / "bean-client"), "resume", str(tmp_path / "nothing.game"), "--bot", "greedy"],
        env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert missing.returncode != 0
    assert b"Traceback" not in missing.stderr and b"nothing.game" in missing.stderr


@pytest.mark.slow
def test_a_player_gone_for_good_lets_the_others_end_the_game_and_audit_it(tmp_path):
    env = isolated_env(tmp_path)
    options = (
        "--step-deadline", "4", "--abandon-after", "2",
    )  # fmt: skip
    with running_lobby(env) as port:
        bots = {
            f"p{n}": start_bot(port, PLAYERS, f"p{n}", env, tmp_path, *options)
            for n in range(PLAYERS)
        }
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        wait_for(lambda: len(GameFile.read(files["p2"]).steps) >= 30, 120, "step 30")
        bots["p2"].send_signal(signal.SIGKILL)  # and it never comes back
        bots["p2"].wait(10)
        found = results([bots[n] for n in ("p0", "p1", "p3")], timeout=120, tmp_path=tmp_path)
    gone_seat = GameFile.read(files["p2"]).seat
    for result in found:
        assert result["exit"] == 1 and not result["ok"] and result["cheat"] is None, result
        assert result["gone"] == [gone_seat]
        # What was played was audited from the seeds of the seats still there; the gone seat
        # owed none, so nothing is held against anyone.
        assert result["audit"] == [], result
    for name in ("p0", "p1", "p3"):
        end = GameFile.read(files[name]).end
        assert end is not None and end["kind"] == "abandoned" and end["gone"] == [gone_seat]
