"""Issue 26, problems 3 and 10, end to end: a hostile player of the tests' own
(tests/hostile_player.py) stalls the game among honest `bean-client bot` processes and a real
`bean-lobby` on 127.0.0.1. A withholder that stays connected is named on its own signed
holdings, whatever the pace it heartbeats at; a seat that cycles its links on its own turn is
voted out as gone once its absence adds up to the abandon time."""

from __future__ import annotations

import time

import pytest

from client.gamefile import GameFile
from tests.hostile_player import IDLE_PACE
from tests.processes import game_files, isolated_env, results, running_lobby, start_bot, wait_for
from tests.test_hostile_players_e2e import (
    DEADLINE,
    PLAYERS,
    fact,
    never_named,
    seat_of,
    start_hostile,
)

HONEST = ["h0", "h1", "h2"]
TICK = 1.0  # the honest clients judge once a second
SLACK = 3.0  # a loaded machine's scheduling, the last link's round trip


def options(abandon: float) -> tuple[str, ...]:
    return (
        "--step-deadline", f"{DEADLINE:g}", "--abandon-after", f"{abandon:g}",
    )  # fmt: skip


def honest_ended(env: dict[str, str]) -> bool:
    files = game_files(env)
    return all(name in files and GameFile.read(files[name]).end for name in HONEST)


@pytest.mark.slow
def test_a_connected_withholder_at_the_idle_pace_is_named_on_its_own_heartbeats(tmp_path):
    """It withholds its message in a deal round, stays connected, and says where it is only
    every 5 s, answering nothing. The old rule counted a seat present only if heard in the
    last 3 s: it was never named, only voted out as gone after the deadline plus the abandon
    time. Its holdings now say, signed, that it owes the message: it is named once one of
    them says so for the deadline."""
    abandon = 30.0  # far off: the verdict must come first
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *options(abandon)) for name in HONEST]
        start_hostile(port, "withhold-idle", env, tmp_path, "--at", "2", options=options(abandon))
        began = wait_for(lambda: fact(tmp_path, "at"), 120, "the hostile to withhold")[0]
        wait_for(lambda: honest_ended(env), DEADLINE + abandon + 30, "the honest seats to end")
        elapsed = time.time() - began
        found = results(bots, timeout=60, tmp_path=tmp_path)
    (step,) = fact(tmp_path, "withholding")
    for result in found:
        cheat = result["cheat"]
        assert cheat is not None and cheat["seats"] == [seat_of(result, "hostile")], result
        assert f"withheld its message for step {step}: its own signed heartbeat" in cheat["reason"]
        assert result["gone"] == [], result
    assert elapsed <= DEADLINE + IDLE_PACE + TICK + SLACK, elapsed
    never_named(found, HONEST)


@pytest.mark.slow
def test_a_seat_cycling_its_links_on_its_own_turn_is_voted_out_within_the_abandon_time(
    tmp_path,
):
    """On its first turn after the deal it makes no move (nobody else owes anything: no step
    has started), and drops its links every half second, coming back at once. Each return
    used to reset its absence: the game waited for ever. Its absence now adds up, and it is
    voted out as gone, with no finding, within the abandon time (and a vote round)."""
    abandon = 10.0
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *options(abandon)) for name in HONEST]
        start_hostile(port, "cycle-own-turn", env, tmp_path, "--cycle", "0.3,0.2",
                      options=options(abandon))  # fmt: skip
        began = wait_for(lambda: fact(tmp_path, "at"), 180, "the hostile's turn")[0]
        wait_for(lambda: honest_ended(env), abandon + 60, "the honest seats to vote it out")
        elapsed = time.time() - began
        found = results(bots, timeout=60, tmp_path=tmp_path)
    for result in found:
        assert result["cheat"] is None, result
        assert result["gone"] == [seat_of(result, "hostile")], result
    assert elapsed <= abandon + DEADLINE + SLACK, elapsed
    never_named(found, HONEST)
