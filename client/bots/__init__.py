"""Bots: what a bot is, every strategy, and the ways bots play.

What it offers (callers outside the package import these from `client.bots`):

- `Strategy` (`strategy`): what a strategy is asked and answers, from what its seat knows;
- the strategies: `PlannerBot` (`planner`, with `farm` for the odds and values of its fields
  and `trading` for its offers), `GreedyBot` and `RandomBot` (`strategies`), by name through
  `STRATEGIES` and `strategy_named`;
- `play_local_game` (`strategies`): a whole game of strategies in memory, no network;
- `BotPlayer` (`player`): a strategy at a seat of a real game, driving `client.game`;
- bots as processes (`process`): `bean-client bot`, started by a person's client;
- the ladder (`ladder`) and the fairness games (`fairness`): bots against each other, and
  mirror games that check no seat is favoured (scripts/bench bots and fairness);
- the offers a person at a table of bots is shown a turn (`shown`: `offers_shown`, with
  `Unanswering` standing in for a person who answers nothing; scripts/bench offers).

It must never import the screen (client.screen): a bot plays without a terminal. Nor does it
import the links (client.net), except where a bot process is started: a bot reaches other
machines only through the game driver it plays in.
"""

from client.bots.fairness import SeatTally, independent_games, mirror_games, wilson_interval
from client.bots.ladder import GREEDY, PLANNER, RANDOM, PairingResult, percentile, run_ladder
from client.bots.planner import PlannerBot
from client.bots.player import BotPlayer
from client.bots.process import (
    BotFailed,
    BotProcess,
    RoomBot,
    bot_profile,
    is_bot_profile,
    spawn_bot,
    start_room_bot,
)
from client.bots.shown import Unanswering, offers_shown
from client.bots.strategies import STRATEGIES, GreedyBot, RandomBot, play_local_game, strategy_named
from client.bots.strategy import Hand, Strategy

__all__ = [
    "GREEDY",
    "PLANNER",
    "RANDOM",
    "STRATEGIES",
    "BotFailed",
    "BotPlayer",
    "BotProcess",
    "GreedyBot",
    "Hand",
    "PairingResult",
    "PlannerBot",
    "RandomBot",
    "RoomBot",
    "SeatTally",
    "Strategy",
    "Unanswering",
    "bot_profile",
    "independent_games",
    "is_bot_profile",
    "mirror_games",
    "offers_shown",
    "percentile",
    "play_local_game",
    "run_ladder",
    "spawn_bot",
    "start_room_bot",
    "strategy_named",
    "wilson_interval",
]
