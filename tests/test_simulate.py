"""The random-play simulator: whole games for every player count, every kind of action, no
invariant violations, and the command line the issue names."""

import json
import subprocess
import sys

import pytest

from protocol.simulate import game_seed, play_random_game


def test_random_play_uses_every_kind_of_action():
    kinds = set()
    for game in range(6):
        report = play_random_game(4, game_seed(7, game))
        assert report.violations == []
        kinds |= {kind.split("/")[0] for kind in report.kinds}
        kinds |= {"off-turn " + kind.split("/")[0] for kind in report.kinds if "/off-turn" in kind}
    assert kinds >= {
        "Plant", "EndPlanting", "RevealFaceUp", "MakeOffer", "Gift", "Accept", "Reject",
        "Withdraw", "EndTrading", "PlantPending", "Harvest", "BuyField", "off-turn Harvest",
        "off-turn Bid", "Take",
    }  # fmt: skip


def test_the_same_seed_replays_the_same_game():
    first, again = (play_random_game(5, game_seed(3, 0)) for _ in range(2))
    assert (first.actions, first.kinds, first.result) == (again.actions, again.kinds, again.result)
    assert play_random_game(5, game_seed(3, 1)).kinds != first.kinds


@pytest.mark.slow
def test_200_games_for_each_player_count_report_no_violations_and_end_by_the_deck_rule():
    runs = {
        players: subprocess.Popen(
            [sys.executable, "-m", "protocol.simulate", "--players", str(players),
             "--games", "200", "--seed", "1", "--json"],
            stdout=subprocess.PIPE, text=True,
        )
        for players in range(3, 8)
    }  # fmt: skip
    for players, run in runs.items():
        out, _ = run.communicate(timeout=600)
        summary = json.loads(out.strip().splitlines()[-1])
        assert run.returncode == 0, out
        assert summary["players"] == players and summary["games"] == 200
        assert summary["violations"] == 0
        assert summary["ended_by_deck_rule"] == 200
        assert summary["actions"] > 200 * 100 and summary["games_per_s"] > 0
