"""Issue 26, problem 7, end to end: a hostile player (tests/hostile_player.py) drops its link
to an honest seat every half second and, on each new link, asks it about every step of the
game so far. What the honest seat sends it to catch up is bounded per time window, however
often the link comes back; the game goes on to its end and nobody is named."""

from __future__ import annotations

import math

import pytest

from protocol.catch_up import CATCHUP_BYTES, CATCHUP_WINDOW
from tests.processes import isolated_env, results, running_lobby, start_bot
from tests.test_hostile_players_e2e import fact, never_named, seat_of, start_hostile

PLAYERS = 3
THINK = 0.1  # seconds the hostile takes over each of its messages: the game lasts ~40 s
OPTIONS = (
    "--step-deadline", "4", "--abandon-after", "6",
)  # fmt: skip


@pytest.mark.slow
def test_reconnect_cycling_costs_the_victim_bounded_bytes(tmp_path):
    """The bound: what h0 sent the hostile is at most the catch-up budget for each window the
    game lasted (and one more: the windows need not line up with the game's start), plus
    twice what h1 sent it (the game's own messages, which h1 sends too). Before the bound,
    h0 sent it 8.3 MB in 44 s (a bound of 3.6 MB); with it, 1.5 MB in 40 s."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1"]
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in honest]
        hostile = start_hostile(port, "reconnect-walk", env, tmp_path, "--victim", "h0",
                                "--slow", str(THINK), options=OPTIONS,
                                players=PLAYERS)  # fmt: skip
        found = results([*bots, hostile], timeout=240, tmp_path=tmp_path)
    h0, h1, _ = found
    walks = fact(tmp_path, "walks")
    assert walks and max(walks) >= 20, f"only {walks} walks"
    to_hostile = h0["bytes_sent_to"][seat_of(h0, "hostile")]
    baseline = h1["bytes_sent_to"][seat_of(h1, "hostile")]
    windows = math.ceil(h0["game_s"] / CATCHUP_WINDOW) + 1
    bound = CATCHUP_BYTES * windows + 2 * baseline
    assert to_hostile <= bound, (
        f"h0 sent the hostile {to_hostile} bytes in {h0['game_s']} s (h1 sent it {baseline}): "
        f"more than {bound}"
    )
    for result in found[:2]:
        assert result["ok"] and result["cheat"] is None and not result["gone"], result
    never_named(found, honest)
