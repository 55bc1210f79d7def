"""End to end, a hostile lobby's lie before the deal is named to every player, in words, at
once: real bots as separate processes over TCP on 127.0.0.1 and the real lobby with its rosters
rewritten (tests/hostile_lobby.py).

- `swap-key-bare`: everyone but bot1 is given another key for bot1, and nobody sits in the
  middle, so no link to bot1 can ever come up;
- `differ`: bot2's roster has seats 0 and 1 swapped, so bot2 refuses every link (each dialler
  shows another key than bot2's roster gives the seat it claims) and nobody hears the others'
  rosters over a link.

Each client that finds the lie refuses at once and signs its refusal with its roster; every
seat relays what it verified, and says its refusals first on every link it tries, so the
players who can never link with each other hear why as well. Nobody waits for the setup's
deadline, and nobody reads "no word from": silence is not what happened.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.processes import game_files, isolated_env, results, running_lobby, start_bot

#: The setup deadline the bots run with (`--step-deadline`): the old code said "no word from"
#: only then; a refusal in words comes long before it.
DEADLINE = 60
#: From the start of the bot processes to the last one's refusal: a second or two to start,
#: the lobby, a link or two, and the refusal grace (client/table_setup.py REFUSAL_GRACE).
IN_TIME = 25

#: What every player reads, by mode (the seats follow the order the bots reached the lobby,
#: so the player whose key was swapped is found in the words: one name, the same for all).
LIES = {
    "swap-key-bare": r"another key for (bot\d)",
    "differ": r"seats 0 and 1 swapped \((bot\d) and (bot\d)\)",
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(LIES))
def test_a_lobbys_lie_is_named_in_words_to_every_player(tmp_path, mode: str) -> None:
    env = isolated_env(tmp_path)
    with running_lobby(env, [mode]) as port:
        began = time.monotonic()
        bots = [
            start_bot(port, 3, f"bot{n}", env, tmp_path, "--step-deadline", str(DEADLINE))
            for n in range(3)
        ]
        found = results(bots, timeout=DEADLINE + 30, tmp_path=tmp_path)
        took = time.monotonic() - began
    assert all(not r["ok"] and "refused" in r for r in found), found
    said = {r["name"]: r["refused"] for r in found}
    named = set()
    for name, text in said.items():
        assert "no word from" not in text, (name, text)
        lie = re.search(LIES[mode], text)
        assert "the lobby gave" in text and lie, (name, text)
        named.add(frozenset(lie.groups()))
    assert len(named) == 1, said  # every player names the same seats
    assert took < IN_TIME, (took, said)
    assert not game_files(env)  # no card dealt
