"""Is the table fair to every seat? Mirror games of identical bots, and the statistics that
judge each seat's share of the wins (scripts/bench fairness prints them; the bots' ladder may
use the statistics too).

- Mirror games: each deal is played once per seat, the start player moved on by one seat each
  time, so every seat plays every hand and every place at the table once. The bots are
  identical greedy bots whose lots are seeded by their place relative to the start player; on
  a table where nothing depends on seat numbers, the games of one deal are the same game with
  the seats renamed (`MirrorTally.alike` counts the deals where they were).
- Independent games: a fresh deal and start player each game, as a table of identical bots
  plays it (the measurement that found the seat-number advantage).
- A win shared by k seats counts 1/k to each of them, so the shares of a game add up to one.
- A seat's win share is its wins over the games, with the Wilson score 95% interval.
- A fair table: the chi-square test of the seats' wins against games/n each, with n - 1
  degrees of freedom; its p-value comes from the chi-square survival function in closed form
  (`chi_square_sf`, no scipy). Mirror sets make the seats' wins less variable than
  independent games would, so the test errs towards calling a table fair; the mirror count
  and the independent games are the checks that do not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from client.bots.strategies import GreedyBot, play_local_game
from protocol.kdf import Stream, derive
from protocol.rules import Result

Z_95 = 1.959963984540054  # the two-sided 95% point of the normal distribution


def wilson_interval(successes: float, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for the default z); sound near 0 and 1
    too. Fractional successes (shared wins) are taken as they are."""
    if trials <= 0:
        return 0.0, 1.0
    share = successes / trials
    z2 = z * z
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    spread = z * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials))
    spread /= 1 + z2 / trials
    return max(0.0, centre - spread), min(1.0, centre + spread)


def chi_square_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square distributed with `df` degrees of freedom, in closed form:
    Q(x; 2) = exp(-x/2), Q(x; 1) = erfc(sqrt(x/2)), and
    Q(x; k + 2) = Q(x; k) + (x/2)^(k/2) exp(-x/2) / Gamma(k/2 + 1)."""
    if df < 1:
        raise ValueError("a chi-square distribution has at least one degree of freedom")
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2 == 0:
        k, total = 2, math.exp(-half)
        term = half * math.exp(-half)  # (x/2)^(k/2) exp(-x/2) / Gamma(k/2 + 1) for k = 2
    else:
        k, total = 1, math.erfc(math.sqrt(half))
        term = math.sqrt(half) * math.exp(-half) / math.gamma(1.5)
    while k < df:
        total += term
        term *= half / (k / 2 + 1)
        k += 2
    return min(1.0, max(0.0, total))


@dataclass(frozen=True)
class FairTableTest:
    statistic: float
    df: int
    p_value: float


def chi_square_fair(wins: Sequence[float]) -> FairTableTest:
    """The chi-square test of wins per seat against an even split of their total."""
    total = sum(wins)
    seats = len(wins)
    expected = total / seats
    statistic = sum((w - expected) ** 2 / expected for w in wins) if expected > 0 else 0.0
    return FairTableTest(statistic, seats - 1, chi_square_sf(statistic, seats - 1))


@dataclass
class SeatTally:
    """Wins by seat over a number of games, shared wins split."""

    players: int
    games: int = 0
    wins: list[float] = field(default_factory=list)
    shared: int = 0  # games whose win was shared
    alike: int = 0  # mirror sets played as one game renamed
    sets: int = 0  # mirror sets played

    def __post_init__(self) -> None:
        self.wins = self.wins or [0.0] * self.players

    def add(self, result: Result) -> None:
        self.games += 1
        self.shared += len(result.winners) > 1
        for seat in result.winners:
            self.wins[seat] += 1 / len(result.winners)

    def share(self, seat: int) -> float:
        return self.wins[seat] / self.games if self.games else 0.0

    def interval(self, seat: int) -> tuple[float, float]:
        return wilson_interval(self.wins[seat], self.games)

    def fair_share_inside(self, seat: int) -> bool:
        low, high = self.interval(seat)
        return low <= 1 / self.players <= high

    def test(self) -> FairTableTest:
        return chi_square_fair(self.wins)


def _relative(result: Result, start: int, players: int) -> tuple[object, ...]:
    """A result as seen from the start player: scores, hand counts and winners by place."""
    places = [(start + i) % players for i in range(players)]
    return (
        tuple(result.scores[s] for s in places),
        tuple(result.hand_counts[s] for s in places),
        tuple(sorted((w - start) % players for w in result.winners)),
    )


def mirror_games(players: int, deals: int, seed: bytes) -> SeatTally:
    """`deals` deals, each played once per seat with the start player moved on (see the module
    docstring); `players * deals` games in all."""
    tally = SeatTally(players)
    for deal in range(deals):
        deal_seed = derive(seed, "fairness deal", deal)
        first = Stream(deal_seed, "start").randbelow(players)
        seen: set[tuple[object, ...]] = set()
        for turn in range(players):
            start = (first + turn) % players
            bots = [
                GreedyBot(seed=derive(deal_seed, "bot", (seat - start) % players))
                for seat in range(players)
            ]
            game = play_local_game(bots, deal_seed, start_player=start)
            assert game.state.result is not None
            tally.add(game.state.result)
            seen.add((_relative(game.state.result, start, players), game.steps))
        tally.sets += 1
        tally.alike += len(seen) == 1
    return tally


def independent_games(players: int, games: int, seed: bytes) -> SeatTally:
    """`games` games, each a fresh deal and start player, of identical greedy bots."""
    tally = SeatTally(players)
    for number in range(games):
        game_seed = derive(seed, "fairness game", number)
        bots = [GreedyBot(seed=derive(game_seed, "bot", seat)) for seat in range(players)]
        result = play_local_game(bots, game_seed).state.result
        assert result is not None
        tally.add(result)
    return tally
