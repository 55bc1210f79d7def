"""`bean-client play`: a whole game on this machine, with no set-up.

An embedded lobby listens on a free port of 127.0.0.1 and bots join it as separate
`bean-client bot` processes, exactly as they would join a lobby on the LAN; the person (unless
`--no-human`) joins from this process. With `--no-human`, every bot reports its result and
this process checks that all of them saw the same final state and a passing audit. With the
person, a game played to its end is followed by "Play again? [y/N]": yes sets up another
table, with a lobby and bots of its own (`play_tables`).

The bots run in sessions of their own (`--apart`): a Ctrl-C at the terminal reaches only the
person's client. A person who leaves the game (or whose client crashes) leaves the bots
playing: the game waits for them, and `bean-client resume FILE` takes them back. Bots never
run for ever: each ends with its game, and a person who does not come back within
--abandon-after seconds (300 by default) is voted out by the bots, which ends the game; a bot
then waits at most --step-deadline seconds (60) for a peer that missed the last step.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from twisted.internet.defer import DeferredList

from client.bots import bot_profile, spawn_bot
from client.net import load_or_create
from lobby.limits import LobbyLimits
from lobby.service import makeService

LOCAL = "127.0.0.1"
PLAY_LOBBY_PROFILE = "play-lobby"


async def start_lobby(reactor: Any) -> tuple[Any, int]:
    """The table's own lobby, on a free port, with a key of its own that stays the same from
    one `play` to the next (the clients remember a lobby's key by address: a port that comes
    round again must not show another key)."""
    options = {
        "listen": f"tcp:0:interface={LOCAL}",
        "limits": LobbyLimits(),
        "identity": load_or_create(PLAY_LOBBY_PROFILE),
    }
    service = makeService(options, reactor)
    service.startService()
    port = await service.getServiceNamed("listener").listening
    return service, port.getHost().port


def bot_command(args: argparse.Namespace, port: int, seats: int, number: int) -> list[str]:
    return [
        "-m", "client.cli", "bot", f"{LOCAL}:{port}",
        "--seats", str(seats),
        "--name", f"bot{number}",
        "--profile", bot_profile("play", number),
        "--strategy", args.strategy,
        "--listen", f"tcp:0:interface={LOCAL}",
        "--singleton-rule", args.singleton_rule,
        "--step-deadline", str(args.step_deadline),
        "--abandon-after", str(args.abandon_after),
        "--turn-seconds", str(args.turn_seconds),
        "--json",
        "--apart",
        # The person chose the proofs of this table of their own bots.
        *([] if args.proofs else ["--no-proofs", "--allow-weak-proofs"]),
    ]  # fmt: skip


async def play_tables(
    reactor: Any, args: argparse.Namespace, terminal: Any = None, game_screen: Any = None
) -> int:
    """`bean-client play`: a table, and with the person another one each time they say yes
    after a game played to its end; the exit status is the last table's. Tests bring a
    terminal of pipes and screens of their own (`game_screen(terminal)`)."""
    if args.no_human:
        return await play_against_bots(reactor, args)
    from client.screen import GameScreen, ask_play_again, terminal_for

    terminal = terminal or terminal_for(args)
    while True:
        screen = (game_screen or GameScreen)(terminal)
        code = await play_against_bots(reactor, args, screen)
        outcome = screen.game.outcome if screen.game is not None else None
        if outcome is None or outcome.final is None or not await ask_play_again(terminal):
            return code


async def play_against_bots(reactor: Any, args: argparse.Namespace, screen: Any = None) -> int:
    seats = args.bots + (0 if args.no_human else 1)
    service, port = await start_lobby(reactor)
    bots = [spawn_bot(reactor, bot_command(args, port, seats, n)) for n in range(1, args.bots + 1)]
    try:
        if args.no_human:
            print(f"{seats} bots are playing on this machine (lobby on {LOCAL}:{port})...")
        else:
            from client.screen import play_human_seat, screen_for

            screen = screen or screen_for(args)
            outcome = await play_human_seat(reactor, args, LOCAL, port, seats, screen)
            if outcome.final is None:  # the person left, or the game stopped
                if outcome.left and screen.game is not None:
                    bots = []  # they play on, and wait for the person
                    screen.terminal.say(left_words(screen.game.gamefile.path, args.abandon_after))
                return 0 if outcome.cheat is None else 1
        results = await DeferredList([bot.ended for bot in bots], consumeErrors=True)
    finally:
        for bot in bots:
            bot.stop(reactor)
        await service.stopService()
    return report(results, quiet=not args.no_human)


def left_words(path: Path, abandon_after: float) -> str:
    return (
        f"Your bots play on and wait for you: bean-client resume {path} "
        f"takes you back. If you do not come back within {abandon_after:g} s, they end the "
        "game without you."
    )


def report(results: list[tuple[bool, Any]], quiet: bool) -> int:
    """Print what the bots saw; 0 only if all of them agree on the final state and the audit
    passed for every one of them."""
    summaries = []
    for ok, value in results:
        out, err, code = value if ok else (b"", str(value).encode(), -1)
        lines = out.decode(errors="replace").strip().splitlines()
        try:
            summaries.append(json.loads(lines[-1]))
        except (IndexError, ValueError):
            print(f"a bot failed (exit {code}):\n{err.decode(errors='replace')[-2000:]}")
            return 1
    good = all(s["ok"] for s in summaries)
    same = len({(s["final_state"], tuple(s["scores"] or ())) for s in summaries}) == 1
    if not quiet or not (good and same):
        first = summaries[0]
        if first["scores"]:
            ranking = sorted(zip(first["scores"], first["names"], strict=True), reverse=True)
            print("final scores: " + ", ".join(f"{name} {score}" for score, name in ranking))
        for summary in summaries:
            if summary["cheat"] or summary["audit"]:
                print(f"  {summary['name']}: {summary['cheat'] or summary['audit']}")
        print(f"all {len(summaries)} bots agree on the final state: {'yes' if same else 'NO'}")
        print(f"audit: {'passed' if good else 'FAILED'}")
    return 0 if good and same else 1
