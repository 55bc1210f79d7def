"""How many of the bots' offers a person at the table is shown in a turn (client.bots.shown).

    scripts/bench offers [--games N] [--players 4,6] [--seed TEXT] [--json]

For each player count, N whole games in memory at three tables: planners only (every seat
counted), and three (or five) planners or greedy bots with a person who answers no offer
(that seat counted), seated in turn at every seat. An offer concerns a seat when another seat
makes it to that seat or to everyone. Prints per table the offers a turn concerning a counted
seat: the mean over every turn of the game and the most in any one turn.
"""

from __future__ import annotations

import argparse
import json

from client.bots import GreedyBot, PlannerBot, Strategy, Unanswering, offers_shown
from protocol.kdf import derive

TABLES = ("planners", "planners and a person", "greedy bots and a person")


def table(name: str, players: int, person: int) -> tuple[list[Strategy], list[int]]:
    """The strategies at a table, and the seats whose offers shown are counted."""
    if name == "planners":
        return [PlannerBot() for _ in range(players)], list(range(players))
    bot = PlannerBot if name.startswith("planners") else GreedyBot
    seats: list[Strategy] = [bot() for _ in range(players)]
    seats[person] = Unanswering(PlannerBot())
    return seats, [person]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games per table")
    parser.add_argument("--players", default="4,6", help="player counts, comma separated")
    parser.add_argument("--seed", default="offers", help="the deals replay from it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seed = args.seed.encode().ljust(16, b".")
    rows = []
    for players in (int(p) for p in args.players.split(",")):
        for name in TABLES:
            per_turn: list[int] = []
            for game in range(args.games):
                strategies, counted = table(name, players, game % players)
                shown = offers_shown(strategies, derive(seed, "offers", players, game))
                per_turn += [n for seat in counted for n in shown[seat]]
            mean = sum(per_turn) / len(per_turn)
            rows.append({"players": players, "table": name, "mean": mean, "max": max(per_turn)})
            print(f"{players}p  {name:<26} mean {mean:.2f}  max {max(per_turn)}  a turn")
    if args.json:
        print(json.dumps({"games": args.games, "rows": rows}))


if __name__ == "__main__":
    main()
