"""Bots: strategies that choose a seat's actions from what that seat knows and nothing more.

A strategy sees the shared state and its own hand (slot -> card), exactly like a person at that
seat, and returns the actions it takes now (often none). The lockstep asks it after every step.

- `RandomBot`: uniform over the legal actions (protocol.random_play), for fuzzing whole games.
- `GreedyBot`: plants and harvests for value, buys the third field while it still pays, and
  makes, accepts and rejects offers and gifts by what they add to its fields. As the active
  player it takes the offer (or, on its own offers to everyone, the bid) worth most to it;
  between partners worth the same it favours the one with fewest coins, then draws lots
  (`seed`), never preferring a seat by its number or by how fast it answered.
- `PlannerBot` (client.bots.planner, the default): plans its plantings and trades by the coins
  they are likely to bring, from the cards still unseen.

Trading API the strategies use (protocol.rules): `legal_actions` lists `Accept` (a bid, for an
offer made to everyone), `Take(offer, bidder)` for the maker, `Withdraw` for one's offers and
bids; `bids_on(state, offer)` and `bid_cards(state, bid)` say who bid what; `promised(state,
seat)` says which cards are tied to open offers and bids. A step's moves are applied as
protocol.steps says, so answering in the same step as another seat never loses by seat number.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from client.bots.planner import PlannerBot
from client.bots.strategy import Hand, Strategy
from protocol.cards import BEANOMETER, Card, bean_of
from protocol.kdf import Stream
from protocol.open_table import OpenTable
from protocol.planting import best_field, field_worth, harvest_to_make_room, loss_of_harvest
from protocol.random_play import random_action
from protocol.rules import (
    Accept,
    Action,
    Bid,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Offer,
    Phase,
    Plant,
    PlantPending,
    Reject,
    State,
    Take,
    accepters,
    apply,
    bid_cards,
    bids_on,
    legal_actions,
    new_game,
    promised,
)
from protocol.steps import apply_step

T = TypeVar("T")


class RandomBot(Strategy):
    """Uniformly random legal play; a seed replays it (a simulation, not a secret)."""

    name = "random"

    def __init__(self, seed: bytes | None = None) -> None:
        self._rng = Stream(seed or secrets.token_bytes(32), "random bot")

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        action = random_action(state, seat, hand, self._rng, idle_chance=8)
        return [action] if action is not None else []


# --- Valuing fields and cards ----------------------------------------------------------------


def planting_gain(fields: Sequence[Sequence[Card]], card: Card) -> float:
    """What planting this card is worth to these fields: growing a field of its bean, opening an
    empty field, or (negative) forcing a harvest of the cheapest field."""
    bean = bean_of(card)
    gains = [
        field_worth(bean, len(f) + 1) - field_worth(bean, len(f))
        for f in fields
        if f and bean_of(f[0]) == bean
    ]
    if gains:
        return max(gains) + 0.2
    if any(not f for f in fields):
        return 0.35
    return -min(loss_of_harvest(f) for f in fields)


# --- The greedy bot --------------------------------------------------------------------------


@dataclass
class GreedyBot(Strategy):
    """Plays for value with simple, explainable preferences; remembers only its own offers.
    `seed` replays its draws between equally good partners (a simulation, not a secret)."""

    name = "greedy"
    max_offers_per_turn: int = 3
    seed: bytes | None = None
    _turn_seen: int = -1
    _offers_made: int = 0
    _answered: set[int] = field(default_factory=set)
    _rng: Stream = field(init=False)

    def __post_init__(self) -> None:
        self._rng = Stream(self.seed or secrets.token_bytes(32), "greedy bot")

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        if state.turn != self._turn_seen:
            self._turn_seen, self._offers_made = state.turn, 0
        if state.phase is Phase.OVER:
            return []
        if self._should_buy_field(state, seat):
            return [BuyField()]
        harvest = self._ripe_harvest(state, seat)
        if harvest is not None:
            return [harvest]
        if state.phase is Phase.PLANT and seat == state.active:
            return self._plant_from_hand(state, seat, hand)
        if state.phase is Phase.TRADE:
            return self._trade(state, seat, hand)
        if state.phase is Phase.PLANT_PENDING and state.players[seat].pending:
            return self._plant_pending(state, seat)
        return []

    def _should_buy_field(self, state: State, seat: int) -> bool:
        """A third field pays while there is time left to fill it: not in the last deck pass."""
        player = state.players[seat]
        setup = state.setup
        return (
            setup.can_buy_field
            and len(player.fields) == 2
            and len(player.earnings) >= setup.field_cost
            and state.exhaustions < setup.exhaustions_to_end - 1
        )

    def _ripe_harvest(self, state: State, seat: int) -> Harvest | None:
        """Sell a field that can earn no more coins (it has reached its last threshold)."""
        for i, cards in enumerate(state.players[seat].fields):
            if cards:
                bean = bean_of(cards[0])
                top = max(need for need in BEANOMETER[bean] if need is not None)
                if len(cards) >= top and Harvest(i) in legal_actions(state, seat):
                    return Harvest(i)
        return None

    def _plant_from_hand(self, state: State, seat: int, hand: Hand) -> list[Action]:
        player = state.players[seat]
        if not player.hand:
            return []
        front = (
            player.hand[0].card
            if player.hand[0].card is not None
            else hand.get(player.hand[0].slot)
        )
        if front is None:
            return []  # the front card is not open to this seat yet
        if state.planted >= 1:
            # A second card only where it fits without a harvest.
            target = best_field(player.fields, front)
            return [Plant(target, front)] if target is not None else [EndPlanting()]
        target = best_field(player.fields, front)
        if target is None:
            harvest = harvest_to_make_room(state, seat)
            return [harvest] if harvest is not None else []
        return [Plant(target, front)]

    def _plant_pending(self, state: State, seat: int) -> list[Action]:
        """Plant the cards that fit first; harvest the cheapest field when none fits."""
        player = state.players[seat]
        for card in sorted(player.pending, key=lambda c: -planting_gain(player.fields, c)):
            target = best_field(player.fields, card)
            if target is not None:
                return [PlantPending(card, target)]
        harvest = harvest_to_make_room(state, seat)
        return [harvest] if harvest is not None else []

    # --- Trading ---

    def _trade(self, state: State, seat: int, hand: Hand) -> list[Action]:
        if seat != state.active:
            answer = self._answer_next_offer(state, seat, hand)
            if answer:
                return answer
            if self._offers_made < 1:
                offer = self._ask_for_face_up(state, seat, hand)
                if offer is not None:
                    self._offers_made += 1
                    return [offer]
            return []
        deal = self._best_offer_to_accept(state, seat, hand)
        if deal is not None:
            return [deal]
        rejects = self._reject_the_rest(state, seat)
        if rejects:
            return rejects
        mine = [o for o in state.offers if o.maker == seat]
        for offer in mine:
            if bids_on(state, offer.id) and not accepters(state, offer):
                return [self._best_bid(state, seat, offer)]  # every possible taker answered
        if self._offers_made < self.max_offers_per_turn:
            offer = self._offer_unwanted_face_up(state, seat)
            if offer is not None:
                self._offers_made += 1
                return [offer]
        if mine:
            return []  # waiting for answers (stop_waiting moves on if they do not come)
        return [EndTrading()]

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        """The answers are not coming: the active player takes the best bid there is on one
        of its offers, or ends trading."""
        if state.phase is not Phase.TRADE or seat != state.active:
            return []
        for offer in state.offers:
            if offer.maker == seat and bids_on(state, offer.id):
                return [self._best_bid(state, seat, offer)]
        return [EndTrading()]

    def _choices(self, state: State, seat: int, hand: Hand, offer: Offer) -> tuple[Action, float]:
        """The best way to accept the offer (or Reject) and what it is worth to this seat."""
        fields = state.players[seat].fields
        received = self._cards_given(state, offer)
        best: Action = Reject(offer.id)
        best_value = 0.0
        for choice in legal_actions(state, seat, hand):
            if not (isinstance(choice, Accept) and choice.offer == offer.id):
                continue
            given = [card for _, card in choice.give_hand] + list(offer.want_cards)
            value = sum(planting_gain(fields, c) for c in received)
            value -= sum(self._keeping_value(state, seat, hand, c) for c in given)
            if value > best_value:
                best, best_value = choice, value
        return best, best_value

    def _answer_next_offer(self, state: State, seat: int, hand: Hand) -> list[Action]:
        """Not the active player: accept (or bid on) the next offer open to it that is worth
        something, else turn it down; one a step."""
        for offer in state.offers:
            if offer.id in self._answered or seat not in accepters(state, offer):
                continue
            self._answered.add(offer.id)
            return [self._choices(state, seat, hand, offer)[0]]
        return []

    def _best_offer_to_accept(self, state: State, seat: int, hand: Hand) -> Action | None:
        """The active player: of all the offers made to it, the one worth most (they may want
        the same face-up card, so it takes one a step)."""
        worth: dict[int, tuple[Action, float]] = {}
        for offer in state.offers:
            if offer.maker != seat and seat in accepters(state, offer):
                choice, value = self._choices(state, seat, hand, offer)
                if value > 0:
                    worth[offer.id] = (choice, value)
        if not worth:
            return None
        top = max(value for _, value in worth.values())
        best = [o for o in state.offers if o.id in worth and worth[o.id][1] >= top - 1e-9]
        return worth[self._partner(state, seat, best, lambda o: o.maker).id][0]

    def _reject_the_rest(self, state: State, seat: int) -> list[Action]:
        """Offers to the active player worth nothing to it, turned down once each."""
        rejects: list[Action] = []
        for offer in state.offers:
            if offer.id not in self._answered and seat in accepters(state, offer):
                self._answered.add(offer.id)
                rejects.append(Reject(offer.id))
        return rejects

    def _best_bid(self, state: State, seat: int, offer: Offer) -> Take:
        """The bid on its offer worth most to it."""
        fields = state.players[seat].fields
        bids = bids_on(state, offer.id)
        worth = {b.bidder: sum(planting_gain(fields, c) for c in bid_cards(state, b)) for b in bids}
        top = max(worth.values())
        best = [b for b in bids if worth[b.bidder] >= top - 1e-9]
        return Take(offer.id, self._partner(state, seat, best, _bidder).bidder)

    def _partner(self, state: State, seat: int, tied: list[T], who: Callable[[T], int]) -> T:
        """Among deals worth the same: the partner with fewest coins, then lots drawn (listed
        clockwise from this seat, so that no seat number counts)."""
        players = len(state.players)
        fewest = min(len(state.players[who(d)].earnings) for d in tied)
        poorest = [d for d in tied if len(state.players[who(d)].earnings) == fewest]
        poorest.sort(key=lambda d: (who(d) - seat) % players)
        return poorest[0] if len(poorest) == 1 else self._rng.choice(poorest)

    @staticmethod
    def _cards_given(state: State, offer: Offer) -> list[Card]:
        maker = state.players[offer.maker]
        opened = {h.slot: h.card for h in maker.hand}
        from_hand = [opened[s] for s in offer.give_hand if opened.get(s) is not None]
        return [c for c in from_hand if c is not None] + list(offer.give_face_up)

    def _keeping_value(self, state: State, seat: int, hand: Hand, card: Card) -> float:
        """What a card is worth kept: a face-up card is planted now; a hand card later, and
        one that fits no field is a burden worth giving away."""
        fields = state.players[seat].fields
        if card in state.face_up:
            return planting_gain(fields, card)
        return 0.5 * planting_gain(fields, card)

    def _offer_unwanted_face_up(self, state: State, seat: int) -> MakeOffer | None:
        """Give away face-up cards that fit no field, to everyone, as a gift."""
        fields = state.players[seat].fields
        offered = {c for o in state.offers for c in o.give_face_up}
        unwanted = [c for c in state.face_up if c not in offered and planting_gain(fields, c) < 0]
        if not unwanted:
            return None
        return MakeOffer(None, give_face_up=(unwanted[0],))

    def _ask_for_face_up(self, state: State, seat: int, hand: Hand) -> MakeOffer | None:
        """Ask the active player for a face-up card that grows a field, offering the hand card
        that is the biggest burden (of those not promised to a bid)."""
        fields = state.players[seat].fields
        wanted = [c for c in state.face_up if planting_gain(fields, c) > 0.4]
        if not wanted:
            return None
        tied = promised(state, seat)
        held = [
            (h.slot, hand[h.slot])
            for h in state.players[seat].hand
            if h.slot in hand and h.slot not in tied
        ]
        if not held:
            return None
        burden = min(held, key=lambda sc: planting_gain(fields, sc[1]))
        return MakeOffer(state.active, give_hand=(burden,), want_cards=(wanted[0],))


def _bidder(bid: Bid) -> int:
    return bid.bidder


# --- Whole games in memory -------------------------------------------------------------------


STRATEGIES = ("planner", "greedy", "random")  # the names `--strategy` takes, default first


def strategy_named(name: str) -> Strategy:
    """A fresh strategy for the name a command line gives."""
    strategies: dict[str, type[Strategy]] = {
        "planner": PlannerBot,
        "greedy": GreedyBot,
        "random": RandomBot,
    }
    return strategies[name]()


class Stalled(Exception):
    """Nobody acted for many rounds although the game is not over: a strategy bug."""


@dataclass
class LocalGame:
    state: State
    steps: int = 0
    actions: int = 0
    refusals: int = 0


def play_local_game(
    strategies: Sequence[Strategy],
    seed: bytes,
    max_idle_rounds: int = 50,
    start_player: int | None = None,
) -> LocalGame:
    """A whole game between strategies in one process, step by step as the lockstep applies
    them, each strategy seeing only its own hand; every card is dealt from `seed`, and so is
    the start player unless given (the same seed with another start player deals the same
    hands, each moved on by as many seats)."""
    table = OpenTable(seed)
    players = len(strategies)
    if start_player is None:
        start_player = Stream(seed, "start").randbelow(players)
    game = LocalGame(new_game(players, start_player))
    idle = 0
    while game.state.phase is not Phase.OVER:
        state = game.state
        if state.phase is Phase.REVEAL:
            game.state = apply(state, None, table.reveal(state))
            continue
        chosen = {
            seat: strategy.decide(state, seat, table.hand(state, seat))
            for seat, strategy in enumerate(strategies)
        }
        moves = {seat: actions for seat, actions in chosen.items() if actions}
        if not moves:
            # Everyone waits: the answers are not coming (in a network game, after a while).
            moves = {
                seat: actions
                for seat, strategy in enumerate(strategies)
                if (actions := strategy.stop_waiting(state, seat, table.hand(state, seat)))
            }
        if not moves:
            idle += 1  # strategies that act by chance are asked again, as a timer would
            if idle > max_idle_rounds:
                raise Stalled(f"nobody acts at turn {state.turn}, {state.phase}")
            continue
        idle = 0
        game.state, refused, _ = apply_step(state, moves)
        game.steps += 1
        game.actions += sum(map(len, moves.values()))
        game.refusals += len(refused)
    return game
