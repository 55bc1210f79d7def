"""End to end, with a hostile network and a hostile lobby (tests/hostile_lobby.py, the real
lobby code with its rosters rewritten; tests/relay.py on the path of every peer link): real
bots as separate processes over TCP on 127.0.0.1.

- An on-path machine that records every byte of a whole game reads no message, and one that
  flips, injects, replays and drops on a link gets nobody blamed: the game ends agreed, the
  audit passing.
- A lobby that lowers the options for one client, adds a seat to one client's roster, swaps a
  key and relays the link, or reuses a game id: caught before any card is dealt, saying what
  the lobby did (other lies of the lobby's: tests/test_table_refusal_e2e.py).
- A player whose key changed since the last game is warned about, by name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgpack
import pytest

from client.gamefile import GameFile
from tests.processes import (
    client_arguments,
    game_files,
    isolated_env,
    kill_leftovers,
    results,
    running_lobby,
    start,
    start_bot,
    wait_for,
)

WEAK = ()
SECRET = "the runner beans are under the third field"


@pytest.mark.slow
def test_a_machine_on_every_link_reads_nothing_and_its_tampering_blames_nobody(tmp_path):
    env = isolated_env(tmp_path)
    dump = tmp_path / "wire.msgpack"
    hostile = ["on-path", "--dump", str(dump)]
    hostile += [f"--tamper={kind}" for kind in ("flip", "inject", "replay", "drop")]
    with running_lobby(env, hostile) as port:
        chatty = start(
            [sys.executable, "-m", "tests.chatty_bot", SECRET,
             *client_arguments(port, 3, "chatty", *WEAK)],
            env, tmp_path / "chatty.log",
        )  # fmt: skip
        bots = [chatty] + [start_bot(port, 3, f"bot{n}", env, tmp_path, *WEAK) for n in (1, 2)]
        found = results(bots, timeout=240, tmp_path=tmp_path)
    assert all(r["ok"] and r["cheat"] is None and r["agreed"] for r in found), found
    assert len({r["final_state"] for r in found}) == 1 and all(r["audit"] == [] for r in found)
    relays = msgpack.unpackb(dump.read_bytes())
    connections = [c for relay in relays for c in relay]
    wire = b"".join(up + down for up, down in connections)
    assert len(wire) > 500_000  # a whole game, deal and audit included
    # Short keys as msgpack writes them (a bare four bytes would turn up in a megabyte of
    # ciphertext about once in 4,000 games).
    keys = [msgpack.packb(key) for key in ("type", "step", "chat", "holding", "table_commit")]
    for plain in (SECRET.encode(), *keys):
        assert plain not in wire, plain
    # The tampered link (seat 0 to seat 1) broke at each of the four attacks and came back:
    # a connection for each attack, then the one that lasted.
    assert len(relays[1]) >= 4 + 1


def refusals(found: list[dict]) -> dict[str, str]:
    assert all(not r["ok"] and "refused" in r for r in found), found
    return {r["name"]: r["refused"] for r in found}


@pytest.mark.slow
def test_options_lowered_for_one_client_are_refused_before_the_deal(tmp_path):
    env = isolated_env(tmp_path)
    with running_lobby(env, ["lower-options"]) as port:
        bots = [start_bot(port, 3, f"bot{n}", env, tmp_path) for n in range(3)]
        said = refusals(results(bots, timeout=90, tmp_path=tmp_path))
    (victim,) = [name for name, text in said.items() if text.startswith("This client refuses")]
    assert (
        "the lobby changed the terms of the room you joined: proofs is off, not on"
        in (said[victim])
    )
    for name, text in said.items():
        if name != victim:
            assert f"{victim} will not play this table" in text, text
    assert not game_files(env)  # no game was begun, no card dealt


@pytest.mark.slow
def test_a_roster_with_a_seat_more_than_the_room_is_refused_before_the_deal(tmp_path):
    """The lobby gives one client a roster with a seat of its own added: that client refuses
    it by itself, in words, and the others hear why."""
    env = isolated_env(tmp_path)
    with running_lobby(env, ["extra-seat"]) as port:
        bots = [start_bot(port, 3, f"bot{n}", env, tmp_path) for n in range(3)]
        said = refusals(results(bots, timeout=90, tmp_path=tmp_path))
    victims = [name for name, text in said.items() if text.startswith("This client refuses")]
    assert len(victims) == 1, said
    (victim,) = victims
    assert "the lobby's roster has 4 seats; the room you joined has 3" in said[victim]
    for name, text in said.items():
        if name != victim:
            assert f"{victim} will not play this table" in text, text
    assert not game_files(env)


@pytest.mark.slow
def test_a_key_swapped_with_the_lobby_in_the_middle_is_refused_naming_the_key(tmp_path):
    """The lobby relays the link between seats 0 and 1 with keys of its own: the links come
    up, but the rosters the seats commit to differ, and each seat that sees one refuses at
    once, naming the key; the others read it."""
    env = isolated_env(tmp_path)
    with running_lobby(env, ["swap-key"]) as port:
        bots = [start_bot(port, 3, f"bot{n}", env, tmp_path) for n in range(3)]
        said = refusals(results(bots, timeout=90, tmp_path=tmp_path))
    for text in said.values():
        assert "the lobby gave" in text and "another roster than yours" in text, said
        assert "'s key is " in text and "no word from" not in text, said  # names the key
    assert not game_files(env)


@pytest.mark.slow
def test_a_reused_game_id_gives_another_identity_and_a_changed_key_is_named(tmp_path):
    env = isolated_env(tmp_path)
    own = {name: isolated_env(tmp_path / name) for name in ("bot0", "bot1", "bot2")}
    for name in own:  # each player its own machine (keys, known players); one games folder
        own[name]["XDG_DATA_HOME"] = env["XDG_DATA_HOME"]
    folder = Path(env["XDG_DATA_HOME"], "bohnanza-p2p", "games")
    with running_lobby(env, ["reuse-id"]) as port:
        for name in own:
            start_bot(port, 3, name, own[name], tmp_path)
        wait_for(lambda: len(game_files(env)) == 3, 60, "the first game to start")
        kill_leftovers()  # no need to play it out: its identity is in its game files
        before = {GameFile.read(path).table.identity for path in folder.glob("*.game")}
        # The same players again, bot2 with a new key (as on a new machine).
        start_bot(port, 3, "bot0", own["bot0"], tmp_path)
        start_bot(port, 3, "bot1", own["bot1"], tmp_path)
        start_bot(port, 3, "bot2", own["bot2"], tmp_path, "--profile", "bot2-new-machine")
        wait_for(lambda: len(list(folder.glob("*.game"))) == 6, 60, "the second game")
        kill_leftovers()
    games = [GameFile.read(path) for path in folder.glob("*.game")]
    assert {(g.roster.room_id, g.roster.game_id) for g in games} == {(1, bytes(16))}
    after = {g.table.identity for g in games} - before
    assert len(before) == 1 and len(after) == 1  # each table agreed; the two differ
    for name in ("bot0", "bot1"):
        log = (tmp_path / f"{name}.log").read_text()
        assert "WARNING: bot2's key has changed since your last game with bot2" in log, log
