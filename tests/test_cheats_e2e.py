"""End to end: one cheating client (tests/cheater.py) among honest bots, all separate
processes over TCP. For every cheat a signature proves, every honest client stops the game,
names the cheater, and keeps the signed evidence in its game file; a cheat no signature
proves (a message forged in another seat's name) is refused, names nobody, and the game goes
on to its end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from client.gamefile import GameFile
from tests.cheater import CHEATS, UNPROVABLE
from tests.processes import client_arguments, isolated_env, results, running_lobby, start, start_bot

PLAYERS = 4
EXPECTED_REASON = {  # any of these words in the verdict's reason
    "wrong-key": ("key",),
    "card-not-held": ("does not hold",),  # a claim the rules allow: the deck tells
    "out-of-order": ("withheld its keys",),
    "out-of-turn": ("rules forbid",),
    "stale-state": ("another state",),
    "equivocation": ("equivocation",),
    "withheld": ("withheld its message",),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", CHEATS)
def test_every_honest_client_stops_the_game_and_names_the_cheater(kind, tmp_path):
    env = isolated_env(tmp_path)
    options = ("--step-deadline", "4")
    with running_lobby(env) as port:
        # The cheater plays greedy, planting one card a message: its forgeries rewrite one.
        cheater = start(
            [sys.executable, "-m", "tests.cheater", kind,
             *client_arguments(port, PLAYERS, "cheater", *options, "--strategy", "greedy")],
            env, tmp_path / "cheater.log",
        )  # fmt: skip
        try:
            honest = [
                start_bot(port, PLAYERS, f"honest{n}", env, tmp_path, *options)
                for n in range(PLAYERS - 1)
            ]
            found = results(honest, timeout=180, tmp_path=tmp_path)
        finally:
            cheater.kill()
            cheater.wait(10)
    files = [GameFile.read(p) for p in Path(env["XDG_DATA_HOME"]).glob("**/*.game")]
    honest_files = [f for f in files if f.roster.seats[f.seat].name != "cheater"]
    assert len(honest_files) == PLAYERS - 1
    if kind in UNPROVABLE:
        for result in found:
            assert result["ok"] and result["cheat"] is None, result
        assert all(game.end is not None and game.end["kind"] == "end" for game in honest_files)
        return
    for result in found:
        assert result["exit"] == 1 and not result["ok"], result
        cheat = result["cheat"]
        assert cheat is not None, result
        assert result["names"][cheat["seat"]] == "cheater", result
        assert any(words in cheat["reason"] for words in EXPECTED_REASON[kind]), cheat
    for game in honest_files:
        assert game.end is not None and game.end["kind"] == "stopped", game.end
        assert game.roster.seats[game.end["seat"]].name == "cheater"
        assert game.end["evidence"], "the signed messages that prove the cheat are kept"
