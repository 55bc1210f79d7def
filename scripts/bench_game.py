"""A whole 5-bot game over loopback with proofs on, against the same game's rules alone.

    scripts/bench game [--json] [--bots 5] [--proof-rounds 40]

Runs bean-lobby and the bots as separate processes on 127.0.0.1 (as in a real game, each bot
verifies every other's proofs and runs the audit), then plays a game of as many greedy bots
in memory with the plain rules (no network, no crypto). Prints the wall time, the game time,
messages and bytes sent per player, the latency of game steps, of deck rounds (shuffles
and proofs) and of the step after the end (the audit) separately, and the overhead of the real
game over the plain one, all measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from client.bots import GreedyBot, play_local_game
from protocol.simulate import game_seed

BIN = Path(sys.executable).parent


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run_game(bots: int, proof_rounds: int) -> tuple[float, list[dict]]:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, XDG_CONFIG_HOME=f"{home}/config", XDG_DATA_HOME=f"{home}/data")
        lobby = subprocess.Popen(
            [str(BIN / "bean-lobby"), "--listen", "tcp:0:interface=127.0.0.1", "--quiet"],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            assert lobby.stdout is not None
            port = re.search(rb":(\d+)$", lobby.stdout.readline().strip())
            assert port, "bean-lobby did not say where it listens"
            started = time.perf_counter()
            players = [
                subprocess.Popen(
                    [
                        str(BIN / "bean-client"),
                        "bot",
                        f"127.0.0.1:{port.group(1).decode()}",
                        "--seats",
                        str(bots),
                        "--name",
                        f"bot{n}",
                        "--json",
                        "--listen",
                        "tcp:0:interface=127.0.0.1",
                        "--proof-rounds",
                        str(proof_rounds),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
                for n in range(bots)
            ]
            outputs = [p.communicate(timeout=900)[0] for p in players]
            wall = time.perf_counter() - started
        finally:
            lobby.terminate()
            lobby.wait(30)
    results = [json.loads(out.decode().strip().splitlines()[-1]) for out in outputs]
    if not all(r["ok"] for r in results):
        sys.exit("the benchmark game did not end well: " + json.dumps(results[0])[:500])
    return wall, results


def plain_game(bots: int) -> float:
    started = time.perf_counter()
    play_local_game([GreedyBot() for _ in range(bots)], game_seed(2026, bots))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bots", type=int, default=5)
    parser.add_argument("--proof-rounds", type=int, default=40)
    args = parser.parse_args()
    wall, results = run_game(args.bots, args.proof_rounds)
    plain = statistics.mean(plain_game(args.bots) for _ in range(3))
    game_s = statistics.mean(r["game_s"] for r in results)
    steps = [ms for r in results for ms in r["step_ms"]]
    deck = [ms for r in results for ms in r["deck_round_ms"]]
    audit = [ms for r in results for ms in r["audit_step_ms"]]
    summary = {
        "bots": args.bots,
        "proof_rounds": args.proof_rounds,
        "wall_s": round(wall, 2),
        "game_s": round(game_s, 2),
        "steps": results[0]["steps"],
        "messages_per_player": round(statistics.mean(r["frames_sent"] for r in results)),
        "bytes_per_player": round(statistics.mean(r["bytes_sent"] for r in results)),
        "step_p50_ms": round(percentile(steps, 0.50), 2),
        "step_p99_ms": round(percentile(steps, 0.99), 2),
        "deck_rounds": len(deck) // len(results),
        "deck_round_p50_ms": round(percentile(deck, 0.50), 1),
        "deck_round_max_ms": round(max(deck), 1),
        "audit_step_ms": round(statistics.mean(audit), 1),
        "plain_game_s": round(plain, 4),
        "overhead_ratio": round(game_s / plain, 1),
    }
    print(f"{args.bots} bots, {args.proof_rounds} proof rounds, over loopback, one process each")
    print(f"  wall time (processes started to all done): {summary['wall_s']} s")
    print(
        f"  game time (roster to result, mean of the bots): {summary['game_s']} s, "
        f"{summary['steps']} steps"
    )
    print(
        f"  per player: {summary['messages_per_player']} messages, "
        f"{summary['bytes_per_player'] / 1e6:.2f} MB sent (relays included)"
    )
    print(f"  game steps: p50 {summary['step_p50_ms']} ms, p99 {summary['step_p99_ms']} ms")
    print(
        f"  deck rounds (shuffle, proofs, relock): {summary['deck_rounds']}, "
        f"p50 {summary['deck_round_p50_ms']} ms, max {summary['deck_round_max_ms']} ms"
    )
    print(
        f"  the step after the end (final reports, seeds, the audit): "
        f"{summary['audit_step_ms']} ms, mean of the bots"
    )
    print(
        f"  the same game with the plain rules in memory: {summary['plain_game_s']} s; "
        f"overhead {summary['overhead_ratio']}x"
    )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
