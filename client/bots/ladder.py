"""The bots' ladder: strategies against each other in whole in-memory games (no network), with
the seats rotated so that every strategy sits in every seat, and per strategy its win share
with a 95% interval, its mean coins, the winner's coins in the games it won, and how long its
decisions take. `scripts/bench bots` runs it on every core.

A shared win counts as a fraction of a win for each winner, and the interval is the Wilson
score interval (client.bots.fairness, which judges seats the same way). Decision times go into a
histogram with 5% wide buckets, so that any number of games adds up in constant memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from client.bots.fairness import wilson_interval
from client.bots.planner import PlannerBot
from client.bots.strategies import GreedyBot, RandomBot, play_local_game
from client.bots.strategy import Hand, Strategy
from protocol.kdf import derive
from protocol.rules import Action, State

PLANNER, GREEDY, RANDOM = "planner", "greedy", "random"
SEARCH = "planner+search"  # the planner with determinized rollouts (off in the default one)
ROLLOUTS = 24


@dataclass(frozen=True)
class Pairing:
    """A table of strategies; game g rotates it by g seats."""

    name: str
    strategies: tuple[str, ...]


def pairings(players: int, search: bool = False) -> list[Pairing]:
    """The pairings that matter: the planner alone against greedy bots, a greedy bot alone
    against random bots, and the planner in self-play; with `search`, also the planner with
    rollouts alone against planners without (what the search is worth)."""
    others = players - 1
    chosen = [
        Pairing(f"{PLANNER} vs {others} {GREEDY}", (PLANNER,) + (GREEDY,) * others),
        Pairing(f"{GREEDY} vs {others} {RANDOM}", (GREEDY,) + (RANDOM,) * others),
        Pairing(f"{PLANNER} self-play", (PLANNER,) * players),
    ]
    if search:
        chosen.append(Pairing(f"{SEARCH} vs {others} {PLANNER}", (SEARCH,) + (PLANNER,) * others))
    return chosen


def make_strategy(name: str, seed: bytes) -> Strategy:
    """A fresh strategy; a random bot's choices replay from the seed."""
    if name == RANDOM:
        return RandomBot(seed)
    if name == SEARCH:
        return PlannerBot(rollouts=ROLLOUTS)
    kinds: dict[str, type[Strategy]] = {PLANNER: PlannerBot, GREEDY: GreedyBot}
    return kinds[name]()


# --- Decision times ----------------------------------------------------------------------------

_SMALLEST = 1e-6  # seconds: the first bucket
_STEP = 1.05  # each bucket is 5% wider than the one before
_BUCKETS = 400  # up to about five minutes


def bucket_of(seconds: float) -> int:
    if seconds <= _SMALLEST:
        return 0
    return min(_BUCKETS - 1, int(math.log(seconds / _SMALLEST, _STEP)) + 1)


def percentile(histogram: Sequence[int], share: float) -> float:
    """The time (seconds, the middle of its bucket) below which `share` of decisions fall."""
    total = sum(histogram)
    if not total:
        return 0.0
    wanted = share * total
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= wanted:
            return float(_SMALLEST * _STEP ** max(0.0, index - 0.5))
    return float(_SMALLEST * _STEP ** (_BUCKETS - 1))


class Timed(Strategy):
    """A strategy whose decisions are timed into a histogram."""

    def __init__(self, inner: Strategy, histogram: list[int]) -> None:
        self.inner = inner
        self.name = inner.name
        self.histogram = histogram

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        started = time.perf_counter()
        actions = self.inner.decide(state, seat, hand)
        self.histogram[bucket_of(time.perf_counter() - started)] += 1
        return actions

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.inner.stop_waiting(state, seat, hand)


# --- Tallies -----------------------------------------------------------------------------------


@dataclass
class Tally:
    """One strategy's results over games of one pairing."""

    games: int = 0
    seat_games: int = 0  # its seats summed over games
    seats: int = 0  # its seats at the table
    wins: float = 0.0  # games it won (a shared win counts a fraction)
    won_games: int = 0  # games in which one of its seats won or shared the win
    coins: int = 0  # summed over its seats and games
    winner_coins: int = 0  # summed over the games it won
    histogram: list[int] = field(default_factory=lambda: [0] * _BUCKETS)

    def add(self, other: Tally) -> None:
        self.games += other.games
        self.seat_games += other.seat_games
        self.seats = max(self.seats, other.seats)
        self.wins += other.wins
        self.won_games += other.won_games
        self.coins += other.coins
        self.winner_coins += other.winner_coins
        self.histogram = [a + b for a, b in zip(self.histogram, other.histogram, strict=True)]

    @property
    def win_share(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.games)

    @property
    def mean_coins(self) -> float:
        return self.coins / self.seat_games if self.seat_games else 0.0

    @property
    def mean_winner_coins(self) -> float:
        return self.winner_coins / self.won_games if self.won_games else 0.0


@dataclass
class PairingResult:
    players: int
    pairing: Pairing
    games: int = 0
    coins: int = 0  # every seat of every game
    winner_coins: int = 0  # the best score of every game
    tallies: dict[str, Tally] = field(default_factory=dict)

    def add(self, other: PairingResult) -> None:
        self.games += other.games
        self.coins += other.coins
        self.winner_coins += other.winner_coins
        for name, tally in other.tallies.items():
            self.tallies.setdefault(name, Tally()).add(tally)

    @property
    def mean_coins(self) -> float:
        return self.coins / (self.games * self.players) if self.games else 0.0

    @property
    def mean_winner_coins(self) -> float:
        return self.winner_coins / self.games if self.games else 0.0


def seated(pairing: Pairing, game: int) -> tuple[str, ...]:
    """The strategy at each seat in game `game`: the table rotated by `game` seats."""
    players = len(pairing.strategies)
    return tuple(pairing.strategies[(seat - game) % players] for seat in range(players))


def game_seed(seed: bytes, pairing: Pairing, game: int) -> bytes:
    return derive(seed, "ladder", pairing.name, game)


def play_pairing(pairing: Pairing, games: Iterable[int], seed: bytes) -> PairingResult:
    """Play the given games of a pairing (one worker's share)."""
    players = len(pairing.strategies)
    result = PairingResult(players, pairing)
    for name in dict.fromkeys(pairing.strategies):
        result.tallies[name] = Tally(seats=pairing.strategies.count(name))
    for game in games:
        names = seated(pairing, game)
        dealt = game_seed(seed, pairing, game)
        strategies = [
            Timed(make_strategy(name, derive(dealt, "bot", seat)), result.tallies[name].histogram)
            for seat, name in enumerate(names)
        ]
        outcome = play_local_game(strategies, dealt).state.result
        assert outcome is not None
        best = max(outcome.scores)
        result.games += 1
        result.coins += sum(outcome.scores)
        result.winner_coins += best
        for name, tally in result.tallies.items():
            seats = [s for s, n in enumerate(names) if n == name]
            tally.games += 1
            tally.seat_games += len(seats)
            tally.coins += sum(outcome.scores[s] for s in seats)
            won = [s for s in outcome.winners if s in seats]
            tally.wins += len(won) / len(outcome.winners)
            if won:
                tally.won_games += 1
                tally.winner_coins += best
    return result


def _play_chunk(args: tuple[Pairing, range, bytes]) -> PairingResult:
    return play_pairing(*args)


def run_ladder(
    player_counts: Sequence[int],
    games: int,
    seed: bytes,
    workers: int = 1,
    search: bool = False,
    chunk: int = 20,
) -> list[PairingResult]:
    """Every pairing for every player count, `games` games each, on `workers` processes."""
    jobs = [
        (pairing, range(start, min(games, start + chunk)), seed)
        for players in player_counts
        for pairing in pairings(players, search)
        for start in range(0, games, chunk)
    ]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_play_chunk, jobs))
    else:
        parts = [_play_chunk(job) for job in jobs]
    results: dict[tuple[int, str], PairingResult] = {}
    for part in parts:
        key = (part.players, part.pairing.name)
        if key not in results:
            results[key] = PairingResult(part.players, part.pairing)
        results[key].add(part)
    return list(results.values())
