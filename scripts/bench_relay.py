"""A whole 5-bot game over loopback whose links all go through the lobby's relay, beside the
same game over direct links, in one run; and what relaying a table costs the lobby.

    scripts/bench relay [--json] [--bots 5] [--no-proofs] [--seed TEXT]
                        [--strategy planner|greedy|random]

The direct game is `scripts/bench game`'s sealed run (bean-lobby, bots as processes on
127.0.0.1). The relayed one is the same game (the same secrets, so the same cards and moves) at
the tests' lobby that gives every seat a port where nothing listens (tests/hostile_relay.py
with `--unreachable all`: the real lobby and relay, honest): every link is dialled, refused,
and made through the relay. Each prints the wall time, the game time, the steps' p50 and p99;
then the relayed game over the direct one, and the lobby's CPU seconds and peak memory in each
(the difference is what relaying one table cost it).
"""

from __future__ import annotations

import argparse
import json
import sys

from bench_game import LOBBY, run_game, summarize

from client.bots import STRATEGIES

RELAYING_LOBBY = [sys.executable, "-m", "tests.hostile_relay", "--unreachable", "all"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bots", type=int, default=5)
    parser.add_argument("--no-proofs", dest="proofs", action="store_false")
    parser.add_argument("--seed", default="bench", help="the same seed plays the same game")
    parser.add_argument("--strategy", choices=STRATEGIES, default=STRATEGIES[0])
    args = parser.parse_args()
    runs, usages = {}, {}
    for way, lobby in (("direct", LOBBY), ("relayed", RELAYING_LOBBY)):
        usage: dict = {}
        wall, results = run_game(
            args.bots, args.proofs, "sealed", args.seed, args.strategy, lobby, usage
        )
        runs[way], usages[way] = summarize(wall, results), usage
    direct, relayed = runs["direct"], runs["relayed"]
    summary = {
        "bots": args.bots,
        "strategy": args.strategy,
        "proofs": args.proofs,
        "direct": {k: direct[k] for k in ("wall_s", "game_s", "step_p50_ms", "step_p99_ms")},
        "relayed": {k: relayed[k] for k in ("wall_s", "game_s", "step_p50_ms", "step_p99_ms")},
        "same_game": direct["final_state"] == relayed["final_state"],
        "relayed_over_direct_game": round(relayed["game_s"] / direct["game_s"], 3),
        "relayed_over_direct_step_p99": round(relayed["step_p99_ms"] / direct["step_p99_ms"], 3),
        "bytes_per_player": relayed["bytes_per_player"],
        "lobby_direct": usages["direct"],
        "lobby_relayed": usages["relayed"],
        "lobby_cpu_s_per_relayed_table": round(
            usages["relayed"]["cpu_s"] - usages["direct"]["cpu_s"], 3
        ),
    }
    print(
        f"{args.bots} {args.strategy} bots, proofs {'on' if args.proofs else 'off'}, "
        "over loopback, one process each"
    )
    for way in ("direct", "relayed"):
        run, usage = runs[way], usages[way]
        print(
            f"  {way}: wall {run['wall_s']} s, game {run['game_s']} s, {run['steps']} steps, "
            f"step p50 {run['step_p50_ms']} ms, p99 {run['step_p99_ms']} ms; the lobby: "
            f"{usage['cpu_s']} s CPU, peak {usage['peak_rss_mb']} MB"
        )
    print(f"  the same game both times: {'yes' if summary['same_game'] else 'NO'}")
    print(
        f"  relayed over direct: game time {summary['relayed_over_direct_game']}x, "
        f"step p99 {summary['relayed_over_direct_step_p99']}x"
    )
    print(
        f"  relaying the table cost the lobby {summary['lobby_cpu_s_per_relayed_table']} s of "
        f"CPU; peak memory {usages['direct']['peak_rss_mb']} MB direct, "
        f"{usages['relayed']['peak_rss_mb']} MB relayed "
        f"({relayed['bytes_per_player'] / 1e6:.2f} MB sent per player)"
    )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
