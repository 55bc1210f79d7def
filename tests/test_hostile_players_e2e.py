"""Issue 12 end to end: a hostile player of the tests' own (tests/hostile_player.py) against
honest `bean-client bot` processes and a real `bean-lobby` on 127.0.0.1. It can neither read
a hand, nor stall the game, nor exhaust an honest client, nor get an honest seat blamed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from client.game import HEARTBEAT_WAITING
from client.gamefile import GameFile
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

PLAYERS = 4
DEADLINE = 4.0
ABANDON = 6.0
OPTIONS = (
    "--step-deadline", str(DEADLINE), "--abandon-after", str(ABANDON),
)  # fmt: skip
MEMORY_BOUND = 200 * 1024 * 1024  # bytes an honest client may hold under any flood


def start_hostile(
    port: int,
    attacks: str,
    env: dict[str, str],
    tmp_path: Path,
    *extra: str,
    options: tuple[str, ...] = OPTIONS,
    players: int = PLAYERS,
) -> subprocess.Popen[bytes]:
    """tests/hostile_player.py as the player `hostile`, with its log in tmp_path."""
    arguments = client_arguments(port, players, "hostile", *options)
    command = [sys.executable, "-m", "tests.hostile_player", attacks, *extra, *arguments]
    return start(command, env, tmp_path / "hostile.log")


def facts(tmp_path: Path, name: str = "hostile") -> list[dict[str, Any]]:
    """What the hostile player said it did (one JSON object per line of its log)."""
    found = []
    for line in (tmp_path / f"{name}.log").read_text().splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def fact(tmp_path: Path, key: str, name: str = "hostile") -> list[Any]:
    return [f[key] for f in facts(tmp_path, name) if key in f]


def seat_of(result: dict[str, Any], name: str) -> int:
    return result["names"].index(name)


def peak_memory(process: subprocess.Popen[bytes], timeout: float) -> int:
    """The process's peak resident memory (VmHWM in /proc), read until it exits."""
    peak = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            break
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]) * 1024)
        try:
            process.wait(timeout=0.1)  # the reading interval; returns at once when it exits
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        raise AssertionError(f"the process did not exit within {timeout} s")
    return peak


def never_named(results_: list[dict[str, Any]], honest: list[str]) -> None:
    """No verdict of any honest client names an honest seat: no cheat, no final report said
    to differ, no audit finding (a seat voted out is no verdict: it was away)."""
    for result in results_:
        cheat = result["cheat"] or {"seats": []}
        named = [result["names"][seat] for seat in cheat["seats"]]
        disagreeing = [result["names"][seat] for seat in result["disagreeing"]]
        assert not set(named + disagreeing) & set(honest), result
        held = [finding for finding in result["audit"] if not finding.startswith("seat ")]
        assert not held, result
        against = {int(f.split(":")[0].split()[1]) for f in result["audit"]}
        assert not {result["names"][s] for s in against} & set(honest), result


@pytest.mark.slow
def test_floods_and_far_future_messages_cost_bounded_memory_and_a_wrong_final_names_its_author(
    tmp_path,
):
    """Weaknesses 2, 3 and 6 (the final report): the hostile player stops reading its link
    to h0 and floods it with heartbeats asking for the whole game, sends it signed messages
    for step 10^7 full of tiny values, then a frame longer than any link allows, and at the
    end reports a wrong final state. h0's memory stays under the bound, nothing it dropped
    is relayed, the game goes on to its end, and every honest client names the author of
    the wrong report, and only it."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in honest]
        hostile = start_hostile(port, "flood,far-future,wrong-final", env, tmp_path,
                                "--victim", "h0")  # fmt: skip
        peak = peak_memory(bots[0], timeout=300)
        found = results(bots, timeout=120, tmp_path=tmp_path)
        hostile.kill()
        hostile.wait(10)
    assert peak < MEMORY_BOUND, f"h0 held {peak / 2**20:.0f} MiB"
    assert fact(tmp_path, "flooded") and max(fact(tmp_path, "flooded")) >= 1000
    far = max(fact(tmp_path, "far_future_sent"))
    assert far >= 50 and fact(tmp_path, "oversized") == [1]
    by_name = {result["name"]: result for result in found}
    assert by_name["h0"]["dropped"].get("ahead of the window", 0) >= far // 2
    for name in ("h1", "h2"):  # h0 relayed none of it
        assert by_name[name]["dropped"].get("ahead of the window", 0) == 0, by_name[name]
    for result in found:
        assert result["scores"] is not None and result["audit"] == [], result
        assert result["disagreeing"] == [seat_of(result, "hostile")], result
    never_named(found, honest)


@pytest.mark.slow
def test_a_seed_thief_gets_seeds_only_once_the_end_is_on_disk_and_nobody_plays_on(tmp_path):
    """Weakness 1: h2 crashes and stays away; the others vote to end without it. The hostile
    player votes too, takes the seeds, never ends nor reveals its own, and plays on. Every
    seed it got was already backed by its owner's recorded ending; h2, resumed, learns the
    ending and plays no step past it; the hostile's withheld seed is held against it."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    with running_lobby(env) as port:
        bots = {name: start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in honest}
        hostile = start_hostile(port, "seed-thief", env, tmp_path)
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        wait_for(lambda: len(GameFile.read(files["h2"]).steps) >= 30, 120, "step 30")
        bots["h2"].send_signal(signal.SIGKILL)
        bots["h2"].wait(10)
        wait_for(lambda: GameFile.read(files["h0"]).end is not None, 60, "h0 to end the game")
        resumed = start(
            [str(BIN / "bean-client"), "resume", str(files["h2"]), "--bot", "greedy", "--json",
             "--step-deadline", str(DEADLINE), "--abandon-after", str(ABANDON)],
            env, tmp_path / "h2-resumed.log",
        )  # fmt: skip
        found = results([bots["h0"], bots["h1"], resumed], timeout=120, tmp_path=tmp_path)
        hostile.kill()
        hostile.wait(10)
    seeds = [f for f in facts(tmp_path) if "seed_from" in f]
    assert len({f["seed_from"] for f in seeds}) >= 2, facts(tmp_path)
    assert all(f["ending_on_disk"] for f in seeds), seeds
    ended = {name: GameFile.read(files[name]) for name in honest}
    step = ended["h0"].end["step"]
    for name, saved in ended.items():
        assert saved.end is not None, name
        # h2 may play the step the others ended at, from their messages for it, signed before
        # they voted (as it went down, or back before it heard of the ending); never a later one.
        last = step if name == "h2" else step - 1
        assert len(saved.steps) - 1 <= last, f"{name} played step {len(saved.steps) - 1}"
    h0 = found[0]
    thief = seat_of(h0, "hostile")
    assert h0["gone"] == [seat_of(h0, "h2")]
    assert h0["audit"] and all(f.startswith(f"seat {thief}:") for f in h0["audit"]), h0
    assert any("withheld its seed" in f for f in h0["audit"]), h0
    never_named(found, honest)


@pytest.mark.slow
def test_another_games_messages_blame_nobody_and_disconnect_cycling_is_named_in_time(tmp_path):
    """Weaknesses 4 and 5, in a rematch of two games with the same seats and keys. In the
    second, the hostile player relays h1's signed messages of the first (as they were, and
    under this game's header), then withholds a step and drops its links just before each
    deadline, coming back just after. Nobody blames h1; the staller is named or voted out
    within the deadline plus the abandon time of the step's start."""
    honest = ["h0", "h1", "h2"]
    first_env, first_logs = isolated_env(tmp_path), tmp_path / "first"
    second_env = first_env | {"XDG_DATA_HOME": str(tmp_path / "data-second")}  # same keys
    first_logs.mkdir()
    kept = tmp_path / "h1-frames"
    with running_lobby(first_env) as port:
        first = [start_bot(port, PLAYERS, name, first_env, first_logs, *OPTIONS)
                 for name in honest]  # fmt: skip
        hostile = start_hostile(port, "record", first_env, first_logs, "--victim", "h1",
                                "--record", str(kept))  # fmt: skip
        assert all(result["ok"] for result in results(first, 180, first_logs))
        hostile.wait(60)
        bots = [start_bot(port, PLAYERS, name, second_env, tmp_path, *OPTIONS) for name in honest]
        start_hostile(port, "replay,cycle", second_env, tmp_path, "--victim", "h1",
                      "--replay", str(kept), "--cycle", f"{DEADLINE - 2:g},3")  # fmt: skip
        began = wait_for(lambda: fact(tmp_path, "at"), 180, "the hostile to withhold a step")[0]

        def honest_ended() -> bool:
            files = game_files(second_env)
            return all(GameFile.read(files[name]).end is not None for name in honest)

        wait_for(honest_ended, DEADLINE + ABANDON + 30, "the honest seats to end the game")
        elapsed = time.time() - began
        found = results(bots, timeout=60, tmp_path=tmp_path)
    assert fact(tmp_path, "replayed") and fact(tmp_path, "replayed")[0] > 0
    for result in found:
        staller = seat_of(result, "hostile")
        cheat = result["cheat"]
        assert (cheat is not None and cheat["seats"] == [staller]) or result["gone"] == [staller]
        assert result["gone"] in ([], [staller]), result
        assert result["dropped"].get("another game", 0) > 0, result
    # The bound the room knows, plus a heartbeat tick and the vote going round.
    assert elapsed <= DEADLINE + ABANDON + 3, elapsed
    never_named(found, honest)


@pytest.mark.slow
def test_a_frozen_seat_and_a_staller_missing_one_step_only_the_staller_is_named(tmp_path):
    """Weakness 6 (several seats owe a step): at a step from 30 on that every seat owes,
    h1's machine goes to sleep before it sends its message (its links stay up, it says
    nothing), and the hostile player, connected and talking, withholds its own. Each is
    judged on what it owes: the staller is named, h1 is not; woken, h1 blames nobody honest
    either."""
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in ("h0", "h2")]
        start_hostile(port, "withhold-at", env, tmp_path, "--at", "30")
        sleeper = start(
            [sys.executable, "-m", "tests.hostile_player", "freeze-at", "--at", "30",
             *client_arguments(port, PLAYERS, "h1", *OPTIONS)],
            env, tmp_path / "h1.log",
        )  # fmt: skip
        files = wait_for(lambda: len(game_files(env)) == PLAYERS and game_files(env), 60,
                         "the game to start")  # fmt: skip
        try:
            wait_for(lambda: all(GameFile.read(files[n]).end for n in ("h0", "h2")), 120,
                     "h0 and h2 to stop the game")  # fmt: skip
        finally:
            sleeper.send_signal(signal.SIGCONT)
        found = results([*bots, sleeper], timeout=120, tmp_path=tmp_path)
    (step,) = [f["frozen_at"] for f in facts(tmp_path, "h1") if "frozen_at" in f]
    assert fact(tmp_path, "withholding") == [step]
    for result in found[:2]:
        cheat = result["cheat"]
        assert cheat is not None and cheat["seats"] == [seat_of(result, "hostile")], result
        assert f"withheld its message for step {step}" in cheat["reason"]
    never_named(found, ["h0", "h1", "h2"])


@pytest.mark.slow
def test_a_bad_deck_with_the_proofs_off_is_disputed_and_the_audit_names_its_author(tmp_path):
    """Weakness 6 (proofs off): the hostile player puts points of no card into its shuffle,
    which nothing checks without the shuffle proofs. When such a card is opened, the deal is
    broken: every seat records the end, reveals its seed, and the audit of what was played
    names the hostile player, and nobody else."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    options = ("--no-proofs", "--allow-weak-proofs", "--step-deadline", str(DEADLINE))
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *options) for name in honest]
        start_hostile(port, "bad-shuffle", env, tmp_path, options=options)
        found = results(bots, timeout=120, tmp_path=tmp_path)
    for result in found:
        cheat = result["cheat"]
        saw_it = cheat is not None and cheat["seat"] is None  # the deal broke here
        assert saw_it or result["ended_by"] is not None, result  # or at the seat it followed
        spoiler = seat_of(result, "hostile")
        assert result["audit"] and all(f.startswith(f"seat {spoiler}:") for f in result["audit"])
    never_named(found, honest)


@pytest.mark.slow
def test_a_bad_deck_with_the_proofs_on_stops_the_deal_and_names_its_author(tmp_path):
    """The same spoiled shuffle with the proofs on: its shuffle argument does not prove it, so
    every honest seat stops the game in the deal, before any card is opened, and names the
    hostile player on its own signed message."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    options = ("--step-deadline", str(DEADLINE))
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *options) for name in honest]
        start_hostile(port, "bad-shuffle", env, tmp_path, options=options)
        found = results(bots, timeout=120, tmp_path=tmp_path)
    assert fact(tmp_path, "spoiled_shuffle") == [0], "the attack never began"
    for result in found:
        cheat = result["cheat"]
        assert cheat is not None and cheat["seats"] == [seat_of(result, "hostile")], result
        assert "shuffle proof" in cheat["reason"], cheat
    never_named(found, honest)


@pytest.mark.slow
def test_a_seat_that_sends_its_messages_to_one_seat_only_holds_nobody_up(tmp_path):
    """Each of the hostile player's step messages goes to one other seat only, and it never
    answers for them: the others must learn them from that seat, in about a round trip, not
    wait for the next heartbeat (a second) at every step. The game ends as usual, nobody is
    named (every message was signed and sent to someone), and no honest seat waited a
    heartbeat for a tenth of its steps."""
    env = isolated_env(tmp_path)
    honest = ["h0", "h1", "h2"]
    with running_lobby(env) as port:
        bots = [start_bot(port, PLAYERS, name, env, tmp_path, *OPTIONS) for name in honest]
        hostile = start_hostile(port, "selective", env, tmp_path)
        found = results([*bots, hostile], timeout=180, tmp_path=tmp_path)
    assert fact(tmp_path, "sent_to_one_seat_only"), "the attack never began"
    for result in found:
        assert result["ok"] and result["cheat"] is None and not result["gone"], result
        steps = sorted(result["step_ms"])
        assert steps[int(0.9 * len(steps))] < 0.5 * HEARTBEAT_WAITING * 1000, (
            result["name"],
            steps[-40:],
        )
    never_named(found, honest)
