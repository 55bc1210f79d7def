"""Games per second of random legal play with 3, 5 and 7 players (scripts/bench rules [--json]).

Also prints what checking every invariant after every action costs, as a ratio measured in
the same run, since absolute speeds vary from machine to machine."""

import argparse
import json
import time

from protocol.simulate import game_seed, play_random_game


def measure(players: int, games: int, check: bool) -> tuple[float, int]:
    started = time.perf_counter()
    actions = sum(
        play_random_game(players, game_seed(99, g), check=check).actions for g in range(games)
    )
    return time.perf_counter() - started, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--games", type=int, default=60)
    args = parser.parse_args()
    summary: dict[str, float] = {}
    header = ("players", "games/s", "actions/s", "checked games/s", "check cost")
    print("{:>7} {:>9} {:>10} {:>16} {:>11}".format(*header))
    for players in (3, 5, 7):
        plain_s, actions = measure(players, args.games, check=False)
        checked_s, _ = measure(players, max(1, args.games // 4), check=True)
        rate = args.games / plain_s
        checked_rate = max(1, args.games // 4) / checked_s
        summary[f"k{players}_games_per_s"] = round(rate, 2)
        summary[f"k{players}_actions_per_s"] = round(actions / plain_s)
        summary[f"k{players}_invariant_check_cost_ratio"] = round(rate / checked_rate, 2)
        print(
            f"{players:>7} {rate:>9.1f} {actions / plain_s:>10.0f} {checked_rate:>16.1f}"
            f" {rate / checked_rate:>10.1f}x"
        )
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
