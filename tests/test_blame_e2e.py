"""Issue 26 end to end: a verdict that names a seat rests on what that seat signed, never on
what a link did. Real `bean-client bot` processes, a hostile player of the tests' own
(tests/hostile_player.py) and the hostile lobby of tests/hostile_lobby.py in `on-path` mode:
every peer link crosses a relay in front of the seat it dials, and the test cuts chosen
links one way (SIGUSR1 to the lobby makes its `--block` cuts, SIGUSR2 lifts them).

Each test fails with `WrongVerdict` when a seat ends the game with another verdict than the
right one (an honest seat named, or the cheat not named); anything else (a game that does
not start or end in time) is the machinery failing, and fails the test another way.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from client.game import LINK_SILENCE
from client.gamefile import GameFile
from tests.processes import (
    client_arguments,
    game_files,
    isolated_env,
    lobby_process,
    next_line,
    results,
    start,
    start_bot,
    wait_for,
)
from tests.test_hostile_players_e2e import fact, never_named, seat_of, start_hostile

DEADLINE = 4.0
ABANDON = 30.0  # longer than any cut here: nobody is voted out for one
OPTIONS = (
    "--step-deadline", str(DEADLINE), "--abandon-after", str(ABANDON),
)  # fmt: skip
MID_GAME = 40  # a step well past the deal


class WrongVerdict(AssertionError):
    """A seat ended the game with a verdict the test says is wrong."""


def verdicts(found: list[dict[str, Any]]) -> dict[str, str]:
    """How each seat's game ended, in words: whom it named and why, or who was voted out."""
    said = {}
    for result in found:
        names, cheat = result["names"], result["cheat"]
        if cheat is not None:
            named = " and ".join(names[seat] for seat in cheat["seats"]) or "nobody"
            said[result["name"]] = f"named {named}: {cheat['reason']} (step {cheat['step']})"
        elif result["gone"]:
            said[result["name"]] = "voted out " + ", ".join(names[s] for s in result["gone"])
        elif result["ended_by"] is not None:
            said[result["name"]] = f"followed {names[result['ended_by']]}'s ending"
        else:
            said[result["name"]] = "played to the end" + ("" if result["ok"] else " (not ok)")
    return said


def judged(check: Any, found: list[dict[str, Any]], honest: list[str]) -> None:
    """`check` each result and `never_named` the honest; a failure of either is a wrong
    verdict, reported with what every seat said."""
    try:
        for result in found:
            check(result)
        never_named(found, honest)
    except AssertionError as wrong:
        raise WrongVerdict(f"{verdicts(found)}") from wrong


def judged_as_they_end(
    check: Any, bots: list[subprocess.Popen[bytes]], honest: list[str], tmp_path: Path
) -> None:
    """`judged`, each seat's result as it comes, in order: a wrong verdict fails the test
    as soon as one is in, without waiting for seats that it left stuck."""
    found: list[dict[str, Any]] = []
    for bot in bots:
        found += results([bot], timeout=120, tmp_path=tmp_path)
        judged(check, found, honest)


def cut(lobby: subprocess.Popen[bytes], signum: int, said: str) -> None:
    """Make (SIGUSR1) or lift (SIGUSR2) the lobby's cuts; back once it says it has."""
    lobby.send_signal(signum)
    line = next_line(lobby, 10)
    assert line == f"{said}\n", line


def game_at(env: dict[str, str], names: list[str], step: int) -> None:
    """Wait for the game to start and `names[0]` to have played `step` steps."""
    files = wait_for(
        lambda: len(game_files(env)) == len(names) and game_files(env), 60, "the game to start"
    )
    wait_for(lambda: len(GameFile.read(files[names[0]]).steps) >= step, 120, f"step {step}")


@pytest.mark.slow
def test_a_fork_through_a_one_way_cut_names_the_equivocator_and_no_honest_seat(tmp_path):
    """Problem 1. Seats h1, h2, hostile; what h1 says to h2 is cut (the relay of seat 1
    carries that link only). At its next own turn the hostile player gives h1 its message
    with its moves and h2 another without them, then relays nothing of later steps. h2's
    next message, made on the other version, reaches h1: h1's state differs from h2's, but
    that only says someone signed two versions, and h1's own version cannot reach h2 while
    the cut lasts. The cut lasts longer than the step deadline and the link's silence limit,
    then is lifted: both honest seats name the hostile for its two signed versions, and
    nobody else. (About 60 s.)"""
    env = isolated_env(tmp_path)
    honest = ["h1", "h2"]
    hostile_lobby = ["on-path", "--seat-order", "h1,h2,hostile", "--block", "1:up"]
    with lobby_process(env, hostile_lobby) as (port, lobby):
        bots = [start_bot(port, 3, name, env, tmp_path, *OPTIONS) for name in honest]
        hostile = start_hostile(port, "equivocate-split", env, tmp_path, players=3)
        game_at(env, [*honest, "hostile"], MID_GAME)
        cut(lobby, signal.SIGUSR1, "blocked")
        cut_at = time.monotonic()
        hostile.send_signal(signal.SIGUSR1)
        (step,) = wait_for(lambda: fact(tmp_path, "equivocated"), 30, "the hostile's own turn")
        split_at = time.monotonic()
        # The cut lasts past the link's silence limit, and a step deadline past the split.
        lift_at = max(cut_at + LINK_SILENCE + 5, split_at + DEADLINE + 2)
        time.sleep(lift_at - time.monotonic())
        cut(lobby, signal.SIGUSR2, "lifted")

        def names_the_hostile_for_its_two_versions(result: dict[str, Any]) -> None:
            cheat = result["cheat"]
            assert cheat is not None and cheat["seats"] == [seat_of(result, "hostile")]
            assert "equivocation" in cheat["reason"] and cheat["step"] == step

        judged_as_they_end(names_the_hostile_for_its_two_versions, bots, honest, tmp_path)


@pytest.mark.slow
def test_a_seat_whose_incoming_links_are_cut_is_never_named(tmp_path):
    """Problem 2. Four honest seats; mid-game, at a step that waits for h0 alone (h0 takes
    two seconds to plant: tests/hostile_player.py's `think`, an honest player), every link
    into the victim (the last seat: its relay carries every link to it) is cut one way, from
    then until the step deadline and 5 s more after h0's move. The victim still talks to
    every seat (every second: the others last told it of an earlier step), but hears of no
    move, so it owes no message: nobody may name it. The cut is shorter than the abandon
    time, so nobody is voted out either; once it is lifted, the links are dialled again and
    the game goes on to its end. (About 50 s.)"""
    env = isolated_env(tmp_path)
    names = ["h0", "h1", "h2", "victim"]
    hostile_lobby = ["on-path", "--seat-order", ",".join(names), "--block", "3:up"]
    with lobby_process(env, hostile_lobby) as (port, lobby):
        thinker = start(
            [sys.executable, "-m", "tests.hostile_player", "think",
             *client_arguments(port, 4, "h0", *OPTIONS)],
            env, tmp_path / "h0.log",
        )  # fmt: skip
        bots = [thinker] + [start_bot(port, 4, name, env, tmp_path, *OPTIONS) for name in names[1:]]
        game_at(env, names, MID_GAME)
        thinker.send_signal(signal.SIGUSR1)
        wait_for(lambda: fact(tmp_path, "thinking", "h0"), 30, "h0's turn to plant")
        cut(lobby, signal.SIGUSR1, "blocked")
        wait_for(lambda: fact(tmp_path, "moved", "h0"), 10, "h0's move")
        time.sleep(DEADLINE + 5)  # the cut lasts, from the step's start
        cut(lobby, signal.SIGUSR2, "lifted")

        def played_to_the_end(result: dict[str, Any]) -> None:
            assert result["ok"] and result["cheat"] is None and not result["gone"]

        judged_as_they_end(played_to_the_end, bots, names, tmp_path)


def test_verdicts_say_who_named_whom_and_a_wrong_one_is_reported_as_such():
    """The helpers the tests above fail with: each seat's ending in words, and WrongVerdict."""
    names = ["a", "b"]
    named = {"name": "a", "names": names, "gone": [], "ended_by": None, "ok": False,
             "cheat": {"seat": 1, "seats": [1], "step": 7, "reason": "did it"},
             "disagreeing": [], "audit": []}  # fmt: skip
    played = named | {"name": "b", "cheat": None, "ok": True}
    assert verdicts([named, played]) == {"a": "named b: did it (step 7)", "b": "played to the end"}
    with pytest.raises(WrongVerdict, match="named b: did it"):
        judged(lambda result: None, [named, played], names)
