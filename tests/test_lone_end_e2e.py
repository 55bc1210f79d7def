"""Issue 26, problem 4, end to end: a hostile player (tests/hostile_player.py `lone-end`)
signs an ending by a vote without an honest seat that nobody voted for, with no votes, only
its own, or votes forged in the others' names. No honest seat follows it, none reveals its
seed for it, and none records the seat it named as gone: the ending only says that its author
left for good, and the others vote it out once the abandon time has passed."""

from __future__ import annotations

import pytest

from client.gamefile import GameFile
from tests.processes import game_files, isolated_env, results, running_lobby, start_bot
from tests.test_hostile_players_e2e import (
    ABANDON,
    OPTIONS,
    PLAYERS,
    facts,
    never_named,
    seat_of,
    start_hostile,
)


@pytest.mark.slow
@pytest.mark.parametrize("votes", ["none", "own", "forged"])
def test_a_lone_vote_ending_is_ignored_and_no_seed_leaves(tmp_path, votes):
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in honest]
        hostile = start_hostile(port, "lone-end", env, tmp_path, "--at", "20", "--votes", votes)
        found = results(bots, timeout=180, tmp_path=tmp_path)
        hostile.kill()
        hostile.wait(10)
    said = facts(tmp_path)
    (lone,) = [fact for fact in said if "lone_end" in fact]
    files = game_files(env)
    for result in found:
        hostile_seat = seat_of(result, "hostile")
        assert result["ended_by"] is None and result["gone"] == [hostile_seat], result
        end = GameFile.read(files[result["name"]]).end
        assert end is not None and end["kind"] == "abandoned", end
        assert lone["target"] not in end["gone"], end
    seeds = [fact for fact in said if "seed_from" in fact]
    assert seeds, said  # the honest seats' seeds, once each had voted the hostile out
    for seed in seeds:
        assert seed["owners_ending"] == "abandoned", seed
        assert seed["at"] - lone["at"] >= ABANDON, (seed, lone)
    never_named(found, honest)
