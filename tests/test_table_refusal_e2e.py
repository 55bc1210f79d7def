"""End to end, a hostile lobby's lie before the deal is named to every player, in words, at
once: real bots as separate processes over TCP on 127.0.0.1 and the real lobby with its rosters
rewritten (tests/hostile_lobby.py).

- `swap-key-bare`: everyone but the player at seat 1 is given another key for that player,
  and nobody sits in the middle, so no link to it can ever come up;
- `differ`: the third player's roster has seats 0 and 1 swapped, so it refuses every link
  (each dialler shows another key than its roster gives the seat claimed) and nobody hears
  the others' rosters over a link;
- `bot-seat`: the lobby seats its own client under the name of a person's bot.

Each client that finds the lie refuses at once and signs its refusal with its roster; every
seat relays what it verified, and says its refusals first on every link it tries, so the
players who can never link with each other hear why as well. Nobody waits for the setup's
deadline, and nobody reads "no word from": silence is not what happened.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from tests.processes import (
    BIN,
    game_files,
    isolated_env,
    results,
    running_lobby,
    start_bot,
)
from tests.test_leaving_e2e import Lines
from tests.test_repl import connect_arguments

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


def start_person(port: int, name: str, env: dict[str, str], tmp_path) -> subprocess.Popen[bytes]:
    """A person at the lobby prompt (tests/repl_person.py): lines in, what is shown out."""
    command = [str(BIN / "python"), "-m", "tests.repl_person", *connect_arguments(port, name)]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=env, start_new_session=True,
    )  # fmt: skip


BOT_SEATED = r"^Your bot (bot-\w+) \(planner\) is in the room, ready"


@pytest.mark.slow
def test_a_lobby_that_puts_its_key_at_a_persons_bot_seat_is_refused_before_the_deal(tmp_path):
    """ann (a person at the lobby prompt) types `create 3` and `bot`; a plain bot joins. The
    lobby gives ann and the plain bot a roster with its own client (`impostor`) at the bot's
    seat, under the bot's name, and the real bot a roster of its own: ann's client knows its
    bot's key, finds another at its seat, and refuses before any link; the plain bot hears
    why. No card is dealt."""
    env = isolated_env(tmp_path)
    with running_lobby(env, ["bot-seat"]) as port:
        impostor = start_bot(port, 7, "impostor", env, tmp_path)  # the lobby's own client
        ann = Lines(start_person(port, "ann", env, tmp_path))
        try:
            ann.until(r"^Connected to the lobby at", 60)
            ann.type("create 3")
            ann.until(r"Type ready when you are", 30)
            ann.type("bot")
            bot = re.search(BOT_SEATED, ann.until(BOT_SEATED, 60)).group(1)
            ann.type("ready")
            plain = start_bot(port, 3, "plain", env, tmp_path)
            said = ann.until(r"the game did not start", DEADLINE + 30)
            (found,) = results([plain], timeout=DEADLINE + 30, tmp_path=tmp_path)
        finally:
            ann.process.kill()
            impostor.kill()
    assert f"the lobby put another key at your bot {bot}'s seat" in said, said
    assert f"the lobby put another key at ann's bot {bot}'s seat" in found["refused"], found
    assert not game_files(env)  # no card dealt
