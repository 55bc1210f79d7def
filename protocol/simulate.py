"""Random legal play of whole games, checking every invariant after every action.

    python -m protocol.simulate --players N --games G --seed S [--json]

Every kind of action occurs: plantings, trades, gifts, bids and takes, rejections, withdrawals
(of offers and of bids), off-turn harvests and field purchases. Moves are applied one at a
time here; how a lockstep step applies several at once is protocol.steps. The game logic
here is pure; only `main` reads the clock and prints (the one place in protocol/ that does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from protocol.invariants import violations
from protocol.kdf import Stream
from protocol.open_table import OpenTable
from protocol.random_play import random_action
from protocol.rules import (
    Accept,
    Action,
    BuyField,
    MakeOffer,
    Phase,
    Result,
    RuleError,
    State,
    Withdraw,
    apply,
    legal_actions,
    new_game,
    state_hash,
    waiting_for,
)

MAX_ACTIONS = 50_000  # far beyond any real game; reaching it is reported as a violation


@dataclass(frozen=True)
class Move:
    """One attempt of random play: `after` is None when the rules refused it."""

    before: State
    seat: int | None
    action: Action
    after: State | None


def random_moves(players: int, seed: bytes, max_actions: int = MAX_ACTIONS) -> Iterator[Move]:
    """A whole game of random legal play from a seed, move by move (replays exactly)."""
    rng = Stream(seed, "moves")
    table = OpenTable(seed)
    state = new_game(players, Stream(seed, "start").randbelow(players))
    applied = 0
    while state.phase is not Phase.OVER and applied < max_actions:
        seat: int | None
        action: Action
        purchase = _field_purchase(state, rng) if state.phase is not Phase.REVEAL else None
        if state.phase is Phase.REVEAL:
            seat, action = None, table.reveal(state)
        elif purchase is not None:
            seat, action = purchase
        else:
            seat = _pick_seat(state, rng)
            chosen = random_action(state, seat, table.hand(state, seat), rng, harvest_every=4)
            if chosen is None:
                continue
            action = chosen
        try:
            following = apply(state, seat, action)
        except RuleError:
            yield Move(state, seat, action, None)
            continue
        applied += 1
        yield Move(state, seat, action, following)
        state = following


@dataclass
class GameReport:
    players: int
    actions: int = 0
    refused: int = 0  # random attempts the rules refused (each checked to change nothing)
    kinds: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    result: Result | None = None
    exhaustions: int = 0


def play_random_game(players: int, seed: bytes, check: bool = True) -> GameReport:
    """One game of random legal play from a seed; with `check`, the invariants after every
    action and the deck-rule ending at the end."""
    report = GameReport(players)
    state = new_game(players, 0)
    for move in random_moves(players, seed):
        state = move.before
        if move.after is None:
            report.refused += 1
            continue
        report.actions += 1
        report.kinds[_kind(move)] += 1
        if check:
            report.violations += _check_step(move.before, move.after)
        state = move.after
    report.result = state.result
    report.exhaustions = state.exhaustions
    if check:
        report.violations += _check_ending(state)
    return report


def _field_purchase(state: State, rng: Stream) -> tuple[int, Action] | None:
    """Random play rarely holds enough coins to buy a field; when a seat can, it often does,
    so that simulations exercise purchases (and their coins on the discard pile)."""
    if not rng.chance(1, 3):
        return None
    buyers = [s for s in range(len(state.players)) if BuyField() in legal_actions(state, s)]
    return (rng.choice(buyers), BuyField()) if buyers else None


def _pick_seat(state: State, rng: Stream) -> int:
    """Mostly a seat the game waits for; sometimes anyone (for off-turn harvests and buys)."""
    waiting = [seat for seat, _ in waiting_for(state)]
    if waiting and not rng.chance(1, 5):
        return rng.choice(waiting)
    return rng.randbelow(len(state.players))


def _kind(move: Move) -> str:
    """The action's name for the report: gifts apart from offers, off-turn moves marked."""
    action = move.action
    name = type(action).__name__
    if isinstance(action, MakeOffer) and not (action.want_cards or action.want_beans):
        name = "Gift"
    offer = next((o for o in move.before.offers if o.id == getattr(action, "offer", None)), None)
    if isinstance(action, Accept) and offer is not None and offer.to is None:
        name = "Bid"
    if isinstance(action, Withdraw) and offer is not None and offer.maker != move.seat:
        name = "WithdrawBid"
    off_turn = move.seat is not None and move.seat != move.before.active
    return name + ("/off-turn" if off_turn else "")


def _check_step(before: State, after: State) -> list[str]:
    found = violations(after)
    if state_hash(after) == state_hash(before):
        found.append("an applied action left the state hash unchanged")
    return found


def _check_ending(state: State) -> list[str]:
    if state.phase is not Phase.OVER or state.result is None:
        return [f"the game did not end within {MAX_ACTIONS} actions"]
    by_deck_rule = state.exhaustions == state.setup.exhaustions_to_end or state.deck.remaining == 0
    return [] if by_deck_rule else ["the game ended without the deck running out"]


def game_seed(seed: int, game: int) -> bytes:
    return hashlib.sha256(f"bohnanza-p2p simulation {seed} {game}".encode()).digest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.simulate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--players", type=int, required=True, choices=range(3, 8), metavar="N")
    parser.add_argument("--games", type=int, default=100, metavar="G")
    parser.add_argument("--seed", type=int, default=1, metavar="S")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    reports = [play_random_game(args.players, game_seed(args.seed, g)) for g in range(args.games)]
    elapsed = time.perf_counter() - started
    actions = sum(r.actions for r in reports)
    problems = [v for r in reports for v in r.violations]
    kinds: Counter[str] = Counter()
    for r in reports:
        kinds.update(r.kinds)
    summary = {
        "players": args.players,
        "games": len(reports),
        "actions": actions,
        "violations": len(problems),
        "games_per_s": round(len(reports) / elapsed, 2),
        "refused_attempts": sum(r.refused for r in reports),
        "ended_by_deck_rule": sum(1 for r in reports if r.result is not None),
        "action_kinds": dict(sorted(kinds.items())),
    }
    print(f"{summary['games']} games of {args.players} players, seed {args.seed}")
    print(f"actions: {actions} ({actions / max(1, len(reports)):.0f} a game)")
    print(f"invariant violations: {len(problems)}")
    for problem in problems[:10]:
        print(f"  {problem}")
    print(f"games ended by the deck rule with final scores: {summary['ended_by_deck_rule']}")
    print(f"games per second: {summary['games_per_s']}")
    print("actions by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    if args.json:
        print(json.dumps(summary))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
