"""Is the table fair to every seat? (scripts/bench fairness [--json])

Mirror games of identical greedy bots, seats rotated (client/bots/fairness.py): each deal is played
once per seat with the start player moved on, so every seat plays every hand and every place.
Per player count: each seat's win share with its Wilson 95% interval and whether 1/n lies
inside it, the chi-square test against a fair table (n - 1 degrees of freedom; rejected below
p = 0.01), how many mirror sets played as one game renamed, and how many wins were shared (a
shared win counts 1/k to each of its k winners). `--independent` plays a fresh deal and start
player each game instead. One process, so one core: run it under `nice -n 10`.

The full run of issue 14 (2,000 four-player and 1,000 six-player games; mirror games come in
whole sets, so 1,002 of six players) is the default; `--games 40 24` is a quick look.
"""

from __future__ import annotations

import argparse
import json
import math
import time

from client.bots import SeatTally, independent_games, mirror_games

FAIR_LEVEL = 0.01  # the chi-square test rejects a fair table below this p-value


def report(players: int, tally: SeatTally, seconds: float, mode: str) -> dict[str, object]:
    test = tally.test()
    print(f"\n{players} players, {mode}: {tally.games} games in {seconds:.0f} s")
    print(f"{'seat':>4} {'wins':>8} {'share':>7}   95% interval     1/{players} inside")
    for seat in range(players):
        low, high = tally.interval(seat)
        inside = "yes" if tally.fair_share_inside(seat) else "NO"
        print(
            f"{seat + 1:>4} {tally.wins[seat]:>8.1f} {tally.share(seat):>7.3f}"
            f"   [{low:.3f}, {high:.3f}]   {inside}"
        )
    rejected = test.p_value < FAIR_LEVEL
    print(
        f"chi-square {test.statistic:.2f} on {test.df} degrees of freedom, p = {test.p_value:.3f}:"
        f" a fair table is {'REJECTED' if rejected else 'not rejected'} at the 1% level"
    )
    if tally.sets:
        print(f"mirror sets played as one game renamed: {tally.alike} of {tally.sets}")
    print(f"shared wins: {tally.shared} games (each winner counts 1/k of a win)")
    return {
        "players": players,
        "mode": mode,
        "games": tally.games,
        "wins": [round(w, 2) for w in tally.wins],
        "shares": [round(tally.share(s), 4) for s in range(players)],
        "intervals": [[round(x, 4) for x in tally.interval(s)] for s in range(players)],
        "fair_share_inside_every_interval": all(tally.fair_share_inside(s) for s in range(players)),
        "chi_square": round(test.statistic, 3),
        "df": test.df,
        "p_value": round(test.p_value, 4),
        "fair_table_rejected": rejected,
        "mirror_sets_alike": tally.alike,
        "mirror_sets": tally.sets,
        "shared_wins": tally.shared,
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[4, 6])
    parser.add_argument(
        "--games", type=int, nargs="+", default=[2000, 1000], help="per player count, in order"
    )
    parser.add_argument("--independent", action="store_true", help="no mirror sets")
    parser.add_argument("--seed", default="bench fairness", help="any text; the deals follow it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if len(args.games) != len(args.players):
        parser.error("give one --games count per player count")
    seed = args.seed.encode().ljust(16, b".")
    mode = "independent games" if args.independent else "mirror games"
    summary = {}
    for players, games in zip(args.players, args.games, strict=True):
        started = time.perf_counter()
        if args.independent:
            tally = independent_games(players, games, seed)
        else:
            tally = mirror_games(players, max(1, math.ceil(games / players)), seed)
        summary[f"k{players}"] = report(players, tally, time.perf_counter() - started, mode)
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
