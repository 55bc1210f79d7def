"""Issue 26, problem 6, end to end: a seat's machine loses its power in the middle of a game
(tests/power_cut_client.py: what its game file had not synced is lost), and comes back with
`bean-client resume`; a hostile player (tests/hostile_player.py, `feed-other-version`) then
answers its requests with another signed version of its own messages, while the third seat
(h0) is frozen, so that the resumed seat hears no other. The resumed seat must never sign two
messages for one step: it sends what it signed before the cut again, and nobody names it
for equivocation. Before every message was synced before it left, the resumed seat signed a
second message for a step (the hostile recorded two versions of its step 19). Since decoding
is canonical, the other version the hostile feeds (the same body encoded another way) is
refused as a malformed message it signed, which names it: the resumed seat may stop there,
having signed nothing twice."""

from __future__ import annotations

import signal
import sys

import pytest

from tests.processes import (
    BIN,
    client_arguments,
    game_files,
    isolated_env,
    results,
    running_lobby,
    start,
    start_bot,
    wait_for,
)
from tests.test_hostile_players_e2e import fact, facts, never_named, start_hostile

PLAYERS = 3
DEADLINE, ABANDON = 15.0, 60.0
OPTIONS = (
    "--step-deadline", str(DEADLINE), "--abandon-after", str(ABANDON),
)  # fmt: skip
CUT_FROM = 20  # the first step the power may be cut at (the deal is over)


@pytest.mark.slow
def test_a_seat_back_from_a_power_cut_never_signs_two_messages_for_a_step(tmp_path):
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        h0 = start_bot(port, PLAYERS, "h0", env, tmp_path, *OPTIONS)
        victim = start(
            [sys.executable, "-m", "tests.power_cut_client", "--at", str(CUT_FROM),
             *client_arguments(port, PLAYERS, "victim", *OPTIONS)],
            env, tmp_path / "victim.log",
        )  # fmt: skip
        start_hostile(port, "feed-other-version", env, tmp_path, "--victim", "victim",
                      options=OPTIONS, players=PLAYERS)  # fmt: skip
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        assert victim.wait(120) == -signal.SIGKILL, "the power was never cut"
        h0.send_signal(signal.SIGSTOP)  # so that the resumed seat hears only the hostile
        try:
            resumed = start(
                [str(BIN / "bean-client"), "resume", str(files["victim"]), "--bot", "greedy",
                 "--json", "--step-deadline", str(DEADLINE), "--abandon-after", str(ABANDON)],
                env, tmp_path / "victim-resumed.log",
            )  # fmt: skip
            fed = wait_for(lambda: fact(tmp_path, "fed_other_version"), 30,
                           "the hostile to feed the resumed seat")  # fmt: skip
            played_past = lambda: any(s > min(fed) for s in fact(tmp_path, "victim_step"))  # noqa: E731
            wait_for(lambda: played_past() or resumed.poll() is not None, 20,
                     "the resumed seat to play past the step fed to it, or to stop")  # fmt: skip
        finally:
            h0.send_signal(signal.SIGCONT)
        found = results([h0, resumed], timeout=120, tmp_path=tmp_path)
    assert [f for f in facts(tmp_path, "victim") if "power_cut_at" in f]
    assert fact(tmp_path, "two_versions") == [], "the resumed seat signed a step twice"
    # Nobody holds two signed messages of the victim for one step, and a state made from
    # the other version of the hostile's message names nobody but the hostile (problem 1).
    never_named(found, ["h0", "victim"])
