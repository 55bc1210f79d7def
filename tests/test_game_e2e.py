"""End to end: the real bean-lobby and bean-client bots as separate processes over TCP on
127.0.0.1 play whole games; every client ends with the same final state and scores, the audit
passes everywhere, and every seat's game file holds the same signed transcript."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from client.gamefile import GameFile
from tests.processes import BIN, isolated_env, results, running_lobby, start_bot


def play_bots(tmp_path: Path, players: int, strategies: list[str]):
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [
            start_bot(port, players, f"bot{n}", env, tmp_path,
                      "--strategy", strategies[n])
            for n in range(players)
        ]  # fmt: skip
        found = results(bots, timeout=400, tmp_path=tmp_path)
    return found, env


def assert_one_agreed_game(found):
    assert all(r["exit"] == 0 and r["ok"] for r in found), found
    assert all(r["cheat"] is None and r["audit"] == [] and r["agreed"] for r in found)
    assert len({r["game"] for r in found}) == 1
    assert len({(r["final_state"], tuple(r["scores"])) for r in found}) == 1
    assert sorted(r["seat"] for r in found) == list(range(len(found)))


@pytest.mark.slow
def test_three_bots_with_shuffle_proofs(tmp_path):
    found, env = play_bots(tmp_path, 3, ["greedy", "greedy", "random"])
    assert_one_agreed_game(found)
    games = sorted(Path(env["XDG_DATA_HOME"], "bohnanza-p2p", "games").glob("*.game"))
    assert len(games) == 3
    files = [GameFile.read(path) for path in games]
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in games)  # it holds the seed
    assert all(f.end is not None and f.end["kind"] == "end" and f.end["audit"] == [] for f in files)
    assert files[0].steps == files[1].steps == files[2].steps  # the same signed messages
    assert len(files[0].steps) == found[0]["steps"]
    for result in found:  # every step timed once, by what it carried: one audit step
        timed = result["step_ms"] + result["deck_round_ms"] + result["audit_step_ms"]
        assert len(timed) == result["steps"] and len(result["audit_step_ms"]) == 1


@pytest.mark.slow
def test_five_bots(tmp_path):
    found, _ = play_bots(tmp_path, 5, ["planner", "random", "greedy", "planner", "random"])
    assert_one_agreed_game(found)


@pytest.mark.slow
def test_seven_bots(tmp_path):
    found, _ = play_bots(tmp_path, 7, ["greedy", "random"] * 3 + ["greedy"])
    assert_one_agreed_game(found)


@pytest.mark.slow
def test_bean_client_play_with_no_human_and_five_bots(tmp_path):
    """The command of the README, at full proof strength, checking every bot's result."""
    run = subprocess.run(
        [str(BIN / "bean-client"), "play", "--no-human", "--bots", "5"],
        env=isolated_env(tmp_path), capture_output=True, timeout=600,
    )  # fmt: skip
    out = run.stdout.decode()
    assert run.returncode == 0, out + run.stderr.decode()[-3000:]
    assert "all 5 bots agree on the final state: yes" in out and "audit: passed" in out
