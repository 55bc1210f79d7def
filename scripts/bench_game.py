"""A whole 5-bot game over loopback with proofs on: over sealed links, the same game over plain
links, and the same game's rules alone.

    scripts/bench game [--json] [--bots 5] [--no-proofs] [--seed TEXT] [--pairs N]
                       [--strategy planner|greedy|random]

Runs bean-lobby and the bots as separate processes on 127.0.0.1 (as in a real game, each bot
verifies every other's proofs and runs the audit), twice: with the sealed links every game has
(TLS 1.3), then with plain TCP links (scripts/bench_bot.py: a mode for this benchmark only).
Both runs draw the same secrets, so they deal the same cards and play the same game. Then it
plays a game of as many bots (of the same strategy) in memory with the plain rules (no network,
no crypto). The bots play the default strategy (the planner) unless `--strategy` says another:
a step's latency includes the time its slowest bot thinks, and here every bot thinks on the same
few cores (at a real table each player has a machine), so a quick strategy (greedy) shows what
the links and the lockstep cost, and the default one what a game with it takes.
Prints, for each run, the wall time, the game time, messages and bytes sent per player, the
latency of game steps, of deck rounds (shuffles and proofs) and of the step after the end (the
audit) separately; the sealed run over the plain one; and the overhead of the real game over
the rules alone, all measured in this run. With `--pairs N` it plays N sealed-and-plain pairs,
alternating which goes first (a busy machine's load drifts), and reports the medians.
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

from client.bots import STRATEGIES, play_local_game, strategy_named
from protocol.simulate import game_seed

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


LOBBY = [str(BIN / "bean-lobby"), "--listen", "tcp:0:interface=127.0.0.1", "--quiet"]


def lobby_usage(pid: int) -> dict:
    """The lobby process's CPU seconds so far and its peak memory (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    status = Path(f"/proc/{pid}/status").read_text()
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    return {
        "cpu_s": round(cpu, 3),
        "peak_rss_mb": round(int(peak.group(1)) / 1024, 1) if peak else None,
    }


def run_game(
    bots: int,
    proofs: bool,
    links: str,
    seed: str,
    strategy: str,
    lobby_command: list[str] = LOBBY,
    usage: dict | None = None,
) -> tuple[float, list[dict]]:
    """One whole game; `usage`, if given, gets the lobby's CPU and memory at the end."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, XDG_CONFIG_HOME=f"{home}/config", XDG_DATA_HOME=f"{home}/data")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        lobby = subprocess.Popen(lobby_command, stdout=subprocess.PIPE, env=env)
        try:
            assert lobby.stdout is not None
            port = re.search(rb":(\d+)$", lobby.stdout.readline().strip())
            assert port, "bean-lobby did not say where it listens"
            started = time.perf_counter()
            players = []
            for n in range(bots):  # one by one, so that they sit in the same order every run
                player = subprocess.Popen(
                    [
                        sys.executable,
                        str(Path(__file__).with_name("bench_bot.py")),
                        links,
                        seed,
                        f"127.0.0.1:{port.group(1).decode()}",
                        "--seats",
                        str(bots),
                        "--name",
                        f"bot{n}",
                        "--json",
                        "--listen",
                        "tcp:0:interface=127.0.0.1",
                        *([] if proofs else ["--no-proofs", "--allow-weak-proofs"]),
                        "--strategy",
                        strategy,
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                )
                players.append(player)
                assert player.stderr is not None
                for line in player.stderr:
                    if line.startswith(b"bench: seated"):
                        break
            outputs = [p.communicate(timeout=900)[0] for p in players]  # reads stderr too
            wall = time.perf_counter() - started
            if usage is not None:
                usage.update(lobby_usage(lobby.pid))
        finally:
            lobby.terminate()
            lobby.wait(30)
    results = [json.loads(out.decode().strip().splitlines()[-1]) for out in outputs]
    if not all(r["ok"] for r in results):
        sys.exit("the benchmark game did not end well: " + json.dumps(results[0])[:500])
    return wall, results


def plain_game(bots: int, strategy: str) -> float:
    started = time.perf_counter()
    play_local_game([strategy_named(strategy) for _ in range(bots)], game_seed(2026, bots))
    return time.perf_counter() - started


def summarize(wall: float, results: list[dict]) -> dict:
    steps = [ms for r in results for ms in r["step_ms"]]
    deck = [ms for r in results for ms in r["deck_round_ms"]]
    audit = [ms for r in results for ms in r["audit_step_ms"]]
    return {
        "wall_s": round(wall, 2),
        "game_s": round(statistics.mean(r["game_s"] for r in results), 2),
        "steps": results[0]["steps"],
        "final_state": results[0]["final_state"],
        "messages_per_player": round(statistics.mean(r["frames_sent"] for r in results)),
        "bytes_per_player": round(statistics.mean(r["bytes_sent"] for r in results)),
        "step_p50_ms": round(percentile(steps, 0.50), 2),
        "step_p99_ms": round(percentile(steps, 0.99), 2),
        "deck_rounds": len(deck) // len(results),
        "deck_round_p50_ms": round(percentile(deck, 0.50), 1),
        "deck_round_max_ms": round(max(deck), 1),
        "deal_s": round(statistics.mean(sum(r["deck_round_ms"]) for r in results) / 1e3, 2),
        "audit_step_ms": round(statistics.mean(audit), 1),
    }


def median_run(runs: list[dict]) -> dict:
    """Each figure's median over the runs (the game is the same in each)."""
    return {
        key: round(statistics.median(run[key] for run in runs), 2)
        if isinstance(runs[0][key], int | float)
        else runs[0][key]
        for key in runs[0]
    } | {"same_every_time": len({run["final_state"] for run in runs}) == 1}


def describe(label: str, run: dict) -> None:
    print(f"  {label}:")
    print(f"    wall time (processes started to all done): {run['wall_s']} s")
    game = f"{run['game_s']} s, {run['steps']} steps"
    print(f"    game time (roster to result, mean of the bots): {game}")
    print(
        f"    per player: {run['messages_per_player']} messages, "
        f"{run['bytes_per_player'] / 1e6:.2f} MB sent (relays included)"
    )
    print(f"    game steps: p50 {run['step_p50_ms']} ms, p99 {run['step_p99_ms']} ms")
    print(
        f"    deck rounds (shuffle, proofs, relock): {run['deck_rounds']}, "
        f"p50 {run['deck_round_p50_ms']} ms, max {run['deck_round_max_ms']} ms, "
        f"{run['deal_s']} s in all"
    )
    print(
        f"    the step after the end (final reports, seeds, the audit): {run['audit_step_ms']} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bots", type=int, default=5)
    parser.add_argument("--no-proofs", dest="proofs", action="store_false")
    parser.add_argument("--seed", default="bench", help="the same seed plays the same game")
    parser.add_argument("--pairs", type=int, default=1, help="sealed-and-plain pairs to play")
    parser.add_argument("--strategy", choices=STRATEGIES, default=STRATEGIES[0])
    args = parser.parse_args()
    sealed_runs, plain_runs = [], []
    for pair in range(args.pairs):
        order = ("sealed", "plain") if pair % 2 == 0 else ("plain", "sealed")
        for links in order:
            played = run_game(args.bots, args.proofs, links, args.seed, args.strategy)
            run = summarize(*played)
            (sealed_runs if links == "sealed" else plain_runs).append(run)
    sealed, plain_links = median_run(sealed_runs), median_run(plain_runs)
    rules_only = statistics.mean(plain_game(args.bots, args.strategy) for _ in range(3))
    summary = {
        "bots": args.bots,
        "strategy": args.strategy,
        "proofs": args.proofs,
        **{k: v for k, v in sealed.items() if k not in ("final_state", "same_every_time")},
        "plain_links": {
            k: v for k, v in plain_links.items() if k not in ("final_state", "same_every_time")
        },
        "pairs": args.pairs,
        "same_game": sealed["final_state"] == plain_links["final_state"]
        and sealed["same_every_time"]
        and plain_links["same_every_time"],
        "sealed_over_plain_wall": round(sealed["wall_s"] / plain_links["wall_s"], 3),
        "sealed_over_plain_game": round(sealed["game_s"] / plain_links["game_s"], 3),
        "plain_game_s": round(rules_only, 4),
        "overhead_ratio": round(sealed["game_s"] / rules_only, 1),
    }
    print(
        f"{args.bots} {args.strategy} bots, proofs {'on' if args.proofs else 'off'}, "
        "over loopback, one process each"
    )
    describe("sealed links (TLS 1.3), as every game is played", sealed)
    describe("the same game over plain links (benchmark only)", plain_links)
    same = "yes" if summary["same_game"] else "NO (the runs diverged; compare with care)"
    print(f"  the same game both times: {same}")
    print(
        f"  sealed over plain: wall time {summary['sealed_over_plain_wall']}x, "
        f"game time {summary['sealed_over_plain_game']}x"
    )
    print(
        f"  the same game with the plain rules in memory: {summary['plain_game_s']} s; "
        f"overhead {summary['overhead_ratio']}x"
    )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
